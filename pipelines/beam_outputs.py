"""The Beam pieces every job writes its output with (docs/design.md §6): the stats and dead-letter side
outputs, and Parquet shards that are byte-identical for the same input and seed on any runner.

Output layout under --output: `data/` sharded Parquet in the contract schema, `stats.parquet`
(lang, metric, value), `dead_letter/` Parquet, and Beam counters named `<stage>/<reason>`.
"""
from __future__ import annotations

import collections
import io

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from corpora.schemas import DEAD_LETTER_SCHEMA, STATS_SCHEMA
from corpora.seeding import stable_hash

STATS = "stats"
DEAD_LETTER = "dead_letter"


class TallyingDoFn(beam.DoFn):
    """A DoFn that counts events per bundle and emits the sums once, on the `stats` output.

    One stats element per mention would double the shuffle of the job; summing per bundle keeps
    the stats exact (they are data, unlike best-effort counters) at a negligible cost. The Beam
    counters get the same sums at the end of the bundle: a counter's lookup costs more than the
    event it counts when a stage tallies once per element.
    """

    def start_bundle(self):
        self._tally = collections.Counter()

    def tally(self, stage: str, reason: str, lang: str, n: int = 1) -> None:
        if n:
            self._tally[(stage, reason, lang)] += n

    def finish_bundle(self):
        by_metric = collections.Counter()
        for (stage, reason, lang), n in self._tally.items():
            by_metric[(lang, f"{stage}/{reason}")] += n
        self._tally.clear()
        for (lang, metric), n in sorted(by_metric.items()):
            Metrics.counter("xlu", metric).inc(n)
            yield TaggedOutput(STATS, in_global_window(((lang, metric), n)))


def in_global_window(value) -> WindowedValue:
    """An element emitted from finish_bundle, which has no input element to take its window from;
    every job here runs in the global window."""
    return WindowedValue(value, MIN_TIMESTAMP, [GlobalWindow()])


def dead_letter(source: str, record_id: str, stage: str, reason: str, excerpt: str) -> TaggedOutput:
    return TaggedOutput(
        DEAD_LETTER,
        {"source": source, "record_id": record_id, "stage": stage, "reason": reason, "excerpt": excerpt[:200]},
    )


# Rows per Parquet row group: the unit a reader streams and a training loader shuffles between.
# Thousands, not pyarrow's default of a million, so that a loader holding a few groups in memory
# still sees every language of a shard.
ROW_GROUP_ROWS = 2_000


def write_parquet_file(path: str, rows: list[dict], schema: pa.Schema, row_group_rows: int = ROW_GROUP_ROWS) -> None:
    """Write rows as one Parquet file through Beam's filesystems (local, gs://, s3://, ...)."""
    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", row_group_size=row_group_rows)
    with FileSystems.create(path) as sink:
        sink.write(buffer.getvalue())


def shuffled_order(seed: int, key):
    """A row's place in a seeded pseudo-random order; the key breaks ties so the order is total."""
    return lambda row: (stable_hash(seed, "row-order", key(row)), key(row))


class WriteParquetShards(beam.PTransform):
    """Rows -> `{directory}/{prefix}-SSSSS-of-NNNNN.parquet`, byte-identical for the same rows and seed.

    Beam's WriteToParquet names and fills shards by bundle, which differs between runs and worker
    counts. Here a row's shard is a hash of its key and each shard is ordered by key, so the same
    input and seed give the same files whatever the runner's parallelism. Every shard is written,
    empty ones too, so the file set is predictable.

    With `shuffle_seed`, the order is a seeded hash of the key instead of the key itself: the rows a
    consumer reads in file order are then a mix of every language (the keys start with the language,
    and a sorted shard would make every batch of a streaming reader one language).
    """

    def __init__(self, directory: str, prefix: str, schema: pa.Schema, num_shards: int, key=None,
                 shuffle_seed: int | None = None, row_group_rows: int = ROW_GROUP_ROWS):
        super().__init__()
        self.directory, self.prefix, self.schema = directory, prefix, schema
        self.num_shards, self.row_group_rows = num_shards, row_group_rows
        self.key = key or (lambda row: row["id"])
        self.order = self.key if shuffle_seed is None else shuffled_order(shuffle_seed, self.key)

    def expand(self, rows):
        n, key = self.num_shards, self.key
        keyed = rows | "KeyByShard" >> beam.Map(lambda row: (stable_hash(key(row)) % n, row))
        every_shard = rows.pipeline | "AllShards" >> beam.Create([(i, None) for i in range(n)])
        return (
            (keyed, every_shard)
            | "Flatten" >> beam.Flatten()
            | "GroupByShard" >> beam.GroupByKey()
            | "WriteShard" >> beam.MapTuple(self._write_shard)
        )

    def _write_shard(self, shard: int, rows):
        rows = sorted((r for r in rows if r is not None), key=self.order)
        path = FileSystems.join(self.directory, f"{self.prefix}-{shard:05d}-of-{self.num_shards:05d}.parquet")
        write_parquet_file(path, rows, self.schema, self.row_group_rows)
        return path, len(rows)


class WriteDeadLetters(beam.PTransform):
    def __init__(self, output: str, num_shards: int = 1):
        super().__init__()
        self.output, self.num_shards = output, num_shards

    def expand(self, records):
        # Sorted, not shuffled: dead letters are read by people, grouped by stage and source.
        return records | WriteParquetShards(
            FileSystems.join(self.output, "dead_letter"),
            "dead_letter",
            DEAD_LETTER_SCHEMA,
            self.num_shards,
            key=lambda r: (r["stage"], r["source"], r["record_id"], r["reason"], r["excerpt"]),
        )


class WriteStats(beam.PTransform):
    """((lang, metric), n) elements -> summed, one sorted `stats.parquet`."""

    def __init__(self, output: str):
        super().__init__()
        self.output = output

    def expand(self, counts):
        path = FileSystems.join(self.output, "stats.parquet")

        def write(pairs):
            rows = [{"lang": lang, "metric": metric, "value": int(v)} for (lang, metric), v in sorted(pairs)]
            write_parquet_file(path, rows, STATS_SCHEMA)
            return path

        return (
            counts
            | "SumPerMetric" >> beam.CombinePerKey(sum)
            | "ToList" >> beam.combiners.ToList()
            | "WriteStatsFile" >> beam.Map(write)
        )
