# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twins of the parser's hottest passes (corpora/wikitext/parse.py), for speed only.

Each function here gives exactly what the Python function it names gives, byte for byte: the Python
modules stay the reference and the fallback (no compiler, `XLU_PURE_PYTHON=1`), and
tests/corpora/wikitext/test_wikitext_speedups.py parses every page of the real excerpts both ways and compares.

Only the common case is compiled. Whatever is rare or intricate (a namespace prefix, a nested link, an
entity in a title, a cut to repair) is handed to the Python code that handles it, so the compiled
code holds no rule of its own that could drift from the reference.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy
from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    Py_UNICODE_ISLOWER,
    Py_UNICODE_ISSPACE,
    Py_UNICODE_TOUPPER,
    PyUnicode_DATA,
    PyUnicode_FromKindAndData,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_READ_CHAR,
    PyUnicode_WRITE,
)

cdef extern from "Python.h":
    enum: PyUnicode_1BYTE_KIND
    enum: PyUnicode_2BYTE_KIND
    # The index of `ch` in text[start:end] (-1 if absent), found at memchr speed.
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2

ctypedef fused code_unit:  # a str's characters as stored, one C type per kind
    uint8_t
    uint16_t
    uint32_t


from corpora.titles import upper_first
from corpora.wikitext.markers import REPAIRED_AFTER, Anchor, append_after_cut

_new_tuple = tuple.__new__  # Anchor(...) without the Python-level __new__ of a NamedTuple


def _python_plain_text_and_anchors(text, targets):
    from corpora.wikitext.parse import plain_text_and_anchors
    return plain_text_and_anchors(text, targets)


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


# ── 4. internal links: corpora/wikitext/links.py render_internal_links ──


def render_internal_links(str text, language):
    targets = []
    if "[[" not in text:
        return (text.replace("]]", "") if "]]" in text else text), targets
    out = []
    # Imported here, not at the top: wikitext_lines loads this module, and wikitext_links imports
    # wikitext_lines.
    from corpora.wikitext.links import render_link
    _render_links_into(text, out, targets, language, render_link)
    return "".join(out), targets


# The tokens of corpora/wikitext/links.py's _LINK_SPLIT_RE, "[[", "]]]" (not before a fourth "]") and "]]".
cdef enum:
    OPENING = 0
    CLOSING = 1
    CLOSING_AFTER_BRACKET = 2  # "]]]"


