"""BuildTrtd alone (pipelines/xy_transforms.py) on tiny fr-ar and en-fr bitext and a tiny vocabulary:
each usable pair as `<s> x </s> y </s>` flipped by its seeded coin, drawn once or as often as the
Sinkhorn pair_probs ask; unusable lines dead-lettered with their reason; pair_probs.parquet written."""
from __future__ import annotations

import collections
import types

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.schemas import XY_PAIR_PROBS_SCHEMA, check_schema
from corpora.xy import shards as xy_shards
from corpora.xy import sinkhorn
from corpora.xy.shards import BitextSource
from corpora.xy.vocap import BOS_ID, EOS_ID
from pipelines.xy_transforms import ALL, BuildTrtd

from transform_checks import assert_outputs, counts_include, summed, write_tiny_vocab

SEED, MAX_LEN, TEMPERATURE, TRTD_PAIRS = 3, 24, 5.0, 20
FR_AR = [("un chat", "قطة"), ("deux chats", "شكرا"), ("trois", "صباح الخير"), ("le chien", "قطة")]
EN_FR = [("hello world", "un chat"), ("a dog", "le chien"), ("the cat", "deux chats")]
LONG = ("le chien deux chats trois un chat le chien", "صباح الخير شكرا")


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "spm.model"
    return path, write_tiny_vocab(path)


def options(output, draws: str, trtd_pairs=None):
    return types.SimpleNamespace(output=str(output), max_len=MAX_LEN, temperature=TEMPERATURE, epsilon=sinkhorn.EPSILON,
                                 trtd_pairs=trtd_pairs, trtd_draws=draws, seed=SEED)


def bitext(tmp_path) -> list[tuple[BitextSource, str]]:
    lines = [f"{x}\t{y}" for x, y in FR_AR] + ["\u200b\tشكرا", "\t".join(LONG), "no tab here"]
    (tmp_path / "fr-ar.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("".join(f"{x}\n" for x, _ in EN_FR), encoding="utf-8")
    (tmp_path / "train.fr").write_text("".join(f"{y}\n" for _, y in EN_FR), encoding="utf-8")
    return [(BitextSource("fr", "ar", (str(tmp_path / "fr-ar.tsv"),)), "fr-ar.tsv"),
            (BitextSource("en", "fr", (str(tmp_path / "train.en"), str(tmp_path / "train.fr"))), "train.en")]


def usable_pairs():
    """(pair id, x lang, y lang, x text, y text) of every pair that fits MAX_LEN."""
    return ([(f"fr-ar/fr-ar.tsv:{k}", "fr", "ar", x, y) for k, (x, y) in enumerate(FR_AR, 1)]
            + [(f"en-fr/train.en:{k}", "en", "fr", x, y) for k, (x, y) in enumerate(EN_FR, 1)])


def trtd_row(sp, pair_id, x_lang, y_lang, x, y, draw):
    flipped = xy_shards.is_flipped(SEED, pair_id, draw)
    (src_lang, first), (tgt_lang, second) = ((y_lang, y), (x_lang, x)) if flipped else ((x_lang, x), (y_lang, y))
    ids = [BOS_ID, *sp.encode(first), EOS_ID, *sp.encode(second), EOS_ID]
    return f"{pair_id}#{draw}", src_lang, tgt_lang, ids, len(ids), len(sp.encode(first)) + 2, flipped


def test_every_usable_pair_once_flipped_by_its_seeded_coin_and_bad_lines_dead_lettered(tmp_path, vocab):
    vocab_path, sp = vocab
    assert xy_shards.trtd_length(sp.encode(LONG[0]), sp.encode(LONG[1])) > MAX_LEN
    expected = [trtd_row(sp, *pair, draw=0) for pair in usable_pairs()]
    assert {row[-1] for row in expected} == {True, False}  # both orders occur with this seed
    fr_ar = str(tmp_path / "fr-ar.tsv")
    with test_pipeline.TestPipeline() as p:
        rows, stats, dead = p | beam.Create(bitext(tmp_path)) | BuildTrtd(options(tmp_path, "once"), str(vocab_path))
        fields = rows | "Fields" >> beam.Map(lambda r: (r["id"], r["src_lang"], r["tgt_lang"], r["input_ids"], r["n_ids"],
                                                        r["src_len"], r["flipped"]))
        flipped = collections.Counter(xy_shards.pair_key(r[1], r[2]) for r in expected if r[-1])
        assert_outputs({
            "rows": (fields, equal_to(expected)),
            "dead letters": (dead | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"])),
                             equal_to([(fr_ar, "fr-ar/fr-ar.tsv:7", "read", "no_separator"),
                                       ("ar-fr", "fr-ar/fr-ar.tsv:5", "tokenise", "empty"),
                                       ("ar-fr", "fr-ar/fr-ar.tsv:6", "tokenise", "too_long")])),
            "stats": (summed(stats), counts_include({
                ("ar-fr", "read/lines"): 7, ("ar-fr", "read/no_separator"): 1, ("ar-fr", "tokenise/empty"): 1,
                ("ar-fr", "pairs/too_long"): 1, ("ar-fr", "pairs/usable"): 4, ("en-fr", "pairs/usable"): 3,
                ("ar-fr", "trtd/rows"): 4, ("en-fr", "trtd/rows"): 3, (ALL, "trtd/target_rows"): 7,
                ("ar-fr", "trtd/flipped"): flipped["ar-fr"], ("en-fr", "trtd/flipped"): flipped["en-fr"],
            })),
        })
    probs = pq.read_table(tmp_path / "pair_probs.parquet")
    check_schema(probs.schema, XY_PAIR_PROBS_SCHEMA, "pair_probs.parquet")
    with_data = {(r["src_lang"], r["tgt_lang"]): r for r in probs.to_pylist() if r["pairs"]}
    assert {k: (r["pairs"], r["expected_draws"]) for k, r in with_data.items()} == {("ar", "fr"): (4, 4.0), ("en", "fr"): (3, 3.0)}
    assert sum(r["prob"] for r in with_data.values()) == pytest.approx(1.0)


def test_draws_by_pair_probs_repeat_each_pair_as_its_seeded_share_says(tmp_path, vocab):
    vocab_path, sp = vocab
    plan = sinkhorn.sinkhorn_pair_probs({("ar", "fr"): 4, ("en", "fr"): 3}, TEMPERATURE, sinkhorn.EPSILON)
    probs = {f"{r['src_lang']}-{r['tgt_lang']}": (r["pairs"], r["prob"]) for r in plan.pair_rows() if r["pairs"]}
    expected = []
    for pair in usable_pairs():
        pairs, prob = probs[xy_shards.pair_key(pair[1], pair[2])]
        copies = xy_shards.draw_count(SEED, pair[0], xy_shards.draw_rate(prob, pairs, TRTD_PAIRS))
        expected += [trtd_row(sp, *pair, draw=k) for k in range(copies)]
    assert any(row[0].endswith("#1") for row in expected)  # some pairs are drawn more than once
    with test_pipeline.TestPipeline() as p:
        rows, stats, _ = p | beam.Create(bitext(tmp_path)) | BuildTrtd(
            options(tmp_path, "pair_probs", TRTD_PAIRS), str(vocab_path))
        fields = rows | "Fields" >> beam.Map(lambda r: (r["id"], r["src_lang"], r["tgt_lang"], r["input_ids"], r["n_ids"],
                                                        r["src_len"], r["flipped"]))
        assert_outputs({
            "rows": (fields, equal_to(expected)),
            "stats": (summed(stats), counts_include({(ALL, "trtd/target_rows"): TRTD_PAIRS})),
        })
