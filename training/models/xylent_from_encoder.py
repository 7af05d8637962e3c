"""XY-LENT initialised from an XLM-R-style encoder (an XLMRobertaModel or RobertaModel folder, such as
`python -m training.convert_e5`'s multilingual-e5-small): continued pre-training of that encoder.

The discriminator D takes every tensor of the encoder, so that at step 0 D's encoder computes the
encoder's last_hidden_state on every real token:
- both are post-LayerNorm Transformers (LayerNorm after each residual sum, exact-erf GELU, attention
  scaled by 1/√head_dim): layer for layer, q/k/v stacked into one qkv projection;
- XLM-R numbers positions from padding_idx + 1 (fairseq) and adds token_type_embeddings[0] to every
  token (one segment); XY-LENT numbers them from 0 and has no token types, so its position row i is
  XLM-R's row i + padding_idx + 1 plus the type-0 row. Padding gets other positions than in XLM-R,
  but padding is masked out of attention and of every loss;
- the gated relative position bias is new: its bucket table starts at zero, so that it adds nothing
  whatever the gates (which start as XY-LENT's own); its gradient is the gate times the attention
  logits' gradient, so it learns from the first step;
- a pooler, if the folder has one, is not used (XY-LENT has none); the RTD head is new.

The generator G (the paper's is a smaller encoder trained from scratch with D; an encoder to continue
has no generator, and multilingual-e5 no MLM head): the encoder's first --generator_layers layers,
D's width, the word embeddings shared with D (ELECTRA), its own copies of the position embeddings
and the embedding LayerNorm, and a new MLM head (dense + LayerNorm at their initialisation, bias
zero) whose output layer is the shared embedding matrix. docs/xylent.md says why.

Shapes (width, depth, heads, FFN, vocabulary rows, positions, LayerNorm ε) are the encoder's; the
--config preset's hidden_size, num_layers, num_heads and intermediate_size are not used.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

from training.models.xylent import XYLentConfig, XYLentForPreTraining, XYLentModel

ENCODER_TYPES = ("xlm-roberta", "roberta")  # fairseq positions from padding_idx + 1, post-LN, one segment
_LAYER = {  # XLMRobertaModel name under encoder.layer.{i}. -> XYLentModel name under layers.{i}.
    "attention.output.dense": "attention.out", "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "ffn.0", "output.dense": "ffn.2", "output.LayerNorm": "ffn_norm",
}
UNUSED = ("pooler.", "embeddings.position_ids", "embeddings.token_type_ids")  # no weights of the encoder's function


class EncoderInitError(ValueError):
    """The encoder folder cannot initialise XY-LENT as asked: one line saying what to change."""


def encoder_type(path: str) -> str | None:
    """The model_type of a local encoder folder this module initialises from, else None."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return None
    try:
        model_type = json.loads(config.read_text()).get("model_type")
    except (OSError, ValueError):
        return None
    return model_type if model_type in ENCODER_TYPES else None


def position_offset(encoder_config) -> int:
    return encoder_config.pad_token_id + 1


def xylent_config(encoder_config, tokenizer, *, max_seq_len: int, dropout: float, generator_layers: int,
                  generator_hidden_size: int | None, **fields) -> XYLentConfig:
    """D's config: the encoder's shapes, this run's training fields (`fields`: rel_pos_buckets,
    mask_prob, disc_weight, dro...), the tokenizer's special ids. Raises EncoderInitError on what
    cannot be honoured."""
    e = encoder_config
    where = f"--init {getattr(e, '_name_or_path', '') or 'encoder'}"
    if e.hidden_act not in ("gelu",):
        raise EncoderInitError(f"{where}: hidden_act {e.hidden_act!r}; XY-LENT's layers use the exact GELU")
    if getattr(e, "position_embedding_type", "absolute") != "absolute":
        raise EncoderInitError(f"{where}: position_embedding_type {e.position_embedding_type!r}; only absolute positions map")
    positions = e.max_position_embeddings - position_offset(e)
    if max_seq_len > positions:
        raise EncoderInitError(f"--max_seq_len {max_seq_len}: the encoder has {positions} positions; give --max_seq_len {positions} or less")
    if not 1 <= generator_layers <= e.num_hidden_layers:
        raise EncoderInitError(f"--generator_layers {generator_layers}: the generator is the encoder's first layers, "
                               f"so 1 to {e.num_hidden_layers}")
    if generator_hidden_size not in (None, e.hidden_size):
        raise EncoderInitError(f"--generator_hidden_size {generator_hidden_size}: a generator made of the encoder's "
                               f"layers has its width, {e.hidden_size}; leave the flag out")
    if len(tokenizer) > e.vocab_size:
        raise EncoderInitError(f"{where}: its tokenizer has {len(tokenizer)} tokens and its embedding {e.vocab_size} rows")
    if tokenizer.pad_token_id != e.pad_token_id:
        raise EncoderInitError(f"{where}: the tokenizer's <pad> is {tokenizer.pad_token_id}, the encoder's {e.pad_token_id}")
    return XYLentConfig(
        vocab_size=e.vocab_size, hidden_size=e.hidden_size, num_hidden_layers=e.num_hidden_layers,
        num_attention_heads=e.num_attention_heads, intermediate_size=e.intermediate_size,
        max_position_embeddings=positions, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
        layer_norm_eps=e.layer_norm_eps, initializer_range=e.initializer_range, generator_layers=generator_layers,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        mask_token_id=tokenizer.mask_token_id, token_count=len(tokenizer), **fields)