cdef Py_ssize_t _link_tokens(str text, Py_ssize_t* starts, char* kinds, Py_ssize_t capacity):
    """The tokens _LINK_SPLIT_RE.split finds, left to right; how many (up to `capacity`)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, count = 0
    cdef Py_UCS4 c
    while i + 1 < n and count < capacity:
        c = PyUnicode_READ(kind, data, i)
        if c == u'[':
            if PyUnicode_READ(kind, data, i + 1) == u'[':
                starts[count] = i
                kinds[count] = OPENING
                count += 1
                i += 2
                continue
        elif c == u']' and PyUnicode_READ(kind, data, i + 1) == u']':
            starts[count] = i
            if i + 2 < n and PyUnicode_READ(kind, data, i + 2) == u']' and not (
                    i + 3 < n and PyUnicode_READ(kind, data, i + 3) == u']'):
                kinds[count] = CLOSING_AFTER_BRACKET
                i += 3
            else:
                kinds[count] = CLOSING
                i += 2
            count += 1
            continue
        i += 1
    return count


cdef inline Py_ssize_t _token_end(Py_ssize_t* starts, char* kinds, Py_ssize_t j):
    return starts[j] + (3 if kinds[j] == CLOSING_AFTER_BRACKET else 2)


cdef void _render_links_into(str text, list out, list targets, language, render_link) except *:
    """corpora/wikitext/links.py _render_links_into at depth 0 (parts[2j + 1] there is token j here,
    and the text between tokens a slice of `text`), with the common link rendered here."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    # Every token takes at least two characters.
    cdef Py_ssize_t capacity = n // 2 + 1, count, j, close, depth, after, following_end, used
    cdef Py_ssize_t* starts = <Py_ssize_t*>PyMem_Malloc(capacity * sizeof(Py_ssize_t))
    cdef Py_ssize_t* partner = <Py_ssize_t*>PyMem_Malloc(capacity * sizeof(Py_ssize_t))
    cdef Py_ssize_t* stack = <Py_ssize_t*>PyMem_Malloc(capacity * sizeof(Py_ssize_t))
    cdef char* kinds = <char*>PyMem_Malloc(capacity)
    if not starts or not partner or not stack or not kinds:
        PyMem_Free(starts); PyMem_Free(partner); PyMem_Free(stack); PyMem_Free(kinds)
        raise MemoryError()
    try:
        count = _link_tokens(text, starts, kinds, capacity)
        depth = 0
        for j in range(count):
            partner[j] = -1
            if kinds[j] == OPENING:
                stack[depth] = j
                depth += 1
            elif depth:
                depth -= 1
                partner[stack[depth]] = j
        trail_re = language.linktrail_re
        out.append(text[: starts[0]] if count else text)
        j = 0
        while j < count:
            close = partner[j]
            after = _token_end(starts, kinds, j)
            following_end = starts[j + 1] if j + 1 < count else n
            if close < 0:  # a stray "]]" or an unclosed "[["
                piece = text[after:following_end]
                append_after_cut(out, "]" + piece if kinds[j] == CLOSING_AFTER_BRACKET else piece)
                j += 1
                continue
            body_end = starts[close]
            after = _token_end(starts, kinds, close)
            following_end = starts[close + 1] if close + 1 < count else n
            if close == j + 1 and kinds[close] == CLOSING:
                body = text[_token_end(starts, kinds, j) : body_end]
                if _render_plain_link(body, text, after, following_end, out, targets, trail_re):
                    j = close + 1
                    continue
                nested = False
                following = text[after:following_end]
            else:
                nested = close != j + 1
                body = text[_token_end(starts, kinds, j) : body_end]
                following = text[after:following_end]
                if kinds[close] == CLOSING_AFTER_BRACKET:
                    if body.count("[") > body.count("]"):
                        body += "]"
                    else:
                        following = "]" + following
            emitted = len(out)
            used = render_link(body, nested, following, out, targets, language, 0)
            if len(out) == emitted:
                append_after_cut(out, following[used:])
            else:
                out.append(following[used:] if used else following)
            j = close + 1
    finally:
        PyMem_Free(starts); PyMem_Free(partner); PyMem_Free(stack); PyMem_Free(kinds)


cdef bint _render_plain_link(str body, str text, Py_ssize_t after, Py_ssize_t following_end, list out,
                             list targets, trail_re) except -1:
    """The common link, "[[Title]]" or "[[Title|text]]" with a plain title, rendered as render_link
    renders it, then the text up to the next token; False (nothing written) for any other link, which
    render_link then takes. The link's text follows text[after:following_end]."""
    cdef int kind = PyUnicode_KIND(body)
    cdef void* data = PyUnicode_DATA(body)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(body)
    cdef Py_ssize_t bar = -1, i, start, end, used
    cdef Py_UCS4 c, previous
    # The target: no character that makes it invalid, a namespace, a fragment or an escape to decode.
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c == u'|':
            bar = i
            break
        if (c == u'<' or c == u'>' or c == u'[' or c == u']' or c == u'{' or c == u'}' or c == u'\n'
                or c == u':' or c == u'#' or c == u'&' or c == u'%' or c == u'_'):
            return False
        if u'\u200e' <= c <= u'\u202e' and (c <= u'\u200f' or c >= u'\u202a'):
            return False  # a bidi mark, which normalise_title deletes
    end = bar if bar >= 0 else n
    start = 0
    while start < end and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start)):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
        end -= 1
    if start == end:
        return False
    # normalise_title's " ".join(title.split()) changes nothing only when every space is one " ".
    previous = u'x'
    for i in range(start, end):
        c = PyUnicode_READ(kind, data, i)
        if Py_UNICODE_ISSPACE(c) and (c != u' ' or previous == u' '):
            return False
        previous = c
    if bar < 0:
        shown = body
    elif bar + 1 < n:
        shown = body[bar + 1 :]
    else:
        return False  # the pipe trick
    used = 0
    if trail_re is not None and after < following_end:
        # No trail pattern looks behind or at "^", so matching in place is matching the slice.
        match = trail_re.match(text, after, following_end)
        if match is not None:
            used = match.end() - after
            if used:
                shown = shown + text[after : after + used]
    if "\n" in shown or "<" in shown:
        return False
    core = shown.strip(" ")
    if not core or "  " in core:
        return False
    title = body[start:end]
    c = PyUnicode_READ_CHAR(title, 0)
    if c < 128:
        normalised = title[0].upper() + title[1:] if u'a' <= c <= u'z' else title
    elif not Py_UNICODE_ISLOWER(c) and Py_UNICODE_TOUPPER(c) == c:
        normalised = title  # nothing to upper-case (checked against upper_first for every character)
    else:
        normalised = upper_first(title)
    before = " " if PyUnicode_READ_CHAR(shown, 0) == u' ' else ""
    trailing = " " if PyUnicode_READ_CHAR(shown, PyUnicode_GET_LENGTH(shown) - 1) == u' ' else ""
    out.append("%s\x01%d\x1f%s\x02%s" % (before, len(targets), core, trailing))
    targets.append(normalised)
    out.append(text[after + used : following_end])
    return True


