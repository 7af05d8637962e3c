"""An output folder's manifest (docs/manifest.md): what wrote the folder, from what, and every file in
it with its rows, bytes and sha256. Written last: a folder whose manifest says `complete` is
complete, and a reader that checks it against the files refuses what is partial, mixed or changed.

    files = verified_shards("out/wiki_mrc", table="mrc", split="train")  # resolve_data_folder + verify_folder

No Beam here: training, the audit and the data jobs all read manifests through this module.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

MANIFEST = "manifest.json"
FORMAT = "xlu-manifest/1"
DATA_JOB, TRAINING_RUN, FINETUNE_RUN = "data job", "training run", "fine-tuning run"
RUNNING, COMPLETE, FAILED = "running", "complete", "failed"
LEGACY_DATA_MARKER = ".xlu-job"  # a data job's marker before manifests (still written beside one)
RUN_MARKER = "run.json"  # training/run_folder.py's marker of a training run
RUN_EVIDENCE = ("checkpoints", "metrics.jsonl", "final", "best")
# Inputs up to this size are hashed whole; larger ones by size, head and tail (INPUT_SAMPLE bytes each).
FULL_HASH_LIMIT = 256 << 20
INPUT_SAMPLE = 8 << 20
_CHUNK = 1 << 20


class ManifestError(ValueError):
    """A folder that is not what a reader may use: one line naming the folder and what differs."""


# ---- writing ----

def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def input_identity(path: str, size: int, read_range) -> dict:
    """An input's size and content hash; `read_range(offset, length) -> bytes` reads it (any filesystem).

    `sha256`: of the whole file, for files up to FULL_HASH_LIMIT. `sha256-size-head-tail`: of the
    decimal size, the first and the last INPUT_SAMPLE bytes, for larger ones (a dump of 20 GB is
    identified in one read of 16 MB; an edit in its middle that keeps its size is not seen)."""
    digest = hashlib.sha256()
    if size <= FULL_HASH_LIMIT:
        for offset in range(0, size, 64 * _CHUNK):
            digest.update(read_range(offset, min(64 * _CHUNK, size - offset)))
        method = "sha256"
    else:
        digest.update(str(size).encode() + b"\n")
        digest.update(read_range(0, INPUT_SAMPLE))
        digest.update(read_range(size - INPUT_SAMPLE, INPUT_SAMPLE))
        method = "sha256-size-head-tail"
    return {"path": path, "bytes": size, "hash": digest.hexdigest(), "hash_method": method}


def local_input_identity(path: str) -> dict:
    def read_range(offset: int, length: int) -> bytes:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(length)
    return input_identity(path, os.path.getsize(path), read_range)


def parquet_rows(data_or_path) -> int | None:
    """Rows of a Parquet file from its footer (bytes or a path); None if it is not one."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        source = pa.BufferReader(data_or_path) if isinstance(data_or_path, bytes) else data_or_path
        return pq.ParquetFile(source).metadata.num_rows
    except (pa.ArrowException, OSError, ValueError):
        return None


def file_entry(data: bytes) -> dict:
    entry = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    rows = parquet_rows(data) if data[:4] == b"PAR1" else None
    if rows is not None:
        entry["rows"] = rows
    return entry


@functools.lru_cache(maxsize=1)
def code_version() -> dict:
    """The package version and, when the code is a git checkout, its commit and whether it was edited."""
    try:
        from importlib.metadata import version
        package = version("xlu-factory")
    except Exception:  # noqa: BLE001  not installed as a distribution: the checkout is the code
        package = None
    root = Path(__file__).resolve().parents[1]
    commit = dirty = None
    if not (root / ".git").exists():  # installed, not a checkout: no commit to name
        return {"package": "xlu-factory", "version": package, "git_commit": None, "git_dirty": None}
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip() or None
        if commit:
            status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10).stdout
            dirty = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return {"package": "xlu-factory", "version": package, "git_commit": commit, "git_dirty": dirty}


def new_manifest(kind: str, name: str, command: str, state: str = RUNNING, inputs=(), tables=None,
                 files=None, stats=None, default_table: str | None = None) -> dict:
    """`tables`: {table: {split: [relative shard paths]}}; `files`: {relative path: file_entry(...)}."""
    return {"format": FORMAT, "kind": kind, "name": name, "state": state, "command": command,
            "code_version": code_version(), "inputs": list(inputs), "default_table": default_table,
            "tables": tables or {}, "files": files or {}, "stats": stats or {}}


def manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_manifest(folder: str | os.PathLike, manifest: dict) -> Path:
    """Write FOLDER/manifest.json atomically (a temporary file renamed over it)."""
    path = Path(folder) / MANIFEST
    temporary = path.with_name(MANIFEST + ".tmp")
    with open(temporary, "wb") as f:
        f.write(manifest_bytes(manifest))
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)
    return path


# ---- what wrote a folder ----

def read_manifest(folder: str | os.PathLike) -> dict | None:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ManifestError(f"{path}: unreadable ({str(error).splitlines()[0][:120]}); rerun the command "
                            "that wrote the folder") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ManifestError(f"{path}: not a manifest of format {FORMAT}; rerun the command that wrote the folder")
    return manifest


def folder_kind(folder: str | os.PathLike, evidence: bool = True) -> tuple[str, str] | None:
    """(kind, name) of what wrote the folder: its manifest, else the older markers; None for neither.
    `evidence`: a folder holding what only a run writes (checkpoints/, metrics.jsonl, final/, best/)
    counts as a training run even without run.json."""
    folder = Path(folder)
    try:
        manifest = read_manifest(folder)
    except ManifestError:
        manifest = None
    if manifest:
        return manifest.get("kind", "?"), manifest.get("name", "?")
    marker = folder / LEGACY_DATA_MARKER
    if marker.is_file():
        return DATA_JOB, marker.read_text(encoding="utf-8", errors="replace").strip() or "?"
    if (folder / RUN_MARKER).is_file() or (evidence and any((folder / name).exists() for name in RUN_EVIDENCE)):
        try:
            model = json.loads((folder / RUN_MARKER).read_text()).get("model", "?")
        except (OSError, ValueError, AttributeError):
            model = "?"
        return TRAINING_RUN, model
    return None


RUN_KINDS = (TRAINING_RUN, FINETUNE_RUN)


def refuse_other_kind(folder: str | os.PathLike, kind: str, flag: str = "--output") -> None:
    """Raise ManifestError if FOLDER, or a folder it is inside, was written by another kind of command
    (a data job into a training run's folder, a run into a data job's output). A run's folder known
    only by what it holds (checkpoints/, final/, no marker) is a run of either kind."""
    folder = Path(os.path.abspath(folder))
    for place in (folder, *folder.parents):
        found = folder_kind(place, evidence=place == folder) if place.is_dir() else None
        marked = found is not None and ((place / MANIFEST).is_file() or (place / RUN_MARKER).is_file()
                                        or (place / LEGACY_DATA_MARKER).is_file())
        if found and kind in RUN_KINDS and found[0] in RUN_KINDS and not marked:
            continue
        if found and found[0] != kind:
            where = "holds" if place == folder else f"is inside {place}, which holds"
            name = f" ({found[1]})" if found[1] != "?" else ""
            raise ManifestError(f"{flag} {folder} {where} the output of a {found[0]}{name}; a {kind} "
                                f"writes a folder of its own: choose another {flag}")


def data_fingerprint(path: str | os.PathLike, flag: str = "--data") -> dict:
    """What a run records of its data, to tell on --resume whether it changed: the sha256 of the job
    output's manifest (which holds every shard's sha256), or for shards without a manifest the sha256
    of their names, sizes and contents."""
    root = resolve_data_folder(path, flag)
    if (root / MANIFEST).is_file():
        manifest = read_manifest(root)
        return {"path": str(root), "job": manifest.get("name"), "command": manifest.get("command"),
                "manifest_sha256": sha256_file(root / MANIFEST)}
    digest = hashlib.sha256()
    for shard in sorted(p for p in root.rglob("*.parquet")):
        digest.update(f"{shard.relative_to(root)}\0{shard.stat().st_size}\0{sha256_file(shard)}\n".encode())
    return {"path": str(root), "job": None, "command": None, "shards_sha256": digest.hexdigest()}


# ---- reading: the one resolver of a job's output folder ----

def staging_path(folder: str | os.PathLike) -> Path:
    folder = Path(os.path.abspath(folder))
    return folder.parent / f".{folder.name}.staging"


