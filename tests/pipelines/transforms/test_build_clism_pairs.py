"""BuildClismPairs alone (pipelines/clism_transforms.py) on six tokenised English-German pairs, with
spaCy's small English NER and fast_align: the names found in English and the target words aligned
to them, a pair without a name aligned but left out, pairs too long or empty dead-lettered with
their reason, and every pair counted."""
from __future__ import annotations

import types

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.clism.ner_spans import ner_pipeline_available
from pipelines.clism_transforms import BuildClismPairs

from transform_checks import assert_outputs, summed

pytestmark = pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")

# German rather than French: spaCy's French stop words (the answer rules read them) take ~3 CPU-s to import.
PAIRS = [  # (pair id, target language, English, German), as ReadPairs batches them
    ("de.tsv:1", "de", "Barack Obama visited Paris in 2009 .", "Barack Obama besuchte Paris im Jahr 2009 ."),
    ("de.tsv:2", "de", "Angela Merkel met Emmanuel Macron in Berlin .", "Angela Merkel traf Emmanuel Macron in Berlin ."),
    ("de.tsv:3", "de", "The cat sleeps on the mat .", "Die Katze schläft auf der Matte ."),
    ("de.tsv:4", "de", "Google opened an office in Tokyo .", "Google eröffnete ein Büro in Tokio ."),
    ("de.tsv:5", "de", "one two three four five six seven eight nine ten eleven twelve thirteen", "eins"),
    ("de.tsv:6", "de", "Nobody came .", ""),
]


def options():
    return types.SimpleNamespace(
        spacy_model="en_core_web_sm", pretokenized=True, max_words=12, max_span_words=10, entity_labels="",
        ner_cache_entries=1000, aligner="fast_align", align_shards=1, seed=0, max_gap=2,
        symmetrisation="grow-diag-final-and", eflomal_prefix_len=0, eflomal_samplers=3, identity_prior=1.0)


def spans_as_words(row) -> tuple:
    return row["id"], tuple((" ".join(row["src_words"][s["src_start"]: s["src_end"] + 1]),
                             " ".join(row["tgt_words"][s["tgt_start"]: s["tgt_end"] + 1]), s["label"])
                            for s in row["spans"])


def test_names_found_in_english_are_aligned_to_their_german_words_and_bad_pairs_dead_lettered():
    with test_pipeline.TestPipeline() as p:
        rows, stats, dead = p | beam.Create([PAIRS[:3], PAIRS[3:]]) | BuildClismPairs(options())
        assert_outputs({
            "rows": (rows | "Spans" >> beam.Map(spans_as_words), equal_to([
                ("de.tsv:1", (("Barack Obama", "Barack Obama", "PERSON"), ("Paris", "Paris", "GPE"),
                              ("2009", "2009", "DATE"))),
                ("de.tsv:2", (("Angela Merkel", "Angela Merkel", "PERSON"), ("Emmanuel Macron", "Emmanuel Macron", "PERSON"),
                              ("Berlin", "Berlin", "GPE"))),
                ("de.tsv:4", (("Google", "Google", "ORG"), ("Tokyo", "Tokio", "GPE"))),  # learnt, not the same word
            ])),
            "words": (rows | "Words" >> beam.Map(lambda r: (r["id"], r["src_lang"], r["tgt_lang"], " ".join(r["tgt_words"]))),
                      equal_to([(pid, "en", "de", de) for pid, _, _, de in (PAIRS[0], PAIRS[1], PAIRS[3])])),
            "dead letters": (dead | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"])),
                             equal_to([("en-de", "de.tsv:5", "words", "too_long"), ("en-de", "de.tsv:6", "words", "empty")])),
            "stats": (summed(stats), equal_to([
                (("en-de", "align/pairs"), 4), (("en-de", "ner/entities"), 8), (("en-de", "ner/informative_spans"), 8),
                (("en-de", "pairs/kept"), 3), (("en-de", "pairs/no_span"), 1), (("en-de", "project/edges_trimmed"), 1),
                (("en-de", "spans/kept"), 8), (("en-de", "words/empty"), 1), (("en-de", "words/too_long"), 1),
            ])),
        })
