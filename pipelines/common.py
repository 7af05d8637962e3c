"""What every Beam job shares (DESIGN.md §6): options, the local runner, counting, Parquet output.

Output layout under --output: `data/` sharded Parquet in the contract schema, `stats.parquet`
(lang, metric, value), `dead_letter/` Parquet, and Beam counters named `<stage>/<reason>`.

An --output that holds an earlier run of the same job (its `.xlu-job` marker names the job) is
replaced: `data/`, `dead_letter/` and `stats.parquet` are deleted before the pipeline starts, so no
stale shard is mixed in. One that holds those names from another job, or without a marker, is refused
unless --overwrite: a typo in --output must not delete someone's data.
"""
from __future__ import annotations

import argparse
import collections
import io
import logging
import os
import sys
import time
from types import SimpleNamespace

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from corpora.schemas import DEAD_LETTER_SCHEMA, STATS_SCHEMA
from corpora.seeding import stable_hash
from pipelines.dataset_card import job_command, write_dataset_card
from pipelines.cli_flags import check_job_argv

STATS = "stats"
DEAD_LETTER = "dead_letter"
_LOG = logging.getLogger(__name__)


class UsageError(SystemExit):
    """Fatal misconfiguration: one line on stderr that says what to fix, exit status 1 (SystemExit with a message)."""

    def __init__(self, message: str):
        super().__init__(f"error: {message}")


def parse_lang_paths(values: list[str] | None, flag: str, known_langs) -> dict[str, list[str]]:
    """`--dump en=/x.bz2 --dump en=/y.bz2` -> {'en': ['/x.bz2', '/y.bz2']}, validated."""
    by_lang: dict[str, list[str]] = {}
    for value in values or []:
        lang, sep, path = value.partition("=")
        if not sep or not lang or not path:
            raise UsageError(f"{flag} {value!r}: expected LANG=PATH, e.g. {flag} en=enwiki-latest-pages-articles.xml.bz2")
        if lang not in known_langs:
            raise UsageError(f"{flag} {value!r}: unknown language {lang!r}; supported: {' '.join(sorted(known_langs))}")
        try:
            found = FileSystems.exists(path)
        except ValueError:  # Beam has no filesystem for this scheme without its extra
            scheme = path.split("://")[0]
            raise UsageError(f"{flag} {value!r}: no filesystem for {scheme}:// paths; install it, e.g. pip install -e '.[gcp]' for gs://") from None
        if not found:
            raise UsageError(f"{flag} {value!r}: file not found: {path}")
        check_input_file(flag, value, path)
        by_lang.setdefault(lang, []).append(path)
    return by_lang


def check_input_file(flag: str, value: str, path: str) -> None:
    """An input path must be a file: a folder would fail deep inside the job with a traceback."""
    if not FileSystems.exists(path):
        raise UsageError(f"{flag} {value!r}: file not found: {path}")
    if "://" not in path and os.path.isdir(path):
        raise UsageError(f"{flag} {value!r}: {path} is a directory; give one file (repeat {flag} for several)")