# ── 5. quotes: corpora/wikitext/lines.py quotes_in_line ──


cdef list _quote_parts(str line):
    """_QUOTE_SPLIT_RE.split(line) for its pattern "('{2,})": text, run, text, ..., text."""
    cdef int kind = PyUnicode_KIND(line)
    cdef void* data = PyUnicode_DATA(line)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(line), i = 0, j, start = 0
    parts = []
    while i + 1 < n:
        if PyUnicode_READ(kind, data, i) == u"'" and PyUnicode_READ(kind, data, i + 1) == u"'":
            j = i + 2
            while j < n and PyUnicode_READ(kind, data, j) == u"'":
                j += 1
            parts.append(line[start:i])
            parts.append(line[i:j])
            start = i = j
        else:
            i += 1
    parts.append(line[start:])
    return parts


def quotes_in_line(str line, bint mark_bold):
    """corpora/wikitext/lines.py quotes_in_line (MediaWiki's doQuotes), step for step on the same
    parts, with the split done by hand; its rare steps are that module's helpers themselves."""
    from corpora.wikitext import lines as python  # not at import: wikitext_lines loads this module
    cdef list parts = _quote_parts(line)
    cdef Py_ssize_t k, run, count = len(parts), italics = 0, bolds = 0
    cdef bint bold = False
    for k in range(1, count, 2):
        run = len(<str>parts[k])
        if run == 4:
            parts[k - 1] = python.with_apostrophe(parts[k - 1])
            parts[k] = "'''"
            run = 3
        elif run > 5:
            parts[k - 1] = python.with_apostrophe(parts[k - 1])
            parts[k] = "'''''"
            run = 5
        italics += run != 3
        bolds += run != 2
    if italics % 2 and bolds % 2:
        python.bold_to_apostrophe_italic(parts)
    out = [parts[0]]
    for k in range(1, count, 2):
        piece = parts[k + 1]
        if len(<str>parts[k]) != 2:
            bold = not bold
            if mark_bold:
                piece = python.bold_marker(out, piece, bold)
        out.append(piece)
    if bold and mark_bold:
        python.bold_marker(out, "", False)
    return "".join(out)


# ── 5. list markers: corpora/wikitext/lines.py without_list_markers ──


cdef inline bint _is_list_marker(Py_UCS4 c) noexcept nogil:
    return c == u'*' or c == u'#' or c == u':' or c == u';'


cdef Py_ssize_t _unmarked_lines(const code_unit* data, Py_ssize_t n, code_unit* out) noexcept nogil:
    """without_list_markers into `out`; its length."""
    cdef Py_ssize_t i = 0, j, k, run_start, length = 0
    while i < n:
        run_start = i
        while i < n and data[i] != 0x0a:
            i += 1
        memcpy(out + length, data + run_start, (i - run_start) * sizeof(code_unit))
        length += i - run_start
        if i == n:
            break
        out[length] = 0x0a
        length += 1
        j = k = i + 1
        while k < n and _is_list_marker(data[k]):
            k += 1
        if k == j:
            while k < n and data[k] == 0x2d:  # "-"
                k += 1
            if k - j < 4:
                k = j
        if k > j:
            while k < n and (data[k] == 0x20 or data[k] == 0x09):
                k += 1
        i = k
    return length


