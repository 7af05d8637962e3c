"""WriteStats alone (pipelines/beam_outputs.py): the tallies of every bundle summed per (lang, metric)
into one sorted stats.parquet."""
from __future__ import annotations

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.schemas import STATS_SCHEMA, check_schema
from pipelines.beam_outputs import WriteStats

from transform_checks import assert_outputs


def stats_rows(path) -> list[tuple]:
    check_schema(pq.read_schema(path), STATS_SCHEMA, str(path))
    return [(r["lang"], r["metric"], r["value"]) for r in pq.read_table(path).to_pylist()]


def test_tallies_of_many_bundles_are_summed_per_language_and_metric_and_sorted(tmp_path):
    tallies = [
        (("fr", "read/lines"), 4), (("en", "read/lines"), 2), (("en", "read/empty"), 1),
        (("en", "read/lines"), 3), (("all", "trtd/target_rows"), 9), (("fr", "read/lines"), 1),
    ]
    with test_pipeline.TestPipeline() as p:
        written = p | "Tallies" >> beam.Create(tallies) | "WriteStats" >> WriteStats(str(tmp_path / "job"))
        # A job that tallied nothing still gets its (empty) stats file: an output is complete or absent.
        none = p | "NoTally" >> beam.Create([], reshuffle=False) | "WriteNoStats" >> WriteStats(str(tmp_path / "idle"))
        assert_outputs({"written": (written, equal_to([str(tmp_path / "job" / "stats.parquet")])),
                        "idle": (none, equal_to([str(tmp_path / "idle" / "stats.parquet")]))})
    assert stats_rows(tmp_path / "job" / "stats.parquet") == [
        ("all", "trtd/target_rows", 9), ("en", "read/empty", 1), ("en", "read/lines", 5), ("fr", "read/lines", 5),
    ]
    assert stats_rows(tmp_path / "idle" / "stats.parquet") == []
