"""mPMR: an XLM-R encoder and a span extractor trained with Wiki Anchor Extraction (WAE).

Full definition of the model, all of it in this file (mPMR paper §2.1; PMR, Xu et al. 2022):
  H = Encoder(<s> query </s></s> context </s>)                                   [B, T, d]
  S = sigmoid(FFN(H) · Hᵀ),  FFN = Linear(d→1024)–GELU–dropout–Linear(1024→d)    [B, T, T]
S[i, j] is the probability that tokens i..j are an answer to the query; S[0, 0], the [CLS] cell, is
the probability that the context answers the query at all (sequence-level relevance).

WAE: binary cross-entropy over the valid cells only, (0, 0) and context cells with i <= j,
normalised by their number. Targets: (0, 0) = 1 for answerable examples, each answer cell = 1.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaPreTrainedModel


class SpanExtractor(nn.Module):
    """S_logits = FFN(H) · Hᵀ; the FFN follows the public PMR reference implementation."""

    def __init__(self, hidden_size: int, extractor_hidden_size: int = 1024, dropout: float = 0.1):
        super().__init__()
        self.ffn = nn.Sequential(
            nn.Linear(hidden_size, extractor_hidden_size),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(extractor_hidden_size, hidden_size),
        )

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.matmul(self.ffn(hidden), hidden.transpose(1, 2))


def valid_cells(context_mask: torch.Tensor) -> torch.Tensor:
    """[B, T, T] bool: the [CLS] cell and every context span i <= j. Built once per batch."""
    t = context_mask.shape[1]
    upper = torch.ones(t, t, dtype=torch.bool, device=context_mask.device).triu()
    valid = context_mask[:, :, None] & context_mask[:, None, :] & upper
    valid[:, 0, 0] = True
    return valid


def wae_targets(shape: torch.Size, answerable: torch.Tensor, answer_spans: torch.Tensor) -> torch.Tensor:
    targets = torch.zeros(shape, dtype=torch.float, device=answerable.device)
    targets[:, 0, 0] = answerable.float()
    if answer_spans.numel():
        b, i, j = answer_spans.to(targets.device).unbind(1)
        targets[b, i, j] = 1.0
    return targets


def wae_loss(span_logits: torch.Tensor, context_mask: torch.Tensor, answerable: torch.Tensor,
             answer_spans: torch.Tensor) -> torch.Tensor:
    """Mean BCE over the valid cells of the whole batch (from logits: stable, and bf16-safe in fp32)."""
    valid = valid_cells(context_mask)
    targets = wae_targets(span_logits.shape, answerable, answer_spans)
    return F.binary_cross_entropy_with_logits(span_logits.float()[valid], targets[valid])


class MPMRForWAE(XLMRobertaPreTrainedModel):
    """Encoder (`roberta`, loadable from any XLM-R checkpoint) plus extractor head.

    `extractor_hidden_size` and `extractor_dropout` live on the XLM-R config, so that
    `save_pretrained`/`from_pretrained` round-trip the whole model with the stock config class.
    """

    def __init__(self, config: XLMRobertaConfig):
        super().__init__(config)
        self.roberta = XLMRobertaModel(config, add_pooling_layer=False)
        self.extractor = SpanExtractor(
            config.hidden_size,
            getattr(config, "extractor_hidden_size", 1024),
            getattr(config, "extractor_dropout", config.hidden_dropout_prob),
        )
        self.post_init()

    def span_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.roberta(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.extractor(hidden)

    def forward(self, input_ids, attention_mask, context_mask=None, answerable=None, answer_spans=None, **_):
        """-> (loss, logs) in training (STYLE.md), or span logits [B, T, T] when given no targets."""
        logits = self.span_logits(input_ids, attention_mask)
        if answerable is None:
            return logits
        loss = wae_loss(logits, context_mask, answerable, answer_spans)
        return loss, {"wae_loss": loss.detach()}


def best_spans(span_logits: torch.Tensor, context_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per example: the highest-scoring context span (start, end) and its score, and the [CLS] score."""
    valid = valid_cells(context_mask)
    valid[:, 0, 0] = False
    scores = span_logits.float().masked_fill(~valid, float("-inf")).flatten(1)
    best = scores.argmax(1)
    t = span_logits.shape[-1]
    return torch.stack([best // t, best % t], 1), scores.gather(1, best[:, None])[:, 0], span_logits[:, 0, 0]


def from_pretrained_encoder(name_or_path: str, extractor_hidden_size: int, dropout: float) -> tuple[MPMRForWAE, list[str]]:
    """Encoder weights from an XLM-R checkpoint (any head: `roberta.*` is taken), a new extractor;
    and the names of the weights the checkpoint did not have (the new extractor's).

    A saved MPMRForWAE keeps its own extractor (its config already has the sizes)."""
    config = XLMRobertaConfig.from_pretrained(name_or_path)
    if not hasattr(config, "extractor_hidden_size"):
        config.extractor_hidden_size = extractor_hidden_size
        config.extractor_dropout = dropout
    model, loading = MPMRForWAE.from_pretrained(name_or_path, config=config, output_loading_info=True)
    return model, loading["missing_keys"]


def build_config(tokenizer, hidden_size: int, num_layers: int, num_heads: int, intermediate_size: int,
                 max_seq_len: int, extractor_hidden_size: int, dropout: float) -> XLMRobertaConfig:
    """A random XLM-R-shaped encoder's config (the `tiny` setting)."""
    return XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_seq_len + 2,  # XLM-R positions start after the padding index
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        extractor_hidden_size=extractor_hidden_size,
        extractor_dropout=dropout,
    )
