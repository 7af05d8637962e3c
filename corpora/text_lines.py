"""One line of a user's text file as str: the one decoding rule every reader of plain text shares."""
from __future__ import annotations

# Files written on Windows (Notepad, Excel's "UTF-8 CSV", many corpus exports) open with a byte-order
# mark, and files concatenated with `cat` carry one at the start of each part. Python's strip() and
# split() keep U+FEFF (it is not whitespace), so it would reach NER, the aligner and the vocabulary as
# the first character of a sentence. At a line's start it is never text: it is dropped there.
BYTE_ORDER_MARK = "\ufeff"


def decode_line(raw: bytes) -> str | None:
    """The line's text without its line ending or a leading byte-order mark; None if not UTF-8."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    line = line.rstrip("\r\n")
    return line.lstrip(BYTE_ORDER_MARK) if line.startswith(BYTE_ORDER_MARK) else line
