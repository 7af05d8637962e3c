"""Streaming reader for MediaWiki `pages-articles` XML dumps (plain, .bz2 and multistream .bz2).

Why it is built this way (DESIGN.md §2, wiki_mrc stage 1):
- Memory must not grow with the dump. A full English dump is ~100 GB of XML; one `iterparse` over it
  keeps the tree (or needs careful clearing) and, worse, one malformed byte anywhere kills the whole
  file. So the decompressed bytes are cut into `<page>` … `</page>` pieces by a plain byte search and
  each piece is parsed on its own: at most one page (capped by `max_page_bytes`) is held at a time, and
  a broken page becomes one `BadRecord` while the pages after it still come out.
- MediaWiki escapes `<` in every text node, so the literal bytes `<page>` and `</page>` only occur as
  tags; they are searched for anywhere, not only at line starts.
- Multistream dumps are many concatenated bz2 streams; `bz2.BZ2Decompressor` stops at the end of each,
  so a new one is started on its `unused_data`. Output per call is capped so that a highly compressible
  page cannot blow up memory either.
- A corrupt bz2 block costs only the pages inside it. bz2 compresses in independent blocks (≤ 900 kB of
  input each) that start with a 48-bit magic at any *bit* offset. The fast path streams through libbz2
  in small steps; on an error the reader falls back to block mode for the rest of the input: it finds
  each block magic by bit, re-wraps the block as a one-block stream (header, block, end-of-stream magic
  and the block's own CRC as the stream CRC) and decompresses it alone, so that a bad block becomes one
  "corrupt_archive" BadRecord (naming the page it cut, if any) and the blocks after it are read. The
  output already delivered is found again by content, so no page is lost or read twice at the switch.
  Output is held back by 1 MiB so that a block whose CRC fails after it decoded to garbage delivers
  none of it. A page cut by the damage is the BadRecord; the other pages inside the lost block cannot
  be named (their bytes are gone), so the record's excerpt says the block's pages were lost.
- A cut archive yields every page completed before the cut, then one BadRecord.
- Text encoding comes from the byte-order mark or the XML declaration: UTF-8 and UTF-16 (LE/BE) are read
  (UTF-16 is transcoded to UTF-8 as it streams); any other declared encoding is one BadRecord
  "unsupported_encoding" that says how to convert the file. Only a file's first bytes carry a mark, so
  multistream byte ranges after the first are taken as UTF-8 (as every Wikipedia dump is). An empty
  file, or one without a single `<page>`, is one BadRecord too ("empty_input", "no_pages"), so that it
  shows in the counts.

The export schema version (0.10, 0.11, …) changes the XML namespace URI, so tags are matched by local
name. A page parsed on its own carries no namespace in practice (it is declared on `<mediawiki>`).
"""
from __future__ import annotations

import bz2
import codecs
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator
from xml.sax.saxutils import unescape

BLOCK_BYTES = 1 << 20  # plain-XML bytes per read: per-call overhead vanishes, memory stays small
# Compressed bytes per decompressor call. libbz2 raises on a bad block only after it has produced the
# output of the call, which Python then drops: small steps bound that (the block-mode recovery below
# finds the dropped bytes again anyway).
STEP_BYTES = 1 << 16
MAX_OUT_BYTES = 1 << 16  # decompressed bytes per decompressor call: bounds memory on bz2 "bombs"
# Decompressed bytes held back until libbz2 has checked the block they came from (see _bz2_chunks):
# a block holds 900 kB before its run-length step, which text barely expands (0.86 MiB per block in
# the English excerpt).
HOLD_BYTES = 1 << 20
# Compressed bytes kept for recovery: they must reach back to the block that produced the last
# delivered byte, i.e. cover the held-back output (≤ 1 MiB compressed even for incompressible data)
# plus the bad block (≤ ~0.92 MB) plus one step.
WINDOW_BYTES = 3 << 20
# MediaWiki caps a revision at 2 MiB of wikitext ($wgMaxArticleSize): a few MB of XML once escaped.
DEFAULT_MAX_PAGE_BYTES = 50_000_000  # so a 50 MB page is damage
EXCERPT_CHARS = 200
STAGE = "read"

_OPEN = b"<page>"
_CLOSE = b"</page>"
_HEAD_BYTES = 4096  # enough of a page to find its title and id for a BadRecord
_ID_RE = re.compile(rb"<id>\s*(-?\d+)\s*</id>")
_TITLE_RE = re.compile(rb"<title>(.*?)</title>", re.S)


