"""corpora/xy/sinkhorn.py: the XY-LENT §3.2 sampling distribution, checked against what it must satisfy."""
from __future__ import annotations

import numpy as np
import pytest

from corpora.xy import sinkhorn

# Mined X-Y bitext in the shape of CCMatrix: every pair has data except two, sizes over 3 orders.
X_Y = {("en", "fr"): 50_000, ("en", "de"): 40_000, ("de", "fr"): 20_000, ("en", "sw"): 800, ("fr", "sw"): 300,
       ("en", "hi"): 5_000, ("hi", "ur"): 1_200, ("en", "ur"): 900, ("de", "hi"): 400, ("fr", "ur"): 50}
ENGLISH_CENTRIC = {("en", "fr"): 1000, ("en", "de"): 500, ("en", "ar"): 200, ("en", "hi"): 50, ("en", "vi"): 10}


def test_count_matrix_is_symmetric_and_merges_directions():
    langs, counts = sinkhorn.count_matrix({("fr", "ar"): 3, ("ar", "fr"): 2, ("en", "ar"): 5})
    assert langs == ["ar", "en", "fr"]
    assert (counts == counts.T).all() and (np.diag(counts) == 0).all()
    assert counts[0, 2] == 5 and counts[0, 1] == 5 and counts[1, 2] == 0
    with pytest.raises(ValueError, match="same language"):
        sinkhorn.count_matrix({("fr", "fr"): 1})


def test_temperature_marginal_flattens_towards_uniform():
    shares = np.array([0.7, 0.2, 0.1])
    assert sinkhorn.temperature_marginal(shares, 1.0) == pytest.approx(shares)
    hot = sinkhorn.temperature_marginal(shares, 5.0)
    assert hot.sum() == pytest.approx(1.0) and hot[0] < 0.7 and hot[2] > 0.1
    assert np.all(np.diff(hot) < 0)  # the order of the languages is kept


@pytest.mark.parametrize("temperature", [1.0, 5.0, 100.0])
def test_balanced_plan_meets_both_marginals_within_1e_6(temperature):
    langs, counts = sinkhorn.count_matrix(X_Y)
    marginal = sinkhorn.temperature_marginal(sinkhorn.language_shares(counts), temperature)
    plan, iterations = sinkhorn.sinkhorn_plan(marginal, sinkhorn.cost_matrix(counts))
    assert plan.dtype == np.float64 and iterations > 0
    assert np.abs(plan.sum(axis=1) - marginal).max() < 1e-6
    assert np.abs(plan.sum(axis=0) - marginal).max() < 1e-6
    assert np.allclose(plan, plan.T, atol=1e-12)  # symmetric cost and marginals: a symmetric plan


def test_regularisation_one_is_a_scaling_of_the_smoothed_data():
    """With reg = 1 (Eq. 2) the plan is diag(u) (Q + ε) diag(v): the ratio plan / (Q + ε) has rank one."""
    langs, counts = sinkhorn.count_matrix(X_Y)
    marginal = sinkhorn.temperature_marginal(sinkhorn.language_shares(counts), 5.0)
    plan, _ = sinkhorn.sinkhorn_plan(marginal, sinkhorn.cost_matrix(counts))
    ratio = plan / (counts / counts.sum() + sinkhorn.EPSILON)
    u = np.log(ratio)[:, :1] - np.log(ratio)[:1, :1]  # log u_i - log u_0
    assert np.allclose(np.log(ratio), u + np.log(ratio)[:1, :], atol=1e-6)


