# cython: language_level=3, boundscheck=False, wraparound=False
"""Twins of corpora/wikitext/lines.py: bold and italic quotes in a line, list markers."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    PyUnicode_DATA, PyUnicode_FromKindAndData, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ,
)
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy

from corpora.wikitext.compiled.unicode_text cimport PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, code_unit


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
