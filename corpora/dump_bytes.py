"""Decompressed bytes of a dump file: bz2 (single or multistream) or plain XML, as UTF-8 chunks.

- Multistream dumps are many concatenated bz2 streams; `bz2.BZ2Decompressor` stops at the end of each,
  so a new one is started on its `unused_data`. Output per call is capped so that a highly compressible
  page cannot blow up memory either.
- Damage switches to block mode (corpora/bz2_blocks.py). Output is held back by 1 MiB so that a block
  whose CRC fails after it decoded to garbage delivers none of it.
- Text encoding comes from the byte-order mark or the XML declaration: UTF-8 and UTF-16 (LE/BE) are read
  (UTF-16 is transcoded to UTF-8 as it streams); any other declared encoding is an ArchiveError
  "unsupported_encoding" that says how to convert the file.
A chunk stream may hold `Gap` markers where bytes were lost; corpora/dumps.py turns them, and any
ArchiveError, into BadRecords.
"""
from __future__ import annotations

import bz2
import codecs
import re
from typing import BinaryIO, Iterable, Iterator

from corpora.bz2_blocks import KEY_BYTES, CompressedReader, Gap, recover_blocks

BLOCK_BYTES = 1 << 20  # plain-XML bytes per read: per-call overhead vanishes, memory stays small
# Compressed bytes per read, and decompressed bytes per decompressor call (the bound that keeps memory
# small on bz2 "bombs"). Large on purpose: the consumer parses every chunk before the next is
# decompressed, and alternating libbz2's 3.6 MB working set with the parser's in 64 kB steps cost the
# whole wiki_mrc job 4-25% more CPU on the 16x English excerpt (as the shared machine's caches were
# contended: 18.3-19.4 against 14.1-14.5 CPU-s in one series, 15.3 against 14.7 in a quieter one),
# though decompression alone runs at the same speed either way. libbz2 raises on a bad block only
# after producing the call's output, which Python then drops; block mode (bz2_blocks.py) finds the
# dropped bytes again, so the step size does not change what is recovered.
STEP_BYTES = 1 << 20
MAX_OUT_BYTES = 1 << 22
# Decompressed bytes held back until libbz2 has checked the block they came from (see bz2_chunks):
# a block holds 900 kB before its run-length step, which text barely expands (0.86 MiB per block in
# the English excerpt).
HOLD_BYTES = 1 << 20


class ArchiveError(Exception):
    """Raised inside the chunk stream; iter_pages turns it into a BadRecord after the good pages."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason)
        self.reason, self.detail = reason, detail



def bz2_chunks(
    fileobj: BinaryIO, limit: int | None, require_data: bool, out_bytes: int = MAX_OUT_BYTES
) -> Iterator[bytes | Gap]:
    """Decompressed bytes of every concatenated bz2 stream in the next `limit` bytes (None: to EOF).

    Damage anywhere switches to block mode (corpora/bz2_blocks.py): the chunks then hold a Gap
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
