"""ReadPairs alone (pipelines/clism_transforms.py) on a tiny TSV with bad lines and a pair of
line-aligned files: good pairs in batches of at most `batch_size`, in file order within a batch,
whitespace normalised; every bad line dead-lettered with its reason and counted."""
from __future__ import annotations

import apache_beam as beam
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.bitext import PairSource
from pipelines.beam_outputs import DEAD_LETTER, STATS
from pipelines.clism_transforms import ReadPairs

from transform_checks import assert_outputs, summed

FR_LINES = [
    "The  cat sleeps.\tLe chat dort.",
    "",
    "no tab on this line",
    "Paris is big.\tParis est grande.",
    "one two three four five six\tun",
    "One.\tUn.",
]


def sources(tmp_path) -> list[PairSource]:
    (tmp_path / "fr.tsv").write_text("\n".join(FR_LINES) + "\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("Good morning.\nThank you.\n", encoding="utf-8")
    (tmp_path / "train.ar").write_text("صباح الخير.\nشكرا.\n", encoding="utf-8")
    return [PairSource("fr", (str(tmp_path / "fr.tsv"),), True),
            PairSource("ar", (str(tmp_path / "train.en"), str(tmp_path / "train.ar")), True)]


def test_good_pairs_in_batches_and_bad_lines_dead_lettered_with_their_reason(tmp_path):
    fr_path = str(tmp_path / "fr.tsv")
    with test_pipeline.TestPipeline() as p:
        read = p | ReadPairs(sources(tmp_path), max_words=5, batch_size=2)
        batches = read["pairs"] | "BatchIds" >> beam.Map(lambda batch: tuple(pair[0] for pair in batch))
        pairs = read["pairs"] | "Pairs" >> beam.FlatMap(lambda batch: [tuple(pair) for pair in batch])
        dead = read[DEAD_LETTER] | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"]))
        assert_outputs({
            "batches": (batches, equal_to([("en-fr/fr.tsv:1", "en-fr/fr.tsv:4"), ("en-fr/fr.tsv:6",),
                                           ("en-ar/train.en:1", "en-ar/train.en:2")])),
            "pairs": (pairs, equal_to([
                ("en-fr/fr.tsv:1", "fr", "The cat sleeps.", "Le chat dort."),
                ("en-fr/fr.tsv:4", "fr", "Paris is big.", "Paris est grande."),
                ("en-fr/fr.tsv:6", "fr", "One.", "Un."),
                ("en-ar/train.en:1", "ar", "Good morning.", "صباح الخير."),
                ("en-ar/train.en:2", "ar", "Thank you.", "شكرا."),
            ])),
            "dead letters": (dead, equal_to([
                (fr_path, "en-fr/fr.tsv:2", "read", "empty"),
                (fr_path, "en-fr/fr.tsv:3", "read", "no_separator"),
                (fr_path, "en-fr/fr.tsv:5", "read", "too_long"),
            ])),
            "stats": (summed(read[STATS]), equal_to([
                (("en-fr", "read/lines"), 6), (("en-fr", "read/empty"), 1), (("en-fr", "read/no_separator"), 1),
                (("en-fr", "read/too_long"), 1), (("en-ar", "read/lines"), 2),
            ])),
        })
