"""wiki_mrc distributed over a real dask.distributed cluster: a scheduler and two worker processes.

The real English excerpt, re-packed as a multistream dump so that its byte ranges are read by
different workers, runs through `pipelines/dask/runner.py` (Beam 2.77's DaskRunner with the
fixes its docstring lists: Beam's own cannot run multi-output ParDos) and must give byte-identical
Parquet to DirectRunner, with either shuffle (`--dask_shuffle disk`, the default, and `tasks`). The
two worker processes have different hash seeds (PYTHONHASHSEED is not set), so a shuffle that
partitioned keys by Python's `hash()` would split groups and change the bytes. Needs
`apache-beam[dask]` (the scale extra); skipped without it.
"""
from __future__ import annotations

import bz2
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="needs the scale extra: pip install -e '.[scale]'")

from corpora.dumps.multistream import split_dump_pages, write_multistream  # noqa: E402
from pipelines import interrupts, wiki_mrc  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
from pipelines.dask import disk_shuffle as dask_disk_shuffle  # noqa: E402
from pipelines.dask import runner as beam_dask_runner  # noqa: E402
from pipelines.dask import task_order  # noqa: E402
from pipelines.dask.local_cluster import BATCH_SETTINGS, batch_environment, stop_local_cluster  # noqa: E402
from conftest import SHARED_DATA  # noqa: E402

EXCERPT = SHARED_DATA / "wikipedia" / "enwiki-excerpt.xml.bz2"
SAMPLE = ROOT / "corpora" / "samples" / "wiki" / "enwiki-sample-pages-articles-multistream.xml.bz2"
WORKERS = 2
# Per worker process: spilling starts at 70% of it; docs/scale_out.md §4 measures what a worker needs.
WORKER_MEMORY_LIMIT = 1_000_000_000


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """`dask scheduler` and `dask worker --nworkers 2` as separate processes, started with the batch
    settings (docs/scale_out.md §4), stopped afterwards."""
    tmp = tmp_path_factory.mktemp("dask")
    scheduler_file = tmp / "scheduler.json"
    env = batch_environment({**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    logs = [open(tmp / "scheduler.log", "wb"), open(tmp / "workers.log", "wb")]
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(scheduler_file)],
        env=env, cwd=tmp, stdout=logs[0], stderr=subprocess.STDOUT,
    )
    workers = None
    try:
        deadline = time.time() + 60
        while not scheduler_file.exists():
            assert scheduler.poll() is None and time.time() < deadline, (tmp / "scheduler.log").read_text()
            time.sleep(0.2)
        # cwd elsewhere than the checkout: the workers must get paths and code through the job, not by luck.
        workers = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
             "--nworkers", str(WORKERS), "--nthreads", "1", "--no-dashboard", "--memory-limit", str(WORKER_MEMORY_LIMIT)],
            env=env, cwd=tmp, stdout=logs[1], stderr=subprocess.STDOUT,
        )
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=60) as client:
            client.wait_for_workers(WORKERS, timeout=90)
        yield scheduler_file
    finally:
        stop_local_cluster(scheduler_file, [workers, scheduler] if workers is not None else [scheduler])
        for log in logs:
            log.close()


def outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


def run_on_dask_and_direct(tmp_path, scheduler_file, dump: Path, *args: str, dask_args: tuple[str, ...] = ()):
    """The same job on the cluster and on DirectRunner; the names of the workers that ran bundles."""
    with distributed.Client(scheduler_file=str(scheduler_file)) as monitor, distributed.get_task_stream(monitor) as tasks:
        dask_stats = wiki_mrc.run(["--runner", "pipelines.dask.runner.DaskRunner", "--dask_scheduler_file", str(scheduler_file),
                                   "--output", str(tmp_path / "dask"), "--dump", f"en={dump}", *args, *dask_args])
    direct_stats = wiki_mrc.run(["--runner", "DirectRunner", "--output", str(tmp_path / "direct"), "--dump", f"en={dump}", *args])
    # A stage runs as one task per partition, under its own key ("..._run_stage...") or, fused into
    # the disk shuffle's write that alone reads it, under the write's (pipelines/dask/task_order.py).
    bundle_workers = {t["worker"] for t in tasks.data if _STAGE_TASK_RE.search(str(t["key"]))}
    writes = assert_each_shuffle_file_written_once(tasks.data)
    assert bool(writes) == ("tasks" not in dask_args), "disk shuffle tasks ran iff --dask_shuffle disk (the default)"
    return dask_stats, direct_stats, bundle_workers