def xylent_state(encoder_state: dict[str, torch.Tensor], encoder_config, layers: int) -> dict[str, torch.Tensor]:
    """The first `layers` layers and the embeddings of an XLMRobertaModel state dict as XYLentModel
    tensors (module docstring); every tensor of the encoder's function is used when `layers` is all."""
    s = {k.removeprefix("roberta."): v for k, v in encoder_state.items()}
    offset = position_offset(encoder_config)
    positions = encoder_config.max_position_embeddings - offset
    types = s.get("embeddings.token_type_embeddings.weight")
    type_row = types[0] if types is not None else 0
    out = {
        "embeddings.word_embeddings.weight": s["embeddings.word_embeddings.weight"],
        "embeddings.position_embeddings.weight": s["embeddings.position_embeddings.weight"][offset:offset + positions] + type_row,
        "embeddings.LayerNorm.weight": s["embeddings.LayerNorm.weight"],
        "embeddings.LayerNorm.bias": s["embeddings.LayerNorm.bias"],
    }
    for i in range(layers):
        src, dst = f"encoder.layer.{i}.", f"layers.{i}."
        for part in ("weight", "bias"):
            out[f"{dst}attention.qkv.{part}"] = torch.cat(
                [s[f"{src}attention.self.{name}.{part}"] for name in ("query", "key", "value")])
            for theirs, ours in _LAYER.items():
                out[f"{dst}{ours}.{part}"] = s[f"{src}{theirs}.{part}"]
    return out


def unmapped(encoder_state: dict[str, torch.Tensor], layers: int) -> list[str]:
    """Tensors of the encoder that `xylent_state` with all its layers does not use (should be none)."""
    used = {"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
            "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"}
    used |= {f"encoder.layer.{i}.attention.self.{n}.{p}" for i in range(layers) for n in ("query", "key", "value")
             for p in ("weight", "bias")}
    used |= {f"encoder.layer.{i}.{n}.{p}" for i in range(layers) for n in _LAYER for p in ("weight", "bias")}
    return sorted(k for k in (k.removeprefix("roberta.") for k in encoder_state)
                  if k not in used and not k.startswith(UNUSED))


def state_keys(layers: int) -> list[str]:
    """The XYLentModel names `xylent_state` fills for `layers` layers."""
    keys = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
            "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(layers):
        keys += [f"layers.{i}.{name}.{part}" for name in ("attention.qkv", *_LAYER.values()) for part in ("weight", "bias")]
    return keys


def load_encoder_weights(model: XYLentModel, encoder_state: dict, encoder_config, layers: int) -> None:
    """`model` (D's or G's encoder) takes the encoder's embeddings and first `layers` layers; its
    relative position table is zeroed, so that the bias adds nothing until training moves it."""
    taken = xylent_state(encoder_state, encoder_config, layers)
    assert sorted(taken) == sorted(state_keys(layers))
    missing, unexpected = model.load_state_dict(taken, strict=False)
    new = [k for k in missing if not (k.startswith("rel_pos.") or ".attention.gate." in k)]
    if new or unexpected:
        raise RuntimeError(f"encoder -> XY-LENT: tensors not mapped {new}, unknown {unexpected}")
    with torch.no_grad():
        model.rel_pos.relative_attention_bias.weight.zero_()


def from_encoder(path: str, tokenizer, **fields) -> XYLentForPreTraining:
    """XY-LENT's D and G from the encoder folder at `path` (module docstring); `fields` as in `xylent_config`."""
    from transformers import AutoModel

    encoder = AutoModel.from_pretrained(path, add_pooling_layer=False)  # XY-LENT has no pooler
    state = encoder.state_dict()
    left = unmapped(state, encoder.config.num_hidden_layers)
    if left:
        raise EncoderInitError(f"--init {path}: tensors XY-LENT has no place for: {', '.join(left[:6])}")
    config = xylent_config(encoder.config, tokenizer, **fields)
    model = XYLentForPreTraining(config)
    load_encoder_weights(model.discriminator.xylent, state, encoder.config, config.num_hidden_layers)
    load_encoder_weights(model.generator.xylent, state, encoder.config, config.generator_layers)
    # One embedding matrix (ELECTRA): loading G's copy must not have replaced the shared module.
    assert model.generator.xylent.embeddings.word_embeddings is model.discriminator.xylent.embeddings.word_embeddings
    return model


def new_parameter_names(model: XYLentForPreTraining) -> list[str]:
    """The parameters `from_encoder` did not take from the encoder: the relative position tables and
    their gates, the RTD head and G's MLM head (its output layer is the shared embedding)."""
    taken = {f"discriminator.xylent.{k}" for k in state_keys(model.config.num_hidden_layers)}
    taken |= {f"generator.xylent.{k}" for k in state_keys(model.config.generator_layers)}
    return [name for name, _ in model.named_parameters() if name not in taken]
