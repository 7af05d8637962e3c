"""What differs between models, as data: the loop in training/run.py is shared (STYLE.md, nanoGPT).

Each model is three files (docs/training.md, "Adding a model"):
  training/models/<name>.py    the model: config, PreTrainedModel classes, losses (safe beside weights)
  training/data/<name>.py      its data: Parquet rows -> batches of tensors (collator, and a stream if
                               the default one does not fit)
  training/recipes/<name>.py   its recipe: config presets, flags, hooks and `SPEC = ModelSpec(...)`
`get_spec(name)` imports the recipe lazily, so that `--help` and one model never pay for the others.

Hooks take their arguments in one order: spec, cfg, data_dir, model, tokenizer, dataset (each hook the
ones it needs), then its own (rank, world, start_batch; name_or_path; folder; step, max_steps).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from training.config import TrainConfig
from training.data import ParquetBatches, check_shards, list_shards, read_table
from training.tokenizer import load_tokenizer, train_tiny_tokenizer

MODEL_NAMES = ("mpmr", "clism", "xylent")
TINY_TOKENIZER_ROWS = 20_000  # rows whose words train the on-the-fly SentencePiece model


# ---- the default hooks: what a model whose data is one Parquet folder of word rows needs ----

def words_for_tokenizer(files: list[Path], columns: list[str], limit: int = TINY_TOKENIZER_ROWS) -> Iterable[list[str]]:
    seen = 0
    for f in files:
        for row in read_table(f, columns).to_pylist():
            for column in columns:
                yield row[column]
            seen += 1
            if seen >= limit:
                return


def default_tokenizer(spec: ModelSpec, cfg: TrainConfig, data_dir: str):
    if cfg.init:
        return load_tokenizer(cfg.init, cfg.trust_remote_code)
    return train_tiny_tokenizer(words_for_tokenizer(list_shards(data_dir), spec.word_columns), cfg.vocab_size)


def default_check_data(spec: ModelSpec, cfg: TrainConfig, data_dir: str) -> int:
    return check_shards(list_shards(data_dir), spec.schema)


def default_dataset(spec: ModelSpec, cfg: TrainConfig, data_dir: str, tokenizer, rank: int, world: int,
                    start_batch: int) -> ParquetBatches:
    """An endless stream of collated batches; `start_batch` batches already taken are skipped."""
    return ParquetBatches(list_shards(data_dir), cfg.batch_size, spec.collator(cfg, tokenizer), seed=cfg.seed,
                          rank=rank, world_size=world, shuffle_buffer=cfg.shuffle_buffer, start_batch=start_batch,
                          columns=spec.columns)


def default_save_final(model, tokenizer, folder: Path) -> None:
    model.save_pretrained(folder)  # safetensors by default
    tokenizer.save_pretrained(folder)


def same_tokenizer(tokenizer):
    return tokenizer


def any_seq_len(cfg: TrainConfig) -> tuple[int, str]:
    return 8, "special tokens and a few subwords of text"


def no_feedback(model, dataset, step: int, max_steps: int) -> None:
    pass


def any_eval_data(spec: ModelSpec, cfg: TrainConfig, data_dir: str, eval_dir: str) -> None:
    pass


@dataclass
class ModelSpec:
    build_random: Callable  # (cfg, tokenizer) -> model, a random encoder of the config's shape
    build_pretrained: Callable  # (cfg, tokenizer, name_or_path) -> model from a from_pretrained backbone
    from_config: Callable  # (model config dict) -> model, for resuming without the hub
    collator: Callable  # (cfg, tokenizer) -> collate function: list of rows -> batch of tensors
    schema: pa.Schema  # the data job's contract (corpora/schemas.py), checked on every shard
    columns: list[str]  # the Parquet columns the collator reads
    word_columns: list[str]  # list<string> columns whose words train the tiny tokenizer
    configs: dict[str, TrainConfig]  # tiny, base, large: the model's TrainConfig subclass, preset
    # Model-only flags: name -> (type, help); each overrides the config field of the same name.
    extra_flags: dict[str, tuple] = field(default_factory=dict)
    # Hooks with defaults; a model passes its own when its data or output differ.
    make_tokenizer: Callable = default_tokenizer  # (spec, cfg, data_dir) -> tokenizer
    check_data: Callable = default_check_data  # (spec, cfg, data_dir) -> rows; fails fast on missing or foreign data
    make_dataset: Callable = default_dataset  # (spec, cfg, data_dir, tokenizer, rank, world, start_batch) -> batches
    save_final: Callable = default_save_final  # (model, tokenizer, folder) -> None
    prepare_tokenizer: Callable = same_tokenizer  # (tokenizer) -> tokenizer, e.g. add a special token
    # (model, dataset, step, max_steps) -> None, before the first batch and after every optimiser step:
    # training signals back to the data stream (XY-LENT's DRO reweights language pairs by their losses).
    after_step: Callable = no_feedback
    # (spec, cfg, data_dir, eval_dir) -> None: refuses --eval_data that cannot be read like --data
    # (XY-LENT's rows are token ids of their own vocabulary); raises EvalDataError.
    check_eval_data: Callable = any_eval_data
    # (cfg) -> (the smallest --max_seq_len a row fits in, why): refused before any work below it.
    min_seq_len: Callable = any_seq_len


def get_spec(name: str) -> ModelSpec:
    if name not in MODEL_NAMES:
        raise ValueError(f"--model {name}: unknown; choose from {', '.join(MODEL_NAMES)}")
    return importlib.import_module(f"training.recipes.{name}").SPEC
