"""What differs between models, as data: the loop in training/run.py is shared (STYLE.md, nanoGPT).

Each model module (`training/models/<name>.py`) defines `SPEC = ModelSpec(...)`; `get_spec(name)`
imports it lazily so that `--help` and one model never pay for importing the others.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from training.config import CONFIGS, TrainConfig
from training.data import ParquetBatches, check_shards, list_shards, read_table
from training.tokenizer import load_tokenizer, train_tiny_tokenizer

MODEL_NAMES = ("mpmr", "clism", "xylent")
TINY_TOKENIZER_ROWS = 20_000  # rows whose words train the on-the-fly SentencePiece model


@dataclass
class ModelSpec:
    build_random: Callable  # (cfg, tokenizer) -> model, a random encoder of the config's shape
    build_pretrained: Callable  # (cfg, name_or_path, tokenizer) -> model from a from_pretrained backbone
    from_config: Callable  # (model config dict) -> model, for resuming without the hub
    collator: Callable  # (cfg, tokenizer) -> collate function: list of rows -> batch of tensors
    schema: pa.Schema  # the data job's contract (corpora/schemas.py), checked on every shard
    columns: list[str]  # the Parquet columns the collator reads
    word_columns: list[str]  # list<string> columns whose words train the tiny tokenizer
    configs: dict[str, TrainConfig] = field(default_factory=lambda: dict(CONFIGS))
    # Model-only flags: name -> (type, help); each overrides the config field of the same name.
    extra_flags: dict[str, tuple] = field(default_factory=dict)
    # Hooks with defaults below; a model overrides one when its data or output differ.
    make_tokenizer: Callable | None = None  # (cfg, data_dir, spec) -> tokenizer
    check_data: Callable | None = None  # (spec, data_dir) -> rows; fails fast on missing or foreign data
    make_dataset: Callable | None = None  # (spec, data_dir, cfg, tokenizer, rank, world, start_batch) -> batches
    save_final: Callable | None = None  # (model, tokenizer, folder) -> None
    prepare_tokenizer: Callable | None = None  # (tokenizer) -> tokenizer, e.g. add a special token
    # (model, dataset, step, max_steps) -> None, before the first batch and after every optimiser step:
    # training signals back to the data stream (XY-LENT's DRO reweights language pairs by their losses).
    after_step: Callable | None = None


def get_spec(name: str) -> ModelSpec:
    if name not in MODEL_NAMES:
        raise ValueError(f"--model {name}: unknown; choose from {', '.join(MODEL_NAMES)}")
    return importlib.import_module(f"training.models.{name}").SPEC


def words_for_tokenizer(files: list[Path], columns: list[str], limit: int = TINY_TOKENIZER_ROWS) -> Iterable[list[str]]:
    seen = 0
    for f in files:
        for row in read_table(f, columns).to_pylist():
            for column in columns:
                yield row[column]
            seen += 1
            if seen >= limit:
                return


def default_tokenizer(cfg: TrainConfig, data_dir: str, spec: ModelSpec):
    if cfg.init:
        return load_tokenizer(cfg.init, cfg.trust_remote_code)
    return train_tiny_tokenizer(words_for_tokenizer(list_shards(data_dir), spec.word_columns), cfg.vocab_size)


def default_check_data(spec: ModelSpec, data_dir: str) -> int:
    return check_shards(list_shards(data_dir), spec.schema)


def default_dataset(spec: ModelSpec, data_dir: str, cfg: TrainConfig, tokenizer, rank: int, world: int,
                    start_batch: int) -> ParquetBatches:
    """An endless stream of collated batches; `start_batch` batches already taken are skipped."""
    return ParquetBatches(list_shards(data_dir), cfg.batch_size, spec.collator(cfg, tokenizer), seed=cfg.seed,
                          rank=rank, world_size=world, shuffle_buffer=cfg.shuffle_buffer, start_batch=start_batch,
                          columns=spec.columns)


def default_save_final(model, tokenizer, folder: Path) -> None:
    model.save_pretrained(folder)  # safetensors by default
    tokenizer.save_pretrained(folder)
