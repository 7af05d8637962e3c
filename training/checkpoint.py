"""Training checkpoints: everything needed to resume exactly, loadable with `weights_only=True`.

Only tensors and plain Python values go in (no pickled objects), so loading never runs foreign code.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import torch

FORMAT = "xlu_factory.training.checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    pass


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


def save(path: Path, **state) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"format": FORMAT, "version": VERSION, **state}, tmp)
    os.replace(tmp, path)  # a crash mid-write never leaves a half checkpoint under the real name


def load(path: Path) -> dict:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001  torch raises several types for truncated, garbage or pickled files
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"{path}: not a readable checkpoint ({first_line[:160]}); delete it or start without --resume") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not an xlu-factory training checkpoint; delete it or start without --resume")
    if state.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {state.get('version')}, this code reads {VERSION}")
    return state


def checkpoint_paths(folder: Path) -> list[Path]:
    return sorted(folder.glob("step-*.pt"))


def prune(folder: Path, keep: int) -> None:
    for old in checkpoint_paths(folder)[:-keep] if keep > 0 else []:
        old.unlink()
