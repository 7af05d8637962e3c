"""How far a job's long stages are: a bar on a terminal, a line a minute at most in logs, nothing
under --no_progress.

The main process decides the mode once (`progress_mode`) and hands it to the DoFns that do the long
work, inside their pickled state; each DoFn asks for a `Meter` by name and advances it. Meters are
per process and shared by the DoFn instances (threads) of that process, so DirectRunner's
multi-threaded workers draw one bar, not one each.

Where the work runs decides what can be shown:
- DirectRunner in this process (the default, and --direct_running_mode multi_threading): a bar on
  stderr when it is a terminal (done / total, rate, time left where a total is known), else a line
  a minute.
- Any other process (multi_processing workers, Dataflow, Dask): that process sees only its share of
  the work and no terminal of the user's, so it writes a line a minute to its own stderr (a worker
  log on Dataflow) without a total. The whole job's progress there is the runner's: the `xlu`
  Beam counters (pages/read, pairs, ...) in the Dataflow console or the Dask dashboard.
"""
from __future__ import annotations

import os
import socket
import sys
import threading
import time
from typing import NamedTuple

OFF, BAR, LINES = "off", "bar", "lines"
# Seconds between two log lines of one meter; XLU_PROGRESS_SECONDS overrides it (tests use 0).
LINE_SECONDS = 60.0


class ProgressMode(NamedTuple):
    """What the main process decided, carried to the DoFns (picklable). The owner is the process
    that holds the user's terminal, named by host and pid (a worker's pid alone may be the same)."""
    kind: str
    owner_pid: int
    line_seconds: float
    owner_host: str = ""


def _this_process() -> tuple[int, str]:
    return os.getpid(), socket.gethostname()


def progress_mode(no_progress: bool, stream=None) -> ProgressMode:
    stream = stream or sys.stderr
    seconds = float(os.environ.get("XLU_PROGRESS_SECONDS", LINE_SECONDS))
    pid, host = _this_process()
    if no_progress:
        return ProgressMode(OFF, pid, seconds, host)
    kind = BAR if _is_terminal(stream) and _tqdm() is not None else LINES
    return ProgressMode(kind, pid, seconds, host)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:  # a data-only install without it still gets the log lines
        return None
    return tqdm


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _rate(items: int, seconds: float) -> str:
    rate = items / max(seconds, 1e-9)
    return f"{rate:,.1f}" if rate < 10 else f"{rate:,.0f}"


def _amount(n: float, unit: str) -> str:
    if unit == "B":
        for scale, name in ((10**9, "GB"), (10**6, "MB"), (10**3, "kB")):  # decimal, as tqdm's bar
            if n >= scale:
                return f"{n / scale:,.1f} {name}"
        return f"{n:,.0f} B"
    return f"{n:,.0f} {unit}"


