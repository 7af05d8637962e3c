"""Held-out splits per language: wiki_mrc --test_entities, clism_pairs and xy_corpus --test_sentences,
run as jobs on the bundled samples (and wiki_mrc on the real English excerpt), checked on the shards
they write; and training's check that held-out rows are not training rows."""
from __future__ import annotations

import collections
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import SHARED_DATA
from corpora.clism.ner_spans import ner_pipeline_available
from pipelines import clism_pairs, heldout, wiki_mrc, xy_corpus
from pipelines.input_checks import UsageError
from training.eval_overlap import overlap_warning

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

ENGLISH_EXCERPT = SHARED_DATA / "wikipedia" / "enwiki-excerpt.xml.bz2"
needs_ner = pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")


def read_split(folder: Path, split: str) -> list[dict]:
    files = sorted(folder.glob(f"{split}-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def stats_of(table) -> dict[str, dict[str, int]]:
    values: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for r in table.to_pylist():
        values[r["lang"]][r["metric"]] = r["value"]
    return values


# ── the flag ──

@pytest.mark.parametrize("value, expected", [
    ("0", None), ("20", heldout.HeldOut(20, None, 0.5)), ("0.05", heldout.HeldOut(None, 0.05, 0.5)),
    ("1000", heldout.HeldOut(1000, None, 0.5)), ("0.5", heldout.HeldOut(None, 0.5, 0.5)),
])
def test_a_count_or_a_fraction(value, expected):
    assert heldout.parse_held_out("--test_entities", value, 0.5) == expected


@pytest.mark.parametrize("value, share, words", [
    ("2.5", 0.5, "whole number"), ("-1", 0.5, "must be 0"), ("lots", 0.5, "a count (20) or a fraction"),
    ("0.6", 0.5, "lower it, or lower --min_train_share"), ("10", 1.0, "--min_train_share must be"),
])
def test_bad_values_are_one_line(value, share, words):
    with pytest.raises(UsageError) as error:
        heldout.parse_held_out("--test_entities", value, share)
    assert words in str(error.value) and "\n" not in str(error.value)


def test_a_count_leaves_the_floor_in_training():
    spec = heldout.HeldOut(20, None, 0.5)
    assert heldout.held_out_quota(366, spec) == 20
    assert heldout.held_out_quota(25, spec) == 12  # 13 = ceil(0.5 * 25) stay
    assert heldout.held_out_quota(2, spec) == 1
    assert heldout.held_out_quota(1, spec) == 0
    assert heldout.held_out_quota(25, heldout.HeldOut(20, None, 0.0)) == 20


# ── wiki_mrc ──

def test_wiki_mrc_splits_each_language_and_prints_the_table(tmp_path, capsys):
    out = tmp_path / "mrc"
    values = stats_of(wiki_mrc.run(["--output", str(out), "--test_entities", "2", "--no_progress"]))
    printed = capsys.readouterr().out
    train, test = read_split(out / "data", "train"), read_split(out / "data", "test")
    train_entities = collections.defaultdict(set)
    test_entities = collections.defaultdict(set)
    for r in train:
        train_entities[r["lang"]].add(r["entity"])
    for r in test:
        test_entities[r["lang"]].add(r["entity"])
    assert set(test_entities) == set(train_entities) == {"ar", "en", "hi", "th", "zh"}
    for lang, v in values.items():
        if "split/units" not in v:
            continue
        units = v["split/units"]
        assert not train_entities[lang] & test_entities[lang]
        assert len(test_entities[lang]) == v["split/test_units"] == min(2, units - math.ceil(units / 2))
        assert len(train_entities[lang]) >= math.ceil(units / 2)
        assert v["split/train_rows"] == sum(r["lang"] == lang for r in train)
        assert v["split/test_rows"] == sum(r["lang"] == lang for r in test)
        # The printed table: train and test entities and rows of each language.
        assert (f"{lang:<9}{units - v['split/test_units']:>18,}{v['split/test_units']:>18,}"
                f"{v['split/train_rows']:>12,}{v['split/test_rows']:>11,}") in printed
    # en, ar, th have 3 entities: the floor keeps 2, so 1 is held out, not 2, and the summary says so.
    assert "note: en: 1 of its 3 entities held out, 1 fewer than asked: --min_train_share keeps 2" in printed


def test_wiki_mrc_fraction_and_the_same_rows_as_without_a_split(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    wiki_mrc.run(["--output", str(whole), "--no_progress"])
    wiki_mrc.run(["--output", str(split), "--test_entities", "0.5", "--no_progress"])
    ids = sorted(r["id"] for r in read_split(whole / "data", "train"))
    train, test = read_split(split / "data", "train"), read_split(split / "data", "test")
    assert sorted(r["id"] for r in train + test) == ids and test
    assert not {(r["lang"], r["entity"]) for r in train} & {(r["lang"], r["entity"]) for r in test}


@pytest.mark.skipif(not ENGLISH_EXCERPT.exists(), reason=f"no real English excerpt in {SHARED_DATA}")
def test_wiki_mrc_real_english_keeps_its_floor(tmp_path, capsys):
    """The real English excerpt has 25 entities with two mentions or more: 20 asked, 12 held out."""
    out = tmp_path / "en"
    values = stats_of(wiki_mrc.run(["--output", str(out), "--dump", f"en={ENGLISH_EXCERPT}", "--min_mentions_en", "2",
                                    "--test_entities", "20", "--no_progress"]))["en"]
    assert (values["split/units"], values["split/test_units"], values["split/test_units_cut"]) == (25, 12, 8)
    assert len({r["entity"] for r in read_split(out / "data", "train")}) == 13
    assert "note: en: 12 of its 25 entities held out, 8 fewer than asked" in capsys.readouterr().out


# ── parallel data ──

@needs_ner
def test_clism_pairs_holds_out_english_sentences_across_pairs(tmp_path, capsys):
    out = tmp_path / "clism"
    values = stats_of(clism_pairs.run(["--output", str(out), "--test_sentences", "10", "--no_progress"]))
    printed = capsys.readouterr().out
    train, test = read_split(out / "data", "train"), read_split(out / "data", "test")
    sentence = lambda r: " ".join(r["src_words"])  # noqa: E731
    assert test and not {sentence(r) for r in train} & {sentence(r) for r in test}
    for pair in ("en-ar", "en-fr", "en-hi", "en-vi"):
        v = values[pair]
        assert v["split/test_rows"] == sum(f"en-{r['tgt_lang']}" == pair for r in test) >= 10
        assert v["split/units"] - v["split/test_units"] >= v["split/train_floor"]
        assert f"\n{pair:<9}" in printed


@needs_ner
def test_clism_pairs_fraction_splits_the_rows_of_a_run_without_it(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    clism_pairs.run(["--output", str(whole), "--no_progress"])
    clism_pairs.run(["--output", str(split), "--test_sentences", "0.25", "--no_progress"])
    rows = {r["id"]: r for r in read_split(whole / "data", "train")}
    train, test = read_split(split / "data", "train"), read_split(split / "data", "test")
    assert sorted(r["id"] for r in train + test) == sorted(rows) and test and train
    assert all(rows[r["id"]] == r for r in train + test)


def test_xy_corpus_holds_out_both_tables(tmp_path, xylent_vocab, capsys):
    out = tmp_path / "xy"
    xy_corpus.run(["--output", str(out), "--vocab", str(xylent_vocab), "--test_sentences", "0.3", "--no_progress"])
    assert "\nsplit " in capsys.readouterr().out
    for table in ("mrtd", "trtd"):
        assert read_split(out / table, "test") and read_split(out / table, "train")
    # Every copy of a pair, flipped or not, and every pair sharing its X sentence: on one side.
    units = {split: {xy_corpus.trtd_unit(0, r)[1] for r in read_split(out / "trtd", split)}
             for split in ("train", "test")}
    assert not units["train"] & units["test"]


def test_xy_corpus_default_run_has_no_test_split(xylent_shards):
    assert not list(Path(xylent_shards).rglob("test-*.parquet"))


# ── training's overlap check ──

@needs_ner
def test_training_warns_when_held_out_rows_are_training_rows(tmp_path):
    out = tmp_path / "clism"
    clism_pairs.run(["--output", str(out), "--test_sentences", "10", "--no_progress"])
    train, test = sorted((out / "data").glob("train-*")), sorted((out / "data").glob("test-*"))
    assert overlap_warning(train, test, "data/test-*.parquet") is None
    warning = overlap_warning(train, train[:1], "data/train-00000")
    assert warning.startswith("warning: ") and "held-out rows (data/train-00000) are also training rows" in warning
