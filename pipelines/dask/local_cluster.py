"""A local `dask scheduler` + `dask worker` pair started as separate processes (the tests and
benchmarks/wiki_mrc_memory.py start them; docs/scale_out.md §4): the settings a cluster that runs
batch jobs is started with, and stopping it."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

# What a cluster does for watching it live, which a batch job pays in CPU: each worker's statistical
# profiler (a thread that samples the others every 10 ms, for the dashboard's profile page), the
# event loop's latency tick every 20 ms and the system monitor's psutil readings every 0.5 s, in
# every worker, nanny and the scheduler. The memory monitor is left alone: it is what pauses,
# spills and restarts a worker near its memory limit. docs/scale_out.md §4 has the measurement.
BATCH_SETTINGS = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
}


def environment_variable(key: str) -> str:
    """dask's environment name of a config key: "distributed.admin.tick.interval" ->
    DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL (dask reads "_" in a key as "-")."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def batch_environment(env: dict | None = None) -> dict:
    """`env` (default: this process's) with BATCH_SETTINGS as DASK_* variables, for the processes of
    a cluster that runs batch jobs; a setting already in `env` is kept."""
    env = dict(os.environ if env is None else env)
    for key, value in BATCH_SETTINGS.items():
        env.setdefault(environment_variable(key), str(value))
    return env

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
