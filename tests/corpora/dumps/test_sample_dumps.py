"""The bundled sample dumps (corpora/samples/wiki): each parses, matches its builder and reaches the
job's thresholds; the multistream sample equals the plain one. And a page as old dumps wrote it."""
from __future__ import annotations

import pytest

from corpora.dumps import pages as dumps
from corpora.dumps import multistream
from corpora.dumps import siteinfo
from corpora.dumps.pages import RawPage
from test_dumps import FOOTER, HEADER, SAMPLE_LANGS, SAMPLES, bad_of, page_xml, pages_of, read_bytes


# ─────────────────────────────── bundled samples ───────────────────────────────


def _read_sample(name: str) -> list:
    path = SAMPLES / name
    with open(path, "rb") as f:
        return list(dumps.iter_pages_from_file(f, str(path), "bz2"))


@pytest.mark.parametrize("lang", SAMPLE_LANGS)
def test_sample_dump_parses(lang):
    records = _read_sample(f"{lang}wiki-sample-pages-articles.xml.bz2")
    assert sorted(r.reason for r in bad_of(records)) == ["empty_page", "malformed_xml", "not_utf8"]
    pages = pages_of(records)
    articles = [p for p in pages if p.ns == 0 and p.redirect is None]
    redirects = [p for p in pages if p.ns == 0 and p.redirect is not None]
    assert 12 <= len(articles) <= 24 and len(redirects) >= 3
    assert any(p.ns != 0 for p in pages)
    for page in redirects:
        assert page.text.lstrip().startswith("#") and f"[[{page.redirect}" in page.text
    with open(SAMPLES / f"{lang}wiki-sample-pages-articles.xml.bz2", "rb") as f:
        assert siteinfo.read_siteinfo_from_file(f, "bz2").lang == lang


def test_sample_multistream_matches_plain():
    plain = _read_sample("enwiki-sample-pages-articles.xml.bz2")
    dump = SAMPLES / "enwiki-sample-pages-articles-multistream.xml.bz2"
    with open(SAMPLES / "enwiki-sample-pages-articles-multistream-index.txt.bz2", "rb") as f:
        offsets = multistream.read_index_offsets(f)
    assert len(offsets) >= 4
    records = []
    with open(dump, "rb") as f:
        for start, end in multistream.stream_ranges(offsets, dump.stat().st_size, 2):
            records += dumps.read_stream_range(f, start, end, f"{dump}:{start}-{end}")
    assert [r for r in records if isinstance(r, RawPage)] == pages_of(plain)
    assert sorted(r.reason for r in bad_of(records)) == ["empty_page", "malformed_xml", "not_utf8"]


def test_samples_match_their_builder(tmp_path):
    from corpora.samples import build_wiki_samples

    written = build_wiki_samples.build(tmp_path)
    assert {p.name for p in written} == {p.name for p in SAMPLES.glob("*.bz2")}
    for path in written:
        assert path.read_bytes() == (SAMPLES / path.name).read_bytes(), (
            f"{SAMPLES / path.name} is stale: run python -m corpora.samples.build_wiki_samples"
        )


@pytest.mark.parametrize("lang", SAMPLE_LANGS)
def test_sample_entities_reach_the_job_thresholds(lang):
    from corpora.samples import build_wiki_samples

    kept = build_wiki_samples.entities_over_threshold(lang)
    assert len(kept) >= 3, kept


def test_a_page_of_an_old_dump_has_no_namespace_and_a_bare_redirect():
    # Export schema 0.3 has no <ns>; 0.4 and 0.5 mark a redirect with a bare <redirect/>.
    pages = [page_xml(1, "Old").replace(b"<ns>0</ns>", b""),
             page_xml(2, "Bare", "#REDIRECT [[Old]]").replace(b"<ns>0</ns>", b"<ns>0</ns><redirect />")]
    old, bare = read_bytes(HEADER + b"".join(pages) + FOOTER)
    assert (old.ns, old.redirect) == (None, None)
    assert (bare.ns, bare.redirect) == (0, "")