def check_dump(flag: str, lang: str, path: str, allow_language_mismatch: bool) -> None:
    """A dump must be a file the reader knows, and its siteinfo must agree with the declared language.

    Rows are labelled with the declared language; a dump declared with the wrong one would yield a
    whole language of mislabelled rows without any error, so it is refused unless the user says so.
    A dump without a readable siteinfo is not refused here: the reader counts what it finds.
    """
    from apache_beam.io.filesystem import CompressionTypes

    from corpora import dumps

    value = f"{lang}={path}"
    check_input_file(flag, value, path)
    try:
        compression = dumps.compression_for(path)
    except ValueError:
        name = path.rsplit("/", 1)[-1]
        kind = name[name.index("."):] if "." in name else "no extension"
        unpack = {".gz": f"gunzip -c {name}", ".zip": f"unzip -p {name}", ".xz": f"xz -dc {name}",
                  ".zst": f"zstd -dc {name}"}.get(kind[kind.rfind("."):] if "." in kind else "")
        fix = f" (e.g. {unpack} | bzip2 > {name.split('.')[0]}.xml.bz2)" if unpack else ""
        raise UsageError(f"{flag} {value!r}: unsupported file type ({kind}); give a pages-articles dump as .xml or "
                         f".xml.bz2{fix}") from None
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        info = dumps.read_siteinfo_from_file(f, compression)
    if info is None or allow_language_mismatch or dumps.declared_language_matches(lang, info):
        return
    site = info.dbname[: -len("wiki")].replace("_", "-") if info.dbname.endswith("wiki") else info.lang
    raise UsageError(f"{flag} {value!r}: the dump's siteinfo says xml:lang=\"{info.lang}\" (dbname {info.dbname or '?'}), "
                     f"not {lang}; declare it as {flag} {site or info.lang}={path}, or pass --allow_language_mismatch")


def check_mono_text(flag: str, by_lang: dict[str, list[str]]) -> None:
    """Every language needs one usable line: with none, a SentencePiece or packing step would fail
    late with a message about its own internals."""
    for lang, paths in sorted(by_lang.items()):
        if not any(has_text_line(path, flag, f"{lang}={path}") for path in paths):
            raise UsageError(f"{flag} {lang}={','.join(paths)}: no non-empty line; give text with one sentence a "
                             f"line, or drop {flag} {lang}")


def has_text_line(path: str, flag: str = "", value: str = "", max_bytes: int = 64 << 20) -> bool:
    """Does the file (compression from its extension) hold a line that is not blank?

    Reads until the first such line, so a real corpus costs one read; only a file of blank lines is
    read further, up to `max_bytes`.
    """
    read = 0
    try:
        with FileSystems.open(path) as f:  # compression from the extension, as the job reads it
            while read < max_bytes:
                chunk = f.read(1 << 16)
                if not chunk:
                    return False
                if chunk.strip():
                    return True
                read += len(chunk)
    except (OSError, EOFError, ValueError) as error:  # e.g. a .gz that is not gzip
        raise UsageError(f"{flag} {value!r}: cannot read {path} ({str(error).splitlines()[0][:120]})") from None
    return True  # a huge blank prefix: let the job count it rather than read on here


class JobOptions(PipelineOptions):
    """The flags every job shares (DESIGN.md §6), defined once.

    Beam parses every PipelineOptions subclass of a process into one parser, so two jobs that both
    defined --output could not be imported together.
    """

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--output", default=None, help="output prefix, local or cloud (default ./output/<job>)")
        parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default %(default)s)")
        parser.add_argument("--num_shards", type=int, default=4,
                            help="Parquet shards per split; ~1 per 100 MB of output (default %(default)s)")
        parser.add_argument("--verbose", action="store_true", help="log Beam's own progress and print every counter")
        parser.add_argument("--overwrite", action="store_true",
                            help="replace data/, dead_letter/ and stats.parquet in an --output that another job (or "
                            "something else) wrote; an earlier run of the same job is replaced without it")


def job_options(options: PipelineOptions, options_cls, job: str) -> SimpleNamespace:
    """The shared and the job's own flags in one namespace."""
    values = {
        **options.view_as(JobOptions).get_all_options(current_only=True),
        **options.view_as(options_cls).get_all_options(current_only=True),
    }
    values["output"] = values["output"] or f"./output/{job}"
    return SimpleNamespace(**values)


def help_requested(argv: list[str], options_classes, description: str, prog: str) -> None:
    """`--help` lists the job's own options; Beam's parser would print only its generic usage."""
    if not ({"-h", "--help"} & set(argv)):
        return
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="An --output holding an earlier run of the same job is replaced: its data/, dead_letter/ and\n"
        "stats.parquet are deleted first, other files stay. One holding those from another job, or not marked\n"
        "by a job (.xlu-job), is refused unless --overwrite. --output is checked for writing before the job starts.\n\n"
        "Every Beam pipeline option is accepted too: --runner, --direct_num_workers, "
        "--direct_running_mode, and for Dataflow --project, --region, --temp_location, --sdk_container_image, ...",
    )
    for options_cls in options_classes:
        options_cls._add_argparse_args(parser)
    parser.print_help()
    raise SystemExit(0)


