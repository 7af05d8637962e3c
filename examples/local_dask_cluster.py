"""Stopping a local `dask scheduler` + `dask worker` pair started as separate processes (the tests and
benchmarks/wiki_mrc_memory.py start them; docs/scale_out.md §4)."""
from __future__ import annotations

import subprocess
from pathlib import Path


def stop_local_cluster(scheduler_file: Path, processes: list[subprocess.Popen | None]) -> None:
    """Ask the scheduler to shut the cluster down, then make sure every process has exited."""
    import distributed

    if scheduler_file.exists():
        try:  # an orderly stop of scheduler and workers is faster than waiting on SIGTERM
            with distributed.Client(scheduler_file=str(scheduler_file), timeout=20) as client:
                client.shutdown()
        except (OSError, TimeoutError):
            pass
    for process in processes:
        if process is None:
            continue
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
