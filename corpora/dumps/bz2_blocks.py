"""Recovery from damaged bz2 archives: bz2 block mode (corpora/dumps/pages.py's reader falls back to it).

A corrupt bz2 block costs only the pages inside it. bz2 compresses in independent blocks (≤ 900 kB of
input each) that start with a 48-bit magic at any *bit* offset. The fast path (corpora/dumps/decoding.py)
streams through libbz2 in small steps; on an error it hands over to `recover_blocks` for the rest of
the input, which finds each block magic by bit, re-wraps the block as a one-block stream (header,
block, end-of-stream magic and the block's own CRC as the stream CRC) and decompresses it alone, so
that a bad block becomes one `Gap` (a "corrupt_archive" BadRecord naming the page it cut, if any)
and the blocks after it are read. The output already delivered is found again by content (its last
KEY_BYTES), so no page is lost or read twice at the switch.
"""
from __future__ import annotations

import bz2
from typing import BinaryIO, Iterator

# Compressed bytes kept for recovery: they must reach back to the block that produced the last
# delivered byte, i.e. cover the held-back output (≤ 1 MiB compressed even for incompressible data)
# plus the bad block (≤ ~0.92 MB) plus one step.
WINDOW_BYTES = 3 << 20


class Gap:
    """A marker in the stream of decompressed chunks: bytes were lost between its neighbours."""

    __slots__ = ("reason", "detail")

    def __init__(self, reason: str, detail: str):
        self.reason, self.detail = reason, detail


class CompressedReader:
    """Reads the next `limit` compressed bytes (None: to EOF), keeping the last WINDOW_BYTES for recovery."""

    def __init__(self, fileobj: BinaryIO, limit: int | None):
        self.fileobj, self.remaining = fileobj, limit
        self.consumed = 0  # bytes read so far; offsets below count from the reader's start
        self.window: list[bytes] = []
        self.window_start = 0  # offset of window[0][0]
        self.window_size = 0

    def read(self, n: int) -> bytes:
        if self.remaining is not None:
            n = min(n, self.remaining)
        data = self.fileobj.read(n) if n > 0 else b""
        if self.remaining is not None:
            self.remaining -= len(data)
        self.consumed += len(data)
        if data:
            self.window.append(data)
            self.window_size += len(data)
            while self.window_size - len(self.window[0]) >= WINDOW_BYTES:
                dropped = self.window.pop(0)
                self.window_size -= len(dropped)
                self.window_start += len(dropped)
        return data


_BLOCK_MAGIC = 0x314159265359  # pi: starts every compressed block
_EOS_MAGIC = 0x177245385090  # sqrt(pi): ends every stream, followed by the 32-bit stream CRC
_MASK48 = (1 << 48) - 1
KEY_BYTES = 1 << 12
_MAX_BLOCK_BYTES = 2 << 20  # no valid block is this long: past it, the bytes are garbage


def _magic_patterns(magic: int) -> list[tuple[int, bytes, int]]:
    """(bit shift s, the whole bytes of the magic when it starts s bits into a byte, their byte offset).

    A byte-string search for these finds candidates at C speed; each is then checked bit by bit.
    """
    patterns = []
    for shift in range(8):
        window = (magic << (8 - shift)).to_bytes(7, "big")  # 7 bytes: s spare bits, 48 magic bits, 8-s spare
        patterns.append((shift, window[:6], 0) if shift == 0 else (shift, window[1:6], 1))
    return patterns


_PATTERNS = {_BLOCK_MAGIC: _magic_patterns(_BLOCK_MAGIC), _EOS_MAGIC: _magic_patterns(_EOS_MAGIC)}