_STAGE_TASK_RE = re.compile(r"_run_stage|shuffle-[0-9a-f]{12}-write")


def assert_each_shuffle_file_written_once(task_stream: list[dict]) -> None:
    """No disk-shuffle write task ran under a second name. Dask's optimisation of a collection passed
    as an argument (the runner's side inputs once were) copied that collection's whole upstream graph
    under renamed keys (`...-write-<32 hex>`), so every stage above ran twice and two tasks wrote the
    same shuffle file. (The stream also lists each fused task's alias, `shuffle-...-write`, so
    counting runs per key would count 2.)"""
    copies = {str(t["key"]) for t in task_stream if re.search(r"shuffle-[0-9a-f]{12}-write-[0-9a-f]+'", str(t["key"]))}
    writes = [t for t in task_stream if re.search(r"shuffle-[0-9a-f]{12}-write", str(t["key"]))]
    assert not copies, sorted(copies)[:3]
    return writes


@pytest.mark.slow
@pytest.mark.skipif(not EXCERPT.exists(), reason="../shared/data is not beside this checkout")
@pytest.mark.parametrize("shuffle, fusion", [("disk", "on"), ("tasks", "on"), ("disk", "off")])
def test_wiki_mrc_on_dask_cluster_matches_direct_runner_on_real_excerpt(tmp_path, dask_cluster, shuffle, fusion):
    with bz2.open(EXCERPT, "rb") as f:
        header, pages, footer = split_dump_pages(iter(lambda: f.read(1 << 20), b""))
    dump = tmp_path / "enwiki-excerpt-pages-articles-multistream.xml.bz2"
    write_multistream(pages, header, footer, dump, tmp_path / "enwiki-excerpt-pages-articles-multistream-index.txt.bz2", 10)
    dask_stats, direct_stats, bundle_workers = run_on_dask_and_direct(
        tmp_path, dask_cluster, dump, "--min_mentions_en", "2", "--streams_per_range", "2",
        dask_args=("--dask_shuffle", shuffle, "--dask_fusion", fusion))
    assert dask_stats.equals(direct_stats)
    by_metric = {r["metric"]: r["value"] for r in direct_stats.to_pylist()}
    assert by_metric["pages/read"] == 206 and by_metric["examples/answerable"] > 50
    dask_files, direct_files = outputs(tmp_path / "dask"), outputs(tmp_path / "direct")
    assert any(name.startswith("data/train-") for name in direct_files)
    assert dask_files == direct_files  # same rows, same shards, same bytes
    if shuffle == "disk" and fusion == "on":
        # dask places a task-shuffle piece where its inputs are: on this small job it once ran every
        # bundle on one worker (1 run in 2); a disk shuffle's reads depend only on the small barrier.
        # Unfused, every ParDo is a task that follows its input to its worker, and this small job
        # ran on one worker in 1 run of 3.
        assert len(bundle_workers) == WORKERS, "both worker processes ran DoFn bundles"


