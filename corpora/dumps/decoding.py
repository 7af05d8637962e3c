"""Decompressed bytes of a dump file: bz2 (single or multistream) or plain XML, as UTF-8 chunks.

- Multistream dumps are many concatenated bz2 streams; `bz2.BZ2Decompressor` stops at the end of each,
  so a new one is started on its `unused_data`. Output per call is capped so that a highly compressible
  page cannot blow up memory either.
- Damage switches to block mode (corpora/dumps/bz2_blocks.py). Output is held back by 1 MiB so that a block
  whose CRC fails after it decoded to garbage delivers none of it.
- Text encoding comes from the byte-order mark or the XML declaration: UTF-8 and UTF-16 (LE/BE) are read
  (UTF-16 is transcoded to UTF-8 as it streams); any other declared encoding is an ArchiveError
  "unsupported_encoding" that says how to convert the file.
- A whole local dump, and any byte range of a seekable file (a multistream range, on a local disk
  or through Beam's filesystems), is decompressed by indexed_bzip2's decoder (faster than libbz2 on
  one core; benchmarks/README.md) where that package is installed; libbz2 (Python's bz2 module)
  stays the reference and takes over on anything unusual (see `bz2_chunks`).
A chunk stream may hold `Gap` markers where bytes were lost; corpora/dumps/pages.py turns them, and any
ArchiveError, into BadRecords.
"""
from __future__ import annotations

import atexit
import bz2
import codecs
import io
import os
import re
import stat
from collections import deque
from typing import BinaryIO, Callable, Iterable, Iterator

from corpora.dumps.bz2_blocks import KEY_BYTES, CompressedReader, Gap, recover_blocks

BLOCK_BYTES = 1 << 20  # plain-XML bytes per read: per-call overhead vanishes, memory stays small
# Compressed bytes per read, and decompressed bytes per decompressor call (the bound that keeps memory
# small on bz2 "bombs"). Large on purpose: the consumer parses every chunk before the next is
# decompressed, and in small steps libbz2's 3.6 MB working set and the parser's evict each other from
# the caches, which costs the whole job CPU though decompression alone runs at the same speed either
# way (benchmarks/README.md, "Choices in the code"). libbz2 raises on a bad block only
# after producing the call's output, which Python then drops; block mode (bz2_blocks.py) finds the
# dropped bytes again, so the step size does not change what is recovered.
STEP_BYTES = 1 << 20
MAX_OUT_BYTES = 1 << 22
# Decompressed bytes per indexed_bzip2 read (about 4.5 bz2 blocks). Inside the job the decoder shares
# the caches with the parser as libbz2 does (see STEP_BYTES), and larger reads lose less to that
# (benchmarks/README.md).
FAST_STEP_BYTES = 4 << 20
# Decompressed bytes held back until libbz2 has checked the block they came from (see bz2_chunks):
# a block holds 900 kB before its run-length step, which text barely expands (0.86 MiB per block in
# the English excerpt).
HOLD_BYTES = 1 << 20


