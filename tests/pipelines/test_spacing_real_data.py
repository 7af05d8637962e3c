"""Spacing round-trips exactly on the real excerpts: every wiki_mrc context is a span of its article's
plain text and every query the start of its definition page (en, de, el, ja, vi); every clism_pairs
sentence of real NTREX pairs (en-ko, en-th, en-zh, en-ja) is its line again; every NTREX line of
those languages, tokenised as the job does. The script rule that rows without flags are read with is
measured beside (benchmarks/spacing_roundtrip.py prints the same counts)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from corpora.clism.ner_spans import ner_pipeline_available
from corpora.schemas import CLISM_SCHEMA
from corpora.spacing import join_words, normalise_spacing
from job_files import read_checked

WIKI = SHARED_DATA / "wikipedia"
NTREX = SHARED_DATA / "parallel" / "ntrex128"
DUMPS = {lang: str(WIKI / f"{lang}wiki-excerpt.xml.bz2") for lang in ("en", "de", "el", "ja", "vi")}
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not WIKI.exists() or not NTREX.exists(), reason="../shared/data is not beside this checkout"),
]


def roundtrip():
    """benchmarks/spacing_roundtrip.py (benchmarks/ is not a package)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "spacing_roundtrip.py"
    spec = importlib.util.spec_from_file_location("spacing_roundtrip", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_wiki_mrc_context_and_query_is_its_article_text_again(tmp_path):
    from pipelines import wiki_mrc

    args = [a for lang, path in DUMPS.items() for a in ("--dump", f"{lang}={path}")]
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(tmp_path), *args, "--min_mentions_en", "2",
                  "--min_mentions", "2", "--no_progress"])
    counts = roundtrip().mrc_report(tmp_path, DUMPS)
    assert {"el", "en", "ja", "vi"} <= set(counts)  # de: no entity reaches 2 mentions inside its 79 pages
    for lang, c in counts.items():
        assert c["contexts"] > 0 and c["queries"] > 0, lang
        assert c["contexts_wrong_now"] == 0 and c["queries_wrong_now"] == 0, (lang, c)
        assert c["contexts_wrong_by_script_rule"] > 0, (lang, c)


@pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")
def test_every_clism_pairs_sentence_of_real_ntrex_pairs_is_its_line_again(tmp_path):
    from pipelines import clism_pairs

    langs = ("ko", "th", "zh", "ja")
    lines = {lang: (NTREX / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:150] for lang in ("en", *langs)}
    args = []
    for lang in ("en", *langs):
        (tmp_path / f"{lang}.txt").write_text("\n".join(lines[lang]) + "\n", encoding="utf-8")
    for lang in langs:
        args += ["--pairs", f"{lang}={tmp_path / 'en.txt'},{tmp_path / f'{lang}.txt'}"]
    out = tmp_path / "out"
    clism_pairs.run(["--runner", "DirectRunner", "--output", str(out), *args, "--no_progress"])
    rows = read_checked(out / "data", "train-*.parquet", CLISM_SCHEMA)
    seen = {lang: 0 for lang in langs}
    for r in rows:
        line = int(r["id"].rsplit(":", 1)[1]) - 1
        assert join_words(r["src_words"], r["src_spaces"]) == normalise_spacing(lines["en"][line]), r["id"]
        assert join_words(r["tgt_words"], r["tgt_spaces"]) == normalise_spacing(lines[r["tgt_lang"]][line]), r["id"]
        seen[r["tgt_lang"]] += 1
    assert all(n > 30 for n in seen.values()), seen


def test_every_ntrex_line_round_trips_through_the_job_tokenisers():
    counts = roundtrip().ntrex_report(NTREX, ["en", "ko", "th", "zh", "ja"], 1997)
    for lang, c in counts.items():
        assert c["sentences"] == 1997 and c["sentences_wrong_now"] == 0, (lang, c)
        assert c["sentences_wrong_by_script_rule"] > 0, (lang, c)
