"""Wikipedia multistream dumps: the index, byte ranges for parallel reads, and a writer.

`*-pages-articles-multistream.xml.bz2` is many bz2 streams laid end to end: the first holds the
`<mediawiki><siteinfo>` header, each following one ~100 `<page>`s, the last the closing tag.
`*-multistream-index.txt.bz2` has one line per page, `byte_offset:page_id:title`, where byte_offset
is the start of the stream holding the page. Any stream can be decompressed on its own, so a reader
can seek to an offset and read a run of streams (`dumps.read_stream_range`): workers read one dump in
parallel, which a plain .bz2 (one stream) does not allow.
"""
from __future__ import annotations

import bz2
import io
import os
import re
from typing import BinaryIO, Iterable
from xml.sax.saxutils import unescape

_OPEN = b"<page>"
_CLOSE = b"</page>"
_ID_RE = re.compile(rb"<id>\s*(-?\d+)\s*</id>")
_TITLE_RE = re.compile(rb"<title>(.*?)</title>", re.S)
_BZ2_MAGIC = b"BZh"


_INDEX_NAME_RE = re.compile(r"-multistream-index\d*\.txt(?:-p\d+p\d+)?\.bz2$")


def is_multistream_index(path: str) -> bool:
    """An index file (`X-multistream-index.txt.bz2`, a part's `X-multistream-index3.txt-p1p2.bz2`),
    which a pattern for the dump's files (`enwiki-*-multistream*.bz2`) also matches."""
    return bool(_INDEX_NAME_RE.search(path))


def read_index_offsets(index_fileobj: BinaryIO) -> list[int]:
    """Sorted distinct stream offsets of a multistream index (bz2-compressed or plain text).

    A malformed line raises ValueError naming the line: offsets read from a damaged index would send
    readers into the middle of a stream.
    """
    name = getattr(index_fileobj, "name", "multistream index")
    head = index_fileobj.read(len(_BZ2_MAGIC))
    rest = index_fileobj
    stream: BinaryIO
    if head == _BZ2_MAGIC:
        # BZ2File reads concatenated streams too; put the magic back in front of the rest.
        stream = bz2.BZ2File(_Prefixed(head, rest))
    else:
        stream = io.BufferedReader(_Prefixed(head, rest))
    offsets: set[int] = set()
    last = None
    try:
        for number, line in enumerate(stream, start=1):
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            # Titles may hold colons ("Help:Contents"); only the first two separate fields.
            parts = line.split(b":", 2)
            if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
                shown = line[:80].decode("utf-8", errors="replace")
                raise ValueError(f"{name}: line {number}: expected 'offset:page_id:title', got {shown!r}")
            offset = int(parts[0])
            if offset != last:  # consecutive lines share an offset: ~100 pages per stream
                offsets.add(offset)
                last = offset
    except (OSError, EOFError) as error:
        raise ValueError(f"{name}: cannot decompress the index: {error}") from None
    if not offsets:
        raise ValueError(f"{name}: no index lines; is this a multistream index?")
    return sorted(offsets)


def stream_ranges(
    offsets: list[int], file_size: int | None, streams_per_range: int
) -> list[tuple[int, int | None]]:
    """Byte ranges [start, end) of `streams_per_range` consecutive streams each; end None = to EOF.

    Wikipedia's index does not list the header stream at offset 0 (it holds no page); the first range
    starts at 0 anyway, so that a dump whose first stream does hold pages loses none. The last range
    runs to the end of the file and so covers the footer stream.
    """
    if streams_per_range < 1:
        raise ValueError(f"streams_per_range must be at least 1, got {streams_per_range}")
    starts = sorted(set(offsets))
    if not starts:
        raise ValueError("no stream offsets")
    if starts[0] < 0:
        raise ValueError(f"negative stream offset {starts[0]}")
    if file_size is not None and starts[-1] >= file_size:
        raise ValueError(f"stream offset {starts[-1]} is past the end of the {file_size}-byte dump; wrong index?")
    if starts[0] != 0:
        starts.insert(0, 0)
    groups = [starts[i] for i in range(0, len(starts), streams_per_range)]
    ends: list[int | None] = [*groups[1:], file_size]
    return list(zip(groups, ends))


# A bz2 stream starts "BZh" + block size digit, then its first block's magic (pi's digits) or, for
# a stream without data, the end-of-stream magic (sqrt(pi)'s): ten bytes that name a stream start.
_BLOCK_MAGIC = bytes.fromhex("314159265359")
_END_MAGIC = bytes.fromhex("177245385090")
STREAM_HEAD_BYTES = 10


def is_stream_start(head: bytes) -> bool:
    return (len(head) >= STREAM_HEAD_BYTES and head.startswith(_BZ2_MAGIC) and head[3:4] in b"123456789"
            and head[4:10] in (_BLOCK_MAGIC, _END_MAGIC))


