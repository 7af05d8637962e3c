"""The training configuration every model shares, as a dataclass (docs/design.md §3).

Each model's recipe (training/recipes/<name>.py) subclasses it with its own fields and gives the
presets `tiny` (CPU, seconds), `base` and `large` (its paper's). The defaults here are an XLM-R base
encoder and mPMR's optimisation, the first model's; a recipe's presets set what its paper gives.
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
    dropout: float = 0.1

    # Input shape: subwords per sequence, specials included.
    max_seq_len: int = 512

    # Optimisation.
    batch_size: int = 32  # micro-batch per process
    grad_accum: int = 8  # effective batch = batch_size x grad_accum x processes
    lr: float = 1e-5
    # Peak rate of the parameters --init did not supply (new heads and tables); None: lr. Continued
    # pre-training at an encoder's small rate leaves fresh heads near their initialisation for many steps.
    new_params_lr: float | None = None
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
    # Ignore the rows' space flags (schema v2) and rebuild the running text by the script rule, as for
    # rows without them: the ablation of exact spacing (training/data/word_pieces.py).
    no_word_spacing: bool = False

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

