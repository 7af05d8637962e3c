"""Training at scale on CPU: two torchrun "nodes" (gloo) through `python -m training.run`.

Each node is its own `torchrun --nnodes 2 --nproc_per_node 1 --node_rank N --master_addr ... --master_port ...`
process with its own --output directory, as two machines with local disks would be: so the files
show who wrote what. Checkpoints, metrics and the final model must come only from global rank 0;
a run resumed from the step-3 checkpoint, placed beside both nodes as a shared filesystem would,
must continue on both ranks exactly where the uninterrupted run went. (tests/test_training_ddp.py checks that two gloo ranks
train like one process on the doubled batch; this file checks the multi-node launch and the files.)
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from test_training_run import QUIET, few_rows, metrics  # noqa: E402,F401  (few_rows is a fixture)

from training import run  # noqa: E402
from training.models.mpmr import MPMRForWAE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """Process ids whose parent is `pid` (Linux /proc), i.e. a torchrun launcher's workers."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def torchrun_two_nodes(args: list[str], outputs: list[Path], logs: Path) -> None:
    """Two torchrun launchers, one process each, that meet at node 0's store: a 2-node job.

    Once rank 0 has written final/ (its last file), both launchers get 60 s to exit. A worker still
    alive then is hung: it is sent SIGABRT, and with PYTHONFAULTHANDLER its Python stack lands in the
    log that the failure shows, instead of the job waiting out torchrun's 300 s exit barrier.
    """
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    launchers, log_paths = [], []
    for node, out in enumerate(outputs):
        log_paths.append(logs / f"{out.parent.name}-node{node}.log")
        log = open(log_paths[-1], "wb")  # noqa: SIM115  closed below
        # Static rendezvous (node 0 serves the store at --master_addr:--master_port; ranks follow
        # --node_rank), so that node 0's directory is rank 0's. c10d rendezvous (docs/scale_out.md)
        # assigns ranks in arrival order.
        command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1",
                   "--node_rank", str(node), "--master_addr", "127.0.0.1", "--master_port", str(port),
                   "--max_restarts", "0", "-m", "training.run", *args, "--output", str(out)]
        launchers.append((subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log))
    deadline, finished_at = time.time() + 600, None
    hung = []
    try:
        while any(p.poll() is None for p, _ in launchers):
            if finished_at is None and (outputs[0] / "final" / "train_config.json").exists():
                finished_at = time.time()
            if time.time() > deadline or (finished_at and time.time() > finished_at + 60):
                for node, (process, _) in enumerate(launchers):
                    workers = children(process.pid) if process.poll() is None else []
                    if workers:  # a launcher without workers is only waiting for the other node
                        hung.append(node)
                    for worker in workers:
                        os.kill(worker, signal.SIGABRT)
                time.sleep(5)
                break
            time.sleep(0.5)
    finally:
        for process, log in launchers:
            if process.poll() is None:
                process.kill()
            process.wait()
            log.close()
    failed = [f"node {node} exit {p.returncode}{' (worker hung after training, stack below)' if node in hung else ''}:\n"
              f"{log_paths[node].read_text(errors='replace')[-4000:]}"
              for node, (p, _) in enumerate(launchers) if p.returncode != 0 or node in hung]
    assert not failed, "\n".join(failed)


def rank0_dir(outputs: list[Path]) -> tuple[Path, Path]:
    """(node 0, node 1), and only node 0, which holds global rank 0, wrote metrics."""
    writers = [out for out in outputs if (out / "metrics.jsonl").exists()]
    assert writers == [outputs[0]], f"exactly rank 0's node writes metrics, got {writers}"
    return outputs[0], outputs[1]


@pytest.mark.slow
def test_two_node_torchrun_checkpoints_on_rank0_and_resumes_on_both(few_rows, tmp_path):  # noqa: F811
    # Dropout on and batches of 2 over 8 rows per 2 ranks: the resumed half crosses an epoch
    # boundary, so each rank needs its own data position and RNG back.
    args = ["--model", "mpmr", "--data", str(few_rows), "--config", "tiny", "--max_steps", "6", "--batch_size", "2",
            "--dropout", "0.1", "--save_every", "3", "--lr", "1e-3", *QUIET]
    # Every node reads the tokenizer from its own --output: made once, as a shared disk would hold it.
    seed_run = tmp_path / "tokenizer_run"
    run.main([*args[:6], "--max_steps", "1", "--output", str(seed_run), *QUIET])
    nodes = {name: [tmp_path / name / f"node{i}" for i in range(2)] for name in ("whole", "resumed")}
    for out in [*nodes["whole"], *nodes["resumed"]]:
        shutil.copytree(seed_run / "tokenizer", out / "tokenizer")

    torchrun_two_nodes(args, nodes["whole"], tmp_path)
    main, other = rank0_dir(nodes["whole"])
    assert sorted(p.name for p in (main / "checkpoints").iterdir()) == ["step-00000003.pt", "step-00000006.pt"]
    assert [m["step"] for m in metrics(main)] == [1, 2, 3, 4, 5, 6]
    assert (main / "final" / "model.safetensors").exists()
    # Rank 1 wrote nothing: no checkpoint, no metrics, no final model (its disk holds the tokenizer only).
    assert sorted(p.name for p in other.iterdir()) == ["tokenizer"]
    state = torch.load(main / "checkpoints" / "step-00000003.pt", map_location="cpu", weights_only=False)
    assert state["world_size"] == 2 and len(state["rng"]) == 2  # both ranks' RNG, gathered on rank 0

    # Resume from step 3 on both nodes (the checkpoint where a shared filesystem would show it).
    for out in nodes["resumed"]:
        (out / "checkpoints").mkdir()
        shutil.copy(main / "checkpoints" / "step-00000003.pt", out / "checkpoints")
    torchrun_two_nodes([*args, "--resume"], nodes["resumed"], tmp_path)
    resumed_main, resumed_other = rank0_dir(nodes["resumed"])
    assert [m["step"] for m in metrics(resumed_main)] == [4, 5, 6]
    # The loss is all-reduced over both ranks: it equals the uninterrupted run's only if rank 1 too
    # resumed its weights, optimiser, data position and dropout RNG.
    assert [m["loss"] for m in metrics(resumed_main)] == pytest.approx([m["loss"] for m in metrics(main)[3:]], rel=1e-6)
    a = MPMRForWAE.from_pretrained(main / "final").state_dict()
    b = MPMRForWAE.from_pretrained(resumed_main / "final").state_dict()
    assert all(torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-7) for k in a)
    assert sorted(p.name for p in (resumed_other / "checkpoints").iterdir()) == ["step-00000003.pt"]