def run_job(argv, job: str, options_cls, description: str, plan, build, summarise, card=None) -> pa.Table:
    """The life of every job: parse, validate (`plan` -> inputs and a headline), run, summarise.

    `build(pipeline, opts, inputs)` composes the job; `summarise(stats_table, seconds)` prints it;
    `card(opts, inputs)` describes the output for its README.md dataset card (pipelines/dataset_card.py).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = f"python -m pipelines.{job}"
    help_requested(argv, [options_cls, JobOptions], description, prog)
    check_job_argv(argv, [options_cls, JobOptions], prog)  # a typo must not run the job on the sample
    options = PipelineOptions(argv)
    opts = job_options(options, options_cls, job)
    logging.getLogger().setLevel(logging.INFO if opts.verbose else logging.WARNING)
    show_progress()
    if opts.num_shards < 1:
        raise UsageError(f"--num_shards must be at least 1, got {opts.num_shards}")
    inputs, headline = plan(opts)
    prepare_output(opts.output, job, opts.overwrite)
    print(f"{job}: {headline} -> {opts.output}", flush=True)
    started = time.time()
    p = make_pipeline(options)
    build(p, opts, inputs)
    result = p.run()
    result.wait_until_finish()
    if card is not None:
        write_dataset_card(opts.output, card(opts, inputs), job_command(job, argv))
    if opts.verbose:
        print_counters(result)
    stats = read_stats(opts.output)
    summarise(stats, time.time() - started)
    warn_input_problems(stats)
    fail_if_fatal(stats)
    return stats


# `fatal/<reason>` counts mark a run whose input, read in full, held nothing the job can use (every line
# rejected, say). The step that finds it counts it instead of raising: the run then ends normally, so
# stats.parquet and dead_letter/ exist, and the job exits 1 with one line that points at them, not with
# a worker traceback. Job modules register the line for each reason here.
FATAL_MESSAGES: dict[str, str] = {}


def fail_if_fatal(stats: pa.Table) -> None:
    for lang, values in sorted(stats_by_lang(stats).items()):
        for metric in sorted(values):
            if metric.startswith("fatal/") and values[metric]:
                raise UsageError(FATAL_MESSAGES.get(metric, f"{metric} ({lang}); see dead_letter/ and stats.parquet"))


# Counted reasons that concern a whole input (or a region of one), not one record: they get a line of
# their own after the summary, since a count in a wide table is easy to miss.
INPUT_PROBLEMS = {
    "read/empty_input": "empty input file(s)",
    "read/no_pages": "input file(s) without a single <page>",
    "read/unsupported_encoding": "input file(s) in an encoding other than UTF-8 or UTF-16",
    "read/corrupt_archive": "damaged bz2 region(s); the pages inside were lost, the rest was read",
    "read/truncated_archive": "cut-off archive(s)",
    "read/bad_multistream_index": "unreadable multistream index(es); the dump was read sequentially",
}


def warn_input_problems(stats: pa.Table, stream=None) -> None:
    stream = stream or sys.stdout
    for lang, values in sorted(stats_by_lang(stats).items()):
        for metric, what in INPUT_PROBLEMS.items():
            if values.get(metric):
                print(f"warning: {lang}: {values[metric]:,} {what} ({metric}; see dead_letter/)", file=stream)


MARKER = ".xlu-job"
JOB_OUTPUTS = ("data", "dead_letter", "stats.parquet", "README.md")


def prepare_output(output: str, job: str, overwrite: bool) -> None:
    """Fail now, not after the whole job, if --output cannot be written; clear an earlier run.

    Writability is tested by creating and deleting a probe file: permissions, a read-only mount or a
    file in place of the folder show up here with one line instead of a traceback from the last step.
    """
    local = "://" not in output
    if local and os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"--output {output}: is a file, not a folder; give a folder path")
    probe = FileSystems.join(output, ".xlu-write-probe")
    try:
        with FileSystems.create(probe) as sink:
            sink.write(b"")
        FileSystems.delete([probe])
    except Exception as error:  # every filesystem raises its own type (OSError, BeamIOError, ...)
        reason = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        raise UsageError(f"--output {output}: cannot write there ({reason}); choose a writable --output") from None
    marker = FileSystems.join(output, MARKER)
    previous = None
    if FileSystems.exists(marker):
        with FileSystems.open(marker) as f:
            previous = f.read().decode("utf-8", "replace").strip()
    held = [name for name in JOB_OUTPUTS if FileSystems.exists(FileSystems.join(output, name))]
    if held and previous != job and not overwrite:
        whose = f"the {previous} job" if previous else "something other than this job (no .xlu-job marker)"
        raise UsageError(f"--output {output}: holds {', '.join(held)} written by {whose}; give an empty or new "
                         f"--output, or pass --overwrite to replace them")
    clear_job_outputs(output, list(JOB_OUTPUTS))
    with FileSystems.create(marker) as sink:
        sink.write(job.encode() + b"\n")


def stats_by_lang(stats: pa.Table) -> dict[str, dict[str, int]]:
    values: dict[str, dict[str, int]] = {}
    for row in stats.to_pylist():
        values.setdefault(row["lang"], {})[row["metric"]] = row["value"]
    return values


def print_count_table(values: dict[str, dict[str, int]], stream=None) -> None:
    """Every counted metric, a column per language (pair): what accounts for each input record."""
    stream = stream or sys.stdout
    langs = sorted(values)
    metrics = sorted({m for v in values.values() for m in v})
    width = max([len(m) for m in metrics] + [24]) + 2
    print(f"\n{'count':<{width}}" + "".join(f"{lang:>9}" for lang in langs), file=stream)
    for metric in metrics:
        print(f"{metric:<{width}}" + "".join(f"{values[lang].get(metric, 0):>9,}" for lang in langs), file=stream)


def make_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """A pipeline that never depends on downloading the Prism runner for local runs.

    Beam 2.77's DirectRunner first tries Prism, which fetches a binary from the web; offline that
    fails (with a logged download error) before Beam falls back to its Python runner. For
    DirectRunner (the default) we go straight to that Python runner, FnApiRunner, which honours
    --direct_num_workers and --direct_running_mode. `--runner PrismRunner` still selects Prism.
    """
    runner_name = options.view_as(StandardOptions).runner
    if runner_name in (None, "DirectRunner", "direct"):
        from apache_beam.portability.api import beam_provision_api_pb2
        from apache_beam.runners.portability.fn_api_runner import fn_runner
        from apache_beam.runners.portability.portable_runner import JobServiceHandle

        encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
        provision = fn_runner.ExtendedProvisionInfo(
            beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)
        )
        direct = options.view_as(DirectOptions)
        if direct.direct_num_workers == 0:
            direct.direct_num_workers = 1  # "0 = all cores" would make results depend on the host
        return beam.Pipeline(runner=fn_runner.FnApiRunner(provision_info=provision), options=options)
    return beam.Pipeline(options=options)


def show_progress() -> None:
    """Progress lines (`xlu.progress`) on stderr even when Beam's own logging is quiet."""
    progress = logging.getLogger("xlu.progress")
    if not progress.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        progress.addHandler(handler)
        progress.setLevel(logging.INFO)
        progress.propagate = False