def without_list_markers(str text):
    """_LIST_MARKER_RE.sub("\\n"): after a line break, a run of "*#:;" or of four "-" or more, then
    spaces and tabs, go (greedy, and what follows a run always matches, so nothing backtracks)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), length
    cdef void* out = PyMem_Malloc((n + 1) * kind)
    if not out:
        raise MemoryError()
    try:
        if kind == PyUnicode_1BYTE_KIND:
            length = _unmarked_lines(<uint8_t*>data, n, <uint8_t*>out)
        elif kind == PyUnicode_2BYTE_KIND:
            length = _unmarked_lines(<uint16_t*>data, n, <uint16_t*>out)
        else:
            length = _unmarked_lines(<uint32_t*>data, n, <uint32_t*>out)
        if length == n:
            return text  # nothing dropped
        return PyUnicode_FromKindAndData(kind, out, length)
    finally:
        PyMem_Free(out)


# ── 5. tidy's first steps: corpora/wikitext/tidy.py ──


cdef Py_ssize_t _squeezed(const code_unit* data, Py_ssize_t n, code_unit* out, bint* tab_seen) noexcept nogil:
    """without_empty_markup_and_spaces into `out`; its length. Runs of characters above " " (most of
    the text) are copied whole."""
    cdef Py_ssize_t i = 0, j, run_start, length = 0
    cdef code_unit c
    while i < n:
        run_start = i
        while i < n and data[i] > 0x20:
            i += 1
        if i > run_start:
            memcpy(out + length, data + run_start, (i - run_start) * sizeof(code_unit))
            length += i - run_start
            if i == n:
                break
        c = data[i]
        if c == 0x01:
            j = i + 1
            while j < n and 0x30 <= data[j] <= 0x39:
                j += 1
            if j > i + 1 and j + 1 < n and data[j] == 0x1f and data[j + 1] == 0x02:
                i = j + 2
                continue
        elif c == 0x04 and i + 1 < n and data[i + 1] == 0x05:
            i += 2
            continue
        elif c == 0x06 and i + 1 < n and data[i + 1] == 0x06:
            i += 2
            continue
        elif c == 0x09:
            c = 0x20
            tab_seen[0] = True
        i += 1
        if c == 0x20 and length and out[length - 1] == 0x20:
            continue
        out[length] = c
        length += 1
    return length


def without_empty_markup_and_spaces(str text):
    """_EMPTY_MARKUP_RE's removals ("\\x01<digits>\\x1f\\x02", "\\x04\\x05", "\\x06\\x06", left to right),
    tabs to spaces, runs of spaces to one: three passes there, one here, as each step reads only
    what the one before it wrote, in order."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), length
    cdef bint tab_seen = False
    cdef void* out = PyMem_Malloc((n + 1) * kind)
    if not out:
        raise MemoryError()
    try:
        if kind == PyUnicode_1BYTE_KIND:
            length = _squeezed(<uint8_t*>data, n, <uint8_t*>out, &tab_seen)
        elif kind == PyUnicode_2BYTE_KIND:
            length = _squeezed(<uint16_t*>data, n, <uint16_t*>out, &tab_seen)
        else:
            length = _squeezed(<uint32_t*>data, n, <uint32_t*>out, &tab_seen)
        if length == n and not tab_seen:
            return text  # nothing removed or replaced
        return PyUnicode_FromKindAndData(kind, out, length)
    finally:
        PyMem_Free(out)


cdef inline bint _is_first_separator(Py_UCS4 c):
    return c == u',' or c == u';' or c == u':' or c == u'，' or c == u'；' or c == u'：' or c == u'、'


cdef inline bint _is_repeated_separator(Py_UCS4 c):
    return c == u',' or c == u';' or c == u'，' or c == u'；' or c == u'、'


