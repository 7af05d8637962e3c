"""A data job's --output as a transaction (DESIGN.md §6, docs/manifest.md): locked, written into a
staging folder beside it, published with its manifest at the end, and absent or untouched otherwise.

    transaction = OutputTransaction(output, job, command, overwrite).begin()   # lock, checks, staging
    ... the pipeline writes transaction.staging ...
    transaction.commit(tables, inputs, stats)                                  # manifest, publish
    transaction.abort()                                                        # on any failure

Local folders are published by renames: the staging folder becomes --output in one rename (an
earlier output is moved aside first and deleted after). On a cloud filesystem (gs://, s3://) a
"rename" is a copy and a delete per file, so there the commit point is the manifest: the old
manifest is deleted first, the files are moved, and manifest.json is written last; a reader takes a
folder without a complete manifest for absent.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import socket
import time

import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from corpora import manifests
from corpora.manifests import DATA_JOB, LEGACY_DATA_MARKER, MANIFEST
from corpora.output_lock import OutputLock, OutputLocked
from pipelines.input_checks import UsageError

# What a data job writes at the top of its --output; an earlier run's are replaced, other entries kept.
JOB_OUTPUTS = ("data", "dead_letter", "stats.parquet", "README.md", MANIFEST, LEGACY_DATA_MARKER)
_RAW = CompressionTypes.UNCOMPRESSED
# errno -> the cause a user can act on, for one line instead of a worker traceback.
DISK_PROBLEMS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
                 errno.EROFS: "a read-only filesystem", errno.EACCES: "permission denied",
                 errno.EPERM: "operation not permitted"}


def is_local(path: str) -> bool:
    return "://" not in path


def _split(output: str) -> tuple[str, str]:
    output = output.rstrip("/")
    if is_local(output):
        output = os.path.abspath(output)
        return os.path.dirname(output), os.path.basename(output)
    parent, _, name = output.rpartition("/")
    return parent, name


def beside(output: str, suffix: str) -> str:
    parent, name = _split(output)
    return FileSystems.join(parent, f".{name}.{suffix}") if not is_local(output) else os.path.join(parent, f".{name}.{suffix}")


# A refused permission is the output's only when the error names it (an input can be unreadable too).
_ANYWHERE = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def disk_problem(error: BaseException, where: str | None = None) -> str | None:
    """The cause, when a failure (an OSError, or a runner's error wrapping one) is a full or read-only
    disk, or a permission refused on a path under `where`."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = f"{error} {getattr(error, 'filename', '') or ''}"
        ours = where is None or where in text
        if isinstance(error, OSError) and error.errno in DISK_PROBLEMS and (error.errno in _ANYWHERE or ours):
            return DISK_PROBLEMS[error.errno]
        for code, cause in DISK_PROBLEMS.items():
            if os.strerror(code) in text and (code in _ANYWHERE or ours):
                return cause
        error = error.__cause__ or error.__context__
    return None


def _parents(path: str) -> list[str]:
    path = os.path.abspath(path)
    found = []
    while os.path.dirname(path) != path:
        path = os.path.dirname(path)
        found.append(path)
    return found


def _list_files(folder: str) -> list[str]:
    """Every file under a folder, as paths relative to it (sorted)."""
    if is_local(folder):
        found = []
        for root, _, names in os.walk(folder):
            found += [os.path.relpath(os.path.join(root, n), folder) for n in names]
        return sorted(found)
    prefix = folder.rstrip("/") + "/"
    matches = FileSystems.match([prefix + "**"])[0].metadata_list
    return sorted(m.path[len(prefix):] for m in matches if not m.path.endswith("/"))


def _file_entry(path: str) -> dict:
    digest, size = hashlib.sha256(), 0
    with FileSystems.open(path, compression_type=_RAW) as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    entry = {"bytes": size, "sha256": digest.hexdigest()}
    if path.endswith(".parquet"):
        with FileSystems.open(path, compression_type=_RAW) as f:
            entry["rows"] = pq.ParquetFile(f).metadata.num_rows
    return entry


def input_identity(path: str) -> dict:
    if is_local(path):
        return manifests.local_input_identity(path)

    def read_range(offset: int, length: int) -> bytes:
        with FileSystems.open(path, compression_type=_RAW) as f:
            f.seek(offset)
            return f.read(length)
    size = FileSystems.match([path])[0].metadata_list[0].size_in_bytes
    return manifests.input_identity(path, size, read_range)


class CloudLock:
    """A lock object beside a cloud --output, best effort: a check and a create are two requests, so
    two jobs started within the same second can both pass. Same host, holder gone: taken over."""

    def __init__(self, output: str, command: str):
        self.path, self.command, self.output = beside(output, "lock"), command, output

    def acquire(self) -> "CloudLock":
        if FileSystems.exists(self.path):
            with FileSystems.open(self.path, compression_type=_RAW) as f:
                holder = json.loads(f.read() or b"{}")
            from corpora.output_lock import _process_alive, describe_holder
            gone = holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int) \
                and not _process_alive(holder["pid"])
            if not gone:
                raise OutputLocked(f"{self.output}: another process is writing it ({describe_holder(holder)}); wait "
                                   f"for it to end, or delete {self.path} if it has")
            print(f"notice: {self.output}: took over the lock of {describe_holder(holder)}, which is gone", flush=True)
        with FileSystems.create(self.path) as sink:
            sink.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                                   "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}).encode())
        return self

    def release(self) -> None:
        try:
            FileSystems.delete([self.path])
        except Exception:  # noqa: BLE001  already gone
            pass