def resolve_data_folder(path: str | os.PathLike, flag: str = "--data") -> Path:
    """A data job's output folder from PATH (the folder itself, or a folder inside it such as data/ or
    mrtd/). Refused in one line: a missing folder (and why, when a job is writing it or crashed), a
    file, a folder an older job wrote without a manifest."""
    given = Path(path)
    if not given.exists():
        staging = staging_path(given)
        if staging.is_dir():
            from corpora.output_lock import current_holder, describe_holder
            holder = current_holder(given)
            why = (f"a data job is writing it ({describe_holder(holder)}); wait for it to end" if holder else
                   "a data job that was writing it did not finish (its staging folder is beside it); rerun the job")
            raise ManifestError(f"{flag} {path}: not there yet: {why}")
        raise ManifestError(f"{flag} {path}: folder not found")
    if given.is_file():
        raise ManifestError(f"{flag} {path}: a file; give the data job's --output folder")
    for place in (given, *list(given.resolve().parents)[:2]):
        if (place / MANIFEST).is_file():
            if place != given:
                _check_row_folder(place, given, path, flag)
            return place
    for place in (given, *list(given.resolve().parents)[:2]):
        marker = place / LEGACY_DATA_MARKER
        if marker.is_file():
            job = marker.read_text(encoding="utf-8", errors="replace").strip() or "the data job"
            raise ManifestError(f"{flag} {path}: written by an older version of {job}, without {MANIFEST}: it may be "
                                f"partial or mixed and cannot be checked; rerun `python -m pipelines.{job}` into it")
    return given


BOOKKEEPING_TABLES = ("stats", "dead_letter")


def _check_row_folder(root: Path, given: Path, path, flag: str) -> None:
    """A folder inside a job's output stands for it only where rows are: data/ or a table's folder."""
    inside = given.resolve().relative_to(root.resolve()).as_posix()
    manifest = read_manifest(root) or {}
    row_folders = {"data"} | {str(Path(rel).parent) for table, splits in manifest.get("tables", {}).items()
                              if table not in BOOKKEEPING_TABLES for shards in splits.values() for rel in shards}
    if inside not in row_folders:
        raise ManifestError(f"{flag} {path}: no train-*.parquet shards of the job's rows there (it is {inside}/ of the "
                            f"{manifest.get('name')} output {root}); give {root}")


@functools.lru_cache(maxsize=64)
def _verified(folder: str, signature: tuple, checksums: bool) -> dict:
    return verify_folder(folder, checksums=checksums, cached=False)


def verify_folder(folder: str | os.PathLike, checksums: bool = True, kind: str = DATA_JOB, cached: bool = True) -> dict:
    """The folder's manifest, once every shard of its tables is there with its rows, bytes and sha256
    (`checksums=False`: rows and bytes only), and no table folder holds a shard it does not list.
    Other files (the card, images) are not checked: editing README.md does not spoil the rows;
    verified_file checks one of them when a reader uses it (spm.model)."""
    folder = Path(folder)
    if cached:  # verified again whenever a file under the folder changed (size, mtime, name)
        signature = tuple(sorted((str(p), s.st_size, s.st_mtime_ns) for p in folder.rglob("*")
                                 if p.is_file() for s in [p.stat()]))
        return _verified(str(folder), signature, checksums)
    manifest = read_manifest(folder)
    if manifest is None:
        raise ManifestError(f"{folder}: no {MANIFEST}; rerun the command that writes it")
    if manifest.get("kind") != kind:
        raise ManifestError(f"{folder}: the output of a {manifest.get('kind')} ({manifest.get('name')}), not of a {kind}")
    job = manifest.get("name", "?")
    rerun = f"rerun `python -m pipelines.{job}`" if kind == DATA_JOB else "rerun the command"
    if manifest.get("state") != COMPLETE:
        raise ManifestError(f"{folder}: the {job} job did not finish (state {manifest.get('state')!r}: still running or "
                            f"crashed); wait for it, or {rerun}")
    files = manifest.get("files", {})
    for table, splits in sorted(manifest.get("tables", {}).items()):
        for split, shards in sorted(splits.items()):
            for rel in shards:
                check_file(folder, rel, files.get(rel), checksums, rerun, f"one of the {len(shards)} {split} shards of {table}")
    listed = set(files)
    return _extra_shards(folder, manifest, listed, rerun)