# The task shuffle (kept for comparison) runs with the slow tests; the default, disk, runs in both.
@pytest.mark.parametrize("shuffle", ["disk", pytest.param("tasks", marks=pytest.mark.slow)])
def test_wiki_mrc_on_dask_cluster_matches_direct_runner_on_sample(tmp_path, dask_cluster, shuffle):
    """The bundled multistream sample (bad pages included, so dead letters and stats cross the cluster)."""
    shuffle_dir = tmp_path / "new disk" / "shuffle"  # not there yet: the job makes it
    dask_stats, direct_stats, bundle_workers = run_on_dask_and_direct(
        tmp_path, dask_cluster, SAMPLE, "--streams_per_range", "1",
        dask_args=("--dask_shuffle", shuffle, "--dask_shuffle_dir", str(shuffle_dir)))
    if shuffle == "disk":
        assert list(shuffle_dir.iterdir()) == [], "the shuffle files are removed when the pipeline ends"
    else:
        assert not shuffle_dir.exists(), "the task shuffle writes no files"
    assert dask_stats.equals(direct_stats)
    dask_files, direct_files = outputs(tmp_path / "dask"), outputs(tmp_path / "direct")
    assert any(name.startswith("dead_letter/") for name in direct_files)
    assert dask_files == direct_files
    # The bundles ran on the cluster's workers; whether dask spreads a job this small over both
    # depends on timing (the real-excerpt test above checks that both ran bundles).
    with distributed.Client(scheduler_file=str(dask_cluster)) as client:
        assert bundle_workers and bundle_workers <= set(client.scheduler_info()["workers"])


def load_memory_benchmark():
    """benchmarks/wiki_mrc_memory.py, whose N-times dump the memory table in docs/scale_out.md used."""
    spec = importlib.util.spec_from_file_location("wiki_mrc_memory", ROOT / "benchmarks" / "wiki_mrc_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.skipif(not EXCERPT.exists(), reason="../shared/data is not beside this checkout")
def test_wiki_mrc_on_memory_limited_dask_cluster_matches_direct_runner_on_4x_excerpt(tmp_path, dask_cluster):
    """The set-up of docs/scale_out.md §4 for dumps bigger than RAM, on the excerpt repeated 4 times:
    workers under --memory-limit (spilling), --dask_npartitions growing with the dump, 100-page
    streams read one range at a time. No worker may be restarted for exceeding its limit (a nanny
    restarts it under a new address), and the bytes must be DirectRunner's."""
    benchmark = load_memory_benchmark()
    dump, pages, _ = benchmark.build_multistream_dump(EXCERPT, 4, tmp_path)
    assert pages == 4 * 206
    npartitions = benchmark.dask_npartitions(pages, WORKERS)
    with distributed.Client(scheduler_file=str(dask_cluster)) as client:
        workers_before = set(client.scheduler_info()["workers"])
        dask_stats, direct_stats, bundle_workers = run_on_dask_and_direct(
            tmp_path, dask_cluster, dump, "--streams_per_range", "1", dask_args=("--dask_npartitions", str(npartitions)))
        assert set(client.scheduler_info()["workers"]) == workers_before, "a worker was restarted: over its memory limit"
        limits = {w["memory_limit"] for w in client.scheduler_info()["workers"].values()}
    assert limits == {WORKER_MEMORY_LIMIT}
    assert dask_stats.equals(direct_stats)
    by_metric = {r["metric"]: r["value"] for r in direct_stats.to_pylist()}
    # Enough rows for a difference between the runners to show: about 2 entities a copy reach the
    # threshold (each copy of the excerpt links within itself, benchmarks/scaled_dumps.py), up to 10
    # answerable examples each.
    assert by_metric["pages/read"] == pages and by_metric["examples/answerable"] >= 60
    dask_files, direct_files = outputs(tmp_path / "dask"), outputs(tmp_path / "direct")
    assert any(name.startswith("data/train-") for name in direct_files)
    assert dask_files == direct_files
    assert len(bundle_workers) == WORKERS


@pytest.mark.slow
@pytest.mark.skipif(not EXCERPT.exists(), reason="../shared/data is not beside this checkout")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_dask_run_leaves_no_output_and_no_shuffle_files(tmp_path, dask_cluster, signum):
    """SIGTERM (kill, a batch scheduler's time limit) or Ctrl-C while the workers write shuffle files:
    the job says one line, and neither its output, its staging folder and lock, nor its shuffle files
    are left, also once the tasks that were running when it stopped have ended."""
    dump, _, _ = load_memory_benchmark().build_multistream_dump(EXCERPT, 4, tmp_path)
    out, shuffle_root = tmp_path / "mrc", tmp_path / "shuffle"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.wiki_mrc", "--runner", "pipelines.dask.runner.DaskRunner",
         "--dask_scheduler_file", str(dask_cluster), "--dask_shuffle_dir", str(shuffle_root), "--no_progress",
         "--output", str(out), "--dump", f"en={dump}", "--streams_per_range", "1", "--dask_npartitions", "8"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 240
        while not list(shuffle_root.glob("*/shuffle-*")):
            assert proc.poll() is None, f"the job ended before it wrote a shuffle file: {proc.communicate()}"
            assert time.time() < deadline, "no shuffle file after 240 s"
            time.sleep(0.05)
        os.killpg(proc.pid, signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    status, message = ((interrupts.TERMINATED_STATUS, interrupts.TERMINATED_MESSAGE) if signum == signal.SIGTERM
                       else (interrupts.INTERRUPTED_STATUS, interrupts.MESSAGE))
    assert proc.returncode == status, stderr
    assert [line for line in stderr.splitlines() if line.strip()] == [message], stderr
    with distributed.Client(scheduler_file=str(dask_cluster)) as client:
        # A task running at the signal runs to its end on its worker (the scheduler has forgotten it).
        deadline = time.time() + 60
        while any(client.run(lambda dask_worker: dask_worker.state.executing_count).values()):
            assert time.time() < deadline, "the workers still run the stopped job's tasks after 60 s"
            time.sleep(0.2)
    assert list(shuffle_root.iterdir()) == [], "the run's shuffle files are removed"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".mrc")) == [], "staging or lock left"
    assert not out.exists()


