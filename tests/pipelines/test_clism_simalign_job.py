"""clism_pairs with the neural aligner, on a tiny random BERT saved by the test (no download)."""
from __future__ import annotations

import importlib.util

import pytest

from corpora.clism.ner_spans import ner_pipeline_available
from pipelines import clism_pairs
from test_aligners import build_tiny_bert
from test_clism_job import assert_rows_follow_the_rules, rows, run_job

pytestmark = [
    pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed"),
    pytest.mark.skipif(
        not all(importlib.util.find_spec(m) for m in ("torch", "transformers", "simalign")),
        reason="torch/transformers/simalign not installed",
    ),
]


def test_simalign_job_on_the_sample_with_a_tiny_model(tmp_path):
    sample = clism_pairs.sample_dir()
    words = open(f"{sample}/en-fr.en", encoding="utf-8").read().split() + open(
        f"{sample}/en-fr.fr", encoding="utf-8").read().split()
    model = build_tiny_bert(tmp_path / "tiny-bert", words, layers=3)
    out = tmp_path / "out"
    stats = run_job(out, "--pairs", f"fr={sample}/en-fr.en,{sample}/en-fr.fr", "--aligner", "simalign",
                    "--aligner_model", str(model), "--aligner_method", "argmax", "--max_gap", "100")
    found = rows(out)
    # Random weights give arbitrary links, but every projected span must still be a valid target span.
    assert_rows_follow_the_rules(found)
    with_spans = stats[("en-fr", "read/lines")] - stats.get(("en-fr", "pairs/no_span"), 0)
    assert stats[("en-fr", "align/pairs")] == with_spans  # only pairs with a span go through the model
    assert stats[("en-fr", "pairs/kept")] == len(found)
