"""Ctrl-C in a data job: a real job in a real subprocess, interrupted as a terminal does (SIGINT to
its process group) while its pipeline runs. One line, exit status 130, no traceback, no data left
where a reader would take it. SIGTERM (kill, a batch scheduler's time limit, docker stop) the same,
with exit status 143."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from corpora.clism.ner_spans import ner_pipeline_available
from pipelines import interrupts
from pipelines.interrupts import INTERRUPTED_STATUS, MESSAGE, TERMINATED_MESSAGE, TERMINATED_STATUS

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def interrupt_job(job: str, out: Path, *args: str, after_headline: float = 1.0, timeout: float = 300,
                  signum: int = signal.SIGINT):
    """Start `python -m pipelines.JOB`, wait for its headline (printed as the pipeline starts), let it
    run `after_headline` seconds, press Ctrl-C (or send `signum` to its process group); its exit
    status, stdout and stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", f"pipelines.{job}", "--output", str(out), *args],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    headline = proc.stdout.readline()
    assert headline.startswith(f"{job}: "), headline
    time.sleep(after_headline)
    assert proc.poll() is None, "the job ended before it could be interrupted"
    os.killpg(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, headline + stdout, stderr


def assert_interrupted_cleanly(rc: int, stderr: str, out: Path, status: int = INTERRUPTED_STATUS,
                               message: str = MESSAGE) -> None:
    assert rc == status
    assert [line for line in stderr.splitlines() if line.strip()] == [message], stderr
    assert not list(out.rglob("*.parquet")), "a shard of the interrupted run is where readers look"
    left = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}"))
    assert left == [], f"the output's staging folder or lock was left: {left}"


def test_wiki_mrc_interrupted_while_running(tmp_path):
    out = tmp_path / "mrc"
    rc, stdout, stderr = interrupt_job("wiki_mrc", out, "--no_progress")
    assert_interrupted_cleanly(rc, stderr, out)


def test_wiki_mrc_terminated_while_running(tmp_path):
    """SIGTERM: the job's cleanup runs as for Ctrl-C, where Python's default would end it at once."""
    out = tmp_path / "mrc"
    rc, _, stderr = interrupt_job("wiki_mrc", out, "--no_progress", signum=signal.SIGTERM)
    assert_interrupted_cleanly(rc, stderr, out, TERMINATED_STATUS, TERMINATED_MESSAGE)
    assert (INTERRUPTED_STATUS, TERMINATED_STATUS) == (130, 143)


def test_wiki_mrc_interrupted_with_threads(tmp_path):
    """DirectRunner's threads: the interrupt reaches the main thread while workers run."""
    out = tmp_path / "mrc"
    rc, _, stderr = interrupt_job("wiki_mrc", out, "--no_progress", "--direct_running_mode", "multi_threading",
                                  "--direct_num_workers", "2")
    assert_interrupted_cleanly(rc, stderr, out)


def test_progress_lines_stop_at_the_interrupt(tmp_path):
    """With progress on (lines, as when piped), nothing but the line follows the signal."""
    out = tmp_path / "mrc"
    env_seconds = os.environ.get("XLU_PROGRESS_SECONDS")
    os.environ["XLU_PROGRESS_SECONDS"] = "3600"  # no periodic line to race with the signal
    try:
        rc, _, stderr = interrupt_job("wiki_mrc", out)
    finally:
        if env_seconds is None:
            os.environ.pop("XLU_PROGRESS_SECONDS")
        else:
            os.environ["XLU_PROGRESS_SECONDS"] = env_seconds
    assert_interrupted_cleanly(rc, stderr, out)


NTREX = SHARED_DATA / "parallel" / "ntrex128"


@pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")
@pytest.mark.skipif(not NTREX.exists(), reason="../shared/data is not beside this checkout")
def test_clism_pairs_interrupted_while_running(tmp_path):
    """On real NTREX en-de (1,997 pairs: NER and alignment run for many seconds), not the bundled
    sample, which a fast machine finishes before the signal."""
    out = tmp_path / "clism"
    pairs = f"de={NTREX / 'en.txt'},{NTREX / 'de.txt'}"
    rc, _, stderr = interrupt_job("clism_pairs", out, "--no_progress", "--pairs", pairs, after_headline=2.0)
    assert_interrupted_cleanly(rc, stderr, out)


def test_the_same_command_runs_after_an_interrupt(tmp_path):
    """The message's promise: the same command, rerun, completes."""
    out = tmp_path / "mrc"
    rc, _, _ = interrupt_job("wiki_mrc", out, "--no_progress")
    assert rc == 130
    done = subprocess.run([sys.executable, "-m", "pipelines.wiki_mrc", "--output", str(out), "--no_progress"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list((out / "data").glob("train-*.parquet"))


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc (Linux)")
def test_a_job_stopped_alone_ends_its_beam_worker_processes(tmp_path):
    """`kill PID` or `docker stop` signal the job's process, not its group: Beam's worker processes
    under multi_processing get no signal of their own, and one busy with a bundle outlived the job
    (idle, holding its memory) until the job ended them."""
    out = tmp_path / "mrc"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    dump = SHARED_DATA / "wikipedia" / "enwiki-excerpt.xml.bz2"
    args = ["--dump", f"en={dump}"] if dump.exists() else []
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.wiki_mrc", "--output", str(out), "--no_progress",
                             "--direct_running_mode", "multi_processing", "--direct_num_workers", "2", *args],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (workers := [p for p in interrupts.descendants(proc.pid) if interrupts.is_sdk_worker(p)]):
            assert proc.poll() is None and time.monotonic() < deadline, "no Beam worker process started"
            time.sleep(0.05)
        time.sleep(1.0)  # the workers take their first bundles
        assert proc.poll() is None, "the job ended before it could be stopped"
        os.kill(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == TERMINATED_STATUS, stderr
    # Beam's workers may print their own lines first (docs/scale_out.md); the job's is the last.
    assert [line for line in stderr.splitlines() if line.strip()][-1] == TERMINATED_MESSAGE, stderr
    assert not [pid for pid in workers if interrupts.is_running(pid) and interrupts.is_sdk_worker(pid)], "a Beam worker outlived the job"
    assert not list(out.rglob("*.parquet"))

