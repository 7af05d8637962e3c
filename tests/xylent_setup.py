"""What the XY-LENT test modules share: the tiny config, its model and stream. The shards they read
are the session fixtures `xylent_shards` and `xylent_shards_once` of tests/conftest.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from training.models.xylent import XYLentForPreTraining
from training.recipes import xylent as recipe


def tiny_cfg(**changes):
    return recipe.CONFIGS["tiny"].replace(**changes)


def stream(data, cfg=None, start_batch=0):
    return recipe.make_dataset(cfg or tiny_cfg(), str(data), None, 0, 1, start_batch)


def tiny_model(data, **changes):
    tokenizer = recipe.make_tokenizer(tiny_cfg(), str(data))
    torch.manual_seed(0)
    model = XYLentForPreTraining(recipe.model_config(tiny_cfg(**changes), tokenizer))
    return model, tokenizer


def metrics(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