class TallyingDoFn(beam.DoFn):
    """A DoFn that counts events per bundle and emits the sums once, on the `stats` output.

    One stats element per mention would double the shuffle of the job; summing per bundle keeps
    the stats exact (they are data, unlike best-effort counters) at a negligible cost.
    """

    def start_bundle(self):
        self._tally = collections.Counter()

    def tally(self, stage: str, reason: str, lang: str, n: int = 1) -> None:
        if n == 0:
            return
        Metrics.counter("xlu", f"{stage}/{reason}").inc(n)
        self._tally[(lang, f"{stage}/{reason}")] += n

    def finish_bundle(self):
        for key, n in sorted(self._tally.items()):
            yield TaggedOutput(STATS, WindowedValue((key, n), MIN_TIMESTAMP, [GlobalWindow()]))
        self._tally.clear()


def dead_letter(source: str, record_id: str, stage: str, reason: str, excerpt: str) -> TaggedOutput:
    return TaggedOutput(
        DEAD_LETTER,
        {"source": source, "record_id": record_id, "stage": stage, "reason": reason, "excerpt": excerpt[:200]},
    )


# Rows per Parquet row group: the unit a reader streams and a training loader shuffles between.
# Thousands, not pyarrow's default of a million, so that a loader holding a few groups in memory
# still sees every language of a shard (issue 15).
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
    and a sorted shard made every batch of a streaming reader one language; issue 15).
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


