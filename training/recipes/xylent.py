"""XY-LENT's recipe: ELECTRA MRTD + TRTD pre-training on the xy_corpus job's output (model:
training/models/xylent.py, data: training/data/xylent.py). Shapes from XY-LENT Table 8, optimisation
from Table 9.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from corpora.schemas import XY_MRTD_SCHEMA
from training.config import TrainConfig
from training.data.xylent import (XYBatches, check_folder, collate, mono_rows_by_language, read_pair_probs, shards,
                                  smoothed_keep_rates)
from training.data.xylent_vocabulary import data_tokenizer, vocabulary_file
from training.models.xylent import XYLentConfig, XYLentForPreTraining
from training.new_parameters import mark_new_parameters
from training.registry import Recipe


def _on_off(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected 1/0, true/false, on/off, got {value!r}")


_on_off.__name__ = "on/off"  # argparse names the type in its error message


@dataclass
class XYLentTrainConfig(TrainConfig):
    """TrainConfig and XY-LENT's own fields."""

    # None: pre-training from scratch; a saved XY-LENT final/ folder continues it; an XLM-R-style
    # encoder folder (XLMRobertaModel, e.g. training.convert_e5's) initialises D and G from it.
    init: str | None = None
    generator_layers: int = 4  # XLM-E base: a 4-layer generator of D's width
    generator_hidden_size: int | None = None  # None: D's width
    disc_weight: float = 50.0  # λ of L_G + λ·L_D (ELECTRA)
    mask_prob: float = 0.15
    rel_pos_buckets: int = 32  # T5's bidirectional defaults; the papers do not give theirs for text
    rel_pos_max_distance: int = 128
    trtd_batch_tokens: int | None = None  # padded tokens per TRTD batch; None: batch_size x max_seq_len
    trtd_pool_rows: int = 1000  # rows of one pair sorted by length together (the length buckets)
    dro: bool = False
    dro_rho: float = 0.1  # radius of the χ² ball around pair_probs (Eq. 3); the paper does not give it
    dro_resamples: int = 10  # "resample 10 times throughout the training" (§6.4)
    # XY-LENT §4 follows XLM-E's pre-training recipe, which samples monolingual text by language with
    # p ∝ n^α and α = 0.7 (XLM-E §4.1, as InfoXLM); 1.0 keeps the corpus's own proportions.
    mono_alpha: float = 0.7


# Table 8 (discriminator shapes) and Table 9 (optimisation). Batch: 8192 MRTD sequences of 512 per
# step for base (4M tokens per task); one process gets it from 32 x 512 micro-batches (half of them
# MRTD); with N processes divide --grad_accum by N.
CONFIGS: dict[str, XYLentTrainConfig] = {
    "tiny": XYLentTrainConfig(
        hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, generator_layers=1, dropout=0.0,
        max_seq_len=128, batch_size=8, grad_accum=1, lr=1e-3, weight_decay=0.0, warmup_ratio=0.0, warmup_steps=0,
        adam_eps=1e-6, grad_clip=2.0, shuffle_buffer=64, num_workers=0, log_every=1, save_every=100,
        trtd_pool_rows=64, rel_pos_buckets=16, rel_pos_max_distance=64,
    ),
    "base": XYLentTrainConfig(
        hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072, max_seq_len=512, batch_size=32,
        grad_accum=512, lr=8e-4, weight_decay=0.01, adam_betas=(0.9, 0.98), adam_eps=1e-6, warmup_steps=10_000,
        grad_clip=2.0, max_steps=125_000,
    ),
    "large": XYLentTrainConfig(
        hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096, generator_layers=6,
        max_seq_len=512, batch_size=16, grad_accum=256, lr=2e-4, weight_decay=0.01, adam_betas=(0.9, 0.98),
        adam_eps=1e-6, warmup_steps=10_000, grad_clip=1.0, max_steps=500_000,
    ),
}

EXTRA_FLAGS = {
    "generator_layers": (int, "generator depth (XLM-E base: 4)"),
    "generator_hidden_size": (int, "generator width (default: the discriminator's)"),
    "disc_weight": (float, "λ in L_gen + λ·L_disc (ELECTRA: 50)"),
    "mask_prob": (float, "share of tokens masked for the generator (15%%; <s> never)"),
    "trtd_batch_tokens": (int, "padded tokens per TRTD batch (default: batch_size x max_seq_len)"),
    "trtd_pool_rows": (int, "rows of one language pair sorted by length together to form TRTD batches"),
    "dro": (_on_off, "1: resample TRTD language pairs by the χ²-ball best response to their losses (Eq. 3)"),
    "dro_rho": (float, "radius ρ of the χ² ball around pair_probs"),
    "dro_resamples": (int, "DRO updates of the pair weights over the run (paper: 10)"),
    "mono_alpha": (float, "MRTD language sampling q ∝ n^α (XLM-E: 0.7; 1: the corpus's proportions)"),
}