@dataclass(frozen=True)
class RawPage:
    page_id: int
    title: str
    ns: int
    redirect: str | None  # the <redirect title="..."/> attribute, raw (not normalised)
    text: str  # wikitext of the latest revision ("" if none)


@dataclass(frozen=True)
class BadRecord:
    source: str  # dump path (or path:byte-range)
    record_id: str  # page id if known, else title, else "offset:<n>"
    stage: str  # "read"
    reason: str  # short, machine-readable (the Beam counter is read/<reason>)
    excerpt: str  # first ~200 chars, decoded with errors="replace"


@dataclass(frozen=True)
class SiteInfo:
    """The `<siteinfo>` header: which wiki, and its localised namespace names (ns key -> name)."""

    dbname: str
    lang: str  # the xml:lang attribute of <mediawiki>
    base: str
    namespaces: dict[int, str] = field(default_factory=dict)


def compression_for(path: str) -> str:
    if path.endswith(".bz2"):
        return "bz2"
    if path.endswith(".xml"):
        return "none"
    raise ValueError(f"{path}: unknown dump format; expected a .xml or .xml.bz2 pages-articles dump")


# ─────────────────────────────── public readers ───────────────────────────────


def iter_pages(
    chunks: Iterable[bytes], source: str, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
) -> Iterator[RawPage | BadRecord]:
    """Pages of a decompressed dump given as byte chunks of any size (page boundaries may fall anywhere)."""
    scanner = _PageScanner(max_page_bytes)
    try:
        for chunk in chunks:
            if isinstance(chunk, _Gap):
                # Bytes were lost here: the page they cut is reported, the pages after it go on.
                if scanner.in_page:
                    head = scanner.partial_head()
                    record_id = _record_id(head, scanner.page_offset)
                    yield BadRecord(source, record_id, STAGE, chunk.reason, f"{chunk.detail} | {_excerpt(head)}"[:EXCERPT_CHARS])
                else:
                    yield BadRecord(source, f"offset:{scanner.offset}", STAGE, chunk.reason, chunk.detail)
                scanner.reset()
                continue
            for event in scanner.feed(chunk):
                yield _record(event, source)
    except _ArchiveError as error:
        # Everything completed before the damage has been yielded; report where it stopped.
        if scanner.in_page:
            head = scanner.partial_head()
            yield _bad(source, head, scanner.page_offset, error.reason)
        else:
            yield BadRecord(source, f"offset:{scanner.offset}", STAGE, error.reason, error.detail)
        return
    for event in scanner.close():
        yield _record(event, source)


def iter_pages_from_file(
    fileobj: BinaryIO, source: str, compression: str, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
) -> Iterator[RawPage | BadRecord]:
    """Pages of a whole dump file; compression is "bz2" (single or multistream) or "none".

    A file that yields nothing at all (no page, no damage) is one "no_pages" BadRecord.
    """
    if compression == "bz2":
        chunks = _bz2_chunks(fileobj, limit=None, require_data=True)
    elif compression == "none":
        chunks = _plain_chunks(fileobj)
    else:
        raise ValueError(f"{source}: unknown compression {compression!r}; expected 'bz2' or 'none'")
    return _counted(iter_pages(_utf8_chunks(chunks), source, max_page_bytes), source)


def _counted(records: Iterator[RawPage | BadRecord], source: str) -> Iterator[RawPage | BadRecord]:
    empty = True
    for record in records:
        empty = False
        yield record
    if empty:
        yield BadRecord(source, "file", STAGE, "no_pages", "no <page> element in the file; is it a pages-articles dump?")


def read_stream_range(
    fileobj: BinaryIO, start: int, end: int | None, source: str, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
) -> Iterator[RawPage | BadRecord]:
    """Pages of the bz2 streams in bytes [start, end) of a multistream dump (end None: to EOF).

    `start` must be a stream start (an index offset); `end` another one, or the file size.
    """
    if start < 0 or (end is not None and end < start):
        raise ValueError(f"{source}: bad byte range [{start}, {end})")
    fileobj.seek(start)
    limit = None if end is None else end - start
    chunks = _bz2_chunks(fileobj, limit=limit, require_data=False)
    # Only the range holding the file's first bytes can carry a byte-order mark or XML declaration.
    return iter_pages(_utf8_chunks(chunks) if start == 0 else chunks, source, max_page_bytes)


