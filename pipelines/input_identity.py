"""Which inputs of a job are one input: the same file given twice would put every record and row in
the output twice, so a job refuses it before the run, whatever form the second copy takes.

Two inputs are one when either of these agrees (each costs one stat and one read of the head):
- the file: device and inode of a local path, so the same path, another spelling of it, a symlink
  or a hard link;
- the content: a digest of the first `HEAD_BYTES` bytes after decompression (bz2 and gzip, known by
  their magic bytes, not the name), so a copy under another name or folder, and a compressed file
  and its decompressed form (`x.xml.bz2` and `x.xml`, `x.txt.gz` and `x.txt`). A file shorter than
  that is compared whole. Two files whose first MiB agree and whose rest differs are refused too:
  one begins with the other, so its records would be there twice.
For a Wikipedia dump, the wiki's name (`<dbname>`) and its first page id agree for one dump in any
form, and for two dumps of one wiki taken on different days: their pages, and the row ids made from
page ids, would be there twice.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import re
import zlib
from typing import NamedTuple

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

HEAD_BYTES = 1 << 20

_DBNAME_RE = re.compile(rb"<dbname>\s*([^<\s]+)\s*</dbname>")
_FIRST_PAGE_ID_RE = re.compile(rb"<page>.*?<id>\s*(\d+)\s*</id>", re.S)


class InputIdentity(NamedTuple):
    path: str
    file_key: tuple[int, int] | None  # (device, inode) of a local file
    content_key: str  # digest of the head after decompression, with its length
    compressed: str  # "bz2", "gzip" or "" as the bytes say
    first_page: tuple[str, int] | None  # (dbname, first page id) of a MediaWiki dump


def identity(path: str) -> InputIdentity:
    file_key = None
    if "://" not in path:
        status = os.stat(path)  # follows symlinks: a link and its target share the key
        file_key = (status.st_dev, status.st_ino)
    compressed, head = decompressed_head(path, HEAD_BYTES)
    digest = hashlib.sha256(head).hexdigest()
    return InputIdentity(path, file_key, f"{len(head)}:{digest}", compressed, _first_page(head))


def decompressed_head(path: str, n: int) -> tuple[str, bytes]:
    """(compression the magic bytes show, the first n bytes of the content). A damaged archive
    gives its raw bytes: still the same for a copy of it."""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        raw = f.read(n)
    kind = "bz2" if raw.startswith(b"BZh") else "gzip" if raw.startswith(b"\x1f\x8b") else ""
    if not kind:
        return kind, raw
    try:
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            opened = bz2.BZ2File(f) if kind == "bz2" else gzip.GzipFile(fileobj=f)
            return kind, opened.read(n)
    except (OSError, EOFError, ValueError, zlib.error):
        return kind, raw


def _first_page(head: bytes) -> tuple[str, int] | None:
    dbname = _DBNAME_RE.search(head, 0, 1 << 16)
    page = _FIRST_PAGE_ID_RE.search(head)
    if not dbname or not page:
        return None
    return dbname.group(1).decode("utf-8", "replace"), int(page.group(1))


def why_one_input(a: InputIdentity, b: InputIdentity) -> str | None:
    """Why two inputs are one, in words, or None."""
    if a.file_key is not None and a.file_key == b.file_key:
        if os.path.abspath(a.path) == os.path.abspath(b.path):
            return "the same file twice"
        return "one file under two names (a link or another spelling of its path)"
    if a.content_key == b.content_key:
        if a.compressed != b.compressed:
            forms = " and ".join(sorted(f"{c}-compressed" if c else "uncompressed" for c in (a.compressed, b.compressed)))
            return f"the same content, {forms}"
        if int(a.content_key.split(":")[0]) < HEAD_BYTES:
            return "the same content (a copy)"
        return f"the same first {HEAD_BYTES >> 20} MiB of content (a copy, or one begins with the other)"
    if a.first_page is not None and a.first_page == b.first_page:
        dbname, page_id = a.first_page
        return f"two dumps of {dbname} beginning with page {page_id} (one dump in two forms, or two dates of one wiki)"
    return None


def first_repeat(inputs: list[tuple[str, str]]) -> tuple[str, str | None, str] | None:
    """(label of the first, label of the second, why) for the first two of `inputs`, (label, path)
    pairs, that are one input; None when all differ."""
    seen: list[tuple[str, InputIdentity]] = []
    for label, path in inputs:
        mine = identity(path)
        for other_label, other in seen:
            why = why_one_input(other, mine)
            if why:
                return other_label, label, why
        seen.append((label, mine))
    return None


def first_repeated_source(sources: list[tuple[str, tuple[str, ...]]]) -> tuple[str, str | None, str] | None:
    """Like first_repeat for parallel sources, (label, files) with one or two files: a source whose
    two sides are one file, or two sources whose files are one input each (in either order). One
    file in two sources is fine (the English side of en-fr and en-de). The second label is None when
    one source's two sides are one input."""
    identities: dict[str, InputIdentity] = {}

    def ident(path: str) -> InputIdentity:
        if path not in identities:
            identities[path] = identity(path)
        return identities[path]

    seen: list[tuple[str, list[InputIdentity]]] = []
    for label, paths in sources:
        mine = [ident(p) for p in paths]
        if len(mine) == 2:
            why = why_one_input(*mine)
            if why:
                return label, None, f"both sides are {why}"
        for other_label, other in seen:
            if len(other) != len(mine):
                continue
            matches = [why_one_input(x, y) for x, y in zip(other, mine)]
            if len(mine) == 2 and not all(matches):
                matches = [why_one_input(x, y) for x, y in zip(other, reversed(mine))]
            if all(matches):
                return other_label, label, matches[0]
        seen.append((label, mine))
    return None


def refusal(record: str, repeat: tuple[str, str | None, str]) -> str:
    """The one line a job refuses a repeated input with; `record` names what would be doubled."""
    first, second, why = repeat
    where = (f"{first}: {why}" if second is None else f"{first} is given twice" if first == second
             else f"{first} and {second}: {why}")
    return f"{where}; every {record} and row would be there twice: give each input once"