KEYS = ["Paris", "paris", "Île-de-France", b"bytes key", ("en", "Paris"), ("de", 3), 7, -1, "", "x" * 300]


def partitions_in_a_fresh_process(hash_seed: str) -> dict[str, list[int]]:
    """The 16-way partition of each of KEYS by hash() and by key_partition, in a new process."""
    code = ("import json; from pipelines.dask import disk_shuffle as r\n"
            f"keys = {KEYS!r}\n"
            "coder = r.key_coder(None, 'test')\n"
            "print(json.dumps({'hash': [hash(k) % 16 for k in keys],\n"
            "                  'key_partition': [r.key_partition(k, 16, coder) for k in keys]}))")
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_a_worker_error_fails_the_pipeline_on_the_client(dask_cluster):
    """wait_until_finish waits without gathering results (dask/distributed#7331) and still raises
    the first failed task's exception, as Beam's DaskRunner does."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.runner import PipelineState

    options = PipelineOptions(["--dask_scheduler_file", str(dask_cluster)])
    pipeline = beam.Pipeline(runner=beam_dask_runner.DaskRunner(), options=options)
    _ = pipeline | beam.Create([1, 2, 3, 4]) | beam.Map(lambda x: 12 // (x - 3))  # pickled by value
    result = pipeline.run()
    with pytest.raises(ZeroDivisionError):
        result.wait_until_finish()
    assert result.state == PipelineState.FAILED


def test_the_cluster_processes_run_with_the_batch_settings(dask_cluster):
    """The DASK_* variables of batch_environment reach the scheduler and every worker as the config
    values of BATCH_SETTINGS (a misspelt variable would be ignored without a word)."""
    def settings():
        import dask
        return {key: dask.config.get(key, None) for key in BATCH_SETTINGS}

    with distributed.Client(scheduler_file=str(dask_cluster), timeout=60) as client:
        seen = [client.run_on_scheduler(settings), *client.run(settings).values()]
    assert len(seen) == 1 + WORKERS
    assert all(values == BATCH_SETTINGS for values in seen), seen


@pytest.mark.slow
def test_disk_shuffle_partitions_keys_the_same_in_every_process():
    """A key's output partition may not depend on the process: each worker writes its keys' pieces
    itself. Python's hash() of str/bytes does (two seeds give different partitions: the check can
    fail), the runner's key_partition does not."""
    runs = [partitions_in_a_fresh_process(seed) for seed in ("1", "2", "random")]
    assert runs[0]["hash"] != runs[1]["hash"], "hash() should differ between these seeds, or this test proves nothing"
    stable = [run["key_partition"] for run in runs]
    assert stable[0] == stable[1] == stable[2]
    assert len(set(stable[0])) > 3, "keys are spread over the partitions"
    coder = dask_disk_shuffle.key_coder(None, "test")
    assert stable[0] == [dask_disk_shuffle.key_partition(k, 16, coder) for k in KEYS]