def read_siteinfo(chunks: Iterable[bytes], max_bytes: int = 1 << 20) -> SiteInfo | None:
    """The `<siteinfo>` of a dump from its first decompressed bytes; None if there is no readable one.

    The job can take the wiki's localised namespace names from it ("[[ไฟล์:…]]" is a file on thwiki).
    """
    head = bytearray()
    try:
        for chunk in _utf8_chunks(chunks):
            if isinstance(chunk, _Gap):
                break
            head += chunk
            if b"</siteinfo>" in head or _OPEN in head or len(head) > max_bytes:
                break
    except _ArchiveError:
        pass  # whatever was decompressed before the damage may still hold the header
    start, end = head.find(b"<siteinfo>"), head.find(b"</siteinfo>")
    if start < 0 or end < start:
        return None
    lang_match = re.search(rb'<mediawiki[^>]*\sxml:lang="([^"]*)"', head[:start])
    try:
        root = ET.fromstring(bytes(head[start : end + len(b"</siteinfo>")]))
        info = {_local(child.tag): child for child in root}
        namespaces = {int(ns.get("key")): ns.text or "" for ns in info.get("namespaces", ())}
    except (ET.ParseError, TypeError, ValueError):
        return None
    return SiteInfo(
        dbname=(info["dbname"].text or "") if "dbname" in info else "",
        lang=lang_match.group(1).decode("utf-8", errors="replace") if lang_match else "",
        base=(info["base"].text or "") if "base" in info else "",
        namespaces=namespaces,
    )


def read_siteinfo_from_file(fileobj: BinaryIO, compression: str) -> SiteInfo | None:
    if compression == "bz2":
        return read_siteinfo(_bz2_chunks(fileobj, limit=None, require_data=True, out_bytes=1 << 16))
    return read_siteinfo(iter(lambda: fileobj.read(1 << 16), b""))


def declared_language_matches(lang: str, info: SiteInfo) -> bool:
    """Does `--dump LANG=` agree with the dump's own siteinfo (xml:lang, or the dbname "elwiki")?

    Either suffices: the content language of simplewiki is "en" while its dbname is not, and
    dbnames spell hyphens as underscores (zh-yue: "zh_yuewiki").
    """
    names = {info.lang.lower()}
    if info.dbname.endswith("wiki"):
        names.add(info.dbname[: -len("wiki")].replace("_", "-").lower())
    names.discard("")
    return not names or lang.lower() in names


# ───────────────────────────── decompression ─────────────────────────────


class _ArchiveError(Exception):
    """Raised inside the chunk stream; iter_pages turns it into a BadRecord after the good pages."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


class _Gap:
    """A marker in the stream of decompressed chunks: bytes were lost between its neighbours."""

    __slots__ = ("reason", "detail")

    def __init__(self, reason: str, detail: str):
        self.reason, self.detail = reason, detail


class _Compressed:
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


def _bz2_chunks(
    fileobj: BinaryIO, limit: int | None, require_data: bool, out_bytes: int = MAX_OUT_BYTES
) -> Iterator[bytes | _Gap]:
    """Decompressed bytes of every concatenated bz2 stream in the next `limit` bytes (None: to EOF).

    Damage anywhere switches to block mode (see the module docstring): the chunks then hold a _Gap
    wherever a block was lost.
    """
    reader = _Compressed(fileobj, limit)
    decompressor = bz2.BZ2Decompressor()
    fed = False  # has the current decompressor seen input without reaching its end? (a stream is open)
    tail = b""  # the last _KEY_BYTES delivered: recovery finds where they end in the re-read blocks
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
                yield from _recover(reader, tail, str(error))
                return
            fed = True
            held += out
            if len(held) >= HOLD_BYTES + STEP_BYTES:
                ready = bytes(held[: len(held) - HOLD_BYTES])
                del held[: len(ready)]
                tail = (tail[-_KEY_BYTES:] + ready[-_KEY_BYTES:])[-_KEY_BYTES:]
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
        raise _ArchiveError("truncated_archive", f"bz2 stream cut off after {reader.consumed} compressed bytes")
    if require_data and not reader.consumed:
        raise _ArchiveError("empty_input", "empty file")


_UTF8_NAMES = {"utf-8", "utf8", "us-ascii", "ascii"}
_DECLARATION_RE = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")


def _detect_encoding(head: bytes) -> tuple[str, int]:
    """(codec, bytes of byte-order mark) from a file's first bytes: the BOM, else the XML declaration."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise _ArchiveError("unsupported_encoding", "UTF-32 byte-order mark; only UTF-8 and UTF-16 are read: "
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
            raise _ArchiveError("unsupported_encoding", f"the XML declaration says encoding={name!r}; only UTF-8 "
                                f"and UTF-16 are read: convert with iconv -f {name} -t UTF-8")
    # A declared UTF-16 with ASCII-compatible bytes is a wrong declaration: the bytes decide.
    return "utf-8", 0


