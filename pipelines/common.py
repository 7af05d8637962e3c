"""What every Beam job shares (DESIGN.md §6): its shared options, its life from the command line to
the summary (run_job), the local runner, and the --output folder it writes (pipelines/beam_outputs.py
has the transforms that fill it; pipelines/input_checks.py the checks of its inputs).

An --output that holds an earlier run of the same job (its `.xlu-job` marker names the job) is
replaced: `data/`, `dead_letter/` and `stats.parquet` are deleted before the pipeline starts, so no
stale shard is mixed in. One that holds those names from another job, or without a marker, is refused
unless --overwrite: a typo in --output must not delete someone's data.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import logging
import os
import sys
import time
from types import SimpleNamespace

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipelines.dataset_card import job_command, write_dataset_card
from pipelines.cli_flags import check_job_argv
from pipelines import progress
from pipelines.interrupts import exits_cleanly_on_ctrl_c
from pipelines.input_checks import UsageError

_LOG = logging.getLogger(__name__)


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
        parser.add_argument("--no_progress", action="store_true",
                            help="no progress bar on a terminal and no progress lines in logs")
        parser.add_argument("--overwrite", action="store_true",
                            help="replace data/, dead_letter/ and stats.parquet in an --output that another job (or "
                            "something else) wrote; an earlier run of the same job is replaced without it")


class LanguageCheckOptions(PipelineOptions):
    """--allow_language_mismatch, for the jobs that check an input's language (wiki_mrc's siteinfo,
    clism_pairs' sides): defined once, for the reason JobOptions is. A job lists it in its options
    class's `shared_options`."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--allow_language_mismatch", action="store_true",
                            help="run even when an input does not look like the language it is declared as (a "
                            "dump's siteinfo, a parallel side's function words); without it the job stops first")


def option_classes(options_cls) -> list:
    """The job's options class, the flags every job shares, and the shared groups it takes."""
    return [options_cls, JobOptions, *getattr(options_cls, "shared_options", ())]


def job_options(options: PipelineOptions, options_cls, job: str) -> SimpleNamespace:
    """The shared and the job's own flags in one namespace."""
    values = {}
    for cls in reversed(option_classes(options_cls)):
        values.update(options.view_as(cls).get_all_options(current_only=True))
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


@contextlib.contextmanager
def fewer_garbage_collections():
    """Run the pipeline with Python's cyclic garbage collector called ~100x less often.

    DirectRunner runs the pipeline in this process, and the tuples its elements travel in start a
    young-generation collection every 700 net allocations, with a full one (walking the ~200k objects
    the imports of Beam, spaCy and pyarrow left) every 100th: 6% of wiki_mrc's samples at 16x the
    English excerpt (py-spy), for garbage that holds almost no cycles. The imports' objects are
    frozen out of the collector (gc.freeze) and the first threshold raised to 100,000; cyclic garbage
    is still collected, later. Restored after the run, because tests run jobs in-process."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


# Worker processes (--direct_running_mode multi_processing) parse the pipeline's options without the
# job's option classes, and each logs every job flag as "unparseable" (2 KB a worker, relayed to the
# main process): noise about flags that were parsed, and that no worker needs (DoFns get their values);
# and each warns that it has no semi-persistent directory, which only Beam's containers have.
_WORKER_LOG_RELAYS = ("apache_beam.runners.portability.local_job_service", "apache_beam.options.pipeline_options")
_HARMLESS_WORKER_WARNINGS = ("Discarding unparseable args", "No semi_persistent_directory found")


def _drop_job_flags_warning(record: logging.LogRecord) -> bool:
    message = record.getMessage()
    return not any(noise in message for noise in _HARMLESS_WORKER_WARNINGS)


@exits_cleanly_on_ctrl_c
def run_job(argv, job: str, options_cls, description: str, plan, build, summarise, card=None) -> pa.Table:
    """The life of every job: parse, validate (`plan` -> inputs and a headline), run, summarise.

    `build(pipeline, opts, inputs)` composes the job; `summarise(stats_table, seconds)` prints it;
    `card(opts, inputs)` describes the output for its README.md dataset card (pipelines/dataset_card.py).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = f"python -m pipelines.{job}"
    help_requested(argv, option_classes(options_cls), description, prog)
    check_job_argv(argv, option_classes(options_cls), prog)  # a typo must not run the job on the sample
    options = PipelineOptions(argv)
    opts = job_options(options, options_cls, job)
    logging.getLogger().setLevel(logging.INFO if opts.verbose else logging.WARNING)
    for name in _WORKER_LOG_RELAYS:
        logging.getLogger(name).addFilter(_drop_job_flags_warning)
    show_progress(not opts.no_progress)
    if opts.num_shards < 1:
        raise UsageError(f"--num_shards must be at least 1, got {opts.num_shards}")
    inputs, headline = plan(opts)
    prepare_output(opts.output, job, opts.overwrite)
    print(f"{job}: {headline} -> {opts.output}", flush=True)
    started = time.time()
    p = make_pipeline(options)
    build(p, opts, inputs)
    with fewer_garbage_collections():
        result = p.run()
        result.wait_until_finish()
    progress.close_all()  # the bars end before the summary starts
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


def show_progress(enabled: bool = True) -> None:
    """Progress lines (`xlu.progress`) on stderr even when Beam's own logging is quiet; none under
    --no_progress."""
    progress = logging.getLogger("xlu.progress")
    if not progress.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        progress.addHandler(handler)
        progress.propagate = False
    progress.setLevel(logging.INFO if enabled else logging.WARNING)


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
