"""One writer per output folder: a lock file beside the folder, naming its holder.

    with lock_output("runs/mpmr", "python -m training.run ..."):
        ...  # write runs/mpmr

The lock is `<parent>/.<name>.lock` (beside the folder, so that it outlives a folder that is replaced
by a rename, and exists before the folder does). It is held with flock(2): the kernel releases it
when the holder exits in any way, kill -9 included. The file's text names the holder (pid, host,
start time, command) for the one-line refusal a second writer gets. A file whose holder is gone (the
flock is free, same host, process not running) is taken over with a notice; one written on another
host is refused, since its process cannot be checked from here (delete the file if that run ended).

Local paths only; the data jobs' cloud outputs use a best-effort lock object (pipelines/output_folder.py).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path


class OutputLocked(RuntimeError):
    """Another writer holds the folder: one line naming it."""


def lock_path(folder: str | os.PathLike) -> Path:
    folder = Path(os.path.abspath(folder))
    return folder.parent / f".{folder.name}.lock"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def describe_holder(holder: dict) -> str:
    return (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
            + (f" ({holder['command']})" if holder.get("command") else ""))


def _read(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = b""
    while chunk := os.read(fd, 65536):
        raw += chunk
    try:
        holder = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        return {"pid": "?", "host": "?", "started": "?", "command": "unreadable lock file"}
    return holder if isinstance(holder, dict) else {}


class OutputLock:
    """The lock of one folder; `acquire()` or `with OutputLock(folder, command):`."""

    def __init__(self, folder: str | os.PathLike, command: str = "", notice=None):
        self.folder = Path(folder)
        self.path = lock_path(folder)
        self.command = command
        self.notice = notice or (lambda line: print(line, file=sys.stderr, flush=True))
        self._fd: int | None = None

    def acquire(self) -> "OutputLock":
        """Hold the lock or raise OutputLocked (one line naming the holder); OSError if the lock file
        cannot be created (a read-only or full disk: the caller names the folder)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                holder = _read(fd)
                os.close(fd)
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                raise OutputLocked(f"{self.folder}: another process is writing it ({describe_holder(holder)}); "
                                   f"wait for it to end, or give another folder") from None
            try:  # the file may have been released and deleted between open and flock: lock the one at the path
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read(fd)
        if previous.get("pid") not in (None, os.getpid()):
            if previous.get("host") != socket.gethostname():
                os.close(fd)
                raise OutputLocked(
                    f"{self.folder}: locked by {describe_holder(previous)}, on another host, whose process cannot "
                    f"be checked from here; if that run has ended, delete {self.path}")
            pid = previous.get("pid")
            if isinstance(pid, int) and _process_alive(pid) and pid != os.getpid():
                what = "whose pid is now another process"
            else:
                what = "which is gone"
            self.notice(f"notice: {self.folder}: took over the lock of {describe_holder(previous)}, {what}")
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": self.command}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(info) + "\n").encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "OutputLock":
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_output(folder: str | os.PathLike, command: str = "", notice=None) -> OutputLock:
    """The folder's lock, held (raises OutputLocked if another process holds it); use as a context manager."""
    return OutputLock(folder, command, notice).acquire()


def current_holder(folder: str | os.PathLike) -> dict | None:
    """Who holds the folder's lock now (None when nobody does): for messages about a folder being written."""
    path = lock_path(folder)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read(fd) or {"pid": "?"}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
