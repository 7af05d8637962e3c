"""What the compiled passes share about a str's storage."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t


cdef extern from "Python.h":
    enum: PyUnicode_1BYTE_KIND
    enum: PyUnicode_2BYTE_KIND
    # The index of `ch` in text[start:end] (-1 if absent), found at memchr speed.
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2


ctypedef fused code_unit:  # a str's characters as stored, one C type per kind
    uint8_t
    uint16_t
    uint32_t
