"""WriteDeadLetters alone (pipelines/beam_outputs.py): one Parquet file in the dead-letter schema, its
records grouped by stage and source for the people who read it, each with its reason."""
from __future__ import annotations

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.schemas import DEAD_LETTER_SCHEMA, check_schema
from pipelines.beam_outputs import WriteDeadLetters

from transform_checks import assert_outputs


def record(source, record_id, stage, reason, excerpt=""):
    return {"source": source, "record_id": record_id, "stage": stage, "reason": reason, "excerpt": excerpt}


RECORDS = [
    record("en.xml", "12", "read", "page_too_large", "<page>"),
    record("fr.tsv", "fr.tsv:3", "read", "no_separator", "one column"),
    record("en", "7", "parse", "empty_redirect_target", "Foo"),
    record("en.xml", "3", "read", "truncated", ""),
    record("fr.tsv", "fr.tsv:1", "read", "empty", " ||| x"),
]


def test_dead_letters_are_one_file_sorted_by_stage_then_source_with_their_reasons(tmp_path):
    path = str(tmp_path / "job" / "dead_letter" / "dead_letter-00000-of-00001.parquet")
    clean = str(tmp_path / "clean" / "dead_letter" / "dead_letter-00000-of-00001.parquet")
    with test_pipeline.TestPipeline() as p:
        written = p | "Records" >> beam.Create(RECORDS) | "Write" >> WriteDeadLetters(str(tmp_path / "job"))
        # A job without bad input still writes the (empty) file, so readers find what they expect.
        none = p | "NoRecord" >> beam.Create([], reshuffle=False) | "WriteNone" >> WriteDeadLetters(str(tmp_path / "clean"))
        assert_outputs({"written": (written, equal_to([(path, 5)])), "clean": (none, equal_to([(clean, 0)]))})
    check_schema(pq.read_schema(path), DEAD_LETTER_SCHEMA, path)
    rows = pq.read_table(path).to_pylist()
    assert [(r["stage"], r["source"], r["record_id"], r["reason"]) for r in rows] == [
        ("parse", "en", "7", "empty_redirect_target"),
        ("read", "en.xml", "12", "page_too_large"),
        ("read", "en.xml", "3", "truncated"),
        ("read", "fr.tsv", "fr.tsv:1", "empty"),
        ("read", "fr.tsv", "fr.tsv:3", "no_separator"),
    ]
    assert rows[4]["excerpt"] == "one column"
    assert pq.read_table(clean).num_rows == 0
