"""Peak memory of every process of wiki_mrc on DirectRunner and on a local dask.distributed cluster.

    python benchmarks/wiki_mrc_memory.py [--scales 16,64] [--workers 2] [--memory_limit 1GB]
                                         [--pages_per_partition 200] [--runners direct,dask[,dask_unfused,dask_1worker,dask_live]]
                                         [--dask_shuffle disk|tasks] [--repeat N] [--keep DIR]

For each scale k the English excerpt is repeated k times (benchmarks/scaled_dumps.py: copies get
new titles and ids, and links renamed with them, so each has its own link graph) and re-packed as a
multistream dump of 100-page streams with its index, as Wikimedia publishes them, so that byte
ranges can be read by different workers. Then:

  direct  `python -m pipelines.wiki_mrc --runner DirectRunner` (one process, in-memory shuffles);
  dask    a fresh `dask scheduler` and `dask worker --nworkers W --nthreads 1 --memory-limit M`
          (spilling to --local-directory; started with the batch settings of
          pipelines/dask/local_cluster.py, as docs/scale_out.md §4 starts them; dask_live: with dask's
          defaults, for comparison), and `python -m pipelines.wiki_mrc --runner
          pipelines.dask.runner.DaskRunner --dask_npartitions P --dask_shuffle S`, P = pages /
          --pages_per_partition; with S = disk the shuffle files go to a folder of the work
          directory, whose largest size during the run is reported beside the workers' spill.

Every process of each tree (the launching client, the scheduler, the `dask worker` process that
hosts the nannies, each worker, multiprocessing helpers) is sampled every 0.2 s with psutil; its
peak RSS is the kernel's own high-water mark (VmHWM in /proc/PID/status), so a peak between two
samples is not missed; the client's is also taken from wait4() at its exit (the dumps are built in a
child process, so that this process stays small: a child's ru_maxrss starts at its parent's peak).
With DirectRunner at two scales or more, a line gives its peak's slope per MB of XML (what
pipelines/memory_check.py predicts from). All runs use the same input and options; "identical"
compares the bytes of every Parquet file (data/, stats.parquet, dead_letter/) between the outputs
(README.md quotes the command, so it differs). With --repeat N the runners run in N interleaved
rounds and each keeps its round with the least CPU: this machine's CPU time for the same work varies
by 10-20% with its host's load. The last line gives each Dask run's CPU over DirectRunner's;
dask_1worker keeps one core busy, as DirectRunner does, where two workers keep both busy (on a
machine whose cores share caches, a memory bus or a physical core, the same work then costs more
CPU time). With --keep DIR the dumps stay in DIR and a later run with the same DIR reuses them (a
dump is rebuilt only when it or its .pages count file is missing); the outputs there are replaced.
"""
from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import scaled_dumps  # noqa: E402  (benchmarks/scaled_dumps.py)
from wiki_mrc import DEFAULT_DUMP  # noqa: E402  (benchmarks/wiki_mrc.py)
from dask_trace_summary import print_trace_summary  # noqa: E402

from pipelines.dask.local_cluster import batch_environment, stop_local_cluster  # noqa: E402

DASK_RUNNERS = ("dask", "dask_unfused", "dask_1worker", "dask_live")


def build_in_a_child_process(src: Path, copies: int, directory: Path) -> tuple[Path, int, int]:
    """build_multistream_dump in a fresh interpreter, or the dump a --keep directory already holds:
    (the dump, its pages, its bytes of XML).

    Not in this process: building holds every page of the excerpt in memory, and a process started
    later inherits its parent's peak RSS in the ru_maxrss that wait4() reports (Linux records the
    pre-exec address space's high-water mark), so each client's peak would read at least this
    process's."""
    dump = repeated_dump_path(directory, copies)
    count_file = dump.with_suffix(".pages")
    if not (dump.exists() and count_file.exists()):
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            dump, pages, xml_bytes = pool.apply(build_multistream_dump, (src, copies, directory))
        count_file.write_text(f"{pages} {xml_bytes}")
    pages, xml_bytes = map(int, count_file.read_text().split())
    return dump, pages, xml_bytes


