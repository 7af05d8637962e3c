"""No Python code from a model folder or hub repository runs unless the user passed --trust_remote_code.

A `config.json` (or `tokenizer_config.json`) with an `auto_map` names Python files that transformers
imports when asked with `trust_remote_code=True`: whoever wrote the folder then runs code on this
machine. Every `from_pretrained` here passes the flag's value; a local folder that asks for its own
code is refused before transformers is called, with one line, and transformers' own refusal (a hub
name) is turned into the same line. The project's own model types are registered with the Auto
classes when `training` is imported, so its saved models never need the flag.
"""
from __future__ import annotations

import json
from pathlib import Path


class RemoteCodeRefused(ValueError):
    pass


def _refusal(path: str, flag: str, where: str) -> RemoteCodeRefused:
    return RemoteCodeRefused(f"{flag} {path}: {where} asks to run Python code shipped with the model (auto_map); "
                             "not run without consent: pass --trust_remote_code if you trust its author")


def check_remote_code(path: str, trust_remote_code: bool, flag: str = "--init") -> None:
    """Refuse a local folder whose config asks for code this process does not already have."""
    if trust_remote_code or not Path(path).is_dir():
        return
    from transformers import CONFIG_MAPPING

    for name in ("config.json", "tokenizer_config.json"):
        file = Path(path) / name
        if not file.exists():
            continue
        try:
            config = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # transformers reports an unreadable config with its own error
        if not isinstance(config, dict) or not config.get("auto_map"):
            continue
        # A registered model type (ours, or a stock one) is loaded from its local class: the folder's
        # code is not run, so there is nothing to refuse.
        if name == "config.json" and config.get("model_type") in CONFIG_MAPPING:
            continue
        # tokenizer_config.json's auto_map is {"AutoTokenizer": [...]} (or, in old files, that list alone)
        if name == "tokenizer_config.json" and isinstance(config["auto_map"], dict) and "AutoTokenizer" not in config["auto_map"]:
            continue
        raise _refusal(path, flag, str(file))


def from_pretrained(auto_class, path, trust_remote_code: bool, flag: str = "--init", **kwargs):
    """`auto_class.from_pretrained` with the flag's value; transformers' multi-line refusal as one line."""
    check_remote_code(str(path), trust_remote_code, flag)
    try:
        return auto_class.from_pretrained(path, trust_remote_code=trust_remote_code, **kwargs)
    except ValueError as e:
        if "trust_remote_code" in str(e):
            raise _refusal(str(path), flag, "it") from None
        raise
