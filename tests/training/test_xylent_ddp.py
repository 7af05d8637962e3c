"""XY-LENT under torchrun: two CPU processes (gloo) train, and the DRO update, whose per-pair losses
are summed over the processes, gives both ranks the same pair weights."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_gloo_processes_share_the_dro_weights(tmp_path):
    from pipelines import vocap, xy_corpus

    vocap.run(["--output", str(tmp_path / "vocap")])
    xy_corpus.run(["--vocab", str(tmp_path / "vocap" / "spm.model"), "--output", str(tmp_path / "xy")])
    out = tmp_path / "ddp"
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         "--log_dir", str(tmp_path / "logs"), "--redirects", "3", "-m", "training.run",
         "--model", "xylent", "--data", str(tmp_path / "xy"), "--output", str(out), "--config", "tiny",
         "--max_steps", "12", "--dro", "1", "--dro_resamples", "2", "--no_progress", "--no_tensorboard"],
        cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    logs = sorted((tmp_path / "logs").glob("**/stderr.log"))  # one per rank
    assert len(logs) == 2
    updates = [re.findall(r"step (\d+): DRO pair weights (.*)", log.read_text()) for log in logs]
    assert [step for step, _ in updates[0]] == ["4", "8"]
    assert updates[0] == updates[1]  # both ranks computed the very same weights
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, 13))
    config = json.loads((out / "final" / "config.json").read_text())
    final = [records[-1][f"dro_weight/{n}"] for n in config["pair_names"]]
    assert final != pytest.approx(config["pair_probs"], abs=1e-4)