def has_residue_pair(str text):
    """_RESIDUE_PAIR_RE.search: "(" before one of " ;,:)\x06", "[" before one of " ];,\x06", ")"
    after one of " ;,\x06", "]" after " " or "\x06", or a "（" or "［" anywhere."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef Py_UCS4 c, neighbour
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c == u'(' or c == u'[':
            if i + 1 < n:
                neighbour = PyUnicode_READ(kind, data, i + 1)
                if (neighbour == u' ' or neighbour == u';' or neighbour == u',' or neighbour == u'\x06'
                        or (c == u'(' and (neighbour == u':' or neighbour == u')'))
                        or (c == u'[' and neighbour == u']')):
                    return True
        elif c == u')' or c == u']':
            if i > 0:
                neighbour = PyUnicode_READ(kind, data, i - 1)
                if neighbour == u' ' or neighbour == u'\x06' or (c == u')' and (neighbour == u';' or neighbour == u',')):
                    return True
        elif c == u'（' or c == u'［':
            return True
    return False


cdef inline bint _is_residue_bracket(Py_UCS4 c) noexcept:
    return c == u'(' or c == u'[' or c == u'（' or c == u'［'


cdef inline bint _is_residue_closer(Py_UCS4 c) noexcept:
    return c == u')' or c == u']' or c == u'）' or c == u'］'


cdef inline bint _is_list_separator(Py_UCS4 c) noexcept:
    return c == u';' or c == u',' or c == u'、' or c == u'，' or c == u'；'


cdef inline bint _is_held_separator(Py_UCS4 c) noexcept:
    """What a bracket left empty may still hold: a list separator, a colon, a slash or a dash."""
    return (_is_list_separator(c) or c == u':' or c == u'：' or c == u'/' or c == u'–' or c == u'—'
            or c == u'-')


cdef inline bint _is_space_or_edge(Py_UCS4 c) noexcept:
    return c == u'\x06' or Py_UNICODE_ISSPACE(c)


cdef inline bint _is_identifier_char(Py_UCS4 c) noexcept:
    return u'a' <= c <= u'z' or u'A' <= c <= u'Z' or u'0' <= c <= u'9' or c == u'_'


def without_residue(str text):
    """_RESIDUE_RE.sub(_residue_replacement), its three alternatives tried in order at each bracket
    or list separator: an emptied bracket pair goes (not "()" or "[]" after an identifier); the
    separators after an opening bracket go; up to eight separators before a closing one go. Each
    alternative's classes are disjoint from what must follow them, so its greedy match is the only
    one `re` can find there, and this reads it without backtracking."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), p = 0, q, r, count, copied_to = 0, length = 0
    cdef Py_ssize_t cut_start, cut_end
    cdef Py_UCS4 c, closer
    cdef void* out = NULL
    try:
        while p < n:
            c = PyUnicode_READ(kind, data, p)
            cut_start = cut_end = -1
            if _is_residue_bracket(c):
                q = p + 1
                while q < n and (_is_space_or_edge(PyUnicode_READ(kind, data, q))
                                 or _is_held_separator(PyUnicode_READ(kind, data, q))):
                    q += 1
                if q < n and _is_residue_closer(PyUnicode_READ(kind, data, q)):
                    closer = PyUnicode_READ(kind, data, q)
                    if not (q == p + 1 and ((c == u'(' and closer == u')') or (c == u'[' and closer == u']'))
                            and p > 0 and _is_identifier_char(PyUnicode_READ(kind, data, p - 1))):
                        cut_start, cut_end = p, q + 1
                    p = q + 1
                elif c == u'(' or c == u'（':
                    q = p + 1
                    while q < n and _is_space_or_edge(PyUnicode_READ(kind, data, q)):
                        q += 1
                    if q < n and _is_list_separator(PyUnicode_READ(kind, data, q)):
                        while q < n and (_is_space_or_edge(PyUnicode_READ(kind, data, q))
                                         or _is_list_separator(PyUnicode_READ(kind, data, q))):
                            q += 1
                        cut_start, cut_end = p + 1, q
                        p = q
                    else:
                        p += 1
                else:
                    p += 1
            elif _is_list_separator(c):
                q = p + 1
                count = 0
                while count < 7:
                    r = q
                    if r < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, r)):
                        r += 1
                    if r < n and _is_list_separator(PyUnicode_READ(kind, data, r)):
                        q = r + 1
                        count += 1
                    else:
                        break
                r = q
                if r < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, r)):
                    r += 1
                if r < n and (PyUnicode_READ(kind, data, r) == u')' or PyUnicode_READ(kind, data, r) == u'）'):
                    cut_start, cut_end = p, r  # the closing bracket stays
                    p = r + 1
                else:
                    p += 1
            else:
                p += 1
            if cut_start >= 0:
                if out == NULL:
                    out = PyMem_Malloc((n + 1) * kind)
                    if not out:
                        raise MemoryError()
                for q in range(copied_to, cut_start):
                    PyUnicode_WRITE(kind, out, length, PyUnicode_READ(kind, data, q))
                    length += 1
                copied_to = cut_end
        if out == NULL:
            return text
        for q in range(copied_to, n):
            PyUnicode_WRITE(kind, out, length, PyUnicode_READ(kind, data, q))
            length += 1
        return PyUnicode_FromKindAndData(kind, out, length)
    finally:
        PyMem_Free(out)


