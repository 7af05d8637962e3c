"""The gated relative position bias (training/models/gated_rel_pos.py) against a direct, unvectorised
computation of its formula, one (batch, head, i, j) at a time in plain Python floats; and one
attention layer of XY-LENT against attention written out by hand with that reference bias."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from training.models.gated_rel_pos import (GatedRelativePositionBias, PositionGate, gated_bias,
                                           relative_position_bucket)


def reference_bucket(rel: int, num_buckets: int, max_distance: int) -> int:
    """T5's bidirectional bucket of one relative position j - i, written as the T5 paper/code does."""
    half = num_buckets // 2
    bucket = half if rel > 0 else 0
    n = abs(rel)
    max_exact = half // 2
    if n < max_exact:
        return bucket + n
    large = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (half - max_exact))
    return bucket + min(large, half - 1)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def reference_gated_bias(x, table, proj_w, proj_b, const, num_heads, num_buckets, max_distance):
    """B[b][h][i][j] = g_{i,h} · d_h[bucket(j - i)], g = a·(b·c_h − 1) + 2, a and b the sigmoids of the
    sums of the first and last four outputs of W x_{i,h} + β (x_{i,h}: the h-th head slice)."""
    batch, length, hidden = len(x), len(x[0]), len(x[0][0])
    head_dim = hidden // num_heads
    out = [[[[0.0] * length for _ in range(length)] for _ in range(num_heads)] for _ in range(batch)]
    for b in range(batch):
        for h in range(num_heads):
            for i in range(length):
                xs = x[b][i][h * head_dim:(h + 1) * head_dim]
                z = [sum(proj_w[o][k] * xs[k] for k in range(head_dim)) + proj_b[o] for o in range(8)]
                gate_a, gate_b = sigmoid(sum(z[:4])), sigmoid(sum(z[4:]))
                g = gate_a * (gate_b * const[h] - 1.0) + 2.0
                for j in range(length):
                    out[b][h][i][j] = g * table[reference_bucket(j - i, num_buckets, max_distance)][h]
    return out


def test_buckets_match_the_scalar_definition():
    for num_buckets, max_distance in ((32, 128), (16, 64), (8, 20)):
        rel = torch.arange(-300, 301)
        got = relative_position_bucket(rel, num_buckets, max_distance).tolist()
        want = [reference_bucket(r, num_buckets, max_distance) for r in range(-300, 301)]
        assert got == want
        assert min(got) == 0 and max(got) == num_buckets - 1  # every bucket reachable, none beyond


def test_gated_bias_matches_the_unvectorised_formula():
    torch.manual_seed(3)
    heads, head_dim, length, batch, buckets, max_distance = 3, 4, 11, 2, 8, 20
    table = GatedRelativePositionBias(heads, buckets, max_distance)
    gate = PositionGate(heads, head_dim)
    with torch.no_grad():  # away from the initial values so that every term matters
        table.relative_attention_bias.weight.normal_()
        gate.proj.weight.normal_()
        gate.proj.bias.normal_()
        gate.const.copy_(torch.tensor([0.5, 1.0, 2.5]).view(1, heads, 1, 1))
    x = torch.randn(batch, length, heads * head_dim, dtype=torch.float64)
    table, gate = table.double(), gate.double()
    got = gated_bias(gate(x), table(length))
    want = reference_gated_bias(x.tolist(), table.relative_attention_bias.weight.tolist(), gate.proj.weight.tolist(),
                                gate.proj.bias.tolist(), gate.const.flatten().tolist(), heads, buckets, max_distance)
    assert got.shape == (batch, heads, length, length)
    assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), atol=1e-12)


def test_initial_gate_lies_between_one_and_two():
    gate = PositionGate(2, 8)
    g = gate.double()(torch.randn(4, 5, 16, dtype=torch.float64))
    assert ((g > 1) & (g < 2)).all()  # c = 1 at the start: g = 2 − a(1 − b), a and b in (0, 1)


def test_attention_layer_adds_the_gated_bias_to_the_logits():
    from training.models.xylent import SelfAttention, XYLentConfig

    torch.manual_seed(0)
    config = XYLentConfig(hidden_size=8, num_attention_heads=2, attention_probs_dropout_prob=0.0,
                          rel_pos_buckets=8, rel_pos_max_distance=16)
    attn = SelfAttention(config).double().eval()
    table = GatedRelativePositionBias(2, 8, 16).double()
    with torch.no_grad():
        table.relative_attention_bias.weight.normal_()
        attn.gate.proj.weight.normal_()
    x = torch.randn(1, 6, 8, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    pad = (1.0 - mask[:, None, None, :].double()) * torch.finfo(torch.float32).min
    with torch.no_grad():
        got = attn(x, table(6), pad)
        want = attention_by_hand(attn, table, x)
    assert torch.allclose(got, want, atol=1e-10)


def attention_by_hand(attn, table, x):

    bias = reference_gated_bias(x.tolist(), table.relative_attention_bias.weight.tolist(), attn.gate.proj.weight.tolist(),
                                attn.gate.proj.bias.tolist(), attn.gate.const.flatten().tolist(), 2, 8, 16)
    q, k, v = attn.qkv(x)[0].split(8, dim=-1)
    heads = []
    for h in range(2):
        s = slice(4 * h, 4 * h + 4)
        out = []
        for i in range(6):
            logits = [float(q[i, s] @ k[j, s]) / 2.0 + bias[0][h][i][j] for j in range(5)]  # key 5 is padding
            top = max(logits)
            w = [math.exp(z - top) for z in logits]
            out.append(sum(w[j] / sum(w) * v[j, s] for j in range(5)))
        heads.append(torch.stack(out))
    return attn.out(torch.cat(heads, dim=-1))[None]
