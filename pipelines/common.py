"""What every Beam job shares (docs/design.md §6): its shared options, its life from the command line to
the summary (run_job), the local runner, and the --output folder it writes (pipelines/beam_outputs.py
has the transforms that fill it; pipelines/output_folder.py makes it a transaction with a manifest;
pipelines/input_checks.py checks its inputs).

The job writes into a staging folder beside --output, under a lock, and publishes it at the end with
its manifest.json (docs/manifest.md): --output holds a complete run or what it held before. An
--output that holds an earlier run of the same job is replaced (files of the user's own in it stay).
One that holds a job's names (data/, dead_letter/, ...) from another job, or unmarked, is refused
unless --overwrite: a typo in --output must not delete someone's data. A training run's folder is
refused always.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import logging
import sys
import time
from types import SimpleNamespace

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipelines.dataset_card import job_command, manifest_tables, write_dataset_card
from pipelines.cli_flags import check_job_argv
from pipelines import progress
from pipelines.interrupts import exits_cleanly_when_stopped, raise_if_stopped
from pipelines.input_checks import UsageError
from pipelines.output_folder import OutputTransaction, disk_problem, input_identity

_LOG = logging.getLogger(__name__)


class JobOptions(PipelineOptions):
    """The flags every job shares (docs/design.md §6), defined once.

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
        epilog="The job writes a staging folder beside --output and publishes it, with its manifest.json, when it\n"
        "ends; a failed or killed run leaves --output as it was. One job at a time per --output (a lock).\n"
        "An --output holding an earlier run of the same job is replaced (other files stay). One holding data/,\n"
        "dead_letter/ or stats.parquet from another job, or not marked by a job, is refused unless --overwrite;\n"
        "a training run's folder always. --output is checked for writing before the job starts.\n\n"
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


def _drop_disk_error_traceback(record: logging.LogRecord) -> bool:
    """Beam logs a failing step's traceback before it raises; a full, read-only or forbidden disk is
    then said by run_job in one line that names --output, so its traceback is not printed."""
    return disk_problem(Exception(record.getMessage()), "") is None


@exits_cleanly_when_stopped
def run_job(argv, job: str, options_cls, description: str, plan, build, summarise, card=None,
            inputs_of=None) -> pa.Table:
    """The life of every job: parse, validate (`plan` -> inputs and a headline), run, publish, summarise.

    `build(pipeline, opts, inputs)` composes the job; `summarise(stats_table, seconds)` prints it;
    `card(opts, inputs)` describes the output for its README.md dataset card (pipelines/dataset_card.py)
    and names its tables for the manifest; `inputs_of(opts, inputs)` lists (flag, path) of the files
    read, whose sizes and hashes go into the manifest.
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
    logging.getLogger("apache_beam.runners.common").addFilter(_drop_disk_error_traceback)
    show_progress(not opts.no_progress)
    if opts.num_shards < 1:
        raise UsageError(f"--num_shards must be at least 1, got {opts.num_shards}")
    inputs, headline = plan(opts)
    command = job_command(job, argv)
    output = opts.output
    transaction = OutputTransaction(output, job, command, opts.overwrite).begin()
    print(f"{job}: {headline} -> {output}", flush=True)
    started = time.time()
    try:
        identities = [{"flag": flag, **input_identity(path)} for flag, path in (inputs_of(opts, inputs) if inputs_of else [])]
        opts.output = transaction.staging  # the pipeline writes the staging folder; commit publishes it
        p = make_pipeline(options)
        build(p, opts, inputs)
        with fewer_garbage_collections():
            result = p.run()
            result.wait_until_finish()
        progress.close_all()  # the bars end before the summary starts
        described = card(opts, inputs) if card is not None else None
        if described is not None:
            write_dataset_card(transaction.staging, described, command)
        stats = read_stats(transaction.staging)
        tables, default_table = manifest_tables(transaction.staging, described)
        raise_if_stopped()  # a signal whose KeyboardInterrupt a finalizer swallowed still stops the job
        transaction.commit(tables, default_table, identities, stats_totals(stats))
    except BaseException as error:
        transaction.abort()
        cause = disk_problem(error, transaction.staging) if isinstance(error, Exception) else None
        if cause:
            raise UsageError(f"--output {output}: {cause} while writing the job's output in "
                             f"{transaction.staging}; nothing was published at --output") from None
        raise
    finally:
        opts.output = output
    if opts.verbose:
        print_counters(result)
    summarise(stats, time.time() - started)
    warn_input_problems(stats)
    fail_if_fatal(stats)
    return stats


def stats_totals(stats: pa.Table) -> dict[str, int]:
    """Each metric summed over languages: the manifest's record of what the job counted."""
    totals: dict[str, int] = collections.Counter()
    for row in stats.to_pylist():
        totals[row["metric"]] += row["value"]
    return dict(sorted(totals.items()))


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
    "read/bad_multistream_index": "multistream index(es) unreadable or not matching the dump; the dump was read sequentially",
}


def warn_input_problems(stats: pa.Table, stream=None) -> None:
    stream = stream or sys.stdout
    for lang, values in sorted(stats_by_lang(stats).items()):
        for metric, what in INPUT_PROBLEMS.items():
            if values.get(metric):
                print(f"warning: {lang}: {values[metric]:,} {what} ({metric}; see dead_letter/)", file=stream)


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
    # Each column as wide as its widest number (parts per billion have 11 characters), and one space
    # at least between columns, so that no two numbers run together.
    columns = [max([len(lang), 7] + [len(f"{values[lang].get(m, 0):,}") for m in metrics]) + 2 for lang in langs]
    print(f"\n{'count':<{width}}" + "".join(f"{lang:>{w}}" for lang, w in zip(langs, columns)), file=stream)
    for metric in metrics:
        print(f"{metric:<{width}}" + "".join(f"{values[lang].get(metric, 0):>{w},}" for lang, w in zip(langs, columns)),
              file=stream)


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
