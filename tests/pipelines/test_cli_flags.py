"""Unknown flags are an error on every command (docs/design.md §6, issue 18 item 1): one line on stderr that
names the nearest flag, exit status 2, before anything runs; Beam's own options still pass.

In process (the commands' real `run`/`main`), plus one real process per side for the exit status.
"""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines import cli_flags

REPO = Path(__file__).resolve().parents[2]

# (module, entry function, argv with a typo, the typo, the flag the line must suggest)
TYPOS = [
    ("pipelines.wiki_mrc", "run", ["--dumps", "en=x.xml.bz2"], "--dumps", "--dump"),
    ("pipelines.wiki_mrc", "run", ["--outptu", "out"], "--outptu", "--output"),
    ("pipelines.wiki_mrc", "run", ["--seeed=1"], "--seeed", "--seed"),
    ("pipelines.clism_pairs", "run", ["--pair", "fr=x.tsv"], "--pair", "--pairs"),
    ("pipelines.vocap", "run", ["--vocab_sise", "500"], "--vocab_sise", "--vocab_size"),
    ("pipelines.xy_corpus", "run", ["--bitexts", "de-fr=x.tsv"], "--bitexts", "--bitext"),
    ("pipelines.wiki_mrc", "run", ["--runnr", "DirectRunner"], "--runnr", "--runner"),  # one of Beam's
    ("pipelines.wiki_mrc", "run", ["--direct_num_worker", "2"], "--direct_num_worker", "--direct_num_workers"),
    ("training.run", "main", ["--modle", "mpmr", "--data", "x"], "--modle", "--model"),
    ("training.run", "main", ["--model", "mpmr", "--data", "x", "--max_step", "3"], "--max_step", "--max_steps"),
    ("training.finetune", "main", ["--task", "squad", "--init", "x", "--trian", "t.json"], "--trian", "--train"),
    ("training.finetune_clism", "main", ["--init", "x", "--few-shot", "64"], "--few-shot", "--few_shot"),
    ("training.convert_e5", "main", ["out", "--modle", "x.bin"], "--modle", "--model"),
    ("corpora.mrc.audit", "main", ["out", "--dumps", "en=x"], "--dumps", "--dump"),
    ("training.tasks.bundled", "main", ["--shraed", "x"], "--shraed", "--shared"),
]


@pytest.mark.parametrize("module,entry,argv,typo,suggestion", TYPOS, ids=[f"{m}{t}" for m, _, _, t, _ in TYPOS])
def test_typo_is_one_line_naming_the_flag_and_exit_2(module, entry, argv, typo, suggestion, capsys, tmp_path,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)  # a job that ran anyway would write ./output here
    with pytest.raises(SystemExit) as stop:
        getattr(importlib.import_module(module), entry)(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"python -m {module}: error: unknown flag {typo}; did you mean {suggestion}?\n"
    assert not (tmp_path / "output").exists()


def test_typo_hiding_a_required_flag_names_the_typo(capsys):
    from training import finetune

    with pytest.raises(SystemExit):
        finetune.main(["--task", "squad", "--int", "runs/x"])  # --init is required, --int is the typo
    assert capsys.readouterr().err.strip() == "python -m training.finetune: error: unknown flag --int; did you mean --init?"


def test_another_jobs_flag_is_not_a_wiki_mrc_flag(capsys):
    from pipelines import wiki_mrc

    with pytest.raises(SystemExit) as stop:
        wiki_mrc.run(["--mono", "en=x.txt"])  # vocap's and xy_corpus's; Beam would parse it for every job
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("python -m pipelines.wiki_mrc: error: unknown flag --mono;")


@pytest.mark.parametrize("argv,message", [
    (["en=x.xml.bz2"], "unexpected argument 'en=x.xml.bz2'; see --help"),  # the input without its --dump
    (["--seed", "abc"], "argument --seed: invalid int value: 'abc'"),
])
def test_stray_values_and_bad_types_are_one_line(argv, message, capsys):
    from pipelines import wiki_mrc

    with pytest.raises(SystemExit) as stop:
        wiki_mrc.run(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"python -m pipelines.wiki_mrc: error: {message}\n"


BEAM_OPTIONS = [
    ["--runner", "DirectRunner", "--direct_num_workers", "2", "--direct_running_mode", "multi_threading"],
    ["--runner", "DataflowRunner", "--project", "p", "--region", "europe-west1", "--temp_location", "gs://b/tmp",
     "--sdk_container_image", "img", "--experiments=use_runner_v2", "--setup_file", "./pyproject.toml", "--dry_run", "True"],
    ["--runner", "FlinkRunner", "--flink_master", "localhost:8081", "--parallelism", "2"],
    ["--runner", "PrismRunner", "--job_name", "x", "--save_main_session"],
]


@pytest.mark.parametrize("options", BEAM_OPTIONS, ids=lambda a: a[1])
def test_beam_options_pass_the_check(options):
    from pipelines.common import JobOptions
    from pipelines.wiki_mrc import WikiMrcOptions

    cli_flags.check_job_argv([*options, "--dump", "en=x.xml.bz2", "--seed", "3"], [WikiMrcOptions, JobOptions], "p")


def test_runner_module_options_pass_the_check():
    """DaskRunner defines --dask_scheduler_file in its own module, imported only for that --runner."""
    pytest.importorskip("dask")
    cli_flags.check_job_argv(["--runner", "apache_beam.runners.dask.dask_runner.DaskRunner",
                              "--dask_scheduler_file", "s.json"], [], "p")


def test_a_job_with_beam_options_gets_past_the_flags(capsys, tmp_path):
    """The job accepts Beam's options and stops at its next check (an unwritable --output), so it ran
    the flag check and nothing else."""
    from pipelines import vocap

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as stop:
        vocap.run(["--runner", "DirectRunner", "--direct_num_workers", "2", "--output", str(blocker / "out")])
    assert "error: --output" in str(stop.value.code) and "unknown flag" not in capsys.readouterr().err


@pytest.mark.parametrize("argv,prog", [
    (["-m", "pipelines.wiki_mrc", "--dumps", "en=x.xml.bz2"], "python -m pipelines.wiki_mrc"),
    (["-m", "corpora.mrc.audit", "out", "--dumps", "en=x"], "python -m corpora.mrc.audit"),  # CommandParser's side
])
def test_exit_status_of_the_real_process(argv, prog, tmp_path):
    result = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"{prog}: error: unknown flag ") and "did you mean" in result.stderr
    assert not (tmp_path / "output").exists()


def test_a_value_that_is_a_command_line_is_not_a_flag():
    # training.run --downstream "--task squad --max_steps 3": argparse reads a dash-led token holding a
    # space as a value; the unknown-flag check must too, and still catch a typo next to it.
    from corpora.cli_flags import first_unknown_flag

    known = {"--downstream", "--max_steps"}
    assert first_unknown_flag(["--downstream", "--task squad --max_steps 3", "--max_steps", "2"], known) is None
    assert first_unknown_flag(["--downstream", "--task squad", "--max_step", "2"], known) == "--max_step"