# ---- hooks (training/registry.py) ----

def make_tokenizer(cfg: XYLentTrainConfig, data_dir: str):
    """--init's tokenizer, else the one whose ids the rows are: the vocap model as a fast tokenizer with
    the same ids (the code path of pipelines/vocap.py), or the encoder's tokenizer copied beside the rows."""
    from training.tokenizer import load_tokenizer

    if cfg.init:
        return load_tokenizer(cfg.init, cfg.trust_remote_code)
    return data_tokenizer(data_dir)


def check_data(cfg: XYLentTrainConfig, data_dir: str) -> int:
    rows = check_folder(data_dir)
    if cfg.init:
        check_init_vocabulary(cfg, data_dir)
    return rows


def check_init_vocabulary(cfg: XYLentTrainConfig, data_dir: str) -> None:
    """The rows' ids must mean the pieces --init's embedding rows mean: rows of a vocap model fed to
    e5-small would train XLM-R's rows for other pieces without a word."""
    from training.run_folder import RunFolderError
    from training.tokenizer import load_tokenizer

    ours = load_tokenizer(cfg.init, cfg.trust_remote_code).get_vocab()
    if data_tokenizer(data_dir).get_vocab() != ours:
        raise RunFolderError(f"--data {data_dir}: its token ids are from {vocabulary_file(data_dir).name} beside the rows, "
                             f"another vocabulary than --init {cfg.init}'s tokenizer ({len(ours):,} tokens); make the "
                             f"data with `python -m pipelines.xy_corpus --vocab {cfg.init}`")


def check_eval_data(cfg: XYLentTrainConfig, data_dir: str, eval_dir: str) -> None:
    """Held-out rows are token ids: they mean the same only under the same vocabulary (the same vocap
    model, or the same encoder's tokenizer). A folder made with another (the bundled sample's 2,000
    pieces against a real 8,000) was read without a word."""
    from training.evaluation import EvalDataError

    try:
        theirs = vocabulary_file(eval_dir)
    except FileNotFoundError:
        raise EvalDataError(f"--eval_data {eval_dir}: no spm.model or tokenizer/ beside its shards; give a "
                            "pipelines.xy_corpus --output folder") from None
    ours = vocabulary_file(data_dir)
    if theirs.name != ours.name or theirs.read_bytes() != ours.read_bytes():
        raise EvalDataError(f"--eval_data {eval_dir}: made with another vocabulary than --data {data_dir} "
                            f"({theirs.parent.name}/{theirs.name} and {ours.parent.name}/{ours.name} differ), so its "
                            "token ids mean other pieces; make both with the same pipelines.xy_corpus --vocab")


def model_config(cfg: XYLentTrainConfig, tokenizer) -> XYLentConfig:
    return XYLentConfig(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden_size, num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads, intermediate_size=cfg.intermediate_size,
        max_position_embeddings=cfg.max_seq_len, hidden_dropout_prob=cfg.dropout,
        attention_probs_dropout_prob=cfg.dropout, rel_pos_buckets=cfg.rel_pos_buckets,
        rel_pos_max_distance=cfg.rel_pos_max_distance, generator_layers=cfg.generator_layers,
        generator_hidden_size=cfg.generator_hidden_size, mask_prob=cfg.mask_prob, disc_weight=cfg.disc_weight,
        dro=cfg.dro, dro_rho=cfg.dro_rho, dro_resamples=cfg.dro_resamples,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, mask_token_id=tokenizer.mask_token_id, token_count=len(tokenizer),
    )


def build_random(cfg: XYLentTrainConfig, tokenizer) -> XYLentForPreTraining:
    return XYLentForPreTraining(model_config(cfg, tokenizer))


def build_pretrained(cfg: XYLentTrainConfig, tokenizer, name_or_path: str) -> XYLentForPreTraining:
    """A saved XY-LENT final/ folder (D, and G in generator/), continued with this run's DRO settings;
    or an XLM-R-style encoder folder, D and G initialised from it (xylent_from_encoder.py)."""
    from training.models import xylent_from_encoder

    if xylent_from_encoder.encoder_type(name_or_path):
        return build_from_encoder(cfg, tokenizer, name_or_path)
    model = XYLentForPreTraining.from_parts(name_or_path)
    model.config.dro, model.config.dro_rho, model.config.dro_resamples = cfg.dro, cfg.dro_rho, cfg.dro_resamples
    return model


