"""Reading word spans off the span matrix S of one MRC row.

A cell (i, j) is a candidate when i <= j and both are context subwords (`context_word` >= 0). It is
read as the word span (word of i, word of j): training puts each answer on the first subword of its
first word and the last subword of its last word, and a cell that starts or ends inside a word is
read as the whole word. Several cells can name the same word span; the highest logit counts.
"""
from __future__ import annotations

import torch


def candidate_cells(span_logits: torch.Tensor, context_word: torch.Tensor, max_tokens: int | None = None) -> torch.Tensor:
    """[T, T] bool of the valid context cells i <= j of one row (and j - i < max_tokens, if given)."""
    ctx = context_word >= 0
    ones = torch.ones_like(span_logits, dtype=torch.bool)
    valid = ctx[:, None] & ctx[None, :] & ones.triu()
    return valid & ~ones.triu(max_tokens) if max_tokens else valid


def word_spans(span_logits: torch.Tensor, context_word: torch.Tensor, min_logit: float | None = None,
               top_k: int | None = None, max_tokens: int | None = None) -> list[tuple[int, int, float]]:
    """(first word, last word, logit) of the row's candidate cells, best first, one per word span:
    those above `min_logit` (a threshold on sigmoid(S) is one on the logit), and/or the `top_k` best;
    spans of at most `max_tokens` subwords when given."""
    logits = span_logits.float()
    valid = candidate_cells(logits, context_word, max_tokens)
    if min_logit is not None:
        valid &= logits > min_logit
    flat = logits.masked_fill(~valid, float("-inf")).flatten()
    n = int(valid.sum())
    if top_k is not None:
        n = min(n, top_k * 8)  # a few cells per word span, so that top_k distinct word spans survive
    scores, index = flat.topk(n) if n else (flat[:0], flat[:0].long())
    t = logits.shape[-1]
    seen: dict[tuple[int, int], float] = {}
    for score, k in zip(scores.tolist(), index.tolist()):
        span = (int(context_word[k // t]), int(context_word[k % t]))
        if span not in seen:
            seen[span] = score
    out = [(s, e, v) for (s, e), v in seen.items()]
    return out[:top_k] if top_k is not None else out


def greedy_non_overlapping(spans: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Best-scoring spans first; a span that shares a word with a kept one is dropped."""
    kept: list[tuple[int, int, float]] = []
    for s, e, v in sorted(spans, key=lambda x: -x[2]):
        if all(e < ks or s > ke for ks, ke, _ in kept):
            kept.append((s, e, v))
    return sorted(kept)
