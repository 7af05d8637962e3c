"""CACR under DDP: each rank contrasts its anchors with the global batch, and the gradient DDP
averages equals one process on the whole batch (two gloo processes, CPU)."""
from __future__ import annotations

import os
import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from training.models.clism import cacr_loss  # noqa: E402


def global_batch(rows: int, dim: int = 6) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return [torch.randn(rows, dim, generator=g) for _ in range(3)]  # r_t, r_hat_s, r_s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_worker(rank: int, world: int, port: int, rows: tuple[int, ...], results) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        start = sum(rows[:rank])
        mine = [t[start:start + rows[rank]].clone().requires_grad_() for t in global_batch(sum(rows))]
        loss = cacr_loss(*mine, temperature=20.0)
        loss.backward()
        results[rank] = (loss.item(), [t.grad.clone() for t in mine])
    finally:
        dist.destroy_process_group()


def run_ranks(rows: tuple[int, ...]) -> dict:
    with mp.Manager() as manager:
        results = manager.dict()
        mp.start_processes(rank_worker, args=(len(rows), free_port(), rows, results), nprocs=len(rows),
                           start_method="spawn")
        return dict(results)


@pytest.mark.slow  # four spawned processes, each importing torch and transformers
@pytest.mark.parametrize("rows", [(3, 3), (3, 2)], ids=["equal", "short_last_batch"])
def test_two_ranks_contrast_the_global_batch_like_one_process(rows):
    whole = [t.clone().requires_grad_() for t in global_batch(sum(rows))]
    expected = cacr_loss(*whole, temperature=20.0)  # one process, the whole batch, mean over all anchors
    expected.backward()
    results = run_ranks(rows)
    # A rank's loss is the mean over its own anchors against every rank's candidates.
    losses = [results[r][0] for r in range(len(rows))]
    assert sum(n * loss for n, loss in zip(rows, losses)) / sum(rows) == pytest.approx(expected.item(), rel=1e-5)
    if rows[0] == rows[1]:
        # Each rank's backward gives its rows ∂(Σ_r L_r)/∂x: the all-gather returns to a row the
        # gradient every rank's loss sent it. DDP averages over ranks: ½ of it, the global gradient.
        for k in range(3):
            averaged = torch.cat([results[r][1][k] for r in range(2)]) / 2
            torch.testing.assert_close(averaged, whole[k].grad, rtol=1e-4, atol=1e-7)
    # A single rank alone would see only its own negatives: its loss differs from the global one.
    alone = cacr_loss(*[t[:rows[0]] for t in global_batch(sum(rows))], temperature=20.0)
    assert alone.item() != pytest.approx(losses[0], rel=1e-3)