def test_no_probability_on_pairs_without_data():
    result = sinkhorn.sinkhorn_pair_probs(X_Y, temperature=5.0)
    assert result.marginal_error < 1e-6
    assert result.probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert (result.probs[result.counts == 0] == 0).all()
    assert (np.diag(result.probs) == 0).all()
    # the paper's point against Eq. 1: every pair with data keeps some probability
    assert (result.probs[result.counts > 0] > 0).all()
    rows = result.pair_rows()
    assert sum(r["prob"] for r in rows) == pytest.approx(1.0)
    assert sum(r["plan_mass"] for r in rows) == pytest.approx(1.0)
    assert sum(r["pairs"] for r in rows) == sum(X_Y.values())
    assert all(r["prob"] == 0 for r in rows if r["pairs"] == 0)
    assert {(r["src_lang"], r["tgt_lang"]) for r in rows if r["pairs"]} == {tuple(sorted(k)) for k in X_Y}


def test_mostly_x_y_data_loses_little_mass():
    result = sinkhorn.sinkhorn_pair_probs(X_Y, temperature=5.0)
    assert result.removed_mass < 0.05
    assert result.removed_mass == pytest.approx(float(result.plan[result.counts == 0].sum()))


def test_english_centric_mass_on_pairs_without_data_is_reported_and_removed():
    """Every pair holds English, so the pairs with data can carry at most 2·m_en of the mass: the
    balanced plan must put the rest (1 - 2·m_en) on pairs with no data, whatever ε is."""
    result = sinkhorn.sinkhorn_pair_probs(ENGLISH_CENTRIC, temperature=5.0)
    en = result.langs.index("en")
    m_en = result.marginal[en]
    assert m_en < 0.5
    assert np.abs(result.plan.sum(axis=1) - result.marginal).max() < 1e-6  # before removal
    assert result.removed_mass == pytest.approx(1 - 2 * m_en, abs=1e-6)
    assert (result.probs[result.counts == 0] == 0).all()
    assert result.probs.sum() == pytest.approx(1.0)
    assert (result.probs[result.counts > 0] > 0).all()
    # what removal costs: English is in every sampled pair, so its marginal is exactly one half
    assert result.probs.sum(axis=1)[en] == pytest.approx(0.5)


def test_english_centric_removed_mass_does_not_depend_on_epsilon():
    removed = [sinkhorn.sinkhorn_pair_probs(ENGLISH_CENTRIC, 5.0, epsilon=e).removed_mass for e in (1e-6, 1e-9, 1e-12)]
    assert max(removed) - min(removed) < 1e-5


def test_unbalanced_plan_keeps_zero_data_pairs_nearly_empty():
    langs, counts = sinkhorn.count_matrix(ENGLISH_CENTRIC)
    marginal = sinkhorn.temperature_marginal(sinkhorn.language_shares(counts), 5.0)
    plan = sinkhorn.unbalanced_plan(marginal, sinkhorn.cost_matrix(counts), reg_m=1.0)
    assert plan.sum() == pytest.approx(1.0)
    assert plan[counts == 0].sum() < 1e-3


def test_temperature_one_balanced_plan_follows_the_data_when_feasible():
    """T = 1 and the data's own marginals: Q itself is feasible and the closest scaling, so P = Q."""
    result = sinkhorn.sinkhorn_pair_probs(X_Y, temperature=1.0)
    joint = result.counts / result.counts.sum()
    assert np.abs(result.probs - joint).max() < 1e-6


def test_bad_arguments():
    with pytest.raises(ValueError, match="temperature"):
        sinkhorn.sinkhorn_pair_probs(X_Y, temperature=0)
    with pytest.raises(ValueError, match="no bitext"):
        sinkhorn.sinkhorn_pair_probs({}, temperature=5.0)


def test_heatmap_is_a_png():
    png = sinkhorn.plot_pair_probs(sinkhorn.sinkhorn_pair_probs(X_Y, 5.0), "test")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_one_language_pair_gets_all_the_probability():
    result = sinkhorn.sinkhorn_pair_probs({("fr", "ar"): 10}, temperature=5.0)
    assert [(r["src_lang"], r["tgt_lang"], r["prob"]) for r in result.pair_rows() if r["pairs"]] == [("ar", "fr", pytest.approx(1.0))]
    assert result.removed_mass < 1e-6