def clear_job_outputs(output: str, names: list[str]) -> None:
    """Remove what a previous run of the same job left, so that no stale shard is mixed in."""
    for name in names:
        pattern = FileSystems.join(output, name)
        for pattern in (pattern, FileSystems.join(pattern, "*")):
            matches = FileSystems.match([pattern])[0].metadata_list
            files = [m.path for m in matches if not m.path.endswith("/")]
            if files:
                FileSystems.delete(files)


def read_stats(output: str) -> pa.Table:
    """The stats table, read without starting Arrow's thread pools.

    `pq.read_table` goes through the dataset API, which starts Arrow's CPU and I/O pools; their
    std::threads, still alive when the interpreter exits, are torn down by static destructors and a
    joinable one aborts the process ("terminate called without an active exception", exit 134) after
    a complete run (apache/arrow#34314). `ParquetFile.read(use_threads=False)` on an in-memory buffer
    starts neither pool, and the stats file is a few hundred rows.
    """
    with FileSystems.open(FileSystems.join(output, "stats.parquet")) as f:
        return pq.ParquetFile(pa.BufferReader(f.read())).read(use_threads=False)


def print_counters(result, stream=None) -> None:
    """Print every `xlu` counter of a finished run (committed values where the runner has them)."""
    stream = stream or sys.stdout
    counters = result.metrics().query(beam.metrics.MetricsFilter().with_namespace("xlu"))["counters"]
    totals = collections.Counter()
    for c in counters:
        totals[c.key.metric.name] += c.committed if c.committed is not None else c.attempted
    if totals:
        print("counters:", file=stream)
        for name, value in sorted(totals.items()):
            print(f"  {name:<45} {value:>12,}", file=stream)


def check_parallel_inputs(flag: str, value: str, paths) -> None:
    """Every file of a parallel input exists, and two line-aligned files have as many lines.

    Files that differ in length are misaligned somewhere: every pair after the first extra line would
    be wrong, so the job stops with both counts before spending any work on them.
    """
    from corpora.parallel import count_lines

    for path in paths:
        check_input_file(f"--{flag}", value, path)
        if not has_text_line(path, f"--{flag}", value):
            raise UsageError(f"--{flag} {value!r}: {path} has no non-empty line; give text with one segment a line")
    if len(paths) == 2:
        counts = []
        for path in paths:
            with FileSystems.open(path) as f:
                counts.append(count_lines(f))
        if counts[0] != counts[1]:
            raise UsageError(f"--{flag} {value!r}: line counts differ: {paths[0]} has {counts[0]:,} lines, "
                             f"{paths[1]} has {counts[1]:,}; the files must be line-aligned")
