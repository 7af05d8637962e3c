"""The machine reader for fine-tuning: any encoder that returns `last_hidden_state`, plus the mPMR span
extractor (S = sigmoid(FFN(H) · Hᵀ), training/models/mpmr.py).

`load_reader(path)` takes, in order:
1. a saved MPMRForWAE (its config has `extractor_hidden_size`): encoder and pre-trained extractor;
2. a saved MRCReader (its folder has span_extractor.json): the encoder by AutoModel, its extractor;
3. anything else `transformers.AutoModel` loads (XLM-R, the project's XY-LENT discriminator, whose
   type `import training` registers): that encoder and a fresh extractor.
Code shipped with a model (an `auto_map` naming Python files) runs only with `trust_remote_code=True`
(the commands' --trust_remote_code; training/remote_code.py).
Both model kinds have `span_logits(input_ids, attention_mask) -> [B, T, T]` and `save_pretrained(dir)`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer

from corpora.transformers_logging import without_load_report
from training.models.mpmr import MPMRForWAE, SpanExtractor
from training.remote_code import from_pretrained

# Weights a checkpoint may hold or lack without anything being wrong, for every encoder loaded here:
# the MLM head of a pre-training checkpoint (CLISM, XLM-R) and the replaced-token-detection head of an
# XY-LENT discriminator are not used by a reader; a pooler is never used.
ENCODER_UNUSED = ("lm_head.", "rtd_head.")
ENCODER_NEW = ("pooler.",)

EXTRACTOR_CONFIG = "span_extractor.json"
EXTRACTOR_WEIGHTS = "span_extractor.safetensors"


class MRCReader(nn.Module):
    def __init__(self, encoder: nn.Module, extractor_hidden_size: int = 1024, dropout: float | None = None):
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        if dropout is None:  # follow the encoder's own dropout, as MPMRForWAE does
            dropout = getattr(encoder.config, "hidden_dropout_prob", 0.1)
        self.extractor_config = {"hidden_size": hidden, "extractor_hidden_size": extractor_hidden_size,
                                 "dropout": dropout}
        self.extractor = SpanExtractor(hidden, extractor_hidden_size, dropout)

    @property
    def config(self):
        return self.encoder.config

    def span_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        hidden = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
        return self.extractor(hidden)

    def save_pretrained(self, folder: str | Path) -> None:
        """The encoder as its own `save_pretrained` folder (loadable alone by AutoModel), the extractor
        beside it, so that `load_reader(folder)` restores both."""
        from safetensors.torch import save_file

        folder = Path(folder)
        self.encoder.save_pretrained(folder)
        (folder / EXTRACTOR_CONFIG).write_text(json.dumps(self.extractor_config, indent=2))
        save_file({k: v.detach().cpu().contiguous() for k, v in self.extractor.state_dict().items()},
                  str(folder / EXTRACTOR_WEIGHTS))

    @classmethod
    def from_pretrained(cls, folder: str | Path, trust_remote_code: bool = False) -> MRCReader:
        from safetensors.torch import load_file

        folder = Path(folder)
        cfg = json.loads((folder / EXTRACTOR_CONFIG).read_text())
        encoder = load_weights(AutoModel, folder, trust_remote_code)
        reader = cls(encoder, cfg["extractor_hidden_size"], cfg["dropout"])
        reader.extractor.load_state_dict(load_file(str(folder / EXTRACTOR_WEIGHTS)))
        return reader


def load_reader(path: str, extractor_hidden_size: int = 1024, trust_remote_code: bool = False) -> nn.Module:
    if (Path(path) / EXTRACTOR_CONFIG).exists():
        return MRCReader.from_pretrained(path, trust_remote_code)
    try:
        config = from_pretrained(AutoConfig, path, trust_remote_code)
    except OSError as e:  # transformers' way of saying "no such folder, and not on the hub (or offline)"
        raise FileNotFoundError(f"--init {path}: not a model folder nor a cached hub name "
                                f"({str(e).strip().splitlines()[0][:160]})") from None
    if getattr(config, "extractor_hidden_size", None) is not None and config.model_type == "xlm-roberta":
        return load_weights(MPMRForWAE, path)
    return MRCReader(load_weights(AutoModel, path, trust_remote_code), extractor_hidden_size)


def load_weights(model_class, path, trust_remote_code: bool = False, unused=ENCODER_UNUSED, new=ENCODER_NEW,
                 **kwargs):
    """`model_class.from_pretrained(path)` (through the remote-code check), with one warning line on
    stderr for checkpoint weights the model does not use or model weights the checkpoint lacks (left
    random), except those that start with a prefix in `unused` / `new`."""
    with without_load_report():
        model, info = from_pretrained(model_class, path, trust_remote_code, output_loading_info=True, **kwargs)
    surprises = {
        "checkpoint weights the model does not use": [k for k in info["unexpected_keys"] if not k.startswith(tuple(unused))],
        "model weights not in the checkpoint, left random": [k for k in info["missing_keys"] if not k.startswith(tuple(new))],
    }
    for what, keys in surprises.items():
        if keys:
            shown = ", ".join(sorted(keys)[:3]) + (", ..." if len(keys) > 3 else "")
            print(f"warning: --init {path}: {len(keys)} {what} ({shown})", file=sys.stderr)
    return model


def quiet_transformers_progress() -> None:
    """No "Loading weights" bar per from_pretrained: the commands show their own progress."""
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    disable_progress_bars()


# ---- the encoder's position limit ----

def position_limit(config) -> int | None:
    """Subwords the encoder has positions for (None: no absolute positions). XLM-R/RoBERTa number
    positions from padding_idx + 1, so its 514 positions take 512 subwords and a `--config tiny`
    model's 258 take 256."""
    positions = getattr(config, "max_position_embeddings", None)
    if positions is None:
        return None
    if config.model_type in ("xlm-roberta", "roberta", "camembert"):
        return positions - (config.pad_token_id + 1)
    return positions


def clamp_max_seq_len(requested: int, config, command: str) -> int:
    """--max_seq_len cut to the model's positions, with a one-line notice: a longer window fails deep in
    the embedding ("index 258 is out of bounds") after the model is loaded."""
    limit = position_limit(config)
    if limit is not None and requested > limit:
        print(f"{command}: --max_seq_len {requested} is more than the model's {limit} positions; using {limit}",
              file=sys.stderr)
        return limit
    return requested


def load_tokenizer(path: str, trust_remote_code: bool = False):
    try:
        tokenizer = from_pretrained(AutoTokenizer, path, trust_remote_code)
    except OSError as e:
        raise FileNotFoundError(f"--init {path}: no tokenizer beside the model ({str(e).strip().splitlines()[0][:160]})") from None
    if not tokenizer.is_fast:
        # MPMRCollator maps subwords to words with word_ids(), which only fast tokenizers have.
        raise ValueError(f"--init {path}: tokenizer {type(tokenizer).__name__} is not a fast tokenizer; "
                         "save a fast (tokenizer.json) tokenizer in the folder")
    return tokenizer
