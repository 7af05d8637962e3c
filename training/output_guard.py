"""Who may write an --output: one writer at a time (a lock naming its holder), never into another
kind's folder (a data job's output is a dataset), and only where the disk lets it write, all checked
before the first byte, each refusal one line."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from corpora.outputs.manifests import DATA_JOB, FINETUNE_RUN, TRAINING_RUN, folder_kind
from corpora.outputs.lock import OutputLock, OutputLocked
from training.atomic_files import disk_problem
from training.errors import OutputError

# A data job's output before manifests: its rows and its stats table (pipelines/common.py's JOB_OUTPUTS).
DATA_FOLDER_SIGNS = ("data", "stats.parquet")
PROBE = ".xlu-write-probe"


def _kind(folder: Path) -> tuple[str, str] | None:
    found = folder_kind(folder)
    if found is None and all((folder / name).exists() for name in DATA_FOLDER_SIGNS):
        return DATA_JOB, "a data job (data/ and stats.parquet)"
    if found and found[0] == TRAINING_RUN and (folder / "metrics.json").is_file() and not (folder / "run.json").exists():
        return FINETUNE_RUN, "training.finetune"  # a fine-tuning output written before manifests
    return found


def refuse_other_kind(out: Path, kind: str, flag: str = "--output") -> None:
    """A data job's output, or a folder inside one, and a folder another kind of command wrote, refused.
    A fine-tuning run may sit inside a training run's folder (training.run --downstream puts them there)."""
    out = Path(os.path.abspath(out))
    for place in (out, *out.parents):
        found = _kind(place) if place.is_dir() else None
        if found is None or found[0] == kind or (place != out and found[0] != DATA_JOB):
            continue
        where = "holds" if place == out else f"is inside {place}, which holds"
        what = f"a dataset written by {found[1]}" if found[0] == DATA_JOB else f"a {found[0]} ({found[1]})"
        raise OutputError(f"{flag} {out} {where} {what}; a {kind} writes a folder of its own: choose another {flag}")


def check_writable(out: Path, flag: str = "--output") -> None:
    """Create the folder and a probe file in it: a read-only disk, a full one or missing permissions are
    one line now, not a traceback at the first checkpoint."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / PROBE
        probe.write_bytes(b"probe")
        probe.unlink()
    except OSError as error:
        cause = disk_problem(error, out)
        if cause is None:
            raise
        raise OutputError(f"{flag} {out}: cannot write there ({cause.split(':')[0]}); choose a writable {flag}") from None


def lock(out: Path, command: str, flag: str = "--output") -> OutputLock:
    """Hold `out`'s lock, or refuse in one line naming the process that holds it."""
    try:
        return OutputLock(out, command).acquire()
    except OutputLocked as error:
        raise OutputError(f"{flag} {error}") from None
    except OSError as error:
        cause = disk_problem(error, out)
        if cause is None:
            raise
        raise OutputError(f"{flag} {out}: cannot write there ({cause.split(':')[0]}); choose a writable {flag}") from None


def command_line(prog: str) -> str:
    return " ".join([prog, *sys.argv[1:]])


@contextlib.contextmanager
def guarded(out: Path, kind: str, prog: str, flag: str = "--output") -> Iterator[None]:
    """For a command that writes `out` in one process: another kind's folder refused, the lock held,
    the folder created and probed for writing, then released on the way out (a crash too)."""
    refuse_other_kind(out, kind, flag)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{flag} {out}: a file, not a folder")
    held = lock(out, command_line(prog), flag)
    try:
        check_writable(out, flag)
        yield
    finally:
        held.release()
