# cython: language_level=3, boundscheck=False, wraparound=False
"""Twins of corpora/wikitext/blocks.py: comments and extension tags, the template and table scan."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE, PyUnicode_DATA, PyUnicode_FromKindAndData, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ,
)

from corpora.wikitext.compiled.unicode_text cimport PyUnicode_FindChar

from corpora.wikitext.markers import REPAIRED_AFTER, append_after_cut

# ── 1. comments and extension tags: corpora/wikitext/blocks.py drop_comments_and_extension_tags ──


# Read from corpora/wikitext/blocks.py at the first call, since blocks imports this module.
cdef object _opaque_tag_names = None
cdef object _shown_opaque_content = None
cdef Py_ssize_t _LONGEST_TAG_NAME = 0


def _python_drop_comments_and_extension_tags(text):
    from corpora.wikitext.blocks import drop_comments_and_extension_tags
    return drop_comments_and_extension_tags(text)


cdef inline Py_UCS4 _ascii_letter_matched(Py_UCS4 c) noexcept:
    """The lower-case ASCII letter that `c` matches under re.IGNORECASE, or 0: the letters themselves,
    and "İ", "ı" (i), "ſ" (s) and the Kelvin sign (k)."""
    if u'a' <= c <= u'z':
        return c
    if u'A' <= c <= u'Z':
        return <Py_UCS4>(<unsigned int>c + 32)
    if c == 0x130 or c == 0x131:
        return u'i'
    if c == 0x17f:
        return u's'
    if c == 0x212a:
        return u'k'
    return 0


cdef Py_ssize_t _tag_closer(str text, int kind, void* data, Py_ssize_t n, Py_ssize_t i, str name,
                            Py_ssize_t* close_end) except -2:
    """_close_tag_re(name).search from i: the start of the first "</name\s*>" (any case), or -1."""
    cdef Py_ssize_t length = len(name), j, k
    cdef Py_UCS4 first = name[0]
    while i + length + 2 < n:
        i = PyUnicode_FindChar(text, u'<', i, n - length - 2, 1)
        if i < 0:
            return -1
        if PyUnicode_READ(kind, data, i + 1) == u'/' and (
                _ascii_letter_matched(PyUnicode_READ(kind, data, i + 2)) == first):
            for k in range(1, length):
                if _ascii_letter_matched(PyUnicode_READ(kind, data, i + 2 + k)) != <Py_UCS4>name[k]:
                    break
            else:
                j = i + 2 + length
                while j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
                    j += 1
                if j < n and PyUnicode_READ(kind, data, j) == u'>':
                    close_end[0] = j + 1
                    return i
        i += 1
    return -1


cdef inline _append_after_cut(list pieces, str piece):
    """append_after_cut, without a Python call where it only appends."""
    if not piece:
        return
    if not pieces or (<str>pieces[len(pieces) - 1])[-1:] not in REPAIRED_AFTER:
        pieces.append(piece)
    else:
        append_after_cut(pieces, piece)


def drop_comments_and_extension_tags(str text):
    """_OPAQUE_OPEN_RE's openers and each tag's closer found by hand; the pieces between them joined
    with the same repairs (append_after_cut), and the content a <math> or <nowiki> shows given by the
    Python function that decides it. A tag name written with a non-ASCII letter that matches an
    ASCII one ("<ſection>") is left to the Python function."""
    global _opaque_tag_names, _shown_opaque_content, _LONGEST_TAG_NAME
    if u"<" not in text:
        return text, False
    if _opaque_tag_names is None:
        from corpora.wikitext.blocks import OPAQUE_TAG_NAMES, shown_opaque_content
        _opaque_tag_names, _shown_opaque_content = OPAQUE_TAG_NAMES, shown_opaque_content
        _LONGEST_TAG_NAME = max(map(len, OPAQUE_TAG_NAMES))
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, j, start, open_end, content_end, end, pos = 0, close_end
    cdef Py_UCS4 c, letter
    cdef bint non_ascii, had_nowiki = False
    cdef Py_UCS4 name_chars[32]
    pieces = []
    unclosed = None
    while i < n:
        i = PyUnicode_FindChar(text, u'<', i, n, 1)
        if i < 0:
            break
        start = i
        if (i + 3 < n and PyUnicode_READ(kind, data, i + 1) == u'!' and PyUnicode_READ(kind, data, i + 2) == u'-'
                and PyUnicode_READ(kind, data, i + 3) == u'-'):
            open_end = i + 4
            end = text.find(u"-->", open_end)
            end = n if end < 0 else end + 3
            _append_after_cut(pieces, text[pos:start])
            pos = i = end
            continue
        j = i + 1
        non_ascii = False
        while j < n and j - i - 1 <= _LONGEST_TAG_NAME:
            c = PyUnicode_READ(kind, data, j)
            letter = _ascii_letter_matched(c)
            if not letter:
                break
            non_ascii |= c >= 0x80
            name_chars[j - i - 1] = letter
            j += 1
        if j == i + 1 or j - i - 1 > _LONGEST_TAG_NAME or j >= n:
            i += 1
            continue
        c = PyUnicode_READ(kind, data, j)
        if not (c == u'/' or c == u'>' or Py_UNICODE_ISSPACE(c)):
            i += 1
            continue
        name = PyUnicode_FromKindAndData(4, name_chars, j - i - 1)
        if name not in _opaque_tag_names:
            i += 1
            continue
        while j < n:
            c = PyUnicode_READ(kind, data, j)
            if c == u'<' or c == u'>':
                break
            j += 1
        if j >= n or c == u'<':
            i += 1
            continue
        if non_ascii:
            return _python_drop_comments_and_extension_tags(text)
        open_end = content_end = end = j + 1
        if PyUnicode_READ(kind, data, j - 1) != u'/' and (unclosed is None or name not in unclosed):
            content_end = _tag_closer(text, kind, data, n, open_end, name, &close_end)
            if content_end < 0:
                content_end = open_end
                if unclosed is None:
                    unclosed = set()
                unclosed.add(name)
            else:
                end = close_end
        _append_after_cut(pieces, text[pos:start])
        if name == u"math" or name == u"nowiki":
            replacement = _shown_opaque_content(text, start, open_end, content_end, end, name)
            if replacement:
                pieces.append(replacement)
                had_nowiki = True
        pos = i = end
    if pos == 0:
        return text, False
    _append_after_cut(pieces, text[pos:])
    return u"".join(pieces), had_nowiki


# ── 3. templates and tables: corpora/wikitext/blocks.py template_and_table_spans ──


cdef enum:  # the kinds of _BRACE_TOKEN_RE's tokens, told apart here by hand
    BRACES_OPEN = 1  # "{{" or more
    BRACES_CLOSE = 2  # "}}" or more
    TABLE_OPEN = 3  # "\n", then spaces, tabs or colons, then "{|"
    TABLE_CLOSE = 4  # "\n", then spaces or tabs, then "|}" not before "}"


def template_and_table_spans(str text):
    """_BRACE_TOKEN_RE's tokens found by hand, then the same stack of open brace runs and count of
    open tables as the Python function, appending the same spans in the same order."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, j, start, end, pos, taken, depth = 0
    cdef Py_ssize_t table_depth = 0, table_start = 0
    cdef int token
    cdef Py_UCS4 c
    # Open brace runs: where each starts and how many of its braces are still open (a run takes two
    # characters at least, so there are at most n // 2).
    cdef Py_ssize_t* run_starts = <Py_ssize_t*>PyMem_Malloc((n // 2 + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* run_open = <Py_ssize_t*>PyMem_Malloc((n // 2 + 1) * sizeof(Py_ssize_t))
    if not run_starts or not run_open:
        PyMem_Free(run_starts); PyMem_Free(run_open)
        raise MemoryError()
    spans = []
    try:
        while i + 1 < n:
            c = PyUnicode_READ(kind, data, i)
            token = 0
            if (c == u'{' or c == u'}') and PyUnicode_READ(kind, data, i + 1) == c:
                j = i + 2
                while j < n and PyUnicode_READ(kind, data, j) == c:
                    j += 1
                token = BRACES_OPEN if c == u'{' else BRACES_CLOSE
            elif c == u'\n':
                j = i + 1
                while j < n and PyUnicode_READ(kind, data, j) in (u' ', u'\t', u':'):
                    j += 1
                if j + 1 < n and PyUnicode_READ(kind, data, j) == u'{' and PyUnicode_READ(kind, data, j + 1) == u'|':
                    token = TABLE_OPEN
                    j += 2
                else:
                    j = i + 1
                    while j < n and PyUnicode_READ(kind, data, j) in (u' ', u'\t'):
                        j += 1
                    if (j + 1 < n and PyUnicode_READ(kind, data, j) == u'|' and PyUnicode_READ(kind, data, j + 1) == u'}'
                            and not (j + 2 < n and PyUnicode_READ(kind, data, j + 2) == u'}')):
                        token = TABLE_CLOSE
                        j += 2
            if not token:
                i += 1
                continue
            start, end = i, j
            i = j
            if token == BRACES_OPEN:
                run_starts[depth] = start
                run_open[depth] = end - start
                depth += 1
            elif token == BRACES_CLOSE:
                pos = start
                while pos < end and depth:
                    taken = min(end - pos, run_open[depth - 1])
                    run_open[depth - 1] -= taken
                    pos += taken
                    spans.append((run_starts[depth - 1] + run_open[depth - 1], pos))
                    if run_open[depth - 1] == 0:
                        depth -= 1
                if pos < end and not table_depth:
                    spans.append((pos, end))
            elif depth:
                continue
            elif token == TABLE_OPEN:
                if table_depth == 0:
                    table_start = start + 1
                table_depth += 1
            elif table_depth:
                table_depth -= 1
                if table_depth == 0:
                    spans.append((table_start, end))
            else:
                spans.append((start + 1, end))
        for j in range(depth):
            spans.append((run_starts[j], run_starts[j] + run_open[j]))
        if table_depth:
            spans.append((table_start, n))
        return spans
    finally:
        PyMem_Free(run_starts); PyMem_Free(run_open)
