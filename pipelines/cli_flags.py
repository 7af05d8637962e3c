"""A Beam job's command line is checked before anything runs (docs/design.md §6).

Beam itself only logs "Discarding unparseable args" for a flag it does not know and runs on: a typo
such as `--dumps` or `--outptu` ran the job on the bundled sample and overwrote ./output/<job>. Here a
flag is accepted when the job's own options (and the shared JobOptions) define it, or when a
PipelineOptions class that is not a job's does: all of `apache_beam.options` (--runner,
--direct_num_workers, --project, --temp_location, --sdk_container_image, Flink's and Spark's, ...) and
those of the `--runner`'s module (Beam's DaskRunner defines --dask_scheduler_file only once its
module is imported). Another job's options do not count, although Beam would parse them: vocap's
`--mono` is not a wiki_mrc flag.
"""
from __future__ import annotations

import argparse

from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

from corpora.cli_flags import OneLineErrors, exit_with_usage_error, first_unknown_flag, unknown_flag_message


class _JobFlagParser(OneLineErrors, _BeamArgumentParser):
    """Beam's parser (it knows value-provider options) with one-line errors."""


def beam_option_classes() -> list[type[PipelineOptions]]:
    """Every PipelineOptions subclass imported so far, at any depth, but the project's jobs' own (the
    runners' options, pipelines.dask's included, are Beam options to every job)."""
    found, stack = [], [PipelineOptions]
    while stack:
        for cls in stack.pop().__subclasses__():
            stack.append(cls)
            is_jobs = cls.__module__.startswith("pipelines.") and not cls.__module__.startswith("pipelines.dask.")
            if not is_jobs and cls not in found:
                found.append(cls)
    return found


def import_runner(argv: list[str]) -> None:
    """Import the module of `--runner` now, as Beam does when the pipeline is built, so that the
    options it defines are known. A runner that cannot be loaded is left for Beam to report."""
    only_runner = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    only_runner.add_argument("--runner")
    runner = only_runner.parse_known_args(argv)[0].runner
    if runner:
        from apache_beam.runners.runner import create_runner

        try:
            create_runner(runner)
        except Exception:  # noqa: BLE001 - Beam's own message comes when the pipeline is made
            pass


def flag_parser(options_classes, prog: str) -> argparse.ArgumentParser:
    parser = _JobFlagParser(prog=prog, allow_abbrev=False, add_help=False, conflict_handler="resolve")
    for cls in options_classes:
        cls._add_argparse_args(parser)  # Beam's own hook for a class's flags
    return parser


def option_strings(options_classes) -> set[str]:
    return set(flag_parser(options_classes, "")._option_string_actions)


def check_job_argv(argv: list[str], job_options_classes, prog: str) -> None:
    """Exit 2 with one line on the first unknown flag (naming the nearest one), on a value that has no
    flag (`en=x.bz2` without `--dump`) or on a value of the wrong type; return when all is well."""
    import_runner(argv)
    own = option_strings(job_options_classes)
    beam = option_strings(beam_option_classes())
    unknown = first_unknown_flag(argv, own | beam)
    if unknown is not None:
        exit_with_usage_error(prog, unknown_flag_message(unknown, own, beam))
    # A full parse finds stray values and bad types (`--seed x`) while nothing has run yet.
    flag_parser([*job_options_classes, *beam_option_classes()], prog).parse_args(argv)