def _find_magic(buf: bytes, start_bit: int) -> tuple[int, int] | None:
    """The first (bit offset, magic) at or after `start_bit` in `buf`, block or end-of-stream."""
    best: tuple[int, int] | None = None
    for magic, patterns in _PATTERNS.items():
        for shift, pattern, lead in patterns:
            first = max(0, -(-(start_bit - shift) // 8))  # first byte whose bit `shift` is >= start_bit
            j = buf.find(pattern, first + lead)
            while j >= 0:
                i = j - lead
                bit = 8 * i + shift
                if best is not None and bit >= best[0]:
                    break
                window = buf[i : i + 7]
                if len(window) == 7 and (int.from_bytes(window, "big") >> (8 - shift)) & _MASK48 == magic:
                    best = (bit, magic)
                    break
                j = buf.find(pattern, j + 1)
    return best


def _bits(buf: bytes, start: int, end: int) -> int:
    """Bits [start, end) of buf as an integer."""
    lo, hi = start // 8, -(-end // 8)
    value = int.from_bytes(buf[lo:hi], "big") >> (8 * hi - end)
    return value & ((1 << (end - start)) - 1)


def _decode_block(buf: bytes, start: int, end: int) -> bytes | None:
    """The block at bits [start, end) of buf, re-wrapped as a one-block stream; None if it is bad.

    The stream CRC of a one-block stream is the block's CRC, the 32 bits after its magic, so libbz2
    verifies the block as it would in place.
    """
    n = end - start
    if n < 48 + 32 + 8:
        return None
    block = _bits(buf, start, end)
    crc = (block >> (n - 80)) & 0xFFFFFFFF
    total = n + 80
    pad = -total % 8
    stream = b"BZh9" + (((block << 80) | (_EOS_MAGIC << 32) | crc) << pad).to_bytes((total + pad) // 8, "big")
    decompressor = bz2.BZ2Decompressor()
    try:
        out = decompressor.decompress(stream)
    except (OSError, EOFError, ValueError):
        return None
    return out if decompressor.eof else None


def _clean_between(region: bytes) -> bool:
    """Bytes between the end of one stream and the next block: a stream header, after empty streams."""
    if len(region) < 4 or region[-4:-1] != b"BZh":
        return False
    return _clean_trailing(region[:-4])


def _clean_trailing(region: bytes) -> bool:
    """Bytes after the end of a stream with no block after them: nothing, or empty streams."""
    if not region:
        return True
    try:
        return bz2.decompress(region) == b""
    except (OSError, EOFError, ValueError):
        return False


class _Window:
    """The compressed bytes block mode looks at, by absolute bit offset, refilled from the reader."""

    def __init__(self, reader: CompressedReader):
        self.reader = reader
        self.buf = b"".join(reader.window)
        self.base = reader.window_start  # byte offset of buf[0]
        self.eof = False

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def find(self, from_bit: int, keep_bit: int | None):
        """(bit, magic) of the first magic at or after `from_bit`; None at the end of the input;
        "too_long" when the bytes kept from `keep_bit` grow past any valid block."""
        search = from_bit
        while True:
            hit = _find_magic(self.buf, max(0, search - 8 * self.base))
            if hit is not None:
                return 8 * self.base + hit[0], hit[1]
            if keep_bit is not None and self.end - keep_bit // 8 > _MAX_BLOCK_BYTES:
                return "too_long"
            search = max(search, 8 * (self.end - 7))  # a magic may straddle the refill
            if self.eof:
                return None
            data = self.reader.read(1 << 20)
            if not data:
                self.eof = True
                return None
            keep_from = min(search, keep_bit) if keep_bit is not None else search - 8 * 64
            drop = max(0, keep_from // 8 - self.base)
            self.buf = self.buf[drop:] + data
            self.base += drop

    def bytes(self, start: int, end: int) -> bytes | None:
        """Bytes [start, end), or None when some of them were dropped already."""
        if start < self.base:
            return None
        return self.buf[start - self.base : end - self.base]


def recover_blocks(reader: CompressedReader, tail: bytes, error: str) -> Iterator[bytes | Gap]:
    """Block mode from the oldest kept compressed byte to the end of the input.

    Blocks whose output was delivered before the error are skipped: the block holding the end of
    `tail` is the frontier, and only its bytes after that point are new. Without a frontier (nothing
    delivered yet, or the bad block had already delivered garbage) new output starts after the first
    bad block.
    """
    win = _Window(reader)
    seeking = bool(tail)  # looking for the frontier; blocks before it were delivered
    carry = b""  # end of the previous block's output while seeking: the tail may span two blocks
    damage: list = []  # [first compressed byte, reason] of damage not yet reported

    def mark(offset: int, reason: str = "corrupt_archive") -> None:
        if not damage:
            damage.extend([offset, reason])
        elif reason != "corrupt_archive":
            damage[1] = reason

    def report(end: int) -> Iterator[Gap]:
        if damage:
            start, reason = damage
            damage.clear()
            yield Gap(reason, f"bz2 bytes {start}-{end} unreadable ({error[:40]}); pages in them lost, read on after")

    cursor = 8 * win.base  # bit from which the next magic is searched
    # Byte at which a stream ended (or the input starts): what follows must be a stream header.
    stream_end: int | None = win.base if (not tail and win.base == 0) else None
    while True:
        hit = win.find(cursor, None if stream_end is None else 8 * stream_end)
        if hit is None or hit == "too_long":
            if not seeking:
                if stream_end is not None:
                    region = win.bytes(stream_end, win.end)
                    if hit == "too_long" or region is None or not _clean_trailing(region):
                        mark(stream_end)
                elif win.end > cursor // 8:
                    mark(cursor // 8)
            if hit is None:
                yield from report(win.end)
                return
            stream_end, cursor = None, 8 * (win.end - 7)
            continue
        bit, magic = hit
        if magic == _EOS_MAGIC:
            # An end of stream with no block before it in view: an empty stream, or the window began
            # inside the last block of a stream.
            stream_end = -(-(bit + 80) // 8)
            cursor = 8 * stream_end
            continue
        if stream_end is not None and not seeking:
            region = win.bytes(stream_end, bit // 8)
            if region is None or not _clean_between(region):
                mark(stream_end)
        stream_end = None
        nxt = win.find(bit + 48, bit)
        if nxt is None or nxt == "too_long":
            # No end to this block: the input was cut inside it, or it runs into garbage.
            mark(bit // 8, "truncated_archive" if nxt is None else "corrupt_archive")
            seeking = False
            cursor = 8 * win.end if nxt is None else bit + 48
            continue
        out = _decode_block(win.buf, bit - 8 * win.base, nxt[0] - 8 * win.base)
        if out is None:
            mark(bit // 8)
            seeking = False  # the frontier was inside the bad block, or before the window
        else:
            if seeking:
                joined = carry + out
                at = joined.find(tail)
                if at >= 0:
                    seeking = False
                    out = joined[max(at + len(tail), len(carry)) :]
                else:
                    carry, out = out[-len(tail) :], b""
            if out:
                yield from report(bit // 8)
                yield out
        if nxt[1] == _EOS_MAGIC:
            stream_end = -(-(nxt[0] + 80) // 8)
            cursor = 8 * stream_end
        else:
            cursor = nxt[0]