class ArchiveError(Exception):
    """Raised inside the chunk stream; iter_pages turns it into a BadRecord after the good pages."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason)
        self.reason, self.detail = reason, detail



def bz2_chunks(fileobj: BinaryIO, limit: int | None, require_data: bool) -> Iterator[bytes | Gap]:
    """Decompressed bytes of every concatenated bz2 stream in the next `limit` bytes (None: to EOF).

    Where indexed_bzip2 is installed and XLU_PURE_PYTHON is not 1, it decodes a whole local file (a
    real file descriptor, read from its start) and the bytes from here of any seekable file object
    (a multistream byte range, a file through Beam's filesystems); a stream without seek goes through
    libbz2 (`libbz2_chunks`). Both give the same chunks' bytes, damage included
    (`_indexed_bzip2_chunks` says how).
    """
    start = _position(fileobj)

    def reference() -> Iterator[bytes | Gap]:
        if start is not None:
            fileobj.seek(start)
        return libbz2_chunks(fileobj, limit, require_data)

    if _indexed_bzip2 is not None and start is not None:
        if limit is None and start == 0 and _whole_local_file(fileobj):
            return _indexed_bzip2_chunks(fileobj, fileobj, 0, os.fstat(fileobj.fileno()).st_size, reference)
        size = limit if limit is not None else _bytes_to_end(fileobj, start)
        if size:
            return _indexed_bzip2_chunks(fileobj, _RangeView(fileobj, start, size), start, size, reference)
    return reference()


def _position(fileobj: BinaryIO) -> int | None:
    """Where a seekable file object stands, or None (a pipe, a stream without seek)."""
    try:
        return fileobj.tell() if fileobj.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


def _bytes_to_end(fileobj: BinaryIO, start: int) -> int | None:
    try:
        end = fileobj.seek(0, io.SEEK_END)
        fileobj.seek(start)
    except (AttributeError, OSError, ValueError):
        return None
    return end - start if end is not None and end > start else None


class _RangeView(io.RawIOBase):
    """Bytes [start, start + size) of a seekable file object, as a file of its own: what indexed_bzip2
    reads a byte range through (it reads a Python file object from its offset 0, in large reads)."""

    def __init__(self, fileobj: BinaryIO, start: int, size: int):
        super().__init__()
        self._file, self._start, self._size, self._pos = fileobj, start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = min(max(0, base + offset), self._size)
        return self._pos

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._size - self._pos)
        if n <= 0:
            return 0
        self._file.seek(self._start + self._pos)
        data = self._file.read(n)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def libbz2_chunks(
    fileobj: BinaryIO, limit: int | None, require_data: bool, out_bytes: int = MAX_OUT_BYTES
) -> Iterator[bytes | Gap]:
    """Decompressed bytes of every concatenated bz2 stream in the next `limit` bytes (None: to EOF),
    through libbz2: the reference decoder.

    Damage anywhere switches to block mode (corpora/dumps/bz2_blocks.py): the chunks then hold a Gap
    wherever a block was lost.
    """
    reader = CompressedReader(fileobj, limit)
    decompressor = bz2.BZ2Decompressor()
    fed = False  # has the current decompressor seen input without reaching its end? (a stream is open)
    tail = b""  # the last KEY_BYTES delivered: recovery finds where they end in the re-read blocks
    # libbz2 checks a block's CRC only after it has produced the block's output: a bad block that
    # decodes to garbage would deliver it. Output is held back by more than a text block's size, so
    # that only checked bytes leave; on an error the held bytes are dropped and block mode re-reads.
    held = bytearray()
    while True:
        data = reader.read(STEP_BYTES)
        if not data:
            break
        while data is not None:
            # Each call yields at most out_bytes, and held bytes leave as soon as they pass the
            # hold-back: memory stays bounded even on a bz2 "bomb" (≈45 MB out per 900 kB block).
            try:
                out = decompressor.decompress(data, out_bytes)
            except (OSError, EOFError, ValueError) as error:
                # The output of this call is gone with the exception; block mode finds it again.
                yield from recover_blocks(reader, tail, str(error))
                return
            fed = True
            held += out
            if len(held) >= HOLD_BYTES + STEP_BYTES:
                ready = bytes(held[: len(held) - HOLD_BYTES])
                del held[: len(ready)]
                tail = (tail[-KEY_BYTES:] + ready[-KEY_BYTES:])[-KEY_BYTES:]
                yield ready
            if decompressor.eof:
                # One stream ended; in a multistream dump the next starts right after it.
                data = decompressor.unused_data
                decompressor = bz2.BZ2Decompressor()
                fed = False
                if not data:
                    data = None
            elif decompressor.needs_input:
                data = None
            else:
                data = b""  # more output is waiting for the same input
    if held:
        yield bytes(held)
    if fed:
        raise ArchiveError("truncated_archive", f"bz2 stream cut off after {reader.consumed} compressed bytes")
    if require_data and not reader.consumed:
        raise ArchiveError("empty_input", "empty file")


def _import_indexed_bzip2():
    if os.environ.get("XLU_PURE_PYTHON") == "1":
        return None
    try:
        import indexed_bzip2
    except ImportError:  # a platform without its wheel: libbz2 decodes, at its speed
        return None
    return indexed_bzip2


_indexed_bzip2 = _import_indexed_bzip2()


# id(file object) -> (the indexed_bzip2 reader decoding it, the file offset its input starts at).
# The reader reads by itself (the descriptor, or a range view that seeks before each read), so the
# file object's own position says nothing of how far decoding is.
_DECODERS: dict[int, tuple[object, int]] = {}


def compressed_position(fileobj: BinaryIO) -> int:
    """Bytes of `fileobj` the decoder reading it has consumed: how far a read is, for progress."""
    decoder = _DECODERS.get(id(fileobj))
    if decoder is not None:
        reader, base = decoder
        try:
            return base + reader.tell_compressed() // 8
        except Exception:  # noqa: BLE001 - closed between the lookup and the call
            pass
    return fileobj.tell()


@atexit.register
def _close_open_decoders() -> None:
    """A reader left open at interpreter exit (a read abandoned mid-way, its generator never closed)
    aborts the process from its C++ side; closing it first lets the process exit normally."""
    for reader, _ in list(_DECODERS.values()):
        try:
            reader.close()
        except Exception:  # noqa: BLE001 - already closed
            pass


def _whole_local_file(fileobj: BinaryIO) -> bool:
    """indexed_bzip2 reads a file descriptor from its first byte, whatever the file object's position;
    a Python-level file object (GCS, BytesIO) it would read through callbacks, and an instance left
    unclosed at interpreter exit then aborts the process. So: a regular file at offset 0 only."""
    try:
        return fileobj.tell() == 0 and stat.S_ISREG(os.fstat(fileobj.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _indexed_bzip2_chunks(
    fileobj: BinaryIO, source: BinaryIO, base: int, size: int, reference: Callable[[], Iterator[bytes | Gap]]
) -> Iterator[bytes | Gap]:
    """The `size` bytes of `source` (the file itself, or a range view of it starting at `base`)
    through indexed_bzip2, on one core (parallelization=1: no threads, so the CPU time is all the
    decoder's own), with libbz2's rules for damage.

    Like libbz2, it checks a block's CRC only after it has produced the block's output (a flipped
    byte can give hundreds of kB of garbage before the error), so output is held back by HOLD_BYTES as
    in `libbz2_chunks`: only checked bytes leave. When it raises, or stops before the end of its
    input (it skips trailing bytes after a stream with a warning on stderr), or the input holds no
    data, the input is read again from its start by the reference and what it gives after the bytes
    already delivered is passed on: damage is found, reported and recovered from exactly as libbz2
    does, at the cost of decompressing the damaged input twice.
    """
    held: deque[bytes] = deque()  # the decoder's chunks, passed on whole: no copy
    held_bytes = delivered = 0
    clean = False
    try:
        reader = _indexed_bzip2.open(source, parallelization=1)
    except Exception:  # noqa: BLE001 - not even a bz2 header: the reference says what it is
        yield from reference()
        return
    _DECODERS[id(fileobj)] = (reader, base)
    try:
        while True:
            try:
                out = reader.read(FAST_STEP_BYTES)
            except Exception:  # noqa: BLE001 - any decoder error: the reference names it
                break
            if not out:
                clean = bool(delivered or held_bytes) and reader.tell_compressed() == 8 * size
                break
            held.append(out)
            held_bytes += len(out)
            while held_bytes - len(held[0]) >= HOLD_BYTES:
                ready = held.popleft()
                held_bytes -= len(ready)
                delivered += len(ready)
                yield ready
    finally:
        _DECODERS.pop(id(fileobj), None)
        reader.close()
    if clean:
        yield from held
        return
    skip = delivered  # checked bytes, equal to the reference's first ones
    for chunk in reference():
        if skip and not isinstance(chunk, Gap):
            if len(chunk) <= skip:
                skip -= len(chunk)
                continue
            chunk, skip = chunk[skip:], 0
        yield chunk


_UTF8_NAMES = {"utf-8", "utf8", "us-ascii", "ascii"}
_DECLARATION_RE = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")


def _detect_encoding(head: bytes) -> tuple[str, int]:
    """(codec, bytes of byte-order mark) from a file's first bytes: the BOM, else the XML declaration."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise ArchiveError("unsupported_encoding", "UTF-32 byte-order mark; only UTF-8 and UTF-16 are read: "
                                                    "convert with iconv -f UTF-32 -t UTF-8")
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8", 3
    if head.startswith(b"\xff\xfe"):
        return "utf-16-le", 2
    if head.startswith(b"\xfe\xff"):
        return "utf-16-be", 2
    if head.startswith(b"<\x00"):  # UTF-16 without a mark: "<?xml" or "<mediawiki" in two-byte units
        return "utf-16-le", 0
    if head.startswith(b"\x00<"):
        return "utf-16-be", 0
    match = _DECLARATION_RE.match(head.lstrip())
    if match:
        name = match.group(1).decode("ascii").lower()
        if name not in _UTF8_NAMES and not name.startswith("utf-16") and name != "utf16":
            raise ArchiveError("unsupported_encoding", f"the XML declaration says encoding={name!r}; only UTF-8 "
                                f"and UTF-16 are read: convert with iconv -f {name} -t UTF-8")
    # A declared UTF-16 with ASCII-compatible bytes is a wrong declaration: the bytes decide.
    return "utf-8", 0


def utf8_chunks(chunks: Iterable[bytes | Gap]) -> Iterator[bytes | Gap]:
    """The chunks as UTF-8: passed through when they are, transcoded from UTF-16 as they stream.

    Invalid UTF-16 (a lone surrogate) is carried through as invalid UTF-8, so that its page becomes a
    "not_utf8" BadRecord like any other undecodable page, not a changed text.
    """
    it = iter(chunks)
    head = b""
    pending: list[Gap] = []
    for chunk in it:
        if isinstance(chunk, Gap):
            pending.append(chunk)
            continue
        head += chunk
        if len(head) >= 512:
            break
    if not head:
        yield from pending
        return
    codec, bom = _detect_encoding(head)
    if codec == "utf-8":
        yield from pending
        yield head[bom:]
        yield from it
        return
    decoder = codecs.getincrementaldecoder(codec)(errors="surrogatepass")
    yield from pending
    yield decoder.decode(head[bom:]).encode("utf-8", "surrogatepass")
    for chunk in it:
        if isinstance(chunk, Gap):
            # After lost bytes the two-byte units may be misaligned; decoding restarts fresh.
            decoder = codecs.getincrementaldecoder(codec)(errors="surrogatepass")
            yield chunk
            continue
        yield decoder.decode(chunk).encode("utf-8", "surrogatepass")
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest.encode("utf-8", "surrogatepass")


def plain_chunks(fileobj: BinaryIO) -> Iterator[bytes]:
    empty = True
    for chunk in iter(lambda: fileobj.read(BLOCK_BYTES), b""):
        empty = False
        yield chunk
    if empty:
        raise ArchiveError("empty_input", "empty file")