class OutputTransaction:
    def __init__(self, output: str, job: str, command: str, overwrite: bool):
        self.output, self.job, self.command, self.overwrite = output.rstrip("/") or output, job, command, overwrite
        self.staging = beside(self.output, "staging")
        self.lock = None

    def fail(self, cause: str, where: str | None = None):
        raise UsageError(f"--output {self.output}: {cause}" + (f" ({where})" if where else "")
                         + "; nothing was published there")

    def begin(self) -> "OutputTransaction":
        """Lock --output, check it may be written, and create an empty staging folder with a `running` manifest."""
        local = is_local(self.output)
        if local and os.path.exists(self.output) and not os.path.isdir(self.output):
            raise UsageError(f"--output {self.output}: is a file, not a folder; give a folder path")
        if local:
            try:
                manifests.refuse_other_kind(self.output, DATA_JOB)
            except manifests.ManifestError as error:
                raise UsageError(str(error)) from None
            self._refuse_inside_another_output()
        self._probe()
        try:
            self.lock = (OutputLock(self.output, self.command) if local else CloudLock(self.output, self.command)).acquire()
        except OutputLocked as error:
            raise UsageError(f"--output {error}") from None
        except OSError as error:
            self._cannot_write(error)
        try:
            self._refuse_foreign_output()
            self._remove(self.staging)
            running = manifests.new_manifest(DATA_JOB, self.job, self.command)
            self._write(FileSystems.join(self.staging, MANIFEST), manifests.manifest_bytes(running))
            self._write(FileSystems.join(self.staging, LEGACY_DATA_MARKER), self.job.encode() + b"\n")
        except BaseException:
            self.abort()
            raise
        return self

    def _refuse_inside_another_output(self) -> None:
        """An --output inside a job's output (OUT/data) would replace part of that output's tables."""
        for place in _parents(self.output):
            found = manifests.folder_kind(place, evidence=False)
            if found and found[0] == DATA_JOB:
                raise UsageError(f"--output {self.output} is inside {place}, the output of the {found[1]} job; "
                                 f"give the job a folder of its own")

    def _cannot_write(self, error: BaseException):
        reason = disk_problem(error) or (str(error).splitlines()[0][:160] if str(error) else type(error).__name__)
        raise UsageError(f"--output {self.output}: cannot write there ({reason}); choose a writable --output") from None

    def _probe(self) -> None:
        """Fail now, not after the whole job: the folder beside which staging is made, and --output itself."""
        targets = [beside(self.output, "write-probe")]
        if FileSystems.exists(self.output) and FileSystems.match([FileSystems.join(self.output, "*")])[0].metadata_list:
            targets.append(FileSystems.join(self.output, ".xlu-write-probe"))
        for probe in targets:
            try:
                with FileSystems.create(probe) as sink:
                    sink.write(b"")
                FileSystems.delete([probe])
            except Exception as error:  # every filesystem raises its own type (OSError, BeamIOError, ...)
                self._cannot_write(error)

    def _refuse_foreign_output(self) -> None:
        if not FileSystems.exists(self.output):
            return
        previous = None
        manifest_path, marker = FileSystems.join(self.output, MANIFEST), FileSystems.join(self.output, LEGACY_DATA_MARKER)
        for path in (manifest_path, marker):
            if previous is None and FileSystems.exists(path):
                with FileSystems.open(path, compression_type=_RAW) as f:
                    raw = f.read().decode("utf-8", "replace")
                try:
                    previous = json.loads(raw).get("name") if path == manifest_path else raw.strip()
                except (ValueError, AttributeError):
                    previous = "?"
        held = [name for name in JOB_OUTPUTS[:4] if FileSystems.exists(FileSystems.join(self.output, name))]
        if held and previous != self.job and not self.overwrite:
            whose = (f"the {previous} job" if previous else
                     "something other than this job (no .xlu-job marker or manifest.json)")
            raise UsageError(f"--output {self.output}: holds {', '.join(held)} written by {whose}; give an empty or "
                             f"new --output, or pass --overwrite to replace them")

    def commit(self, tables: dict, default_table: str | None, inputs: list[dict], stats_totals: dict) -> dict:
        """Hash every file of the staging folder into the manifest, write it, publish; the manifest."""
        files = {rel: _file_entry(FileSystems.join(self.staging, rel)) for rel in _list_files(self.staging)
                 if rel not in (MANIFEST, LEGACY_DATA_MARKER)}
        manifest = manifests.new_manifest(DATA_JOB, self.job, self.command, manifests.COMPLETE, inputs, tables,
                                          files, stats_totals, default_table)
        if is_local(self.output):
            manifests.write_manifest(self.staging, manifest)
            self._publish_local()
        else:
            self._publish_cloud(manifest)
        self.lock.release()
        self.lock = None
        return manifest

    def _publish_local(self) -> None:
        out, staging = self.output, self.staging
        if os.path.isdir(out) and os.listdir(out):
            try:
                earlier = manifests.read_manifest(out) or {}
            except manifests.ManifestError:
                earlier = {}
            written = set(JOB_OUTPUTS) | {rel.split("/")[0] for rel in earlier.get("files", {})}
            keep = [name for name in os.listdir(out) if name not in written and not name.startswith(".xlu-")
                    and not os.path.exists(os.path.join(staging, name))]
            for name in keep:  # the user's own files in --output stay
                os.rename(os.path.join(out, name), os.path.join(staging, name))
            replaced = beside(out, "replaced")
            self._remove(replaced)
            os.rename(out, replaced)
            os.rename(staging, out)
            shutil.rmtree(replaced, ignore_errors=True)
        else:
            os.rename(staging, out)  # replaces an empty folder in one step

    def _publish_cloud(self, manifest: dict) -> None:
        out = self.output
        old_manifest = FileSystems.join(out, MANIFEST)
        if FileSystems.exists(old_manifest):
            FileSystems.delete([old_manifest])  # from here the folder is not complete for any reader
        stale = [FileSystems.join(out, rel) for rel in _list_files(out) if rel.split("/")[0] in JOB_OUTPUTS]
        if stale:
            FileSystems.delete(stale)
        moved = [rel for rel in _list_files(self.staging) if rel != MANIFEST]
        targets = [FileSystems.join(out, rel) for rel in moved]
        for folder in sorted({target.rpartition("/")[0] for target in targets}):
            try:  # a no-op on object stores; a filesystem with folders needs them before a rename
                FileSystems.mkdirs(folder)
            except Exception:  # noqa: BLE001  already there
                pass
        FileSystems.rename([FileSystems.join(self.staging, rel) for rel in moved], targets)
        self._write(old_manifest, manifests.manifest_bytes(manifest))  # the commit point
        self._remove(self.staging)

    def abort(self) -> None:
        """Remove the staging folder and release the lock; --output is left as it was."""
        try:
            self._remove(self.staging)
        finally:
            if self.lock is not None:
                self.lock.release()
                self.lock = None

    def _write(self, path: str, data: bytes) -> None:
        with FileSystems.create(path) as sink:
            sink.write(data)

    def _remove(self, folder: str) -> None:
        if is_local(folder):
            shutil.rmtree(folder, ignore_errors=True)
            return
        files = [FileSystems.join(folder, rel) for rel in _list_files(folder)]
        if files:
            FileSystems.delete(files)
