"""Streaming reader for MediaWiki `pages-articles` XML dumps (plain, .bz2 and multistream .bz2).

Why it is built this way (docs/design.md §2, wiki_mrc stage 1):
- Memory must not grow with the dump. A full English dump is ~100 GB of XML; one `iterparse` over it
  keeps the tree (or needs careful clearing) and, worse, one malformed byte anywhere kills the whole
  file. So the decompressed bytes are cut into `<page>` … `</page>` pieces by a plain byte search and
  each piece is parsed on its own: at most one page (capped by `max_page_bytes`) is held at a time, and
  a broken page becomes one `BadRecord` while the pages after it still come out.
- MediaWiki escapes `<` in every text node, so the literal bytes `<page>` and `</page>` only occur as
  tags; they are searched for anywhere, not only at line starts.
- The bytes come from corpora/dumps/decoding.py (bz2 streams, plain XML, UTF-16 transcoding). A corrupt
  bz2 block costs only the pages inside it (corpora/dumps/bz2_blocks.py): a page cut by the damage is a
  BadRecord; the other pages inside the lost block cannot be named (their bytes are gone), so the
  record's excerpt says the block's pages were lost.
- A cut archive yields every page completed before the cut, then one BadRecord.
- An encoding other than UTF-8 or UTF-16 is one BadRecord "unsupported_encoding" that says how to
  convert the file. Only a file's first bytes carry a mark, so multistream byte ranges after the
  first are taken as UTF-8 (as every Wikipedia dump is). An empty
  file, or one without a single `<page>`, is one BadRecord too ("empty_input", "no_pages"), so that it
  shows in the counts.

The export schema version (0.10, 0.11, …) changes the XML namespace URI, so tags are matched by local
name. A page parsed on its own carries no namespace in practice (it is declared on `<mediawiki>`).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from importlib import resources
from dataclasses import dataclass
from typing import BinaryIO, Iterable, Iterator
from xml.sax.saxutils import unescape

from corpora.dumps.decoding import ArchiveError, Gap, bz2_chunks, plain_chunks, utf8_chunks

# MediaWiki caps a revision at 2 MiB of wikitext ($wgMaxArticleSize): a few MB of XML once escaped.
DEFAULT_MAX_PAGE_BYTES = 50_000_000  # so a 50 MB page is damage
EXCERPT_CHARS = 200
MAX_PAGE_ID = 2**63 - 1  # MediaWiki's page ids are unsigned; the rows' columns are int64
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
    ns: int | None  # None in dumps older than export schema 0.5, which have no <ns>: the title's prefix tells
    redirect: str | None  # the <redirect title="..."/> attribute, raw (not normalised); "" for a bare <redirect/>
    text: str  # wikitext of the latest revision ("" if none)


@dataclass(frozen=True)
class BadRecord:
    source: str  # dump path (or path:byte-range)
    record_id: str  # page id if known, else title, else "offset:<n>"
    stage: str  # "read"
    reason: str  # short, machine-readable (the Beam counter is read/<reason>)
    excerpt: str  # first ~200 chars, decoded with errors="replace"


# The dumps a job reads when given none: written for the project, one per script family.
SAMPLE_DIR = resources.files("corpora") / "samples" / "wiki"
SAMPLE_DUMPS = {
    "en": "enwiki-sample-pages-articles-multistream.xml.bz2",
    "zh": "zhwiki-sample-pages-articles.xml.bz2",
    "th": "thwiki-sample-pages-articles.xml.bz2",
    "ar": "arwiki-sample-pages-articles.xml.bz2",
    "hi": "hiwiki-sample-pages-articles.xml.bz2",
}


def sample_dump_paths() -> dict[str, str]:
    return {lang: str(SAMPLE_DIR / name) for lang, name in SAMPLE_DUMPS.items()}


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
            if isinstance(chunk, Gap):
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
    except ArchiveError as error:
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
        chunks = bz2_chunks(fileobj, limit=None, require_data=True)
    elif compression == "none":
        chunks = plain_chunks(fileobj)
    else:
        raise ValueError(f"{source}: unknown compression {compression!r}; expected 'bz2' or 'none'")
    return _counted(iter_pages(utf8_chunks(chunks), source, max_page_bytes), source)


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
    chunks = bz2_chunks(fileobj, limit=limit, require_data=False)
    # Only the range holding the file's first bytes can carry a byte-order mark or XML declaration.
    return iter_pages(utf8_chunks(chunks) if start == 0 else chunks, source, max_page_bytes)


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
            redirect = child.get("title", "")  # "": a bare <redirect/> (export schema 0.4, 0.5)
        elif name == "revision":
            revision = child  # dumps list revisions oldest first: the last one is the latest
    if not title:
        return _bad(source, data, offset, "missing_title")
    try:
        page_id = int(page_id)
    except (TypeError, ValueError):
        return _bad(source, data, offset, "bad_page_id")
    if not 0 <= page_id <= MAX_PAGE_ID:  # rows carry page ids as int64 (corpora/schemas.py)
        return _bad(source, data, offset, "page_id_out_of_range")
    if ns is not None:  # dumps before export schema 0.5 (about 2010) have no <ns>: None, see RawPage
        try:
            ns = int(ns)
        except ValueError:
            return _bad(source, data, offset, "bad_namespace")
    text = ""
    if revision is not None:
        for child in revision:
            if _local(child.tag) == "text":
                text = child.text or ""
    # An empty article is a broken record; an empty talk or help page is a page no job reads, which
    # the job counts with the other namespaces (the real excerpts had dead-lettered 3 such pages).
    if redirect is None and ns in (0, None) and (not text or text.isspace()):  # isspace: no copy of a large text
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