def check_file(folder: Path, rel: str, entry: dict | None, checksums: bool, rerun: str, what: str = "in the manifest") -> None:
    """One file against its manifest entry: present, its rows (Parquet), bytes and sha256."""
    path = folder / rel
    if entry is None:
        raise ManifestError(f"{folder}: {rel} is in a table of the manifest but has no entry; {rerun}")
    if not path.is_file():
        raise ManifestError(f"{folder}: {rel} is missing ({what}); {rerun}")
    if "rows" in entry:
        rows = parquet_rows(str(path))
        if rows != entry["rows"]:
            found = "is not a readable Parquet file" if rows is None else f"has {rows:,} rows"
            raise ManifestError(f"{folder}: {rel} {found}, the manifest says {entry['rows']:,} rows: changed "
                                f"since the job wrote it; {rerun}")
    size = path.stat().st_size
    if size != entry["bytes"]:
        raise ManifestError(f"{folder}: {rel} has {size:,} bytes, the manifest says {entry['bytes']:,}: changed "
                            f"since the job wrote it; {rerun}")
    if checksums and sha256_file(path) != entry["sha256"]:
        raise ManifestError(f"{folder}: {rel}: sha256 differs from the manifest's: changed since the job wrote "
                            f"it; {rerun}")


def _extra_shards(folder: Path, manifest: dict, listed: set, rerun: str) -> dict:
    for table, splits in sorted(manifest.get("tables", {}).items()):
        for shard_folder in sorted({str(Path(rel).parent) for shards in splits.values() for rel in shards}):
            if shard_folder == ".":
                continue
            extra = sorted(str(p.relative_to(folder)) for p in (folder / shard_folder).glob("*.parquet")
                           if str(p.relative_to(folder)) not in listed)
            if extra:
                more = f" and {len(extra) - 1} more" if len(extra) > 1 else ""
                raise ManifestError(f"{folder}: {extra[0]}{more} not in the manifest (a shard of another run mixed "
                                    f"into table {table}); {rerun} into an empty folder")
    return manifest


def _without_folder(error: ManifestError, folder: Path) -> str:
    return str(error).removeprefix(f"{folder}: ")


_WARNED: set[str] = set()


def _warn_unverified(folder: Path) -> None:
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        print(f"warning: {folder}: no {MANIFEST} (Parquet not written by a data job): its shards are read "
              f"as found, unchecked", file=sys.stderr)


def verified_shards(path: str | os.PathLike, table: str | None = None, split: str = "train",
                    checksums: bool = True, flag: str = "--data", required: bool = True) -> list[Path]:
    """The shards of one table's split of a job's output, after the whole folder was verified.

    `table=None`: the job's rows (the manifest's default table). A folder of Parquet shards without a
    manifest (made by hand or elsewhere) is read as found, with a warning: `<table>/`, `data/<table>/`,
    `data/` or the folder itself, `<split>-*.parquet`. `required=False`: [] for a split the job did not write."""
    root = resolve_data_folder(path, flag)
    if (root / MANIFEST).is_file():
        try:
            manifest = verify_folder(root, checksums=checksums)
        except ManifestError as error:
            raise ManifestError(f"{flag} {path}: {_without_folder(error, root)}") from None
        tables = manifest.get("tables", {})
        name = table or manifest.get("default_table")
        if name not in tables:
            raise ManifestError(f"{flag} {path}: the {manifest.get('name')} job wrote no table {name!r} "
                                f"(it wrote {', '.join(sorted(tables)) or 'none'})")
        shards = tables[name].get(split, [])
        if not shards and required:
            raise ManifestError(f"{flag} {path}: the {manifest.get('name')} job wrote no {split} split of {name}")
        return [root / rel for rel in shards]
    _warn_unverified(root)
    candidates = ([root / table, root / "data" / table] if table else []) + [root / "data", root]
    for folder in candidates:
        files = sorted(folder.glob(f"{split}-*.parquet")) if folder.is_dir() else []
        if files:
            return files
    if not required:
        return []
    where = f"{table}/" if table else "data/"
    raise ManifestError(f"{flag} {path}: no {split}-*.parquet shards (in {where} or the folder itself); run the data job first")


def verified_file(path: str | os.PathLike, flag: str) -> Path:
    """A file (spm.model, pair_probs.parquet) of a job's output, checked against its folder's manifest
    when it has one; a file in a folder without a manifest is taken as it is."""
    path = Path(path)
    folder = path.parent
    if (folder / MANIFEST).is_file():
        try:
            manifest = verify_folder(folder)
            rerun = f"rerun `python -m pipelines.{manifest.get('name')}`"
            if path.name not in manifest.get("files", {}):
                raise ManifestError(f"{folder}: {path.name} is not among the files of its manifest; {rerun}")
            check_file(folder, path.name, manifest["files"][path.name], True, rerun)
        except ManifestError as error:
            raise ManifestError(f"{flag} {path}: {_without_folder(error, folder)}") from None
    elif (folder / LEGACY_DATA_MARKER).is_file():
        resolve_data_folder(folder, flag)  # raises: an older job's output
    return path
