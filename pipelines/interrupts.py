"""Ctrl-C in a job: one line and exit status 130, not Beam's traceback.

Beam re-raises a KeyboardInterrupt that reaches a DoFn as a RuntimeError naming the step ("...
[while running 'ReadPages']") after logging its traceback, and on other threads it surfaces as
whatever the wait was doing. So the signal itself is remembered: whatever the job raises after it is
the interrupt, and logging and thread exceptions are silenced from then on. The job's own cleanup
(the output transaction's abort) runs first, as the exception passes through it; a second Ctrl-C
during that cleanup ends the process at once.

Under --direct_running_mode multi_processing the terminal's Ctrl-C also reaches Beam's worker
processes, which print their own KeyboardInterrupt tracebacks before the job's line: they are
started by Beam with Python's default handler, out of this module's reach.
"""
from __future__ import annotations

import functools
import logging
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
            # Beam logs the interrupted step's traceback before it re-raises; nothing after the
            # signal is news to the user.
            logging.disable(logging.CRITICAL)
            threading.excepthook = _quiet_thread_exit  # Beam's threads that lost their workers
            # Beam's SDK worker threads also print the traceback of a bundle whose data channel closed
            # (sdk_worker._execute), not through logging. Left in place after the job: those threads
            # may print after it has returned, and the process is exiting.
            if not isinstance(sys.stderr, _MainThreadOnly):
                sys.stderr = _MainThreadOnly(sys.stderr)
            raise KeyboardInterrupt

        previous, previous_hook = signal.signal(signal.SIGINT, on_sigint), threading.excepthook
        try:
            return run(*args, **kwargs)
        except BaseException as error:
            if seen.is_set() or isinstance(error, KeyboardInterrupt):
                _say_interrupted()
                raise SystemExit(INTERRUPTED_STATUS) from None
            raise
        finally:
            signal.signal(signal.SIGINT, previous)
            if seen.is_set():
                logging.disable(logging.NOTSET)
                threading.excepthook = previous_hook

    return wrapper


class _MainThreadOnly:
    """sys.stderr after Ctrl-C: writes from other threads are dropped."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        if threading.current_thread() is threading.main_thread():
            return self.stream.write(text)
        return len(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _say_interrupted() -> None:
    progress.close_all(quiet=True)
    sys.stdout.flush()
    print(f"\n{MESSAGE}", file=sys.stderr, flush=True)


def _quiet_thread_exit(args) -> None:
    """After Ctrl-C, a thread's exception is the interrupt seen from that thread."""
