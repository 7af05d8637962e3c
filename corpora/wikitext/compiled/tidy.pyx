# cython: language_level=3, boundscheck=False, wraparound=False
"""Twins of corpora/wikitext/tidy.py: spaces and empty markup, the bracket residue, doubled separators,
worded lines."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE, PyUnicode_DATA, PyUnicode_FromKindAndData,
    PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_WRITE,
)
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy

from corpora.wikitext.compiled.unicode_text cimport PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, code_unit


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