def without_space_before_punctuation(str text):
    """Runs of spaces to one; then, if " ," " ;" " )" or " :" is in the text, _SPACE_BEFORE_PUNCTUATION_RE.sub:
    " " before one of ",;.:)" that is followed by a space (as `re` reads \s) or ends the text goes."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, length = 0, squeezed
    cdef Py_UCS4 c, next_char
    cdef bint punctuation_after_space = False
    cdef void* out = PyMem_Malloc((n + 1) * kind)
    if not out:
        raise MemoryError()
    try:
        for i in range(n):  # runs of spaces to one, in `out`
            c = PyUnicode_READ(kind, data, i)
            if length and PyUnicode_READ(kind, out, length - 1) == u' ':
                if c == u' ':
                    continue
                if c == u',' or c == u';' or c == u')' or c == u':':
                    punctuation_after_space = True
            PyUnicode_WRITE(kind, out, length, c)
            length += 1
        if not punctuation_after_space:
            return text if length == n else PyUnicode_FromKindAndData(kind, out, length)
        squeezed, length, i = length, 0, 0
        while i < squeezed:  # writes never pass reads, so the same buffer serves
            c = PyUnicode_READ(kind, out, i)
            if c == u' ' and i + 1 < squeezed:
                next_char = PyUnicode_READ(kind, out, i + 1)
                if ((next_char == u',' or next_char == u';' or next_char == u'.' or next_char == u':' or next_char == u')')
                        and (i + 2 == squeezed or Py_UNICODE_ISSPACE(PyUnicode_READ(kind, out, i + 2)))):
                    PyUnicode_WRITE(kind, out, length, next_char)
                    length += 1
                    i += 2
                    continue
            PyUnicode_WRITE(kind, out, length, c)
            length += 1
            i += 1
        if length == n:
            return text
        return PyUnicode_FromKindAndData(kind, out, length)
    finally:
        PyMem_Free(out)


def without_doubled_separators(str text):
    """_DOUBLED_SEPARATOR_RE.sub(r"\\1"): a separator, then separators each after any spaces, is the
    first one alone. (No backtracking changes the match: a space is never a separator.)"""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, j, k, length = 0
    cdef Py_UCS4 c
    cdef void* out
    for i in range(n):
        if _is_first_separator(PyUnicode_READ(kind, data, i)):
            break
    else:
        return text
    out = PyMem_Malloc((n + 1) * kind)
    if not out:
        raise MemoryError()
    try:
        i = 0
        while i < n:
            c = PyUnicode_READ(kind, data, i)
            PyUnicode_WRITE(kind, out, length, c)
            length += 1
            i += 1
            if _is_first_separator(c):
                j = i
                while True:
                    k = j
                    while k < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, k)):
                        k += 1
                    if k < n and _is_repeated_separator(PyUnicode_READ(kind, data, k)):
                        j = k + 1
                    else:
                        break
                i = j
        return PyUnicode_FromKindAndData(kind, out, length)
    finally:
        PyMem_Free(out)


def worded_lines(str text):
    """The lines stripped of " ", those longer than 8 or holding a \\w character (a letter, a digit,
    any numeric, "_", as `re` reads \\w)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), line_start = 0, line_end, start, end, i
    cdef Py_UCS4 c
    cdef bint worded
    lines = []
    while line_start <= n:
        line_end = line_start
        while line_end < n and PyUnicode_READ(kind, data, line_end) != u'\n':
            line_end += 1
        start, end = line_start, line_end
        while start < end and PyUnicode_READ(kind, data, start) == u' ':
            start += 1
        while end > start and PyUnicode_READ(kind, data, end - 1) == u' ':
            end -= 1
        worded = end - start > 8
        if not worded:
            for i in range(start, end):
                c = PyUnicode_READ(kind, data, i)
                if Py_UNICODE_ISALNUM(c) or c == u'_':
                    worded = True
                    break
        if worded:
            lines.append(text[start:end])
        line_start = line_end + 1
    return lines


