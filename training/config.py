"""Training configurations as dataclasses: `tiny` (CPU, seconds), `base` and `large` (the paper's).

The paper values (mPMR Appendix A.1, "More Implementation Details"): XLM-R backbone, AdamW, lr 1e-5,
effective batch 256 (base) and 80 (large) reached by gradient accumulation, 250,000 (base) and
100,000 (large) steps of continued pre-training, "the default learning rate schedule and dropout
settings used in XLM-R" (linear warm-up, here over 6% of the steps, then linear decay). Q = 50 and
C = 200 words are the data job's (pipelines/wiki_mrc.py); in subwords the query is cut at 128 and the
sequence at 512, the public PMR reference's limits.

Languages: the paper does not say how its 24 languages are mixed in a batch. Here each row is seen
once per epoch, so a language's share of the batches is its share of the rows (sampling by size),
and batches mix languages (rows are written in a seeded random order; training/data.py draws across
row groups).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass
class TrainConfig:
    # Backbone: a `from_pretrained` name or local path; None builds a random XLM-R-shaped encoder
    # of the sizes below with a SentencePiece tokenizer trained on the data (tiny only).
    init: str | None = "xlm-roberta-base"
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    vocab_size: int = 2000  # tiny tokenizer only; a pretrained backbone brings its own
    extractor_hidden_size: int = 1024  # the public PMR reference's FFN width
    dropout: float = 0.1

    # Input shape (paper defaults).
    max_query_tokens: int = 128
    max_seq_len: int = 512

    # Optimisation.
    batch_size: int = 32  # micro-batch per process
    grad_accum: int = 8  # 32 x 8 = 256, the paper's effective batch for base on one process
    lr: float = 1e-5
    weight_decay: float = 0.01
    adam_betas: tuple[float, float] = (0.9, 0.98)  # XLM-R's
    warmup_ratio: float = 0.06
    warmup_steps: int | None = None  # overrides warmup_ratio when set (CLISM: 1.5K, XY-LENT: 10K)
    adam_eps: float = 1e-8
    grad_clip: float = 1.0
    epochs: float = 3.0  # used only when max_steps is not given (the tiny config; the paper counts steps)
    max_steps: int | None = None

    # Data and bookkeeping.
    shuffle_buffer: int = 10_000
    num_workers: int = 2
    log_every: int = 10
    save_every: int = 1000
    keep_checkpoints: int = 2
    seed: int = 0

    # Held-out evaluation (training/evaluation.py): every eval_every steps (0: never), on at most
    # eval_batches batches per pass, so that a pass costs a bounded share of the run.
    eval_every: int = 1000
    eval_batches: int = 50

    # Reliability and safety.
    max_nonfinite_skips: int = 0  # optimiser steps with a NaN/inf loss or gradient skipped before the run stops
    trust_remote_code: bool = False  # let --init run the Python code it ships (training/remote_code.py)

    def replace(self, **changes) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


CONFIGS: dict[str, TrainConfig] = {
    # A whole run on a CPU in seconds: random 2-layer encoder, tokenizer trained on the fly.
    "tiny": TrainConfig(
        init=None, hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=2000,
        extractor_hidden_size=128, dropout=0.0, batch_size=8, grad_accum=1, lr=1e-3, weight_decay=0.0,
        warmup_ratio=0.0, shuffle_buffer=64, num_workers=0, log_every=1, save_every=100,
        eval_every=50, eval_batches=20,
    ),
    # Appendix A.1: 250K steps at an effective batch of 256 (base), 100K at 80 (large).
    "base": TrainConfig(init="xlm-roberta-base", max_steps=250_000),
    "large": TrainConfig(
        init="xlm-roberta-large", hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096,
        batch_size=16, grad_accum=5, max_steps=100_000,
    ),
}
