"""What the XY-LENT test modules share: the tiny config, its model and stream. The shards they read
are the session fixtures `xylent_shards` and `xylent_shards_once` of tests/conftest.py."""
from __future__ import annotations

import json
import os
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


# ── an XLM-R-style encoder folder, as training.convert_e5 writes one, but tiny and random ──

E5_SMALL = Path(os.environ.get("XLU_E5_SMALL", "/tmp/e5-small"))  # `python -m training.convert_e5 /tmp/e5-small`
ENCODER_LANGS = ("de", "fr", "el", "ru")


def ntrex_lines(shared_data: Path, lang: str, start: int, stop: int) -> list[str]:
    path = shared_data / "parallel" / "ntrex128" / f"{lang}.txt"
    if not path.is_file():
        pytest.skip(f"no NTREX-128 in the shared data ({path})")
    return path.read_text(encoding="utf-8").split("\n")[start:stop]


def e5_small() -> Path:
    """The converted multilingual-e5-small, or a skip (CI converts it only in test_convert_e5.py)."""
    if not (E5_SMALL / "config.json").is_file():
        pytest.skip(f"no converted multilingual-e5-small at {E5_SMALL} (python -m training.convert_e5 {E5_SMALL}, "
                    "or set XLU_E5_SMALL)")
    return E5_SMALL


def tiny_encoder_folder(folder: Path, shared_data: Path, layers: int = 2) -> Path:
    """A random XLMRobertaModel (post-LN, fairseq positions, two token types, 3 embedding rows past the
    tokenizer as converted encoders have) with a SentencePiece tokenizer of XLM-R's layout trained
    on NTREX lines of ENCODER_LANGS, saved as a Hugging Face folder."""
    from transformers import XLMRobertaConfig, XLMRobertaModel

    from training.tokenizer import train_tiny_tokenizer

    lines = [line for lang in ENCODER_LANGS for line in ntrex_lines(shared_data, lang, 0, 400)]
    tokenizer = train_tiny_tokenizer([line.split() for line in lines], 1200)
    config = XLMRobertaConfig(vocab_size=len(tokenizer) + 3, hidden_size=32, num_hidden_layers=layers,
                              num_attention_heads=4, intermediate_size=64, max_position_embeddings=130,
                              type_vocab_size=2, pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-12)
    torch.manual_seed(0)
    model = XLMRobertaModel(config, add_pooling_layer=False).eval()
    with torch.no_grad():  # every part of the embeddings visible in the output, the type-0 row too
        for table in (model.embeddings.position_embeddings, model.embeddings.token_type_embeddings):
            table.weight.normal_(0, 0.5)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