def _utf8_chunks(chunks: Iterable[bytes | _Gap]) -> Iterator[bytes | _Gap]:
    """The chunks as UTF-8: passed through when they are, transcoded from UTF-16 as they stream.

    Invalid UTF-16 (a lone surrogate) is carried through as invalid UTF-8, so that its page becomes a
    "not_utf8" BadRecord like any other undecodable page, not a changed text.
    """
    it = iter(chunks)
    head = b""
    pending: list[_Gap] = []
    for chunk in it:
        if isinstance(chunk, _Gap):
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
        if isinstance(chunk, _Gap):
            # After lost bytes the two-byte units may be misaligned; decoding restarts fresh.
            decoder = codecs.getincrementaldecoder(codec)(errors="surrogatepass")
            yield chunk
            continue
        yield decoder.decode(chunk).encode("utf-8", "surrogatepass")
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest.encode("utf-8", "surrogatepass")


def _plain_chunks(fileobj: BinaryIO) -> Iterator[bytes]:
    empty = True
    for chunk in iter(lambda: fileobj.read(BLOCK_BYTES), b""):
        empty = False
        yield chunk
    if empty:
        raise _ArchiveError("empty_input", "empty file")


# ───────────────────────────── bz2 block mode ─────────────────────────────

_BLOCK_MAGIC = 0x314159265359  # pi: starts every compressed block
_EOS_MAGIC = 0x177245385090  # sqrt(pi): ends every stream, followed by the 32-bit stream CRC
_MASK48 = (1 << 48) - 1
_KEY_BYTES = 1 << 12
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

    def __init__(self, reader: _Compressed):
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


def _recover(reader: _Compressed, tail: bytes, error: str) -> Iterator[bytes | _Gap]:
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

    def report(end: int) -> Iterator[_Gap]:
        if damage:
            start, reason = damage
            damage.clear()
            yield _Gap(reason, f"bz2 bytes {start}-{end} unreadable ({error[:40]}); pages in them lost, read on after")

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


# ─────────────────────────────── page scanner ───────────────────────────────


class _PageScanner:
    """Cuts a byte stream into `<page>…</page>` pieces, holding at most one (capped) page.

    Events: ("page", offset, bytes), ("too_large", offset, head_bytes), ("unterminated", offset, bytes).
    Offsets count decompressed bytes from the start of the stream.
    """

    def __init__(self, max_page_bytes: int):
        self.max_page_bytes = max_page_bytes
        self.buf = bytearray()  # starts at a <page> while in_page; else the last few unmatched bytes
        self.base = 0  # stream offset of buf[0]
        self.in_page = False
        self.skipping = False  # inside an oversized page: its bytes are dropped until its </page>
        self.skipped_head = b""
        self.scan_from = 0  # bytes before this in buf hold no match; search resumes here

    @property
    def offset(self) -> int:
        return self.base + len(self.buf)

    @property
    def page_offset(self) -> int:
        return self.base

    def reset(self) -> None:
        """Bytes were lost: forget the page in progress; scanning resumes at the next `<page>`."""
        self.base = self.offset
        self.buf.clear()
        self.in_page = self.skipping = False
        self.skipped_head = b""
        self.scan_from = 0

    def partial_head(self) -> bytes:
        return self.skipped_head if self.skipping else bytes(self.buf[:_HEAD_BYTES])

    def feed(self, data: bytes) -> Iterator[tuple]:
        """Events completed by `data`; a generator, so that only one page at a time is alive.

        The scanner's state is brought up to date before each yield.
        """
        buf = self.buf
        buf += data
        while True:
            if not self.in_page:
                i = buf.find(_OPEN, self.scan_from)
                if i < 0:
                    self._drop(len(buf) - (len(_OPEN) - 1))  # keep a possible split "<page"
                    return
                self._drop(i)
                self.in_page, self.scan_from = True, len(_OPEN)
            j = buf.find(_CLOSE, self.scan_from)
            if j < 0:
                if self.skipping:
                    self._drop(len(buf) - (len(_CLOSE) - 1))
                elif len(buf) > self.max_page_bytes:
                    # Report it now and stop buffering: only its head is kept, for the BadRecord.
                    self.skipping, self.skipped_head = True, bytes(buf[:_HEAD_BYTES])
                    start = self.base
                    self._drop(len(buf) - (len(_CLOSE) - 1))
                    yield ("too_large", start, self.skipped_head)
                else:
                    self.scan_from = max(len(_OPEN), len(buf) - (len(_CLOSE) - 1))
                return
            end = j + len(_CLOSE)
            start, was_skipping = self.base, self.skipping
            if not was_skipping:
                # A page that lost its </page> would swallow the next page: cut it at the next <page>.
                k = buf.find(_OPEN, len(_OPEN), j)
                if k >= 0:
                    piece = bytes(buf[: min(k, _HEAD_BYTES)])
                    self._drop(k)
                    self.scan_from = len(_OPEN)
                    yield ("unterminated", start, piece)
                    continue
                with memoryview(buf) as view:  # one copy, not two (a bytearray slice, then bytes)
                    piece = bytes(view[: _HEAD_BYTES if end > self.max_page_bytes else end])
            self._drop(end)
            self.in_page = self.skipping = False
            self.skipped_head = b""
            self.scan_from = 0
            if not was_skipping:
                yield ("too_large" if end > self.max_page_bytes else "page", start, piece)

    def close(self) -> list[tuple]:
        """The stream ended: a page still open never got its </page>."""
        if self.in_page and not self.skipping:
            return [("unterminated", self.base, bytes(self.buf[:_HEAD_BYTES]))]
        return []

    def _drop(self, n: int) -> None:
        if n > 0:
            del self.buf[:n]  # O(1) at the front of a bytearray
            self.base += n
            self.scan_from = max(0, self.scan_from - n)


