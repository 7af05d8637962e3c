"""Ctrl-C in a job: one line and exit status 130, not Beam's traceback.

Beam re-raises a KeyboardInterrupt that reaches a DoFn as a RuntimeError naming the step ("...
[while running 'ReadPages']"), and on other threads it surfaces as whatever the wait was doing. So
the signal itself is remembered: whatever the job raises after it is the interrupt. The job's own
cleanup (the output transaction's abort) runs first, as the exception passes through it; a second
Ctrl-C during that cleanup ends the process at once.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading

from pipelines import progress

INTERRUPTED_STATUS = 128 + signal.SIGINT
MESSAGE = "interrupted: rerun the same command to start again"


def exits_cleanly_on_ctrl_c(run):
    """Wrap a job's entry point: on Ctrl-C print MESSAGE and raise SystemExit(130)."""

    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return run(*args, **kwargs)  # signals reach the main thread only
        seen = threading.Event()

        def on_sigint(signum, frame):
            if seen.is_set():
                _say_interrupted()
                os._exit(INTERRUPTED_STATUS)
            seen.set()
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            return run(*args, **kwargs)
        except BaseException as error:
            if seen.is_set() or isinstance(error, KeyboardInterrupt):
                _say_interrupted()
                raise SystemExit(INTERRUPTED_STATUS) from None
            raise
        finally:
            signal.signal(signal.SIGINT, previous)

    return wrapper


def _say_interrupted() -> None:
    progress.close_all()
    sys.stdout.flush()
    print(f"\n{MESSAGE}", file=sys.stderr, flush=True)
