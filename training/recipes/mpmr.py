"""mPMR's recipe: Wiki Anchor Extraction on the wiki_mrc job's rows (model: training/models/mpmr.py,
data: training/data/mpmr.py).

The paper values (mPMR Appendix A.1, "More Implementation Details"): XLM-R backbone, AdamW, lr 1e-5,
effective batch 256 (base) and 80 (large) reached by gradient accumulation, 250,000 (base) and
100,000 (large) steps of continued pre-training, "the default learning rate schedule and dropout
settings used in XLM-R" (linear warm-up, here over 6% of the steps, then linear decay). Q = 50 and
C = 200 words are the data job's (pipelines/wiki_mrc.py); in subwords the query is cut at 128 and the
sequence at 512, the public PMR reference's limits.

Languages: the paper does not say how its 24 languages are mixed in a batch. Here each row is seen
once per epoch, so a language's share of the batches is its share of the rows (sampling by size),
and batches mix languages (rows are written in a seeded random order; training/data/__init__.py
draws across row groups).
"""
from __future__ import annotations

from dataclasses import dataclass

from transformers import XLMRobertaConfig

from corpora.schemas import MRC_SCHEMA, MRC_SCHEMA_V1
from training.config import TrainConfig
from training.data.mpmr import MPMRCollator
from training.models.mpmr import MPMRForWAE, build_config, from_pretrained_encoder
from training.new_parameters import mark_new_parameters
from training.registry import Recipe


@dataclass
class MPMRTrainConfig(TrainConfig):
    extractor_hidden_size: int = 1024  # the public PMR reference's FFN width
    max_query_tokens: int = 128  # query subwords kept (the PMR reference's limit)


CONFIGS: dict[str, MPMRTrainConfig] = {
    # A whole run on a CPU in seconds: random 2-layer encoder, tokenizer trained on the fly.
    "tiny": MPMRTrainConfig(
        init=None, hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=2000,
        extractor_hidden_size=128, dropout=0.0, batch_size=8, grad_accum=1, lr=1e-3, weight_decay=0.0,
        warmup_ratio=0.0, shuffle_buffer=64, num_workers=0, log_every=1, save_every=100,
        eval_every=50, eval_batches=20,
    ),
    # Appendix A.1: 250K steps at an effective batch of 256 (32 x 8 on one process) for base, 100K at
    # 80 (16 x 5) for large; lr 1e-5.
    "base": MPMRTrainConfig(init="xlm-roberta-base", batch_size=32, grad_accum=8, lr=1e-5, max_steps=250_000),
    "large": MPMRTrainConfig(
        init="xlm-roberta-large", hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096,
        batch_size=16, grad_accum=5, lr=1e-5, max_steps=100_000,
    ),
}

EXTRA_FLAGS = {
    "max_query_tokens": (int, "query subwords kept (paper: 128)"),
}


# ---- hooks (training/registry.py) ----

def model_config(cfg: MPMRTrainConfig, tokenizer) -> XLMRobertaConfig:
    return build_config(tokenizer, cfg.hidden_size, cfg.num_layers, cfg.num_heads, cfg.intermediate_size,
                        cfg.max_seq_len, cfg.extractor_hidden_size, cfg.dropout)


def build_random(cfg: MPMRTrainConfig, tokenizer) -> MPMRForWAE:
    return MPMRForWAE(model_config(cfg, tokenizer))


def build_pretrained(cfg: MPMRTrainConfig, tokenizer, name_or_path: str) -> MPMRForWAE:
    model, new = from_pretrained_encoder(name_or_path, cfg.extractor_hidden_size, cfg.dropout)
    return mark_new_parameters(model, new)


def from_config(config: dict) -> MPMRForWAE:
    return MPMRForWAE(XLMRobertaConfig.from_dict(config))


def collator(cfg: MPMRTrainConfig, tokenizer) -> MPMRCollator:
    return MPMRCollator(tokenizer, cfg.max_query_tokens, cfg.max_seq_len, use_spacing=not cfg.no_word_spacing)


def min_seq_len(cfg: MPMRTrainConfig) -> tuple[int, str]:
    # <s> query </s></s> context </s>, with at least one context subword (MPMRCollator's own rule).
    return cfg.max_query_tokens + 5, f"--max_query_tokens {cfg.max_query_tokens} + 4 special tokens + 1 context subword; or lower --max_query_tokens"


class MPMRRecipe(Recipe):
    schema = MRC_SCHEMA
    older_schemas = (MRC_SCHEMA_V1,)
    columns = ["query_words", "context_words", "answers", "answerable"]
    optional_columns = ["query_spaces", "context_spaces"]
    word_columns = ["query_words", "context_words"]
    configs = CONFIGS
    extra_flags = EXTRA_FLAGS
    build_random = staticmethod(build_random)
    build_pretrained = staticmethod(build_pretrained)
    from_config = staticmethod(from_config)
    collator = staticmethod(collator)
    min_seq_len = staticmethod(min_seq_len)


SPEC = MPMRRecipe()
