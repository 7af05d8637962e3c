"""What `--init PATH` points at, checked before any model class reads it: a run folder stands for its
best/ (else final/) model, a file or a folder without a model is named as such, and weights that are
not a state dict of tensors are refused in one line naming the file (transformers fails on them with a
TypeError from deep inside its loader)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from training.run_folder import RunFolderError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
RUN_MODELS = ("best", "final")  # best/: chosen on held-out data; final/: the last step


def resolve(init: str, command: str) -> str:
    """`init`, or the model folder of the run folder it names (said on stderr). Hub names pass through."""
    path = Path(init).expanduser()
    if not path.exists():
        return init
    if path.is_file():
        raise RunFolderError(f"--init {init}: a file; give a saved model's folder (config.json beside its weights), "
                             "e.g. a run's final/")
    if (path / "config.json").is_file():
        check_weights(path)
        return init
    for name in RUN_MODELS:
        if (path / name / "config.json").is_file():
            chosen = path / name
            why = _best_note(chosen) if name == "best" else "the model of its last step; it kept no best/"
            print(f"{command}: --init {init} is a run folder; using {chosen} ({why})", file=sys.stderr)
            check_weights(chosen)
            return str(chosen)
    if any((path / name).exists() for name in ("checkpoints", "metrics.jsonl", "run.json")):
        raise RunFolderError(f"--init {init}: a run folder with no best/ or final/ model yet (the run has not "
                             f"finished); finish it with --resume, or give a saved model's folder")
    raise RunFolderError(f"--init {init}: no config.json in the folder; give a saved model's folder (a run's "
                         "final/ or best/) or a Hugging Face model name")


def _best_note(folder: Path) -> str:
    try:
        best = json.loads((folder / "selection.json").read_text())
        return f"its best held-out model: {best['metric']} {best['value']:.4f} at step {best['step']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "its best held-out model"


def check_weights(folder: Path) -> None:
    """The folder's weights file opens as a state dict of tensors (safetensors header, or a torch
    pickle of name -> tensor, read with weights_only)."""
    for name in WEIGHT_FILES:
        path = folder / name
        if not path.is_file():
            continue
        if name.endswith(".safetensors"):
            from safetensors import safe_open

            try:
                with safe_open(str(path), framework="pt") as f:
                    f.keys()
            except Exception as error:  # noqa: BLE001  safetensors raises its own error type for any damage
                raise RunFolderError(f"--init {folder}: {path} is not a readable safetensors file "
                                     f"({_first_line(error)}); save the model again with save_pretrained") from None
            return
        import torch

        try:
            state = torch.load(path, map_location="meta", weights_only=True, mmap=True)
        except Exception as error:  # noqa: BLE001  torch raises several types for truncated or foreign files
            raise RunFolderError(f"--init {folder}: {path} is not a readable weights file ({_first_line(error)}); "
                                 "save the model again with save_pretrained") from None
        if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                  for k, v in state.items()):
            raise RunFolderError(f"--init {folder}: {path} holds a {type(state).__name__}, not a state dict (parameter "
                                 "name -> tensor); save the model with save_pretrained")
        return


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:160]
