"""The stop signals a job's entry point takes, in process: SIGTERM and Ctrl-C raise through the job
(its cleanup runs), end in one line and an exit status, and leave the previous handlers in place.
Whole jobs stopped in subprocesses: tests/pipelines/test_interrupts.py (slow)."""
from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from pipelines import interrupts

linux_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="stop_sdk_workers reads /proc (Linux)")


def stopped_job(signum: int, cleaned: list):
    @interrupts.exits_cleanly_when_stopped
    def job():
        try:
            os.kill(os.getpid(), signum)
            time.sleep(10)  # the handler raises in this frame before the sleep ends
            return "not stopped"
        finally:
            cleaned.append(signum)  # what the output transaction's abort stands for
    return job


@pytest.mark.parametrize("signum, status, message", [
    (signal.SIGTERM, interrupts.TERMINATED_STATUS, interrupts.TERMINATED_MESSAGE),
    (signal.SIGINT, interrupts.INTERRUPTED_STATUS, interrupts.MESSAGE),
])
def test_a_stop_signal_runs_the_jobs_cleanup_and_ends_in_one_line(capsys, signum, status, message):
    assert threading.current_thread() is threading.main_thread(), "signal handlers are set in the main thread only"
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    cleaned: list = []
    with pytest.raises(SystemExit) as stop:
        stopped_job(signum, cleaned)()
    assert stop.value.code == status == 128 + signum
    assert cleaned == [signum]
    assert capsys.readouterr().err.strip() == message
    assert {s: signal.getsignal(s) for s in before} == before
    assert not logging.root.manager.disable, "logging is back on for whoever called the job in process"


def test_a_signal_a_finalizer_swallowed_still_stops_the_job_before_it_publishes(capsys):
    """A signal that lands while Python runs a finalizer raises there, and Python only prints what a
    finalizer raises: the job runs on. The step that would publish the output asks first."""
    published: list = []

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, inside the finalizer
            time.sleep(0.01)

    @interrupts.exits_cleanly_when_stopped
    def job():
        Finalized()  # collected at once: its __del__ takes the signal
        interrupts.raise_if_stopped()
        published.append("output")  # what OutputTransaction.commit stands for

    with pytest.raises(SystemExit) as stop:
        job()
    assert stop.value.code == interrupts.INTERRUPTED_STATUS
    assert published == []
    assert capsys.readouterr().err.strip() == interrupts.MESSAGE  # and no "Exception ignored in" report
    interrupts.raise_if_stopped()  # the next job in this process is not stopped by the last one's signal


def test_abandoned_futures_of_a_stopped_event_loop_are_not_reported(caplog, capsys):
    """A dask client stopped mid-wait leaves a timer's future with a TimeoutError nobody reads;
    asyncio reports it when it is collected, after the job's line."""
    with pytest.raises(SystemExit):
        stopped_job(signal.SIGTERM, [])()
    capsys.readouterr()
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        future.set_exception(TimeoutError("Timeout"))
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            del future
            gc.collect()
            logging.getLogger("asyncio").error("something else the loop says")
    finally:
        loop.close()
    assert [r.getMessage() for r in caplog.records] == ["something else the loop says"]


@linux_proc
def test_beam_worker_processes_left_by_an_interrupt_are_ended():
    """Beam starts a multi_processing worker through `sh -c` and stops it by killing the shell; the
    job ends what is left of them, and nothing else it started."""
    script = "import time; time.sleep(60)"
    worker = subprocess.Popen(f"{sys.executable} -c '{script}' {interrupts.SDK_WORKER_COMMAND}", shell=True)
    other = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 10
        while len([p for p in interrupts.descendants(os.getpid()) if interrupts.is_sdk_worker(p)]) < 2:
            assert time.monotonic() < deadline, "the shell and its worker did not start"
            time.sleep(0.02)
        stopped = interrupts.stop_sdk_workers()
        assert worker.pid in stopped and len(stopped) == 2  # the shell and the Python worker under it
        assert worker.wait(timeout=5) == -signal.SIGKILL
        assert not any(interrupts.is_running(pid) and interrupts.is_sdk_worker(pid) for pid in stopped)
        assert other.poll() is None, "a process of the job that is not a Beam worker was ended"
    finally:
        for process in (worker, other):
            process.kill()
            process.wait()

