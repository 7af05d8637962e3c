"""The stop signals a job's entry point takes, in process: SIGTERM and Ctrl-C raise through the job
(its cleanup runs), end in one line and an exit status, and leave the previous handlers in place.
Whole jobs stopped in subprocesses: tests/pipelines/test_interrupts.py (slow)."""
from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import threading
import time

import pytest

from pipelines import interrupts


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
