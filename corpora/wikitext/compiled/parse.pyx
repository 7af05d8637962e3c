# cython: language_level=3, boundscheck=False, wraparound=False
"""Twin of corpora/wikitext/parse.py's last pass: markers to offsets."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE, PyUnicode_DATA, PyUnicode_FromKindAndData, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ, PyUnicode_WRITE,
)

from corpora.wikitext.markers import Anchor

_new_tuple = tuple.__new__  # Anchor(...) without the Python-level __new__ of a NamedTuple


def _python_plain_text_and_anchors(text, targets):
    from corpora.wikitext.parse import plain_text_and_anchors
    return plain_text_and_anchors(text, targets)


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
