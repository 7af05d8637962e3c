"""benchmarks/scaled_dumps.py, the input of the scale benchmarks: k copies of a dump, each a part of
the wiki with its own link graph, plain or re-packed as Wikimedia's multistream dump."""
from __future__ import annotations

import bz2
import importlib.util
import re
from pathlib import Path

import pytest

from corpora.dumps import pages as dumps
from corpora.dumps.multistream import read_index_offsets, split_dump_pages
from conftest import SHARED_DATA

pytestmark = pytest.mark.slow  # the benchmark's tooling, not the product

ROOT = Path(__file__).resolve().parents[2]
EXCERPT = SHARED_DATA / "wikipedia" / "enwiki-excerpt.xml.bz2"
needs_excerpt = pytest.mark.skipif(not EXCERPT.exists(), reason="../shared/data is not beside this checkout")


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scaled_dumps = load("scaled_dumps")

PAGE = b"""<page>
    <title>Alpha &amp; Co</title>
    <ns>0</ns>
    <id>7</id>
    <redirect title="Beta" />
    <revision><id>1</id><text xml:space="preserve">[[beta]]s and [[Beta#History|its past]], [[#Here]],
[[File:X.jpg|thumb|a [[Gamma]] caption]], [[Category:Things]], [[wikt:word]], [[Wikipedia:About]],
[[Alpha &amp; Co]], {{Infobox}} {{Other}} {{#if:x|y}} {{PAGENAME}}</text></revision>
  </page>
"""
TITLES = {"Alpha & Co", "Beta", "Wikipedia:About", "Template:Infobox"}


def test_a_copy_links_within_itself_and_shows_the_same_text():
    renamer = scaled_dumps.CopyRenamer(TITLES)
    assert renamer.rename(PAGE, 0) == PAGE
    page = renamer.rename(PAGE, 3)
    assert b"<title>Alpha &amp; Co 3</title>" in page and b"<id>300000007</id>" in page
    assert b'<redirect title="Beta 3" />' in page
    assert b"[[beta 3|beta]]s" in page  # the text shown and the link trail stay
    assert b"[[Beta 3#History|its past]]" in page and b"[[#Here]]" in page
    assert b"[[Gamma 3|Gamma]] caption" in page  # a main-namespace target the dump lacks moves too
    for shared in (b"[[File:X.jpg|", b"[[Category:Things]]", b"[[wikt:word]]"):
        assert shared in page
    assert b"[[Wikipedia:About 3|Wikipedia:About]]" in page  # a prefixed title the dump holds
    assert b"[[Alpha &amp; Co 3|Alpha &amp; Co]]" in page
    assert b"{{Infobox 3}} {{Other}} {{#if:x|y}} {{PAGENAME}}" in page


def link_targets(xml: bytes) -> set[str]:
    """The targets of the links in the pages' texts (not in edit comments, which stay as they are)."""
    texts = b"".join(re.findall(rb"<text\b[^>]*>(.*?)</text>", xml, re.S))
    return {scaled_dumps.normal_title(m.decode()) for m in re.findall(rb"\[\[([^\[\]{}|\n#]+)", texts)}


@needs_excerpt
def test_the_excerpt_scaled_has_disjoint_link_graphs_and_one_xml_in_both_forms(tmp_path):
    plain = tmp_path / "enwiki-x2-pages-articles.xml.bz2"
    multi = tmp_path / "enwiki-x2-pages-articles-multistream.xml.bz2"
    written = scaled_dumps.write_plain(EXCERPT, 2, plain)
    assert scaled_dumps.write_multistream(EXCERPT, 2, multi) == written
    xml = bz2.decompress(plain.read_bytes())
    assert bz2.decompress(multi.read_bytes()) == xml and len(xml) == written.xml_bytes
    _, pages, _ = split_dump_pages([xml])
    assert len(pages) == written.pages == 2 * 206
    with open(scaled_dumps.multistream_index_path(multi), "rb") as index:
        assert len(read_index_offsets(index)) == -(-written.pages // 100)
    half = len(pages) // 2
    first, second = link_targets(b"".join(pages[:half])), link_targets(b"".join(pages[half:]))
    main_namespace = {t for t in first if ":" not in t}
    assert len(main_namespace) > 1000
    # No link of copy 1 points into copy 0, but where a renamed title is a real one ("Apollo" + " 1").
    assert {t for t in main_namespace & second if t[:-2] not in first} == set()
    assert {t + " 1" for t in main_namespace} <= second
    with open(plain, "rb") as f:
        records = [r for r in dumps.iter_pages_from_file(f, str(plain), "bz2")]
    assert all(isinstance(r, dumps.RawPage) for r in records)
    by_title = {r.title: r for r in records}
    redirects = 0
    for r in records[:half]:
        copy = by_title[r.title + " 1"]
        if r.redirect is None or ":" in r.redirect:  # a prefixed target the dump lacks stays shared
            assert copy.redirect == r.redirect
        else:
            assert copy.redirect == r.redirect + " 1"
            redirects += 1
    assert redirects > 50
