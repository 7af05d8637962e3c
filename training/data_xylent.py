"""Old path of XY-LENT's data and recipe (before issue 15's layout: training/data/xylent.py and
training/recipes/xylent.py), kept for benchmarks/xylent_throughput.py and for the copies of
models/xylent.py saved beside earlier runs' weights, which import it when loaded as remote code.
The hooks keep their old argument orders here. Delete it once nothing imports it."""
from training.data.xylent import *  # noqa: F403
from training.data.xylent import XY_MRTD_SCHEMA, XYBatches, collate, pair_key  # noqa: F401
from training.recipes import xylent as _recipe
from training.recipes.xylent import (CONFIGS, EXTRA_FLAGS, XYLentTrainConfig, after_step, collator,  # noqa: F401
                                     dro_update_steps, model_config)


def check_data(spec, data_dir):
    return _recipe.check_data(spec, None, data_dir)


def make_tokenizer(cfg, data_dir, spec):
    return _recipe.make_tokenizer(spec, cfg, data_dir)


def make_dataset(spec, data_dir, cfg, tokenizer, rank, world, start_batch):
    return _recipe.make_dataset(spec, cfg, data_dir, tokenizer, rank, world, start_batch)
