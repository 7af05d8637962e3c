"""Sinkhorn pair sampling of XY-LENT §3.2: how often to draw each language pair of X-Y bitext.

Given the pair-count matrix Q over L languages (bitext pairs per language pair, symmetric, zero on
the diagonal) and the language shares p (the marginal of Q), XY-LENT Eq. 2 asks for

    P* = argmin_P  Tr(P · C) - H(P)   subject to   P 1 = p^(1/T) = P^T 1,   C = -log(Q + ε)

an entropic optimal transport problem with regularisation 1 (the weight of H in Eq. 2), solved by
Sinkhorn-Knopp in the log domain (POT's `sinkhorn_log`) in float64. With regularisation 1 the
solution is diag(u) (Q + ε) diag(v): a scaling of the smoothed data, so every pair with data keeps
some probability (the paper's point against Eq. 1's sparse plans).

Where the paper's claim fails: the marginals can be unreachable on the pairs that hold data. In an
English-centric corpus every pair contains English, so English would need half of the mass while
p^(1/T) gives it much less; the balanced plan then has to put the rest on pairs with no data (the ε
entries, the diagonal included), whatever ε is. That mass cannot be sampled: it is reported
(`removed_mass`), set to zero and the rest renormalised (`remove_zero_data_mass`). The language
marginals of the result then differ from p^(1/T); `unbalanced_plan` (POT's KL-relaxed solver) is
the alternative that trades marginal fit for support, measured in docs/xy_corpus.md.

Q is normalised to a joint distribution (sums to 1) so that ε has the same meaning whatever the
corpus size: a pair with no data costs -log ε, a pair with a share q costs -log q.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

EPSILON = 1e-9  # far below any real pair's share (1e-9 of the bitext), so only empty pairs cost -log ε
REGULARISATION = 1.0  # Eq. 2 weighs the entropy by 1
MAX_ITERATIONS = 100_000
# POT's stop criterion: the marginal violation it checks every 10 iterations. Not 1e-12: a sparse
# pair graph (real NTREX pairs de-el, de-en, en-th and ja-vi: a chain and a lone pair) never got
# there and ran all 100,000 iterations (8 s), while its probabilities moved by under 1e-9 after the
# 60th. The tests ask for marginals within 1e-6.
STOP_THRESHOLD = 1e-8


@dataclass
class PairProbs:
    langs: list[str]  # sorted; the order of every matrix
    counts: np.ndarray  # L x L bitext pairs per language pair, symmetric, int64
    marginal: np.ndarray  # p^(1/T), normalised
    plan: np.ndarray  # P*, the balanced Sinkhorn plan (float64, symmetric, sums to 1)
    probs: np.ndarray  # P* without the zero-data entries, renormalised: what is sampled
    removed_mass: float  # mass of P* on pairs with no data, before renormalisation
    iterations: int
    marginal_error: float  # max |P*1 - p^(1/T)| over rows and columns: did Sinkhorn converge?

    def pair_rows(self) -> list[dict]:
        """One row per unordered pair (a <= b, the diagonal too): both directions' mass summed,
        since TRTD flips the order of every pair with probability 0.5 anyway."""
        total = max(int(self.counts.sum()) // 2, 1)
        rows = []
        for i, a in enumerate(self.langs):
            for j in range(i, len(self.langs)):
                def both(m: np.ndarray) -> float:
                    return float(m[i, j] + (m[j, i] if i != j else 0.0))

                rows.append({"src_lang": a, "tgt_lang": self.langs[j], "pairs": int(self.counts[i, j]),
                             "data_share": int(self.counts[i, j]) / total,
                             "plan_mass": both(self.plan), "prob": both(self.probs)})
        return rows


def count_matrix(pair_counts: dict[tuple[str, str], int]) -> tuple[list[str], np.ndarray]:
    """{(x, y): n} in any direction -> sorted languages and the symmetric count matrix Q.

    A pair counts for both directions (Q[x, y] = Q[y, x] = n_xy + n_yx): the data serves both
    orders, as TRTD flips the order of every pair.
    """
    langs = sorted({lang for pair in pair_counts for lang in pair})
    index = {lang: i for i, lang in enumerate(langs)}
    counts = np.zeros((len(langs), len(langs)), dtype=np.int64)
    for (x, y), n in pair_counts.items():
        if x == y:
            raise ValueError(f"bitext pair {x}-{y}: both sides are the same language")
        counts[index[x], index[y]] += n
        counts[index[y], index[x]] += n
    return langs, counts


def language_shares(counts: np.ndarray) -> np.ndarray:
    """p: each language's share of the bitext sides (the marginal of the joint distribution Q)."""
    sides = counts.sum(axis=1).astype(np.float64)
    return sides / sides.sum()


