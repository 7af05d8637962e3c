"""Gated relative position bias (WavLM, Chen et al. 2022 §3.2; used by XLM-E and XY-LENT §4).

A bucketed relative position bias (T5, Raffel et al. 2020), one learned scalar per (bucket, head),
scaled for each query position i and head h by a gate computed from that position's input:

    x_{i,h}        = the h-th head_dim slice of the attention layer's input at position i
    a_{i,h}, b_{i,h} = σ(Σ_{k<4} (W x_{i,h} + β)_k),  σ(Σ_{4≤k<8} (W x_{i,h} + β)_k)      W: head_dim → 8
    g_{i,h}        = a_{i,h} · (b_{i,h} · c_h − 1) + 2                                   c_h learned, 1 at start
    B_{h,i,j}      = g_{i,h} · d_h[bucket(j − i)]

and the attention logits are q_i·k_j/√d_head + B_{h,i,j}. This is the formula of the released WavLM
code (unilm/wavlm `grep_linear`, `grep_a`; transformers' WavLMAttention `gru_rel_pos_linear`,
`gru_rel_pos_const`), which is what the gate of XLM-E/XY-LENT is taken from. The WavLM paper writes it
as a GRU-style update/reset gate, g_upd = σ(q_i·u), g_rst = σ(q_i·w), r̃ = g_upd·d + (1 − g_upd)·c·g_rst·d;
the code's form, g = a·(b·c − 1) + 2 = 2 − a + a·b·c, keeps g in (1, 2) at initialisation (c = 1)
so that the bias starts as a plain, slightly amplified T5 bias. We implement the code's form.
"the query" of the papers is the layer input x (before the q projection), as in both codes.

Buckets: T5's bidirectional scheme, half the buckets for j > i; within each half the first
num_buckets/4 distances are exact and the rest log-spaced up to max_distance, beyond which all
distances share the last bucket. One bucket table per encoder, shared by its layers (T5, WavLM);
each layer has its own gate.
"""
from __future__ import annotations

import math

import torch
from torch import nn


def relative_position_bucket(relative_position: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """T5's bidirectional bucket of each relative position j − i (a LongTensor of any shape)."""
    half = num_buckets // 2
    buckets = (relative_position > 0).long() * half
    distance = relative_position.abs()
    max_exact = half // 2
    is_small = distance < max_exact
    # clamp(min=1) only keeps log() finite where is_small already picks the exact bucket
    large = max_exact + (torch.log(distance.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact)
                         * (half - max_exact)).long()
    large = large.clamp(max=half - 1)
    return buckets + torch.where(is_small, distance, large)


class GatedRelativePositionBias(nn.Module):
    """The shared part: the (bucket, head) table. `gate` below is the per-layer part."""

    def __init__(self, num_heads: int, num_buckets: int = 32, max_distance: int = 128):
        super().__init__()
        if num_buckets < 4 or max_distance <= num_buckets // 4:
            raise ValueError(f"relative position bias: need num_buckets >= 4 and max_distance > num_buckets/4, "
                             f"got {num_buckets} buckets, max distance {max_distance}")
        self.num_heads = num_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, num_heads)

    def forward(self, length: int) -> torch.Tensor:
        """d_h[bucket(j − i)] as [heads, T, T]; computed once per forward and reused by every layer."""
        position = torch.arange(length, device=self.relative_attention_bias.weight.device)
        buckets = relative_position_bucket(position[None, :] - position[:, None], self.num_buckets, self.max_distance)
        return self.relative_attention_bias(buckets).permute(2, 0, 1)


class PositionGate(nn.Module):
    """g_{i,h} = a·(b·c_h − 1) + 2 of one attention layer, from that layer's input (module docstring)."""

    def __init__(self, num_heads: int, head_dim: int):
        super().__init__()
        self.num_heads = num_heads
        self.proj = nn.Linear(head_dim, 8)  # WavLM's grep_linear: two gates, each the sum of 4 outputs
        self.const = nn.Parameter(torch.ones(1, num_heads, 1, 1))  # c_h, WavLM's grep_a

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """[B, T, d] -> gate [B, heads, T, 1] (in the dtype of the projection's output)."""
        b, t, _ = hidden.shape
        x = hidden.view(b, t, self.num_heads, -1).transpose(1, 2)  # [B, H, T, head_dim]
        a, g = torch.sigmoid(self.proj(x).view(b, self.num_heads, t, 2, 4).sum(-1)).unbind(-1)
        return (a * (g * self.const[..., 0] - 1.0) + 2.0)[..., None]


def gated_bias(gate: torch.Tensor, table_bias: torch.Tensor) -> torch.Tensor:
    """B_{h,i,j} = g_{i,h} · d_h[bucket(j − i)]: [B, H, T, 1] x [H, T, T] -> [B, H, T, T]."""
    return gate * table_bias[None].to(gate.dtype)
