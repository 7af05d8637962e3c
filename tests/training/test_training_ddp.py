"""DDP: two CPU processes (gloo) under torchrun train like one process on the doubled batch."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from test_training_run import QUIET, few_rows, metrics  # noqa: F401  (few_rows is a fixture)

from training import run


@pytest.mark.slow
def test_two_gloo_processes_match_one_process_on_the_doubled_batch(few_rows, tmp_path):  # noqa: F811
    # Shuffle buffer 1 and one row group: rank r takes rows r, r+2, ... in file order, so the two
    # ranks' batches of 4 together are the single process's batch of 8.
    args = ["--model", "mpmr", "--data", str(few_rows), "--config", "tiny", "--max_steps", "5",
            "--shuffle_buffer", "1", *QUIET]
    one = tmp_path / "one"
    run.main([*args, "--output", str(one), "--batch_size", "8"])
    two = tmp_path / "two"
    two.mkdir()
    shutil.copytree(one / "tokenizer", two / "tokenizer")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                    "-m", "training.run", *args, "--output", str(two), "--batch_size", "4"],
                   check=True, env=env, timeout=300, capture_output=True)
    single = [m["loss"] for m in metrics(one)]
    ddp = [m["loss"] for m in metrics(two)]
    # Not exact: WAE normalises by the valid cells of each rank's batch, and DDP averages the ranks.
    assert ddp == pytest.approx(single, rel=0.02)
