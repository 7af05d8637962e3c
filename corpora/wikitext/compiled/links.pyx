# cython: language_level=3, boundscheck=False, wraparound=False
"""Twin of corpora/wikitext/links.py: the internal link pass."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    Py_UNICODE_ISLOWER, Py_UNICODE_ISSPACE, Py_UNICODE_TOUPPER, PyUnicode_DATA,
    PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_READ_CHAR,
)

from corpora.titles import upper_first
from corpora.wikitext.markers import append_after_cut

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