def build_multistream_dump(src: Path, copies: int, directory: Path) -> tuple[Path, int, int]:
    """The excerpt `copies` times over (benchmarks/scaled_dumps.py: each copy with its own link
    graph) as `<name>-multistream.xml.bz2` + index: (the dump, its pages, its bytes of XML)."""
    dump = repeated_dump_path(directory, copies)
    written = scaled_dumps.write_multistream(src, copies, dump)
    return dump, written.pages, written.xml_bytes


def repeated_dump_path(directory: Path, copies: int) -> Path:
    return directory / f"enwiki-x{copies}-pages-articles-multistream.xml.bz2"


def dask_npartitions(pages: int, workers: int, pages_per_partition: int = 200) -> int:
    """Partitions growing with the dump, so that one task (a bundle, a shuffle piece) holds a fixed
    amount of it whatever the dump's size; never fewer than the workers, or some would idle."""
    return max(workers, math.ceil(pages / pages_per_partition))


def peak_rss_mb(pid: int) -> float | None:
    """The kernel's high-water mark of the process's resident set (VmHWM), in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def role_of(process: psutil.Process, root_role: str, is_root: bool) -> str:
    if is_root:
        return root_role
    try:
        cmdline = " ".join(process.cmdline())
    except psutil.Error:
        return f"{root_role} child"
    if "resource_tracker" in cmdline:
        return "multiprocessing resource tracker"
    if "forkserver" in cmdline:
        return "multiprocessing forkserver"
    if "spawn_main" in cmdline or "multiprocessing" in cmdline:
        return "worker"  # a Nanny's worker process
    return f"{root_role} child"


def folder_mb(directories: list[Path]) -> float:
    """The size of the files under the folders now, in MB."""
    total = 0
    for directory in directories:
        for path in directory.rglob("*"):
            try:
                total += path.stat().st_size if path.is_file() else 0
            except OSError:
                pass
    return total / 1e6


class TreeSampler(threading.Thread):
    """Keeps, for every process ever seen under the roots, its role and largest VmHWM and CPU time."""

    def __init__(self, interval: float = 0.2):
        super().__init__(daemon=True)
        self.interval = interval
        self.roots: dict[int, str] = {}
        self.seen: dict[int, dict] = {}
        self.spill_dirs: list[Path] = []
        self.max_spill_mb = 0.0
        self.shuffle_dirs: list[Path] = []
        self.max_shuffle_mb = 0.0
        self._stopping = threading.Event()

    def add_root(self, pid: int, role: str) -> None:
        self.roots[pid] = role

    def sample(self) -> None:
        for root_pid, root_role in list(self.roots.items()):
            try:
                root = psutil.Process(root_pid)
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            for process in tree:
                record = self.seen.get(process.pid)
                if record is None:
                    record = self.seen[process.pid] = {
                        "role": role_of(process, root_role, process.pid == root_pid), "rss": 0.0, "cpu": 0.0}
                hwm = peak_rss_mb(process.pid)
                if hwm is not None:
                    record["rss"] = max(record["rss"], hwm)
                try:
                    times = process.cpu_times()
                    record["cpu"] = max(record["cpu"], times.user + times.system)
                except psutil.Error:
                    pass
        self.max_spill_mb = max(self.max_spill_mb, folder_mb(self.spill_dirs))
        self.max_shuffle_mb = max(self.max_shuffle_mb, folder_mb(self.shuffle_dirs))

    def run(self) -> None:
        while not self._stopping.is_set():
            self.sample()
            self._stopping.wait(self.interval)

    def stop(self) -> None:
        self._stopping.set()
        self.join()
        self.sample()


def run_client(cmd: list[str], env: dict, sampler: TreeSampler, log: Path) -> tuple[float, float, float]:
    """Runs the launching process to its end: (wall seconds, peak RSS MB from wait4, CPU seconds)."""
    start = time.perf_counter()
    with open(log, "wb") as out:
        client = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        sampler.add_root(client.pid, "client (python -m pipelines.wiki_mrc)")
        _, status, usage = os.wait4(client.pid, 0)
        client.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if client.returncode:
        raise SystemExit(f"failed ({client.returncode}): {' '.join(cmd)}\n{log.read_text()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


class LocalDaskCluster:
    """`dask scheduler` + `dask worker --nworkers W --nthreads 1 --memory-limit M` as separate processes."""

    def __init__(self, directory: Path, workers: int, memory_limit: str, env: dict, sampler: TreeSampler):
        self.directory, self.workers, self.memory_limit, self.env, self.sampler = directory, workers, memory_limit, env, sampler
        self.scheduler_file = directory / "scheduler.json"
        self.spill_dir = directory / "spill"
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> "LocalDaskCluster":
        import distributed

        self.directory.mkdir(parents=True, exist_ok=True)
        log = open(self.directory / "cluster.log", "wb")
        scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(self.scheduler_file)],
            cwd=self.directory, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(scheduler)
        self.sampler.add_root(scheduler.pid, "dask scheduler")
        deadline = time.time() + 120
        while not self.scheduler_file.exists():
            if scheduler.poll() is not None or time.time() > deadline:
                raise SystemExit(f"dask scheduler did not start: {(self.directory / 'cluster.log').read_text()[-2000:]}")
            time.sleep(0.2)
        workers = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(self.scheduler_file),
             "--nworkers", str(self.workers), "--nthreads", "1", "--memory-limit", self.memory_limit,
             "--local-directory", str(self.spill_dir), "--no-dashboard"],
            cwd=self.directory, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(workers)
        self.sampler.add_root(workers.pid, "dask worker (nanny host)")
        self.sampler.spill_dirs.append(self.spill_dir)
        with distributed.Client(scheduler_file=str(self.scheduler_file), timeout=120) as client:
            client.wait_for_workers(self.workers, timeout=180)
        return self

    def __exit__(self, *exc) -> None:
        self.sampler.sample()  # the workers' high-water marks, before they exit
        stop_local_cluster(self.scheduler_file, list(reversed(self.processes)))


def parquet_bytes(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


HEADER = (f"{'scale':>5} {'pages':>6} {'bz2 MB':>6} | {'runner':<12} {'process':<34} {'pid':>7} {'peak RSS MB':>11} "
          f"{'cpu s':>6} {'seconds':>7} | identical")


def print_rows(k, pages, mb, runner, seconds, processes, extra, identical, stream=sys.stdout) -> None:
    for pid, record in processes:
        print(f"{k:>5} {pages:>6} {mb:>6.1f} | {runner:<12} {record['role']:<34} {pid:>7} {record['rss']:>11.0f} "
              f"{record['cpu']:>6.1f} {seconds:>7.0f} | {identical}", file=stream)
    total = sum(r["rss"] for _, r in processes)
    print(f"{k:>5} {pages:>6} {mb:>6.1f} | {runner:<12} {'sum of peaks':<34} {'':>7} {total:>11.0f} "
          f"{sum(r['cpu'] for _, r in processes):>6.1f} {seconds:>7.0f} | {identical}", file=stream)
    if extra:
        print(f"{'':>22}   ({extra})", file=stream)
    stream.flush()


def print_table(dump_name: str, rows: list) -> None:
    print(f"\ndump {dump_name} repeated; peak RSS = VmHWM of each process; seconds = the launching process's wall time")
    print(HEADER)
    for row in rows:
        print_rows(*row)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP, help="an English pages-articles .xml.bz2")
    parser.add_argument("--scales", default="16,64", help="comma-separated repeat factors")
    parser.add_argument("--runners", default="direct,dask",
                        help="comma-separated: direct, dask, dask_unfused (dask with --dask_fusion off), "
                             "dask_1worker (one worker process, so one busy core as with DirectRunner), "
                             "dask_live (the cluster with dask's default settings instead of the batch ones)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="interleaved rounds of all the runners; the round with the least CPU of each is kept")
    parser.add_argument("--workers", type=int, default=2, help="dask worker processes (one thread each)")
    parser.add_argument("--memory_limit", default="1GB", help="dask worker --memory-limit (spills at 70%% of it)")
    parser.add_argument("--pages_per_partition", type=int, default=200,
                        help="--dask_npartitions = pages / this (at least the worker count)")
    parser.add_argument("--streams_per_range", default="1", help="wiki_mrc --streams_per_range (100 pages a stream)")
    parser.add_argument("--min_mentions_en", default="10")
    parser.add_argument("--dask_shuffle", default="disk", choices=("disk", "tasks"),
                        help="pipelines.dask.runner's --dask_shuffle (GroupByKey, Reshuffle)")
    parser.add_argument("--keep", type=Path, help="keep dumps and outputs here instead of a temporary directory")
    parser.add_argument("--dask_trace", action="store_true",
                        help="debug: the runner's --dask_trace_dir (a line per task: elements, pickled bytes, "
                             "largest group, worker RSS before/after) into <work>/trace-dask-S-K, summarised "
                             "after the run (pickling every output costs CPU: not for timings)")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    runners = args.runners.split(",")
    rows, xml_mb = [], {}
    tmp_context = tempfile.TemporaryDirectory(prefix="wiki_mrc_memory-") if args.keep is None else None
    work = Path(tmp_context.name) if tmp_context else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        for k in (int(s) for s in args.scales.split(",")):
            dump, pages, xml_bytes = build_in_a_child_process(args.dump, k, work)
            mb = dump.stat().st_size / 1e6
            xml_mb[k] = xml_bytes / 1e6
            print(f"{k}x: {pages} pages, {mb:.1f} MB multistream bz2", file=sys.stderr, flush=True)
            job = [sys.executable, "-m", "pipelines.wiki_mrc", "--dump", f"en={dump}",
                   "--min_mentions_en", args.min_mentions_en, "--streams_per_range", args.streams_per_range]
            outputs = {}
            best: dict = {}
            for runner in [runner for _ in range(args.repeat) for runner in runners]:
                out = work / (f"out-{runner}-{args.dask_shuffle}-{k}" if runner.startswith("dask") else f"out-{runner}-{k}")
                shutil.rmtree(out, ignore_errors=True)  # this benchmark's own earlier output
                sampler = TreeSampler()
                sampler.start()
                if runner == "direct":
                    cmd = [*job, "--runner", "DirectRunner", "--direct_num_workers", "1", "--output", str(out)]
                    seconds, rss, cpu = run_client(cmd, env, sampler, work / f"{runner}-{k}.log")
                    sampler.stop()
                    extra = ""
                elif runner in DASK_RUNNERS:
                    workers = 1 if runner == "dask_1worker" else args.workers
                    cluster_env = env if runner == "dask_live" else batch_environment(env)
                    npartitions = dask_npartitions(pages, args.workers, args.pages_per_partition)
                    shuffle_dir = work / f"cluster-{k}" / "shuffle"
                    with LocalDaskCluster(work / f"cluster-{k}", workers, args.memory_limit, cluster_env, sampler) as cluster:
                        shuffle_dir.mkdir(parents=True, exist_ok=True)
                        sampler.shuffle_dirs.append(shuffle_dir)
                        cmd = [*job, "--runner", "pipelines.dask.runner.DaskRunner", "--dask_scheduler_file",
                               str(cluster.scheduler_file), "--dask_npartitions", str(npartitions),
                               "--dask_shuffle", args.dask_shuffle, "--dask_shuffle_dir", str(shuffle_dir),
                               "--output", str(out)] + (["--dask_fusion", "off"] if runner == "dask_unfused" else [])
                        trace_dir = work / f"trace-{runner}-{args.dask_shuffle}-{k}"
                        if args.dask_trace:
                            shutil.rmtree(trace_dir, ignore_errors=True)
                            cmd += ["--dask_trace_dir", str(trace_dir)]
                        seconds, rss, cpu = run_client(cmd, env, sampler, work / f"{runner}-{args.dask_shuffle}-{k}.log")
                    sampler.stop()
                    if args.dask_trace:
                        print_trace_summary(trace_dir, stream=sys.stderr)
                    extra = (f"{workers} worker(s) x 1 thread, --memory-limit {args.memory_limit}, "
                             f"--dask_npartitions {npartitions}, --dask_shuffle {args.dask_shuffle}: "
                             f"spilled up to {sampler.max_spill_mb:.0f} MB, shuffle files up to "
                             f"{sampler.max_shuffle_mb:.0f} MB")
                else:
                    raise SystemExit(f"--runners: unknown runner {runner!r} (direct, {', '.join(DASK_RUNNERS)})")
                outputs[runner] = parquet_bytes(out)
                processes = sorted(sampler.seen.items(), key=lambda item: (item[1]["role"], item[0]))
                for pid, record in processes:
                    if record["role"].startswith("client"):
                        record["rss"], record["cpu"] = max(record["rss"], rss), max(record["cpu"], cpu)
                print_rows(k, pages, mb, runner, seconds, processes, extra, "(pending)", stream=sys.stderr)
                cpu_total = sum(record["cpu"] for _, record in processes)
                if runner not in best or cpu_total < best[runner][0]:
                    best[runner] = (cpu_total, (k, pages, mb, runner, seconds, processes, extra))
            rows += [row for _, row in best.values()]
            identical = "-"
            if len(outputs) >= 2:
                first, *others = outputs.values()
                identical = "yes" if all(other == first for other in others) and any(
                    name.startswith("data/") for name in first) else "no"
            rows = [row if row[0] != k else (*row, identical) for row in rows]
            shutil.rmtree(work / f"cluster-{k}", ignore_errors=True)
            if tmp_context:
                for path in work.glob(f"*x{k}-*"):
                    path.unlink()
    finally:
        if tmp_context:
            tmp_context.cleanup()
    print_table(args.dump.name, rows)
    print_direct_slope(rows, xml_mb)
    print_ratios(rows, args.repeat)


def print_ratios(rows: list, repeat: int) -> None:
    """Each Dask run's CPU (all its processes) over DirectRunner's at the same scale."""
    for k in dict.fromkeys(row[0] for row in rows):
        cpu = {row[3]: sum(r["cpu"] for _, r in row[5]) for row in rows if row[0] == k}
        if "direct" not in cpu:
            continue
        kept = f" (least of {repeat} rounds each)" if repeat > 1 else ""
        ratios = ", ".join(f"{runner} {cpu[runner]:.1f} = {cpu[runner] / cpu['direct']:.2f}x" for runner in cpu
                           if runner != "direct")
        print(f"{k}x CPU-s{kept}: direct {cpu['direct']:.1f}; {ratios}")


def print_direct_slope(rows: list, xml_mb: dict[int, float]) -> None:
    """DirectRunner's peak RSS per MB of the dump's XML and of its bz2 file, between the least and the
    largest scale: what pipelines/memory_check.py predicts a run's peak from."""
    direct = {row[0]: (row[2], sum(r["rss"] for _, r in row[5])) for row in rows if row[3] == "direct"}
    if len(direct) < 2:
        return
    small, large = min(direct), max(direct)
    (bz2_a, rss_a), (bz2_b, rss_b) = direct[small], direct[large]
    per_xml = (rss_b - rss_a) / (xml_mb[large] - xml_mb[small])
    per_bz2 = (rss_b - rss_a) / (bz2_b - bz2_a)
    print(f"DirectRunner {small}x -> {large}x: peak RSS {rss_a:.0f} -> {rss_b:.0f} MB, +{per_xml:.3f} MB per MB of XML "
          f"(+{per_bz2:.2f} per MB of bz2); at zero input {rss_a - per_xml * xml_mb[small]:.0f} MB; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

if __name__ == "__main__":
    main()