def test_disk_shuffle_groups_keys_written_by_two_worker_processes(tmp_path, dask_cluster):
    """disk_shuffle on the cluster: 6 input partitions of str keys, spread over both workers; every
    key comes out as one group, in one partition, with its values in input order."""
    import dask.bag as db

    items = [(f"key {i % 23}", i) for i in range(600)]
    coder = dask_disk_shuffle.key_coder(None, "test")
    bag = db.from_sequence(items, npartitions=6)
    grouped = dask_disk_shuffle.disk_shuffle([bag], 4, dask_disk_shuffle.ByKey(coder), str(tmp_path)).map_partitions(
        beam_dask_runner._group_partition)
    with distributed.Client(scheduler_file=str(dask_cluster)) as client, distributed.get_task_stream(client) as tasks:
        partitions = client.gather(client.compute(grouped.to_delayed()))
    writers = {t["worker"] for t in tasks.data if "-write" in str(t["key"])}
    assert len(writers) == WORKERS, "both worker processes wrote shuffle files"
    groups = [group for partition in partitions for group in partition]
    assert len(groups) == 23 and len({key for key, _ in groups}) == 23, "one group per key"
    assert dict(groups) == {f"key {k}": [i for i in range(600) if i % 23 == k] for k in range(23)}
    for j, partition in enumerate(partitions):
        assert all(dask_disk_shuffle.key_partition(key, 4, coder) == j for key, _ in partition)


def test_disk_shuffle_stops_with_one_line_when_a_worker_cannot_see_the_folder(tmp_path):
    class OneBlindWorker:
        def run(self, function, *args):
            return {"tcp://127.0.0.1:1": function(*args), "tcp://10.0.0.2:2": False}

    with pytest.raises(SystemExit) as stopped:
        dask_disk_shuffle.make_shuffle_dir(OneBlindWorker(), str(tmp_path))
    message = str(stopped.value)
    assert "\n" not in message and "tcp://10.0.0.2:2" in message and "--dask_shuffle_dir" in message
    assert list(tmp_path.iterdir()) == [], "the folder it made is removed again"
    seen = dask_disk_shuffle.make_shuffle_dir(type("AllSee", (), {"run": lambda self, f, *a: {"w": f(*a)}})(), str(tmp_path))
    assert Path(seen).parent == tmp_path


def test_disk_shuffle_makes_its_folder_or_stops_with_one_line(tmp_path):
    all_see = type("AllSee", (), {"run": lambda self, f, *a: {"w": f(*a)}})()
    made = dask_disk_shuffle.make_shuffle_dir(all_see, str(tmp_path / "a" / "b"))
    assert Path(made).parent == tmp_path / "a" / "b"
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as stopped:
        dask_disk_shuffle.make_shuffle_dir(all_see, str(tmp_path / "file" / "shuffle"))
    assert "\n" not in str(stopped.value) and "--dask_shuffle_dir" in str(stopped.value)


