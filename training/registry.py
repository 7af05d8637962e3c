"""What differs between models, as classes: the loop in training/run.py is shared (STYLE.md, nanoGPT).

Each model is three files (docs/training.md, "Adding a model"):
  training/models/<name>.py    the model: config, PreTrainedModel classes, losses (safe beside weights)
  training/data/<name>.py      its data: Parquet rows -> batches of tensors (collator, and a stream if
                               the default one does not fit)
  training/recipes/<name>.py   its recipe: a `Recipe` subclass (config presets, flags, the model's own
                               steps) and `SPEC = TheRecipe()`
`get_spec(name)` imports the recipe lazily, so that `--help` and one model never pay for the others.

Methods take their arguments in one order: cfg, data_dir, model, tokenizer, dataset (each method the
ones it needs), then its own (rank, world, start_batch; name_or_path; folder; step, max_steps).
"""
from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from corpora.schemas import SPACING_COLUMNS
from training.config import TrainConfig
from training.data import ParquetBatches, check_shards, list_shards, read_metadata, read_table
from training.data.word_pieces import SpacedWords
from training.tokenizer import load_tokenizer, train_tiny_tokenizer

MODEL_NAMES = ("mpmr", "clism", "xylent")
TINY_TOKENIZER_ROWS = 20_000  # rows whose words train the on-the-fly SentencePiece model


def words_for_tokenizer(files: list[Path], columns: list[str], limit: int = TINY_TOKENIZER_ROWS) -> Iterable[SpacedWords]:
    """Each word column of the first rows, with its spacing column where the shards have one."""
    seen = 0
    for f in files:
        present = set(read_metadata(f).schema.to_arrow_schema().names)
        spacing = {c: SPACING_COLUMNS[c] for c in columns if SPACING_COLUMNS.get(c) in present}
        for row in read_table(f, [*columns, *spacing.values()]).to_pylist():
            for column in columns:
                yield SpacedWords(row[column], row[spacing[column]] if column in spacing else None)
            seen += 1
            if seen >= limit:
                return


class Recipe:
    """One model's recipe. A subclass sets the class attributes and the four model methods; the others
    have defaults for a model whose data is one Parquet folder of word rows, overridden where a model's
    data or output differ."""

    schema: pa.Schema  # the data job's contract (corpora/schemas.py), checked on every shard
    older_schemas: tuple = ()  # earlier versions of it that are still read
    columns: list[str]  # the Parquet columns the collator reads
    optional_columns: list[str] = []  # columns read when a shard has them (newer than older_schemas)
    word_columns: list[str]  # list<string> columns whose words train the tiny tokenizer
    configs: dict[str, TrainConfig]  # tiny, base, large: the model's TrainConfig subclass, preset
    # Model-only flags: name -> (type, help); each overrides the config field of the same name.
    extra_flags: dict[str, tuple] = {}

    # ---- the model: every recipe's own ----

    def build_random(self, cfg: TrainConfig, tokenizer):
        """A random encoder of the config's shape."""
        raise NotImplementedError

    def build_pretrained(self, cfg: TrainConfig, tokenizer, name_or_path: str):
        """The model from a from_pretrained backbone."""
        raise NotImplementedError

    def from_config(self, config: dict):
        """The model from its config dict, for resuming without the hub."""
        raise NotImplementedError

    def collator(self, cfg: TrainConfig, tokenizer):
        """The collate function: a list of rows -> a batch of tensors."""
        raise NotImplementedError

    # ---- data, tokenizer, output: defaults ----

    def make_tokenizer(self, cfg: TrainConfig, data_dir: str):
        if cfg.init:
            return load_tokenizer(cfg.init, cfg.trust_remote_code)
        return train_tiny_tokenizer(words_for_tokenizer(list_shards(data_dir), self.word_columns), cfg.vocab_size)

    def prepare_tokenizer(self, tokenizer):
        """The tokenizer as the model needs it, e.g. with a special token added."""
        return tokenizer

    def check_data(self, cfg: TrainConfig, data_dir: str) -> int:
        """The data's rows; fails fast on missing or foreign data."""
        return check_shards(list_shards(data_dir), self.schema, self.older_schemas)

    def check_eval_data(self, cfg: TrainConfig, data_dir: str, eval_dir: str) -> None:
        """Refuses --eval_data that cannot be read like --data (XY-LENT's rows are token ids of their own
        vocabulary); raises EvalDataError."""

    def make_dataset(self, cfg: TrainConfig, data_dir: str, tokenizer, rank: int, world: int, start_batch: int):
        """An endless stream of collated batches; `start_batch` batches already taken are skipped."""
        return ParquetBatches(list_shards(data_dir), cfg.batch_size, self.collator(cfg, tokenizer), seed=cfg.seed,
                              rank=rank, world_size=world, shuffle_buffer=cfg.shuffle_buffer, start_batch=start_batch,
                              columns=self.columns, optional_columns=self.optional_columns)

    def save_final(self, model, tokenizer, folder: Path) -> None:
        model.save_pretrained(folder)  # safetensors by default
        tokenizer.save_pretrained(folder)

    def after_step(self, model, dataset, step: int, max_steps: int) -> None:
        """Before the first batch and after every optimiser step: training signals back to the data
        stream (XY-LENT's DRO reweights language pairs by their losses)."""

    def min_seq_len(self, cfg: TrainConfig) -> tuple[int, str]:
        """(the smallest --max_seq_len a row fits in, why): refused before any work below it."""
        return 8, "special tokens and a few subwords of text"


ModelSpec = Recipe  # the name training.run and its callers use for a model's recipe


def get_spec(name: str) -> ModelSpec:
    if name not in MODEL_NAMES:
        raise ValueError(f"--model {name}: unknown; choose from {', '.join(MODEL_NAMES)}")
    return importlib.import_module(f"training.recipes.{name}").SPEC
