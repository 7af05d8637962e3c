"""Progress of the data jobs: real jobs on the bundled samples, in a subprocess whose stderr is a pipe
(log lines), a pseudo-terminal (a bar) or silenced by --no_progress; the output bytes never change."""
from __future__ import annotations

import fcntl
import hashlib
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from corpora.clism.ner_spans import ner_pipeline_available
from pipelines import progress

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def run_piped(job: str, out: Path, *args: str, seconds: str = "0") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "XLU_PROGRESS_SECONDS": seconds}
    done = subprocess.run([sys.executable, "-m", f"pipelines.{job}", "--output", str(out), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def run_on_terminal(job: str, out: Path, *args: str) -> str:
    """The job with stderr on a pseudo-terminal of 120 columns; what the terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", f"pipelines.{job}", "--output", str(out), *args], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the job closed the terminal
            break
        if not chunk:
            break
        received += chunk
    assert proc.wait(timeout=600) == 0, received[-3000:]
    os.close(leader)
    return received.decode("utf-8", "replace")


def shard_digests(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((out / "data").rglob("*.parquet"))}


def test_wiki_mrc_logs_pages_share_and_time_left_when_piped(tmp_path):
    done = run_piped("wiki_mrc", tmp_path / "mrc")
    lines = [line for line in done.stderr.splitlines() if "reading dumps:" in line]
    assert lines, done.stderr
    # A share of the dumps' bytes and the time left while reading, then one closing line with the total.
    assert any(re.search(r"reading dumps: [\d,]+ pages \([\d.,]+/s\), \d+% of [\d.,]+ kB, ~\d+s left", l) for l in lines)
    assert re.search(r"reading dumps: 118 pages in \d+s$", lines[-1]), lines[-1]
    assert re.search(r"building examples: [\d,]+ articles in \d+s", done.stderr)


def test_lines_come_at_most_once_per_interval(tmp_path):
    done = run_piped("wiki_mrc", tmp_path / "mrc", seconds="3600")
    reading = [line for line in done.stderr.splitlines() if "reading dumps:" in line]
    assert len(reading) == 1 and " in " in reading[0], done.stderr  # the closing line only


def test_no_progress_prints_no_progress(tmp_path):
    done = run_piped("wiki_mrc", tmp_path / "mrc", "--no_progress")
    assert not re.search(r"^\d\d:\d\d:\d\d ", done.stderr, re.M), done.stderr


def test_terminal_gets_a_bar_with_total_rate_and_time_left(tmp_path):
    screen = run_on_terminal("wiki_mrc", tmp_path / "mrc")
    bars = [part for part in screen.split("\r") if part.startswith("reading dumps:")]
    assert bars, screen[-2000:]
    assert any(re.search(r"reading dumps:\s+\d+%\|.*\| [\d.]+k/[\d.]+k B, [\d,]+ pages, [\d.,]+/s \[[\d:]+<[\d:?]+\]", b)
               for b in bars), bars[-3:]
    assert re.search(r"100%\|", bars[-1])
    assert not re.search(r"^\d\d:\d\d:\d\d reading dumps", screen, re.M)  # a bar, not log lines


def test_progress_does_not_change_the_output_bytes(tmp_path):
    run_piped("wiki_mrc", tmp_path / "on")
    run_piped("wiki_mrc", tmp_path / "off", "--no_progress")
    on, off = shard_digests(tmp_path / "on"), shard_digests(tmp_path / "off")
    assert on and on == off


@pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")
def test_clism_pairs_counts_pairs_against_the_input_lines(tmp_path):
    done = run_piped("clism_pairs", tmp_path / "clism")
    assert re.search(r"tagging entities: 168 pairs \([\d.,]+/s\), 100% of 168 pairs", done.stderr), done.stderr


def test_xy_corpus_counts_lines_and_pairs(tmp_path, xylent_vocab):
    done = run_piped("xy_corpus", tmp_path / "xy", "--vocab", str(xylent_vocab))
    assert re.search(r"tokenising monolingual lines: [\d,]+ lines in \d+s", done.stderr), done.stderr
    assert re.search(r"tokenising bitext pairs: [\d,]+ pairs in \d+s", done.stderr), done.stderr


def test_meter_in_another_process_reports_its_share_without_a_total(capsys):
    """A worker process (multi_processing, Dataflow) sees part of the work: count and rate, no share."""
    mode = progress.ProgressMode(progress.LINES, owner_pid=os.getpid() + 1, line_seconds=0)
    meter = progress.Meter(mode, "reading dumps", "pages", total=1000, unit="B")
    meter.advance(5, 100)
    line = capsys.readouterr().err
    assert "reading dumps: 5 pages" in line and "% of" not in line and f"[worker {os.getpid()}]" in line


def test_local_line_count(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree")  # no newline at the end
    (tmp_path / "b.txt").write_text("four\n")
    assert progress.local_line_count([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 4
    assert progress.local_line_count([str(tmp_path / "a.txt.gz")]) is None
    assert progress.local_line_count(["gs://bucket/a.txt"]) is None


def test_without_tqdm_a_terminal_gets_lines(monkeypatch):
    """A data-only install without tqdm still reports progress, as log lines."""
    class Terminal:
        def isatty(self):
            return True

    assert progress.progress_mode(False, Terminal()).kind == progress.BAR
    monkeypatch.setattr(progress, "_tqdm", lambda: None)
    assert progress.progress_mode(False, Terminal()).kind == progress.LINES
    assert progress.progress_mode(True, Terminal()).kind == progress.OFF
