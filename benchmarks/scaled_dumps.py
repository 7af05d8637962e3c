"""A dump k times over, each copy a part of the wiki of its own, as a plain .bz2 or as Wikimedia's
multistream dump with its index: the input of the scale benchmarks.

Copy 0 is the dump as it is. Copy c > 0 has every title renamed "T c" and every page id moved by
c * 10^8, and the links, redirects and template calls in its pages renamed with the titles they
point to, so that each copy links within itself as separate parts of a real dump do (links spread
over k times the targets, not piled onto copy 0's). What is renamed in a copy's text:
  [[T…]]   a link to a title without a namespace prefix, or to any title the dump holds, becomes
           [[T c…|T…]]: the target moves to the copy, the text shown stays (link trails still apply);
           a target with a prefix the dump has no page for ([[File:…]], [[Category:…]], [[wikt:…]],
           also a main-namespace title with a colon) is left as it is, shared by the copies;
  {{T…}}   a template call whose Template:T page the dump holds becomes {{T c…}};
  <redirect title="T"/>  as links are.
The pages are streamed: memory holds one copy of the input's pages, not k.
"""
from __future__ import annotations

import bz2
import re
from pathlib import Path
from typing import Iterator, NamedTuple
from xml.sax.saxutils import unescape

from corpora.dumps.multistream import MultistreamWriter, split_dump_pages

ID_STEP = 100_000_000
_TITLE_RE = re.compile(rb"<title>(.*?)</title>", re.S)
_ID_RE = re.compile(rb"<id>(\d+)</id>")
_REDIRECT_RE = re.compile(rb'(<redirect title=")([^"]*)(")')
_TEXT_RE = re.compile(rb"(<text\b[^>]*>)(.*?)(</text>)", re.S)
# A link's target: up to its pipe or its end, no brackets or braces or newlines in it.
_LINK_RE = re.compile(rb"\[\[([^\[\]{}|\n]+)(\||\]\])")
_TEMPLATE_RE = re.compile(rb"\{\{([^{}|\n#]+?)(\||\}\})")
_ENTITIES = {"&quot;": '"', "&#039;": "'", "&#39;": "'"}


def normal_title(raw: str) -> str:
    """A title as MediaWiki compares them on a first-letter wiki: underscores and runs of spaces are
    one space, the first letter of the name (and of the namespace) upper case."""
    title = re.sub(r"[ _]+", " ", raw).strip().lstrip(":").strip()
    if ":" in title:
        prefix, rest = title.split(":", 1)
        rest = rest.strip()
        return f"{prefix[:1].upper()}{prefix[1:]}:{rest[:1].upper()}{rest[1:]}"
    return title[:1].upper() + title[1:]


def _text(raw: bytes) -> str:
    return unescape(raw.decode("utf-8", errors="replace"), _ENTITIES)


class CopyRenamer:
    """Renames the pages of copy c as the module docstring says; `titles` are the dump's titles."""

    def __init__(self, titles: set[str]):
        self.titles = {normal_title(t) for t in titles}

    def _moves(self, target: str) -> bool:
        name = normal_title(target.split("#", 1)[0])
        if not name:  # [[#Section]]: a link inside the page
            return False
        return ":" not in name or name in self.titles

    def _link(self, copy: int, match: re.Match) -> bytes:
        target, end = match.group(1), match.group(2)
        if not self._moves(_text(target)):
            return match.group(0)
        name, hash_, fragment = target.partition(b"#")
        moved = name.rstrip() + b" %d" % copy + hash_ + fragment
        return b"[[" + moved + (b"|" if end == b"|" else b"|" + target + b"]]")

    def _template(self, copy: int, match: re.Match) -> bytes:
        name = match.group(1)
        if normal_title("Template:" + _text(name)) not in self.titles:
            return match.group(0)
        return b"{{" + name.rstrip() + b" %d" % copy + match.group(2)

    def _redirect(self, copy: int, match: re.Match) -> bytes:
        target = match.group(2)
        if not self._moves(_text(target)):
            return match.group(0)
        return match.group(1) + target + b" %d" % copy + match.group(3)

    def _page_text(self, copy: int, match: re.Match) -> bytes:
        body = _LINK_RE.sub(lambda m: self._link(copy, m), match.group(2))
        body = _TEMPLATE_RE.sub(lambda m: self._template(copy, m), body)
        return match.group(1) + body + match.group(3)

    def rename(self, page: bytes, copy: int) -> bytes:
        if not copy:
            return page
        page = _TITLE_RE.sub(lambda m: b"<title>" + m.group(1) + b" %d</title>" % copy, page, count=1)
        page = _ID_RE.sub(lambda m: b"<id>%d</id>" % (int(m.group(1)) + copy * ID_STEP), page, count=1)
        page = _REDIRECT_RE.sub(lambda m: self._redirect(copy, m), page, count=1)
        return _TEXT_RE.sub(lambda m: self._page_text(copy, m), page, count=1)


class SharedLinks(CopyRenamer):
    """Copies renamed by title and id only, their links left pointing at copy 0's pages: the input
    the benchmark used before copies had link graphs of their own (--shared_links)."""

    def rename(self, page: bytes, copy: int) -> bytes:
        if not copy:
            return page
        page = _TITLE_RE.sub(lambda m: b"<title>" + m.group(1) + b" %d</title>" % copy, page, count=1)
        return _ID_RE.sub(lambda m: b"<id>%d</id>" % (int(m.group(1)) + copy * ID_STEP), page, count=1)


class Written(NamedTuple):
    pages: int
    xml_bytes: int  # the dump decompressed: what the job's memory grows with


def read_dump(src: Path) -> tuple[bytes, list[bytes], bytes]:
    with bz2.open(src, "rb") as f:
        return split_dump_pages(iter(lambda: f.read(1 << 20), b""))


def scaled_pages(pages: list[bytes], copies: int, shared_links: bool = False) -> Iterator[bytes]:
    titles = {_text(m.group(1)) for page in pages if (m := _TITLE_RE.search(page))}
    renamer = (SharedLinks if shared_links else CopyRenamer)(titles)
    for copy in range(copies):
        for page in pages:
            yield renamer.rename(page, copy)


def write_plain(src: Path, copies: int, dest: Path, shared_links: bool = False) -> Written:
    """The dump `copies` times over as one bz2 stream."""
    header, pages, footer = read_dump(src)
    compressor, n, size = bz2.BZ2Compressor(9), 0, len(header) + len(footer)
    with open(dest, "wb") as out:
        out.write(compressor.compress(header))
        for page in scaled_pages(pages, copies, shared_links):
            out.write(compressor.compress(page))
            n, size = n + 1, size + len(page)
        out.write(compressor.compress(footer))
        out.write(compressor.flush())
    return Written(n, size)


def multistream_index_path(dump: Path) -> Path:
    """Wikimedia's name for the index of `X-multistream.xml.bz2`: `X-multistream-index.txt.bz2`."""
    return dump.with_name(dump.name[: -len(".xml.bz2")] + "-index.txt.bz2")


def write_multistream(src: Path, copies: int, dest: Path, shared_links: bool = False,
                      pages_per_stream: int = 100) -> Written:
    """The dump `copies` times over as a multistream dump (`dest` should end in
    `-multistream.xml.bz2`) with its index beside it."""
    header, pages, footer = read_dump(src)
    writer = MultistreamWriter(dest, multistream_index_path(dest), header, pages_per_stream)
    n, size = 0, len(header) + len(footer)
    for page in scaled_pages(pages, copies, shared_links):
        writer.add_page(page)
        n, size = n + 1, size + len(page)
    writer.close(footer)
    return Written(n, size)
