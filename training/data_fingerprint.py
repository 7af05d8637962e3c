"""What data a run trained on, so that `--resume` never continues on other data without being told.

A run records, in OUTPUT/data_fingerprint.json, each file of its --data (and --eval_data) folder: the
path inside the folder, its size and a sha256. `--resume` computes them again and refuses a change in
one line naming what changed, unless `--allow_data_change`. Only the content counts: the same data
moved or copied elsewhere resumes. Files above FULL_HASH_BYTES are hashed on their first and last
SAMPLE_BYTES (and their size), which catches a rewritten shard (Parquet keeps its footer, with row
counts, offsets and statistics, at the end) without reading terabytes at every start.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from training import atomic_files

FILE = "data_fingerprint.json"
MANIFEST = "manifest.json"  # a data job's (corpora/outputs/manifests.py)
FULL_HASH_BYTES = 256 << 20
SAMPLE_BYTES = 16 << 20
# A data job's bookkeeping, not the rows: a rerun rewrites them without changing the data.
IGNORED = {"README.md", "stats.parquet", "manifest.json", ".xlu-job"}
IGNORED_FOLDERS = {"dead_letter"}


def _digest(path: Path, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if size <= FULL_HASH_BYTES:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        else:
            h.update(f.read(SAMPLE_BYTES))
            f.seek(size - SAMPLE_BYTES)
            h.update(f.read(SAMPLE_BYTES))
            h.update(str(size).encode())
    return h.hexdigest()


def _data_root(data_dir: str | Path) -> Path:
    root = Path(data_dir)
    return root / "data" if (root / "data").is_dir() else root


def _from_manifest(data_dir: str | Path) -> dict[str, dict] | None:
    """The files a data job's manifest lists (the readers verify them against it), when --data has
    one and every listed file still has its listed size: no second pass over the bytes."""
    root = Path(data_dir)
    folder = next((f for f in (root, root.parent) if (f / MANIFEST).is_file()), None)
    if folder is None:
        return None
    try:
        listed = json.loads((folder / MANIFEST).read_text())["files"]
        files = {rel: {"bytes": int(e["bytes"]), "sha256": str(e["sha256"])} for rel, e in listed.items()
                 if rel.split("/")[0] not in IGNORED_FOLDERS and Path(rel).name not in IGNORED}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not files or any(not (folder / rel).is_file() or (folder / rel).stat().st_size != e["bytes"]
                        for rel, e in files.items()):
        return None  # hashed below: the change is then named file by file
    return files


def fingerprint(data_dir: str | Path) -> dict[str, dict]:
    """{path: {"bytes", "sha256"}} for every file of the data: from the data job's manifest when it has
    one, else hashed here (the job's data/ when --data is its --output; hidden files, staging leftovers
    and the job's stats and card left out)."""
    listed = _from_manifest(data_dir)
    if listed is not None:
        return listed
    root = _data_root(data_dir)
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if (not path.is_file() or path.name in IGNORED or any(part.startswith(".") for part in relative.parts)
                or relative.parts[0] in IGNORED_FOLDERS):
            continue
        size = path.stat().st_size
        files[relative.as_posix()] = {"bytes": size, "sha256": _digest(path, size)}
    return files


def differences(recorded: dict[str, dict], current: dict[str, dict], limit: int = 3) -> list[str]:
    """What changed between two fingerprints, a phrase per file (the first `limit`, then a count)."""
    found = []
    for name in sorted(set(recorded) | set(current)):
        before, now = recorded.get(name), current.get(name)
        if before == now:
            continue
        if before is None:
            found.append(f"{name} added")
        elif now is None:
            found.append(f"{name} removed")
        elif before["bytes"] != now["bytes"]:
            found.append(f"{name} {before['bytes']:,} -> {now['bytes']:,} bytes")
        else:
            found.append(f"{name} rewritten (same size, other content)")
    if len(found) > limit:
        found = found[:limit] + [f"{len(found) - limit} more"]
    return found


def read(out: Path) -> dict | None:
    try:
        return json.loads((out / FILE).read_text())
    except (OSError, ValueError):
        return None


def record(out: Path, inputs: dict[str, dict[str, dict]]) -> None:
    """`inputs`: flag ("data", "eval_data") -> fingerprint."""
    atomic_files.write_text(out / FILE, json.dumps(inputs, indent=1, sort_keys=True) + "\n")


def changes(out: Path, inputs: dict[str, dict[str, dict]]) -> list[str]:
    """Against the fingerprint the run recorded: "--data: train-00000.parquet 51,234 -> 4,120 bytes" per
    changed input. Empty when nothing changed, or the run recorded none (made before fingerprints)."""
    recorded = read(out)
    if recorded is None:
        return []
    found = []
    for flag in sorted(set(recorded) & set(inputs)):  # an --eval_data added on resume is not a change of data
        changed = differences(recorded[flag], inputs[flag])
        if changed:
            found.append(f"--{flag}: {', '.join(changed)}")
    return found