def temperature_marginal(shares: np.ndarray, temperature: float) -> np.ndarray:
    """p^(1/T), normalised (Aharoni et al., 2019): T = 1 keeps the data mix, larger T flattens it."""
    smoothed = np.power(shares, 1.0 / temperature)
    return smoothed / smoothed.sum()


def cost_matrix(counts: np.ndarray, epsilon: float = EPSILON) -> np.ndarray:
    """C = -log(Q + ε), Q the counts as a joint distribution."""
    joint = counts / counts.sum()
    return -np.log(joint + epsilon)


def sinkhorn_plan(marginal: np.ndarray, cost: np.ndarray, reg: float = REGULARISATION,
                  max_iterations: int = MAX_ITERATIONS, stop_threshold: float = STOP_THRESHOLD) -> tuple[np.ndarray, int]:
    """The balanced entropic plan with both marginals `marginal`, log-domain Sinkhorn in float64.

    The log domain matters: exp(-C/reg) underflows nothing at reg = 1, but scalings in the
    English-centric case grow by the ratio of the data to ε (1e9) and would overflow the plain
    iteration at smaller ε or reg.
    """
    marginal = np.asarray(marginal, dtype=np.float64)
    import ot  # here, not at the top: POT imports torch (seconds of CPU), which --help and the plan never need

    plan, log = ot.sinkhorn(marginal, marginal, np.asarray(cost, dtype=np.float64), reg, method="sinkhorn_log",
                            numItermax=max_iterations, stopThr=stop_threshold, log=True, warn=False)
    return np.asarray(plan, dtype=np.float64), int(log.get("niter", 0))


def remove_zero_data_mass(plan: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """Zero the plan where there is no data, renormalise; return the result and the removed mass."""
    has_data = counts > 0
    kept = np.where(has_data, plan, 0.0)
    removed = float(plan[~has_data].sum())
    total = kept.sum()
    if total <= 0:
        raise ValueError("the Sinkhorn plan has no mass on any pair with data")
    return kept / total, removed


def unbalanced_plan(marginal: np.ndarray, cost: np.ndarray, reg: float = REGULARISATION, reg_m: float = 1.0,
                    max_iterations: int = MAX_ITERATIONS, stop_threshold: float = STOP_THRESHOLD) -> np.ndarray:
    """POT's KL-relaxed (unbalanced) plan, normalised: the marginals are only pulled towards
    p^(1/T) with strength `reg_m`, so the plan is free to leave zero-data pairs (almost) empty."""
    marginal = np.asarray(marginal, dtype=np.float64)
    import ot

    plan = ot.unbalanced.sinkhorn_unbalanced(marginal, marginal, np.asarray(cost, dtype=np.float64), reg, reg_m,
                                             method="sinkhorn_stabilized", numItermax=max_iterations,
                                             stopThr=stop_threshold)
    plan = np.asarray(plan, dtype=np.float64)
    return plan / plan.sum()


def sinkhorn_pair_probs(pair_counts: dict[tuple[str, str], int], temperature: float,
                        epsilon: float = EPSILON) -> PairProbs:
    """Counts of bitext pairs -> the sampling distribution over language pairs (module docstring)."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    langs, counts = count_matrix({k: n for k, n in pair_counts.items() if n > 0})
    if not langs:
        raise ValueError("no bitext pairs to sample from")
    marginal = temperature_marginal(language_shares(counts), temperature)
    plan, iterations = sinkhorn_plan(marginal, cost_matrix(counts, epsilon))
    probs, removed = remove_zero_data_mass(plan, counts)
    error = float(max(np.abs(plan.sum(axis=1) - marginal).max(), np.abs(plan.sum(axis=0) - marginal).max()))
    return PairProbs(langs, counts, marginal, plan, probs, removed, iterations, error)


def plot_pair_probs(result: PairProbs, title: str) -> bytes:
    """PNG: the data's pair shares next to the sampling probabilities; pairs with no data crossed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(result.langs)
    data = result.counts / max(result.counts.sum(), 1)
    size = max(4.0, 0.45 * n + 2.5)
    fig, axes = plt.subplots(1, 2, figsize=(2 * size + 1, size), dpi=100)
    for ax, matrix, name in ((axes[0], data, "data share Q"), (axes[1], result.probs, "sampling prob (after removal)")):
        image = ax.imshow(matrix, cmap="viridis", vmin=0.0)
        ax.set_xticks(range(n), result.langs, rotation=90 if n > 12 else 0)
        ax.set_yticks(range(n), result.langs)
        ax.set_title(name)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        empty_rows, empty_cols = np.nonzero(result.counts == 0)
        ax.scatter(empty_cols, empty_rows, marker="x", color="white", s=20 if n > 12 else 40, linewidths=1)
    fig.suptitle(title)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