def index_mismatch(fileobj: BinaryIO, offsets: list[int], file_size: int | None) -> str | None:
    """Why `offsets` (sorted) are not stream starts of the dump open in `fileobj`, or None.

    A reader sent to an offset inside a stream, or past the end, would lose the pages of the
    streams it cannot decode; the caller reads the dump sequentially instead.
    """
    for offset in offsets:
        if offset < 0 or (file_size is not None and offset >= file_size):
            return f"offset {offset} is outside the {file_size}-byte dump"
        fileobj.seek(offset)
        head = fileobj.read(STREAM_HEAD_BYTES)
        if not is_stream_start(head):
            return f"offset {offset} is not the start of a bz2 stream (bytes there: {head[:STREAM_HEAD_BYTES].hex()})"
    return None


class MultistreamWriter:
    """Writes a multistream dump and its bz2 index, one stream per `pages_per_stream` pages.

    Used for tests, benchmarks and the bundled samples; the layout is Wikipedia's: header stream,
    page streams, footer stream, and index lines `offset:page_id:title` for the page streams only.
    """

    def __init__(self, out_path: str | os.PathLike, index_path: str | os.PathLike, header: bytes, pages_per_stream: int = 100):
        if pages_per_stream < 1:
            raise ValueError(f"pages_per_stream must be at least 1, got {pages_per_stream}")
        self.pages_per_stream = pages_per_stream
        self._out = open(out_path, "wb")
        self._index_path = index_path
        self._index_lines: list[bytes] = []
        self._batch: list[bytes] = []
        self._out.write(bz2.compress(header, 9))

    def add_page(self, page_xml: bytes) -> None:
        self._batch.append(page_xml)
        if len(self._batch) >= self.pages_per_stream:
            self._flush()

    def close(self, footer: bytes) -> None:
        self._flush()
        self._out.write(bz2.compress(footer, 9))
        self._out.close()
        with open(self._index_path, "wb") as index:
            index.write(bz2.compress(b"".join(self._index_lines), 9))

    def _flush(self) -> None:
        if not self._batch:
            return
        offset = self._out.tell()
        for page in self._batch:
            page_id, title = page_id_and_title(page)
            self._index_lines.append(b"%d:%d:%s\n" % (offset, page_id, title.encode("utf-8")))
        self._out.write(bz2.compress(b"".join(self._batch), 9))
        self._batch = []


def write_multistream(
    pages_xml: Iterable[bytes],
    header: bytes,
    footer: bytes,
    out_path: str | os.PathLike,
    index_path: str | os.PathLike,
    pages_per_stream: int = 100,
) -> None:
    """Build a real multistream dump + bz2 index from page XML pieces (streamed: pages may be a generator)."""
    writer = MultistreamWriter(out_path, index_path, header, pages_per_stream)
    for page in pages_xml:
        writer.add_page(page)
    writer.close(footer)


def split_dump_pages(xml_chunks: Iterable[bytes]) -> tuple[bytes, list[bytes], bytes]:
    """(header, pages, footer) of a decompressed dump, in memory, for re-packing test-size dumps.

    header + b"".join(pages) + footer == the input: each page runs from its `<page>` to the next
    page's `<page>` (so it carries the whitespace between them), the last one to its `</page>`.
    """
    data = b"".join(xml_chunks)
    starts = []
    i = data.find(_OPEN)
    while i >= 0:
        starts.append(i)
        # The next <page> is searched after this page's </page>, as the reader does.
        close = data.find(_CLOSE, i)
        if close < 0:
            break
        i = data.find(_OPEN, close)
    if not starts:
        return data, [], b""
    last_close = data.find(_CLOSE, starts[-1])
    end = len(data) if last_close < 0 else last_close + len(_CLOSE)
    bounds = [*starts, end]
    pages = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    return data[: starts[0]], pages, data[end:]


def page_id_and_title(page_xml: bytes) -> tuple[int, str]:
    """Page id and title from raw page bytes, tolerating damaged pages (0 / "" when not found)."""
    revision_at = page_xml.find(b"<revision")
    id_match = _ID_RE.search(page_xml, 0, revision_at if revision_at >= 0 else len(page_xml))
    title_match = _TITLE_RE.search(page_xml)
    page_id = int(id_match.group(1)) if id_match else 0
    title = ""
    if title_match:
        title = unescape(title_match.group(1).decode("utf-8", errors="replace"), {"&quot;": '"', "&#039;": "'"})
    return page_id, title.replace("\n", " ")


class _Prefixed(io.RawIOBase):
    """A read-only stream of `prefix` then `rest`: the magic-number sniff must not need seek()."""

    def __init__(self, prefix: bytes, rest: BinaryIO):
        self._prefix, self._rest = prefix, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
