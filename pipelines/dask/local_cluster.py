"""Stopping a local `dask scheduler` + `dask worker` pair started as separate processes (the tests and
benchmarks/wiki_mrc_memory.py start them; docs/scale_out.md §4)."""
from __future__ import annotations

import subprocess
from pathlib import Path

# After the scheduler's shutdown, how long a `dask worker` host may take to exit before it is killed.
# Its worker processes usually exit at once; after a job, one of them sometimes waits for the nanny's
# stop-queue thread until the nanny kills it 8 s later ("Worker process still alive after 8.0
# seconds, killing"), which cost every test module that starts a cluster 8 s.
GRACE_SECONDS = 2.0


def stop_local_cluster(scheduler_file: Path, processes: list[subprocess.Popen | None]) -> None:
    """Ask the scheduler to shut the cluster down, then make sure every process and its children
    have exited (killing what is still alive after GRACE_SECONDS: nothing of a stopped job is lost)."""
    import distributed
    import psutil  # a dependency of distributed

    if scheduler_file.exists():
        try:  # an orderly stop of scheduler and workers is faster than waiting on SIGTERM
            with distributed.Client(scheduler_file=str(scheduler_file), timeout=20) as client:
                client.shutdown()
        except (OSError, TimeoutError):
            pass
    for process in processes:
        if process is None:
            continue
        try:
            children = psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        process.terminate()
        try:
            process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # A worker process whose nanny was killed exits by itself (it watches its parent); make sure.
        _, alive = psutil.wait_procs(children, timeout=GRACE_SECONDS)
        for child in alive:
            child.kill()
        psutil.wait_procs(alive, timeout=GRACE_SECONDS)
