"""Files and folders that a reader may open while a run writes them, written so that the reader sees
the old version or the new one, never half of one: a temporary name in the same folder, then
os.replace. On any error the temporary is removed, so nothing named `*.tmp*` stays behind.

Also: the one line a disk, permission or read-only failure becomes (`disk_problem`), since torch and
safetensors report a full disk in their own words ("unexpected pos", "os error 28").
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

TMP_MARK = ".tmp-"  # in every temporary's name: `clear_temporaries` finds them after a kill -9


def _temporary_name(path: Path) -> str:
    return f".{path.name}{TMP_MARK}{os.getpid()}"


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    with replacing(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write; on success it becomes `path` in one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / _temporary_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def replacing_folder(folder: Path) -> Iterator[Path]:
    """A temporary folder beside `folder` to fill; on success it takes `folder`'s place (an old one is
    removed first: between the two a reader finds no folder, never a mixed one)."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_temporary_name(folder) + "-", dir=folder.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp's 0700 would make the published folder private
        yield tmp
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        elif folder.exists() or folder.is_symlink():
            folder.unlink()
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def append_line(path: Path, line: str) -> None:
    """One line appended in one write(2) on an O_APPEND descriptor: a reader sees whole lines only
    (a kill can still cut the last one; readers skip a line that does not parse)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    finally:
        os.close(fd)


def clear_temporaries(folder: Path) -> list[str]:
    """Remove the temporaries a killed writer left in `folder` (and checkpoints/): their names."""
    removed = []
    for parent in (folder, folder / "checkpoints"):
        if not parent.is_dir():
            continue
        for path in parent.iterdir():
            if TMP_MARK in path.name or path.suffix == ".tmp" or path.name == "best.tmp":
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        path.unlink()
                removed.append(str(path.relative_to(folder)))
    return removed


# ---- disk failures as one line ----

CAUSES = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
          errno.EROFS: "read-only file system", errno.EACCES: "permission denied", errno.EPERM: "permission denied",
          errno.EFBIG: "file too large for the file system"}
# How libraries that do not raise OSError say the same (torch's zip writer, safetensors' Rust I/O).
WORDED = (("os error 28", errno.ENOSPC), ("no space left", errno.ENOSPC), ("os error 30", errno.EROFS),
          ("read-only file system", errno.EROFS), ("os error 13", errno.EACCES), ("permission denied", errno.EACCES),
          ("os error 122", errno.EDQUOT))


def disk_problem(error: BaseException, path: Path | str | None = None) -> str | None:
    """`error` as "no space left on device: PATH" (read-only, permission, quota ...), or None when it is
    not a disk failure. `path`: what was being written, when the error does not name it."""
    code = getattr(error, "errno", None)
    if code not in CAUSES:
        text = str(error).lower()
        code = next((c for words, c in WORDED if words in text), None)
        if code is None and isinstance(error, RuntimeError) and "unexpected pos" in text and path is not None:
            # torch's zip writer: a short write, which on a local disk is a full one.
            code = errno.ENOSPC
    if code not in CAUSES:
        return None
    where = getattr(error, "filename", None) or path
    return f"{CAUSES[code]}: {where}" if where else CAUSES[code]


class DiskFailure(OSError):
    """A write the disk refused, as one line: "no space left on device: PATH (not written ...)"."""

    def __str__(self) -> str:
        return self.args[0]


@contextlib.contextmanager
def naming_disk_failures(path: Path, after: str = "") -> Iterator[None]:
    """A disk that refuses a write (full, read-only, no permission) inside the block becomes a
    DiskFailure naming `path`; `after`: what the user can do then ("; free space, then --resume ...")."""
    try:
        yield
    except (OSError, RuntimeError) as error:
        if isinstance(error, DiskFailure):
            raise
        cause = disk_problem(error, path)
        if cause is None:
            raise
        raise DiskFailure(f"{cause.split(':')[0]}: {path} (not written{after})") from None
