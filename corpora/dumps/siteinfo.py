"""The `<siteinfo>` header of a MediaWiki dump: which wiki it is, and its localised namespace names
(the job takes "[[ไฟล์:…]]" as a file on thwiki from it, and checks `--dump LANG=` against it)."""
from __future__ import annotations

import bz2
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable

from corpora.dumps.decoding import ArchiveError, Gap, utf8_chunks


@dataclass(frozen=True)
class SiteInfo:
    """The `<siteinfo>` header: which wiki, and its localised namespace names (ns key -> name)."""

    dbname: str
    lang: str  # the xml:lang attribute of <mediawiki>
    base: str
    namespaces: dict[int, str] = field(default_factory=dict)


def read_siteinfo(chunks: Iterable[bytes], max_bytes: int = 1 << 20) -> SiteInfo | None:
    """The `<siteinfo>` of a dump from its first decompressed bytes; None if there is no readable one.

    The job can take the wiki's localised namespace names from it ("[[ไฟล์:…]]" is a file on thwiki).
    """
    head = bytearray()
    try:
        for chunk in utf8_chunks(chunks):
            if isinstance(chunk, Gap):
                break
            head += chunk
            if b"</siteinfo>" in head or b"<page>" in head or len(head) > max_bytes:
                break
    except ArchiveError:
        pass  # whatever was decompressed before the damage may still hold the header
    start, end = head.find(b"<siteinfo>"), head.find(b"</siteinfo>")
    if start < 0 or end < start:
        return None
    lang_match = re.search(rb'<mediawiki[^>]*\sxml:lang="([^"]*)"', head[:start])
    try:
        root = ET.fromstring(bytes(head[start : end + len(b"</siteinfo>")]))
        info = {child.tag.rpartition("}")[2]: child for child in root}
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
        return read_siteinfo(_bz2_head_chunks(fileobj))
    return read_siteinfo(iter(lambda: fileobj.read(1 << 16), b""))


def _bz2_head_chunks(fileobj: BinaryIO, step: int = 1 << 16):
    """The file's first bytes as Python's bz2 reader gives them, 64 kB at a time. Not dump_bytes'
    reader: it holds output back until 2 MiB are decoded (about three bz2 blocks, paid
    twice per dump: the input check and the namespaces), so that damage never delivers garbage. The
    header needs only the first block; a damaged one is reported by the job's page reader, which
    reads it again."""
    reader = bz2.BZ2File(fileobj)  # given a file object, closing it leaves the file open
    try:
        yield from iter(lambda: reader.read(step), b"")
    except (OSError, EOFError) as error:
        raise ArchiveError("corrupt_archive", str(error)) from None
    finally:
        reader.close()


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