# ── 6. markers -> offsets: corpora/wikitext/parse.py plain_text_and_anchors ──


def plain_text_and_anchors(str text, list targets):
    """One scan in place of the two of the Python function (whose split only makes it faster there):
    the same text, anchors and bold spans. Anything the link pass cannot have written (an index that
    is not digits and "\\x1f", an index past the targets) is left to the Python function, which then
    fails or not exactly as it always did."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, length = 0, index, start, end
    cdef Py_ssize_t anchor_start = -1, bold_start = -1, anchor_index = 0, target_count = len(targets), digits
    cdef Py_UCS4 c
    cdef void* plain = PyMem_Malloc((n + 1) * kind)  # what it keeps is of the input's kind
    if not plain:
        raise MemoryError()
    anchors = []
    bold_spans = []
    try:
        while i < n:
            c = PyUnicode_READ(kind, data, i)
            i += 1
            if c >= 0x20 or c == u'\n' or c == u'\t':
                PyUnicode_WRITE(kind, plain, length, c)
                length += 1
            elif c == u'\x01':  # ANCHOR_OPEN, then its index and ANCHOR_INDEX_END
                index = digits = 0
                while True:
                    if i >= n:
                        return _python_plain_text_and_anchors(text, targets)
                    c = PyUnicode_READ(kind, data, i)
                    i += 1
                    if c == u'\x1f' and digits:
                        break
                    if c == u'\x06':  # NOWIKI_EDGE, deleted first
                        continue
                    if not (u'0' <= c <= u'9') or index > 100000000:
                        return _python_plain_text_and_anchors(text, targets)
                    index = index * 10 + <Py_ssize_t>c - 48  # c is an ASCII digit
                    digits += 1
                anchor_index = index
                anchor_start = length
            elif c == u'\x02':  # ANCHOR_CLOSE
                if anchor_start >= 0:
                    if anchor_index >= target_count:
                        return _python_plain_text_and_anchors(text, targets)
                    start, end = anchor_start, length
                    # Spaces at a link's edges are not part of the name it shows.
                    while start < end and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, plain, start)):
                        start += 1
                    while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, plain, end - 1)):
                        end -= 1
                    if start < end:
                        anchors.append(_new_tuple(Anchor, (start, end, targets[anchor_index])))
                anchor_start = -1
            elif c == u'\x04':  # BOLD_OPEN
                bold_start = length
            elif c == u'\x05':  # BOLD_CLOSE
                if bold_start >= 0:
                    bold_spans.append((bold_start, length))
                bold_start = -1
            elif c == u'\x03':  # KEPT_SPACE
                PyUnicode_WRITE(kind, plain, length, u' ')
                length += 1
            elif c != u'\x06':  # NOWIKI_EDGE goes; any other character stays
                PyUnicode_WRITE(kind, plain, length, c)
                length += 1
        return PyUnicode_FromKindAndData(kind, plain, length), anchors, bold_spans
    finally:
        PyMem_Free(plain)