def held_while_one_thread_runs(graph: dict, priority: dict, producer: str) -> int:
    """A one-thread dask worker with the whole graph ready to it: it runs the ready task of highest
    priority (the `priority` annotation, then dask.order's rank, as distributed's worker does).
    Returns the most results of tasks named `producer` held at once (done, some dependent not)."""
    from dask.core import get_deps
    from dask.order import order

    rank = order(graph)
    dependencies, dependents = get_deps(graph)
    unmet = {key: len(deps) for key, deps in dependencies.items()}
    unread = {key: len(users) for key, users in dependents.items()}
    ready = {key for key, n in unmet.items() if n == 0}
    held = most = 0
    name = lambda key: key[0] if isinstance(key, tuple) else key  # noqa: E731
    while ready:
        key = min(ready, key=lambda k: (-priority.get(k, 0), rank[k]))
        ready.remove(key)
        held += name(key) == producer
        for dep in dependencies[key]:
            unread[dep] -= 1
            held -= unread[dep] == 0 and name(dep) == producer
        most = max(most, held)
        for user in dependents[key]:
            unmet[user] -= 1
            if unmet[user] == 0:
                ready.add(user)
    return most


def test_parsed_partitions_are_consumed_before_more_are_read(tmp_path):
    """What made one worker grow with the dump (docs/scale_out.md §4, measured with --dask_trace_dir):
    in dask's own order a worker ran ReadPages/ParsePages partitions ahead of their consumers and
    held the parsed pages (on the 2-worker cluster: 4 of 17 partitions at 16x the excerpt, 25 of 66
    at 64x, 620 MB). On wiki_mrc's own graph, a one-thread worker that runs its ready task by
    priority holds one parsed partition at a time with the runner's order (downstream_first), and
    every partition with dask's (so this test fails without the fix)."""
    import apache_beam as beam
    import dask.bag
    from apache_beam.options.pipeline_options import PipelineOptions
    from pipelines import common

    held = {}
    for order in ("downstream_first", "dask"):
        options = PipelineOptions(["--dump", f"en={SAMPLE}", "--output", str(tmp_path / "out"), "--streams_per_range", "1"])
        opts = common.job_options(options, wiki_mrc.WikiMrcOptions, "wiki_mrc")
        pipeline = beam.Pipeline(options=options)
        specs, _ = wiki_mrc.plan(opts)
        wiki_mrc.build(pipeline, opts, specs)
        bag, visitor = beam_dask_runner.pipeline_collection(pipeline, 12, "disk", str(tmp_path), task_order=order)
        parse = next(name for name, labels in visitor.stages.items()
                     if "BuildMrcExamples/ParsePages/ParDo(ParsePagesFn)" in labels)
        if order == "dask":
            graph, priority = dask.bag.core.optimize(bag.__dask_graph__(), bag.__dask_keys__()), {}
        else:
            layer = bag.__dask_graph__().layers[bag.name]
            graph = dict(layer)
            priority = {key: layer.annotations["priority"](key) for key in graph}
        held[order] = held_while_one_thread_runs(graph, priority, parse)
    assert held["downstream_first"] == 1, held
    assert held["dask"] > 6, f"dask's own order held {held['dask']} of 12: this test would prove nothing"


def wiki_mrc_pipeline(tmp_path):
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from pipelines import common

    options = PipelineOptions(["--dump", f"en={SAMPLE}", "--output", str(tmp_path / "out"), "--streams_per_range", "1"])
    opts = common.job_options(options, wiki_mrc.WikiMrcOptions, "wiki_mrc")
    pipeline = beam.Pipeline(options=options)
    specs, _ = wiki_mrc.plan(opts)
    wiki_mrc.build(pipeline, opts, specs)
    return pipeline


