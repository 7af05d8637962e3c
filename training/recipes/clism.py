"""CLISM + CACR + MLM's recipe on the clism_pairs job's rows (model: training/models/clism.py, data:
training/data/clism.py). Training settings from the CLISM paper §4.2: Adam (so no weight decay),
lr 1e-5, 1.5K warm-up steps, batch 64, 15K steps, XLM-R base.
"""
from __future__ import annotations

from dataclasses import dataclass

from transformers import XLMRobertaConfig

from corpora.schemas import CLISM_SCHEMA, CLISM_SCHEMA_V1
from training.config import TrainConfig
from training.new_parameters import mark_new_parameters
from training.data.clism import QUE_TOKEN, CLISMCollator, add_que_token, with_que_embedding
from training.models.clism import TAU_READINGS, CLISMForPreTraining
from training.registry import Recipe


@dataclass
class CLISMTrainConfig(TrainConfig):
    max_seq_len: int = 256  # "total max input sequence length is set to 256"
    max_sentence_tokens: int = 128  # "the max length of each sentence is set to 128"
    spans_per_pair: int = 0  # 0: every span of the row becomes a [QUE] (the paper masks "all selected spans")
    span_labels: str | None = None  # comma-separated spaCy labels kept as questions; None: all
    mlm_probability: float = 0.15
    cacr_temperature: float = 20.0  # "τ in Eq. 7 is set to 20"
    cacr_tau_reading: str = "scale"
    no_cacr: bool = False
    no_mlm: bool = False


CONFIGS: dict[str, CLISMTrainConfig] = {
    "tiny": CLISMTrainConfig(
        init=None, hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=2000,
        dropout=0.0, batch_size=8, grad_accum=1, lr=1e-3, weight_decay=0.0, warmup_steps=0,
        max_steps=100, shuffle_buffer=64, num_workers=0, log_every=1, save_every=100,
    ),
    "base": CLISMTrainConfig(init="xlm-roberta-base", batch_size=64, grad_accum=1, lr=1e-5, weight_decay=0.0,
                             warmup_steps=1500, max_steps=15_000),
    # Not in the paper (base only): the same recipe on XLM-R large, batch 64 reached by accumulation.
    "large": CLISMTrainConfig(
        init="xlm-roberta-large", hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096,
        batch_size=16, grad_accum=4, lr=1e-5, weight_decay=0.0, warmup_steps=1500, max_steps=15_000,
    ),
}

EXTRA_FLAGS = {
    "max_sentence_tokens": (int, "subwords kept per sentence, source and target each (paper: 128)"),
    "spans_per_pair": (int, "spans of a pair turned into [QUE] questions, chosen by a generator seeded "
                            "with (seed, pair id); 0 = all (paper)"),
    "span_labels": (str, "comma-separated span labels kept as questions, e.g. PERSON,ORG,GPE (default: all)"),
    "mlm_probability": (float, "share of eligible tokens predicted by MLM (paper: 0.15, BERT's 80/10/10)"),
    "cacr_temperature": (float, "τ of CACR Eq. 7 (paper: 20)"),
    "cacr_tau_reading": (str, "how τ enters Eq. 7: 'scale' = cos·τ (default; trains) or 'divide' = "
                              "cos/τ (the formula as printed; stays near 3·log B, see docs/clism_model.md)"),
    "no_cacr": (bool, "drop L_cacr and the second pass (the paper's ablation)"),
    "no_mlm": (bool, "drop L_mlm (the paper's ablation)"),
}


# ---- hooks (training/registry.py) ----

def loss_settings(cfg: CLISMTrainConfig) -> dict:
    """The loss switches the model reads from its config (so that they travel with saved weights)."""
    if cfg.cacr_tau_reading not in TAU_READINGS:
        raise ValueError(f"--cacr_tau_reading {cfg.cacr_tau_reading}: choose from {', '.join(TAU_READINGS)}")
    return {"cacr_temperature": cfg.cacr_temperature, "cacr_tau_reading": cfg.cacr_tau_reading,
            "use_cacr": not cfg.no_cacr, "use_mlm": not cfg.no_mlm}


def model_config(cfg: CLISMTrainConfig, tokenizer) -> XLMRobertaConfig:
    """A random XLM-R-shaped encoder's config (the `tiny` setting); the vocabulary includes [QUE]."""
    return XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        intermediate_size=cfg.intermediate_size,
        max_position_embeddings=cfg.max_seq_len + 2,  # XLM-R positions start after the padding index
        hidden_dropout_prob=cfg.dropout,
        attention_probs_dropout_prob=cfg.dropout,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        que_token_id=tokenizer.convert_tokens_to_ids(QUE_TOKEN),
        **loss_settings(cfg),
    )


def build_random(cfg: CLISMTrainConfig, tokenizer) -> CLISMForPreTraining:
    return CLISMForPreTraining(model_config(cfg, tokenizer))


def build_pretrained(cfg: CLISMTrainConfig, tokenizer, name_or_path: str) -> CLISMForPreTraining:
    """Encoder and LM head from any XLM-R checkpoint (`roberta.*`, `lm_head.*`), or a saved CLISM model
    with its W_s, W_e; this run's loss settings (flags) win over a saved model's."""
    config = XLMRobertaConfig.from_pretrained(name_or_path)
    for key, value in loss_settings(cfg).items():
        setattr(config, key, value)
    model, loading = CLISMForPreTraining.from_pretrained(name_or_path, config=config, output_loading_info=True)
    return mark_new_parameters(with_que_embedding(model, tokenizer), loading["missing_keys"])


def from_config(config: dict) -> CLISMForPreTraining:
    return CLISMForPreTraining(XLMRobertaConfig.from_dict(config))


def collator(cfg: CLISMTrainConfig, tokenizer) -> CLISMCollator:
    return CLISMCollator(tokenizer, cfg.max_sentence_tokens, cfg.max_seq_len, cfg.spans_per_pair, cfg.span_labels,
                         cfg.mlm_probability, mlm=not cfg.no_mlm, cacr=not cfg.no_cacr, seed=cfg.seed,
                         use_spacing=not cfg.no_word_spacing)


class CLISMRecipe(Recipe):
    schema = CLISM_SCHEMA
    older_schemas = (CLISM_SCHEMA_V1,)
    columns = ["id", "src_words", "tgt_words", "spans"]
    optional_columns = ["src_spaces", "tgt_spaces"]
    word_columns = ["src_words", "tgt_words"]
    configs = CONFIGS
    extra_flags = EXTRA_FLAGS
    build_random = staticmethod(build_random)
    build_pretrained = staticmethod(build_pretrained)
    from_config = staticmethod(from_config)
    collator = staticmethod(collator)
    prepare_tokenizer = staticmethod(add_que_token)


SPEC = CLISMRecipe()
