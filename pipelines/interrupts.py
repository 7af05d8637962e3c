"""Ctrl-C or SIGTERM in a job: one line and exit status 130 (143), not Beam's traceback, and the
job's cleanup done.

SIGTERM is what `kill`, a batch scheduler's time limit, `docker stop` and Kubernetes send before
they kill; Python's default for it ends the process at once, leaving the output's staging folder
and lock and a Dask run's shuffle files behind. It is taken as Ctrl-C is.

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
import time

from pipelines import progress

INTERRUPTED_STATUS = 128 + signal.SIGINT
TERMINATED_STATUS = 128 + signal.SIGTERM
MESSAGE = "interrupted: rerun the same command to start again"
TERMINATED_MESSAGE = "terminated (SIGTERM): rerun the same command to start again"
_HANDLED = {signal.SIGINT: (INTERRUPTED_STATUS, MESSAGE), signal.SIGTERM: (TERMINATED_STATUS, TERMINATED_MESSAGE)}


_TAKEN: list[int] = []  # the signal the running job took, if any


def raise_if_stopped() -> None:
    """Raise KeyboardInterrupt if the job took a signal: for the step that publishes its output. The
    handler's own KeyboardInterrupt can be lost, when the signal lands while Python runs a finalizer
    (which only prints what it raises); the job then runs on, and must not publish what it was told
    to abandon."""
    if _TAKEN:
        raise KeyboardInterrupt


def exits_cleanly_when_stopped(run):
    """Wrap a job's entry point: on Ctrl-C print MESSAGE and raise SystemExit(130); on SIGTERM print
    TERMINATED_MESSAGE and raise SystemExit(143)."""

    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return run(*args, **kwargs)  # signals reach the main thread only
        seen = _TAKEN  # the first signal taken
        seen.clear()

        def on_signal(signum, frame):
            if seen:
                _say_interrupted(seen[0])
                os._exit(_HANDLED[seen[0]][0])
            seen.append(signum)
            # Beam logs the interrupted step's traceback before it re-raises; nothing after the
            # signal is news to the user.
            logging.disable(logging.CRITICAL)
            threading.excepthook = _quiet_thread_exit  # Beam's threads that lost their workers
            sys.unraisablehook = _quiet_unraisable  # the interrupt, raised inside a finalizer (raise_if_stopped)
            # Beam's SDK worker threads also print the traceback of a bundle whose data channel closed
            # (sdk_worker._execute), not through logging. Left in place after the job: those threads
            # may print after it has returned, and the process is exiting.
            if not isinstance(sys.stderr, _MainThreadOnly):
                sys.stderr = _MainThreadOnly(sys.stderr)
            # Before Beam's own cleanup, which waits for its worker processes to end and, when they
            # were not signalled too, waits forever.
            stop_sdk_workers(wait_seconds=0)
            # The pipeline's threads and Beam's own handling know KeyboardInterrupt; SIGTERM takes
            # the same way out, and the wrapper tells the two apart by `seen`.
            raise KeyboardInterrupt

        previous = {signum: signal.signal(signum, on_signal) for signum in _HANDLED}
        previous_hook = threading.excepthook
        previous_unraisable_hook = sys.unraisablehook
        try:
            return run(*args, **kwargs)
        except BaseException as error:
            if seen or isinstance(error, KeyboardInterrupt):
                taken = seen[0] if seen else signal.SIGINT
                stop_sdk_workers()
                _say_interrupted(taken)
                raise SystemExit(_HANDLED[taken][0]) from None
            raise
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            if seen:
                logging.disable(logging.NOTSET)
                threading.excepthook = previous_hook
                sys.unraisablehook = previous_unraisable_hook
                for name, news_to_nobody in _AFTER_AN_INTERRUPT.items():
                    log = logging.getLogger(name)
                    if news_to_nobody not in log.filters:
                        log.addFilter(news_to_nobody)
                seen.clear()  # the next job run in this process starts unstopped

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


def _say_interrupted(signum: int) -> None:
    progress.close_all(quiet=True)
    sys.stdout.flush()
    print(f"\n{_HANDLED[signum][1]}", file=sys.stderr, flush=True)


# How Beam starts a worker process under --direct_running_mode multi_processing (through `sh -c`).
SDK_WORKER_COMMAND = "apache_beam.runners.worker.sdk_worker_main"
WORKER_STOP_SECONDS = 5.0


def stop_sdk_workers(wait_seconds: float = WORKER_STOP_SECONDS) -> list[int]:
    """End the Beam worker processes this process started that are still running, waiting up to
    `wait_seconds` for them to go; their ids.

    A terminal's Ctrl-C reaches the whole process group, Beam's workers included; `kill PID`, `docker
    stop` and a scheduler's time limit reach only the job. Beam's cleanup then waits for workers that
    do not end (the job hangs), and stops a worker by killing the shell it started it with, so a
    worker that does end its wait outlives the job (reparented, idle, holding its memory). Linux
    only (/proc); elsewhere nothing is done."""
    stopped = []
    for pid in filter(is_sdk_worker, descendants(os.getpid())):
        try:
            os.kill(pid, signal.SIGKILL)  # a worker holds nothing to save; SIGTERM let gRPC print as it went
            stopped.append(pid)
        except OSError:  # ended meanwhile
            continue
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and any(map(is_running, stopped)):
        time.sleep(0.05)
    return stopped


def is_sdk_worker(pid: int) -> bool:
    """Process `pid` is a Beam worker process, or the shell Beam started one with."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return SDK_WORKER_COMMAND.encode() in f.read()
    except OSError:
        return False


def is_running(pid: int) -> bool:
    """Not ended, and not a zombie that only waits for its parent to read its status."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def descendants(root: int) -> list[int]:
    """The processes under `root` (/proc), each listed after its parent."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])  # the name, in brackets, may hold spaces
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _abandoned_future(record: logging.LogRecord) -> bool:
    """After an interrupt, asyncio's report of a future whose exception nobody read, logged when it
    is collected (as the process exits): what an event loop stopped mid-wait leaves, such as a dask
    client's connection timer (a tornado `Event.wait` timeout), not news to the user."""
    return not record.getMessage().partition("\n")[0].endswith("exception was never retrieved")


def _lost_worker_stream(record: logging.LogRecord) -> bool:
    """After an interrupt, the data plane's report that a worker process stream broke: the workers
    stop_sdk_workers ended."""
    return not record.getMessage().startswith("Failed to read inputs in the data plane")


# Logger -> filter, added once a signal was taken: what the stop itself causes, reported afterwards
# from other threads.
_AFTER_AN_INTERRUPT = {"asyncio": _abandoned_future, "apache_beam.runners.worker.data_plane": _lost_worker_stream}


def _quiet_unraisable(args) -> None:
    """After a stop signal, the KeyboardInterrupt a finalizer raised and Python could only print."""
    if not issubclass(args.exc_type, KeyboardInterrupt):
        sys.__unraisablehook__(args)


def _quiet_thread_exit(args) -> None:
    """After Ctrl-C, a thread's exception is the interrupt seen from that thread."""
