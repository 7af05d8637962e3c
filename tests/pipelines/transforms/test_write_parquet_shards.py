"""WriteParquetShards alone (pipelines/beam_outputs.py): every shard written, empty ones too, each row
in the shard its key's hash names, in key order (or seeded order), the same bytes whatever the
order the rows arrive in."""
from __future__ import annotations

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from corpora.seeding import stable_hash
from pipelines.beam_outputs import WriteParquetShards

SCHEMA = pa.schema([("id", pa.string()), ("lang", pa.string()), ("n", pa.int64())])
ROWS = [{"id": f"{lang}:{k}", "lang": lang, "n": k} for lang in ("en", "fr") for k in range(4)]
SHARDS = 12  # more shards than rows: some are certainly empty


def shard_of(row_id: str) -> int:
    return stable_hash(row_id) % SHARDS


def test_rows_land_in_their_key_s_shard_in_key_order_and_every_shard_is_written(tmp_path):
    expected = [(str(tmp_path / "sorted" / f"train-{i:05d}-of-{SHARDS:05d}.parquet"),
                 sum(shard_of(r["id"]) == i for r in ROWS)) for i in range(SHARDS)]
    assert any(n == 0 for _, n in expected) and any(n > 1 for _, n in expected)
    with test_pipeline.TestPipeline() as p:
        rows = p | beam.Create(ROWS[::-1])  # in reverse key order
        written = rows | "Sorted" >> WriteParquetShards(str(tmp_path / "sorted"), "train", SCHEMA, SHARDS, row_group_rows=1)
        assert_that(written, equal_to(expected))
    for shard, (path, n) in enumerate(expected):
        table = pq.read_table(path)
        assert table.schema.equals(SCHEMA) and table.num_rows == n
        ids = table.column("id").to_pylist()
        assert ids == sorted(ids) and all(shard_of(i) == shard for i in ids)
        if n:  # row_group_rows=1: one row group a row
            assert pq.ParquetFile(path).metadata.num_row_groups == n


def test_same_rows_in_any_order_give_the_same_bytes_and_the_seed_sets_the_order(tmp_path):
    with test_pipeline.TestPipeline() as p:
        forward = p | "Forward" >> beam.Create(ROWS)
        backward = p | "Backward" >> beam.Create(ROWS[::-1])
        forward | "WriteForward" >> WriteParquetShards(str(tmp_path / "a"), "train", SCHEMA, 2, shuffle_seed=7)
        backward | "WriteBackward" >> WriteParquetShards(str(tmp_path / "b"), "train", SCHEMA, 2, shuffle_seed=7)
        forward | "WriteOtherSeed" >> WriteParquetShards(str(tmp_path / "c"), "train", SCHEMA, 2, shuffle_seed=8)
    names = [f"train-{i:05d}-of-00002.parquet" for i in range(2)]
    assert [(tmp_path / "a" / n).read_bytes() for n in names] == [(tmp_path / "b" / n).read_bytes() for n in names]
    for n in names:
        ids = pq.read_table(tmp_path / "a" / n).column("id").to_pylist()
        assert ids == sorted(ids, key=lambda i: (stable_hash(7, "row-order", i), i))
        assert sorted(ids) == sorted(pq.read_table(tmp_path / "c" / n).column("id").to_pylist())
    orders = [[i for n in names for i in pq.read_table(tmp_path / d / n).column("id").to_pylist()] for d in ("a", "c")]
    assert orders[0] != orders[1]  # seed 8 orders the same rows otherwise