def test_consecutive_pardos_are_one_stage_and_a_side_input_starts_a_new_one(tmp_path):
    _, visitor = beam_dask_runner.pipeline_collection(wiki_mrc_pipeline(tmp_path), 4, "disk", str(tmp_path))
    stages = list(visitor.stages.values())
    read = next(labels for labels in stages if "BuildMrcExamples/ParsePages/ParDo(ParsePagesFn)" in labels)
    assert read[0] == "ReadDumps/ReadPages/ParDo(ReadPagesFn)", "the stage starts after the Reshuffle"
    assert {"BuildMrcExamples/LinksByTarget", "BuildMrcExamples/TextsByPage"} <= set(read), "siblings fused too"
    written = {pc.producer.full_label for pc, sources in visitor.shuffle_sources.items()
               if any(isinstance(source, dask_disk_shuffle.WrittenExport) for source in sources)}
    assert "BuildMrcExamples/LinksByTarget" in written, "what only a shuffle reads is written by its stage's task"
    bucket = next(labels for labels in stages if "BuildMrcExamples/KeyByBucket" in labels)
    assert bucket[0] == "BuildMrcExamples/KeyByBucket", "a ParDo with a side input roots its own stage"
    _, unfused = beam_dask_runner.pipeline_collection(wiki_mrc_pipeline(tmp_path), 4, "disk", str(tmp_path), fuse=False)
    assert all(len(labels) == 1 for labels in unfused.stages.values())
    assert len(unfused.stages) > 2 * len(stages)


def test_fused_chains_keep_their_last_key_instead_of_an_alias_task(tmp_path):
    """dask's linear fusion leaves an Alias task per fused chain (a third of wiki_mrc's tasks); the
    runner's graph has none, every dependency is a task of it, and a bag computes the same."""
    import dask
    import dask.bag
    from dask._task_spec import Alias

    bag, _ = beam_dask_runner.pipeline_collection(wiki_mrc_pipeline(tmp_path), 4, "disk", str(tmp_path))
    graph = dict(bag.__dask_graph__().layers[bag.name])
    raw, _ = beam_dask_runner.pipeline_collection(wiki_mrc_pipeline(tmp_path), 4, "disk", str(tmp_path), task_order="dask")
    optimised = dask.bag.core.optimize(raw.__dask_graph__(), raw.__dask_keys__())
    assert sum(isinstance(node, Alias) for node in optimised.values()) > 20, "dask's fusion left no alias to fold"
    assert not any(isinstance(node, Alias) for node in graph.values())
    assert all(dependency in graph for node in graph.values() for dependency in node.dependencies)
    assert len(graph) == len(optimised) - sum(isinstance(node, Alias) for node in optimised.values())

    numbers = dask.bag.from_sequence(range(40), npartitions=4).map(lambda x: x * 3)
    both = dask.bag.concat([numbers.filter(lambda x: x % 2), numbers.map(lambda x: -x)]).map_partitions(sorted)
    expected = both.compute(scheduler="sync")
    assert task_order.downstream_first(both).compute(scheduler="sync", optimize_graph=False) == expected


def test_a_scheduler_without_the_project_installed_stops_the_job_with_one_line():
    """The import check must itself run where the runner's modules cannot be imported: it travels
    by value (cloudpickle, as distributed sends it), and there it names what is missing."""
    import cloudpickle

    payload = cloudpickle.dumps(beam_dask_runner._missing_modules).hex()
    code = ("import pickle, sys, json\n"
            "sys.meta_path = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n"
            f"sys.path = [p for p in sys.path if not p.startswith({str(ROOT)!r})]\n"
            f"check = pickle.loads(bytes.fromhex({payload!r}))\n"
            f"print(json.dumps(check({list(beam_dask_runner.RUNNER_MODULES)!r})))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == ["pipelines", "corpora"]

    class Cluster:
        def __init__(self, scheduler_missing, worker_missing):
            self.scheduler_missing, self.worker_missing = scheduler_missing, worker_missing

        def run_on_scheduler(self, function, names):
            return function(names) + self.scheduler_missing

        def run(self, function, names):
            return {"tcp://127.0.0.1:1": function(names) + self.worker_missing}

    beam_dask_runner.check_cluster_imports(Cluster([], []))  # everything importable: no stop
    for cluster, who in ((Cluster(["pipelines"], []), "the scheduler"),
                         (Cluster([], ["corpora"]), "worker tcp://127.0.0.1:1")):
        with pytest.raises(SystemExit) as stopped:
            beam_dask_runner.check_cluster_imports(cluster)
        message = str(stopped.value)
        assert "\n" not in message and message.startswith(f"error: {who} cannot import") and "installed" in message