class Meter:
    """One stage's progress: `items` (pages, pairs: counted and rated) and, where a total is known,
    `done` of `total` in `unit` (bytes of the input, lines) for the share and the time left."""

    def __init__(self, mode: ProgressMode, desc: str, items_name: str, total: float | None = None, unit: str = ""):
        self.desc, self.items_name = desc, items_name
        self.owner = _this_process() == (mode.owner_pid, mode.owner_host or socket.gethostname())
        self.total = total if self.owner else None  # another process does only part of the work
        self.unit = unit or items_name
        self.line_seconds = mode.line_seconds
        self.items = self.done = 0
        self.started = self.last_line = self.last_advance = time.monotonic()
        self.lock = threading.Lock()
        self.closed = False
        self.bar = None
        if mode.kind == BAR and self.owner:
            tqdm = _tqdm()
            if self.total:
                self.bar = tqdm(total=self.total, desc=desc, unit=self.unit, unit_scale=self.unit == "B",
                                dynamic_ncols=True, file=sys.stderr,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit}{postfix} "
                                "[{elapsed}<{remaining}]")
            else:
                self.bar = tqdm(desc=desc, unit=f" {items_name}", dynamic_ncols=True, file=sys.stderr)

    def advance(self, items: int = 0, done: float | None = None, total: float | None = None) -> None:
        """`items` more finished; `done` more of the total (defaults to `items`); `total` a new total,
        for a stage whose input is still being made by the stage before it."""
        with self.lock:
            if self.closed:
                return
            if total and self.owner and total != self.total and self.total:
                self.total = total
                if self.bar is not None:
                    self.bar.total = total
            self.items += items
            step = items if done is None else done
            self.done += step
            now = time.monotonic()
            if self.bar is not None:
                if self.total:
                    rate = _rate(self.items, now - self.started)
                    counted = f"{self.items:,} {self.items_name}, " if self.unit != self.items_name else ""
                    self.bar.set_postfix_str(f"{counted}{rate}/s", refresh=False)
                self.bar.update(step if self.total else items)
            elif now - self.last_line >= self.line_seconds:
                self.last_line = now
                _line(self.summary(now))
            self.last_advance = now

    def summary(self, now: float) -> str:
        elapsed = now - self.started
        text = f"{self.desc}: {self.items:,} {self.items_name} ({_rate(self.items, elapsed)}/s)"
        if self.total:
            share = min(self.done / self.total, 1.0)  # read-ahead can count bytes before their pages
            text += f", {share:.0%} of {_amount(self.total, self.unit)}"
            if 0 < share < 1:
                text += f", ~{_duration(elapsed * (1 - share) / share)} left"
        if not self.owner:
            text += f" [worker {os.getpid()}]"
        return text

    def close(self, quiet: bool = False) -> None:
        """End the bar; in logs, one last line with the count and the time it took."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self.bar is not None:
                self.bar.close()
            elif self.items and not quiet:
                _line(f"{self.desc}: {self.items:,} {self.items_name} in {_duration(self.last_advance - self.started)}"
                      + ("" if self.owner else f" [worker {os.getpid()}]"))


def _line(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


_METERS: dict[str, Meter] = {}
_REGISTRY_LOCK = threading.Lock()


def meter(mode: ProgressMode | None, name: str, desc: str, items_name: str, total: float | None = None,
          unit: str = "") -> Meter | None:
    """This process's meter `name`, made on first use; None when progress is off."""
    if mode is None or mode.kind == OFF:
        return None
    with _REGISTRY_LOCK:
        found = _METERS.get(name)
        if found is None or found.closed:
            found = _METERS[name] = Meter(mode, desc, items_name, total, unit)
        return found


def close_all(quiet: bool = False) -> None:
    """Close every bar of this process: after the pipeline, before the summary, and on Ctrl-C
    (`quiet`: without the last lines)."""
    with _REGISTRY_LOCK:
        meters = list(_METERS.values())
        _METERS.clear()
        _NOTED.clear()
    for m in meters:
        m.close(quiet)


def local_line_count(paths: list[str], max_bytes: int = 1 << 30) -> int | None:
    """Lines of local uncompressed files up to `max_bytes` in all (a quick scan before the job gives
    the progress bar its total); None for anything else, and the bar then counts without one."""
    if any("://" in p or not os.path.isfile(p) or p.endswith((".gz", ".bz2", ".xz", ".zst")) for p in paths):
        return None
    if sum(os.path.getsize(p) for p in paths) > max_bytes:
        return None
    lines = 0
    for path in paths:
        with open(path, "rb") as f:
            last = b"\n"
            for block in iter(lambda: f.read(1 << 20), b""):
                lines += block.count(b"\n")
                last = block[-1:]
            lines += last != b"\n"
    return lines


class ByteTracker:
    """Pages of one read of a dump file into `meter`, with the file bytes behind them: the bytes the
    decoder consumed from `start` on (a byte range or the whole file, `end` its end when known).
    Completing the read counts what the decoder's read-ahead left out, so that the reads of a job add
    up to the dumps' sizes."""

    def __init__(self, meter_: Meter | None, fileobj, start: int, end: int | None):
        self.meter, self.fileobj, self.start, self.end = meter_, fileobj, start, end
        self.counted = 0

    def __enter__(self):
        return self

    def page(self) -> None:
        if self.meter is None:
            return
        from corpora.dumps.decoding import compressed_position

        try:
            consumed = compressed_position(self.fileobj) - self.start
        except (OSError, ValueError):
            consumed = self.counted
        step = max(0, consumed - self.counted)
        self.counted += step
        self.meter.advance(1, step)

    def __exit__(self, kind, value, traceback):
        if self.meter is not None and kind is None and self.end is not None:
            rest = self.end - self.start - self.counted
            if rest > 0:
                self.meter.advance(0, rest)
        return False


# Counts one stage leaves for a later stage's total, in this process: on DirectRunner every stage
# before a shuffle ends before the stages after it start (wiki_mrc's articles parsed are the total of
# the articles its example stage goes through).
_NOTED: dict[str, int] = {}


def note(mode: ProgressMode | None, name: str, n: int = 1) -> None:
    if mode is not None and mode.kind != OFF:
        with _REGISTRY_LOCK:
            _NOTED[name] = _NOTED.get(name, 0) + n


def noted(name: str) -> int | None:
    return _NOTED.get(name)