# ─────────────────────────────── page parsing ───────────────────────────────


def _local(tag: str) -> str:
    return tag[tag.rfind("}") + 1 :]


def _record(event: tuple, source: str) -> RawPage | BadRecord:
    kind, offset, data = event
    if kind == "page":
        return _parse_page(data, offset, source)
    return _bad(source, data, offset, "page_too_large" if kind == "too_large" else "unterminated_page")


def _parse_page(data: bytes, offset: int, source: str) -> RawPage | BadRecord:
    try:
        # Strict check first: expat would report bad UTF-8 only as "invalid token". The bytes, not the
        # str, go to expat: it parses UTF-8 natively, and handing it a str costs a re-encode (~15%).
        data.decode("utf-8")
    except UnicodeDecodeError:
        return _bad(source, data, offset, "not_utf8")
    try:
        # A page parsed on its own cannot carry a DTD, so no entity-expansion input reaches expat.
        page = ET.fromstring(data)
    except ET.ParseError:
        return _bad(source, data, offset, "malformed_xml")
    title = ns = page_id = redirect = revision = None
    for child in page:
        name = _local(child.tag)
        if name == "title":
            title = child.text or ""
        elif name == "ns":
            ns = child.text
        elif name == "id":
            page_id = child.text
        elif name == "redirect":
            redirect = child.get("title")
        elif name == "revision":
            revision = child  # dumps list revisions oldest first: the last one is the latest
    if not title:
        return _bad(source, data, offset, "missing_title")
    try:
        page_id = int(page_id)
    except (TypeError, ValueError):
        return _bad(source, data, offset, "bad_page_id")
    try:
        ns = int(ns)
    except (TypeError, ValueError):
        return _bad(source, data, offset, "bad_namespace")
    text = ""
    if revision is not None:
        for child in revision:
            if _local(child.tag) == "text":
                text = child.text or ""
    if redirect is None and (not text or text.isspace()):  # isspace: no copy of a large text
        return _bad(source, data, offset, "empty_page")
    return RawPage(page_id=page_id, title=title, ns=ns, redirect=redirect, text=text)


def _bad(source: str, data: bytes, offset: int, reason: str) -> BadRecord:
    return BadRecord(source, _record_id(data, offset), STAGE, reason, _excerpt(data))


def _record_id(data: bytes, offset: int) -> str:
    """Page id if the raw bytes show it, else the title, else the stream offset."""
    head = data[:_HEAD_BYTES]
    revision_at = head.find(b"<revision")
    id_match = _ID_RE.search(head, 0, revision_at if revision_at >= 0 else len(head))
    if id_match:
        return id_match.group(1).decode()
    title_match = _TITLE_RE.search(head)
    if title_match and title_match.group(1).strip():
        return unescape(title_match.group(1).decode("utf-8", errors="replace"), {"&quot;": '"', "&#039;": "'"})
    return f"offset:{offset}"


def _excerpt(data: bytes) -> str:
    return data[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")[:EXCERPT_CHARS]