# The preset's fields an encoder's config replaces (its shape); the preset's training fields stay.
ENCODER_SHAPE_FIELDS = ("hidden_size", "num_layers", "num_heads", "intermediate_size", "vocab_size")


def build_from_encoder(cfg: XYLentTrainConfig, tokenizer, path: str) -> XYLentForPreTraining:
    from training.models import xylent_from_encoder
    from training.run_folder import RunFolderError

    try:
        model = xylent_from_encoder.from_encoder(
            path, tokenizer, max_seq_len=cfg.max_seq_len, dropout=cfg.dropout, generator_layers=cfg.generator_layers,
            generator_hidden_size=cfg.generator_hidden_size, rel_pos_buckets=cfg.rel_pos_buckets,
            rel_pos_max_distance=cfg.rel_pos_max_distance, mask_prob=cfg.mask_prob, disc_weight=cfg.disc_weight,
            dro=cfg.dro, dro_rho=cfg.dro_rho, dro_resamples=cfg.dro_resamples)
    except xylent_from_encoder.EncoderInitError as error:
        raise RunFolderError(str(error)) from None
    c = model.config
    print(f"--init {path}: discriminator = the encoder ({c.num_hidden_layers} layers x {c.hidden_size}, "
          f"{c.num_attention_heads} heads, FFN {c.intermediate_size}, {c.vocab_size:,} embedding rows; these replace the "
          f"preset's {', '.join(ENCODER_SHAPE_FIELDS)}), relative position bias starting at zero, new RTD head; "
          f"generator = its first {c.generator_layers} layers, shared embeddings, new MLM head", file=sys.stderr)
    return mark_new_parameters(model, xylent_from_encoder.new_parameter_names(model))


def from_config(config: dict) -> XYLentForPreTraining:
    return XYLentForPreTraining(XYLentConfig.from_dict(config))


def collator(cfg: XYLentTrainConfig, tokenizer):
    """MRTD rows (the stream collates TRTD batches itself; held-out evaluation uses this one)."""
    return lambda rows: collate(rows, max_len=cfg.max_seq_len)


def make_dataset(cfg: XYLentTrainConfig, data_dir: str, tokenizer, rank: int, world: int, start_batch: int) -> XYBatches:
    names, probs = read_pair_probs(data_dir)
    keep = None if cfg.mono_alpha == 1 else smoothed_keep_rates(mono_rows_by_language(data_dir), cfg.mono_alpha)
    return XYBatches(shards(data_dir, "mrtd"), shards(data_dir, "trtd"), names, probs, cfg.batch_size,
                     cfg.max_seq_len, cfg.trtd_batch_tokens, cfg.trtd_pool_rows, cfg.seed, rank, world,
                     cfg.shuffle_buffer, start_batch, mono_keep=keep)


def save_final(model: XYLentForPreTraining, tokenizer, folder) -> None:
    model.save_parts(folder)
    tokenizer.save_pretrained(folder)
    tokenizer.save_pretrained(folder / "generator")


def dro_update_steps(max_steps: int, resamples: int) -> set[int]:
    """The steps after which the pair weights are re-estimated: `resamples` evenly spaced updates
    strictly inside the run (one at the very end would never be used)."""
    interval = max(1, max_steps // (resamples + 1))
    return {k * interval for k in range(1, resamples + 1) if k * interval < max_steps}


def after_step(model, dataset: XYBatches, step: int, max_steps: int) -> None:
    """Called before the first batch (step = 0, or the resumed step) and after every optimiser step:
    the model learns the pair list from the data, and with DRO its best-response weights go to the
    data stream (restored ones too, on resume)."""
    model.set_pairs(dataset.pair_names, dataset.pair_probs)
    if not model.config.dro:
        return
    if step in dro_update_steps(max_steps, model.config.dro_resamples):
        weights = model.dro_update()
        print(f"step {step}: DRO pair weights " + " ".join(f"{n}={w:.3f}" for n, w in zip(model.config.pair_names, weights.tolist())),
              file=sys.stderr)
    dataset.set_pair_weights(model.dro_weights)


class XYLentRecipe(Recipe):
    schema = XY_MRTD_SCHEMA
    columns = ["input_ids"]
    word_columns: list[str] = []
    configs = CONFIGS
    extra_flags = EXTRA_FLAGS
    build_random = staticmethod(build_random)
    build_pretrained = staticmethod(build_pretrained)
    from_config = staticmethod(from_config)
    collator = staticmethod(collator)
    make_tokenizer = staticmethod(make_tokenizer)
    check_data = staticmethod(check_data)
    check_eval_data = staticmethod(check_eval_data)
    make_dataset = staticmethod(make_dataset)
    save_final = staticmethod(save_final)
    after_step = staticmethod(after_step)


SPEC = XYLentRecipe()
