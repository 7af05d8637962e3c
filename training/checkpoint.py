"""Training checkpoints: everything needed to resume exactly, loadable with `weights_only=True`.

Only tensors and plain Python values go in (no pickled objects), so loading never runs foreign code.
torch's zip reader checks no CRC, so a file with flipped bytes loads "fine" with garbage tensors: each
checkpoint's sha256 is therefore kept in OUTPUT/checkpoints.sha256 (`sha256sum -c` format, paths
relative to OUTPUT) and checked before loading. The manifest sits beside checkpoints/, not in it, so
that the folder holds checkpoints only.
"""
from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

import torch

from training import atomic_files

FORMAT = "xlu_factory.training.checkpoint"
VERSION = 1
MANIFEST = "checkpoints.sha256"


class CheckpointError(ValueError):
    def __init__(self, message: str, path: Path | None = None, reason: str | None = None):
        super().__init__(message)
        self.path, self.reason = path, reason or message


def _refuse(path: Path, reason: str) -> CheckpointError:
    return CheckpointError(f"{path}: {reason}; delete it or start without --resume", path, reason)


def rng_state() -> dict:
    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest_path(folder: Path) -> Path:
    return folder.parent / MANIFEST


def read_manifest(folder: Path) -> dict[str, str]:
    """Checkpoint file name -> sha256, from the manifest beside `folder` (empty when there is none)."""
    path = _manifest_path(folder)
    if not path.exists():
        return {}
    sums = {}
    for line in path.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if digest and name:
            sums[Path(name).name] = digest
    return sums


def _write_manifest(folder: Path, sums: dict[str, str]) -> None:
    atomic_files.write_text(_manifest_path(folder),
                            "".join(f"{digest}  {folder.name}/{name}\n" for name, digest in sorted(sums.items())))


def save(path: Path, **state) -> None:
    """Written under a temporary name (which `checkpoint_paths` never lists) and renamed: a crash, a
    Ctrl-C or a full disk mid-write leaves no checkpoint under a real name, and no temporary."""
    with atomic_files.replacing(path) as tmp:
        # Through a Python file object: a full disk is then an OSError naming it, not torch's
        # "enforce fail at inline_container.cc: unexpected pos".
        with open(tmp, "wb") as f:
            torch.save({"format": FORMAT, "version": VERSION, **state}, f)
            f.flush()
            os.fsync(f.fileno())
        # The sum is recorded before the file takes its real name: a crash in between leaves a sum without
        # its file (ignored), never a file under its real name without its sum.
        sums = read_manifest(path.parent)
        sums[path.name] = sha256(tmp)
        _write_manifest(path.parent, sums)


def nonfinite(tensors) -> list[str]:
    """Names of the floating tensors in a (nested) state dict holding NaN or ±inf."""
    bad: list[str] = []

    def walk(value, name):
        if isinstance(value, torch.Tensor):
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                bad.append(name)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{name}.{k}" if name else str(k))
        elif isinstance(value, (list, tuple)):
            for k, v in enumerate(value):
                walk(v, f"{name}.{k}" if name else str(k))

    walk(tensors, "")
    return bad


def verify(path: Path) -> str | None:
    """Check `path` against the manifest; a one-line reason to refuse it, or None. A checkpoint the
    manifest does not list (copied by hand) is not refused; `load` says it is unverified."""
    expected = read_manifest(path.parent).get(path.name)
    if expected is None:
        return None
    actual = sha256(path)
    if actual != expected:
        return f"checksum mismatch (sha256 {actual[:12]}…, {MANIFEST} says {expected[:12]}…): the file is corrupt"
    return None


def load(path: Path) -> dict:
    reason = verify(path)
    if reason:
        raise _refuse(path, reason)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001  torch raises several types for truncated, garbage or pickled files
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise _refuse(path, f"not a readable checkpoint ({first_line[:160]})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise _refuse(path, "not an xlu-factory training checkpoint")
    if state.get("version") != VERSION:
        raise _refuse(path, f"checkpoint version {state.get('version')}, this code reads {VERSION}")
    # Without a sum (a checkpoint copied without the manifest) this is what still catches most damage.
    # Only parameters: a buffer may hold NaN by design (XY-LENT's dro_losses: "no loss seen yet").
    model = state.get("model") or {}
    params = set(state.get("parameters", []))
    bad = nonfinite({"model": {k: v for k, v in model.items() if k in params}, "optimizer": state.get("optimizer")})
    if bad:
        raise _refuse(path, f"NaN or inf in {len(bad)} tensor(s) (first: {bad[0]})")
    return state


def load_latest(folder: Path, announce: bool) -> dict | None:
    """The newest checkpoint in `folder` that passes its checks (checksum, format, finite tensors).
    Refused ones are named, one line each, and an older one is loaded instead; none left is an error."""
    refused: list[CheckpointError] = []
    for path in reversed(checkpoint_paths(folder)):
        try:
            state = load(path)
        except CheckpointError as e:
            refused.append(e)
            continue
        if announce:
            for e in refused:
                print(f"training.run: {e.path}: {e.reason}; refused", file=sys.stderr)
            unverified = "" if path.name in read_manifest(folder) else f"; no sum for it in {MANIFEST}, loaded unverified"
            fallback = ", falling back past the refused one" + ("s" if len(refused) > 1 else "") if refused else ""
            print(f"resuming from {path} (step {state['step']}){fallback}{unverified}", file=sys.stderr)
        return state
    if refused:
        older = f" (and {len(refused) - 1} older ones refused too)" if len(refused) > 1 else ""
        raise CheckpointError(f"{refused[0]}{older}; no good checkpoint to fall back to")
    return None


def checkpoint_paths(folder: Path) -> list[Path]:
    return sorted(folder.glob("step-*.pt"))


def prune(folder: Path, keep: int) -> None:
    old = checkpoint_paths(folder)[:-keep] if keep > 0 else []
    for path in old:
        path.unlink()
    if old:
        sums = read_manifest(folder)
        _write_manifest(folder, {name: digest for name, digest in sums.items() if (folder / name).exists()})
