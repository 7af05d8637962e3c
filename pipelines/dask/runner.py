"""Beam 2.77's DaskRunner, with the three fixes our jobs need to run on a dask.distributed cluster.

    python -m pipelines.wiki_mrc --runner pipelines.dask.runner.DaskRunner \
        --dask_client_address tcp://SCHEDULER:8786 --dask_npartitions 16 --dump en=... --output ...

(the scheduler and the workers need the project importable too: start them from an environment
where it is installed; see docs/scale_out.md.)

Beam's own `apache_beam.runners.dask.dask_runner.DaskRunner` (2.77, any dask >= 2024.4.2) cannot run
any job in pipelines/; measured here, not guessed:

1. A multi-output ParDo (`.with_outputs(...)`: every job's stats and dead letters) hands *all* its
   outputs to every consumer: the visitor keys bags by producing transform, not by PCollection, so
   the dead-letter writer receives article tuples and fails (`TypeError: tuple indices must be
   integers or slices, not str` in WriteDeadLetters).
2. Outputs of `finish_bundle` are dropped: the bundle's results are collected before
   `invoke_finish_bundle()`, so `TallyingDoFn`'s per-bundle stats never arrive.
3. Only the last-applied transform's bag is computed (`list(bags.values())[-1]`), so every other
   sink (train shards, stats) is silently never written.

Also: its Reshuffle is a no-op and Create puts up to 128 elements in one partition, so a job's dump
list (a handful of elements) would run in one task whatever the cluster size; here Reshuffle
repartitions to `--dask_npartitions` (default: the cluster's worker threads) and GroupByKey keeps
exactly that many partitions. Side inputs are computed once as a dask `Item` that every task
receives, instead of being recomputed inside each task. Consecutive ParDos are fused into one task
per partition (`pipelines/dask/stages.py`, `--dask_fusion on`, the default): elements pass from DoFn
to DoFn, and only what is read outside the stage comes back as a list. A stage's DoFns are set up
once per worker process and reused across its bundles, one bundle at a time (as Beam's own workers
do), not unpickled and set up per task. While a task runs, Python's cyclic collector is paused and
its survivors are frozen afterwards (`pipelines/dask/gc_pause.py`): the data between tasks is Python
objects, not encoded bytes as in Beam's runners, and scanning it again and again cost a worker up to
a quarter of its CPU. Counters are not collected (Beam's DaskRunner has no metrics either); the
jobs' `stats.parquet` holds every count.

Shuffles (GroupByKey, Reshuffle): `--dask_shuffle disk` (the default, `pipelines/dask/disk_shuffle.py`: through
one file per input partition, at most 2n+1 tasks per shuffle, neither scheduler nor workers hold the
data; a fused stage writes what only a shuffle reads into the shuffle's file inside its own task)
or `tasks` (dask.bag's `groupby(shuffle="tasks")`: ~n log n tasks of in-memory pieces, held by the
workers and all known to the scheduler; kept for comparison). `disk` is the default because it
measured better on the same dumps, in memory and in CPU (docs/scale_out.md §4). Within a partition
the groups are made by the key itself, in the order the keys are first read.

Task order (`--dask_task_order downstream_first`, the default, or `dask`): the graph is optimised as
dask.bag does (a fused chain then keeps its last key, without the extra Alias task that dask adds
to name it) and every task gets the priority of its depth in the graph, so that a worker with
several ready tasks runs the one furthest downstream first. With dask's own order a worker ran
ReadPages and ParsePages partitions ahead of their consumers and held the parsed pages meanwhile, so
its memory grew with the dump (docs/scale_out.md §4). The order changes no output.

`--dask_trace_dir DIR` (debug, `pipelines/dask/task_trace.py`): a JSON line per task (stage, partition,
elements, pickled bytes, the worker's RSS before and after) and `DIR/names.json` (dask key name ->
Beam label); `benchmarks/wiki_mrc_memory.py --dask_trace` summarises them.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import pickle
import shutil
import uuid
import zlib

import dask.bag as db
import distributed
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor
from apache_beam.pvalue import PBegin
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask.overrides import (
    _Create,
    _Flatten,
    _GroupAlsoByWindow,
    _GroupByKeyOnly,
    _Reshuffle,
    dask_overrides,
)
from apache_beam.runners.dask.transform_evaluator import defenestrate
from apache_beam.runners.runner import PipelineState
from apache_beam.transforms.window import GlobalWindows
from dask.highlevelgraph import HighLevelGraph
from pipelines.dask.disk_shuffle import (
    ByKey, FileExport, WrittenExport, result_at, disk_shuffle, key_coder, make_shuffle_dir, new_shuffle_name,
)
from pipelines.dask.gc_pause import collection_paused
from pipelines.dask.stages import FusedStage, Step, is_reify_windows, plan_stages
from pipelines.dask.task_order import downstream_first
from pipelines.dask.task_trace import traced


class DaskShuffleOptions(PipelineOptions):
    """--dask_shuffle, --dask_shuffle_dir (see the module docstring)."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--dask_shuffle", choices=("disk", "tasks"), default="disk",
                            help="GroupByKey/Reshuffle through files (disk: scheduler and workers do not hold "
                                 "the shuffle) or dask.bag's in-memory task shuffle (tasks)")
        parser.add_argument("--dask_shuffle_dir", default=None,
                            help="where --dask_shuffle disk writes (a folder every worker sees under the same "
                                 "path; default: the launching process's temporary directory)")
        parser.add_argument("--dask_task_order", choices=("downstream_first", "dask"), default="downstream_first",
                            help="downstream_first: a worker runs its ready task deepest in the graph first, so "
                                 "that a partition's consumers run before the next partitions are read (memory "
                                 "flat in the dump's size); dask: dask's own order (kept for comparison)")
        parser.add_argument("--dask_fusion", choices=("on", "off"), default="on",
                            help="on: consecutive ParDos run as one task per partition (pipelines/dask/stages.py); "
                                 "off: a task per ParDo and partition (kept for comparison)")
        parser.add_argument("--dask_trace_dir", default=None,
                            help="debug: every task appends a JSON line (stage, partition, elements, pickled bytes, "
                                 "largest group, the worker's RSS and high-water mark before and after) to a file "
                                 "per process in this folder (every worker must see it)")


def _written_only(results: tuple) -> tuple:
    """A stage task's result without its lists: the (file name, offsets) of what it wrote to shuffles."""
    return tuple(None if isinstance(result, list) else result for result in results)


def _discard(_results) -> list:
    return []


def _concat(parts):
    return [x for part in parts for x in part]


def _spread_key(element, n):
    # Stable across processes (no Python hash), so a rerun spreads elements the same way.
    return zlib.crc32(pickle.dumps(element, protocol=4)) % n


def _passes_through(node) -> bool:
    """A node translated to no task: its output is its inputs' partitions (a Flatten's side by side)."""
    return isinstance(node.transform, _Flatten) or is_reify_windows(node)


def _group_partition(items) -> list:
    """(key, value) items -> [(key, [values])], keys in first-read order, values in read order."""
    groups: dict = {}
    with collection_paused():
        for key, value in items:
            groups.setdefault(key, []).append(defenestrate(value))
        return list(groups.items())


class _BagsPerPCollection(PipelineVisitor):
    """Translates the (overridden) pipeline into one dask bag per PCollection read outside its stage
    (pipelines/dask/stages.py: consecutive ParDos are one task per partition)."""

    def __init__(self, npartitions: int, shuffle: str = "disk", shuffle_dir: str | None = None,
                 trace_dir: str | None = None, fuse: bool = True):
        self.npartitions = npartitions
        self.shuffle, self.shuffle_dir, self.trace_dir, self.fuse = shuffle, shuffle_dir, trace_dir, fuse
        self.nodes: list = []
        self.bags: dict = {}
        self.names: dict = {}  # dask key name -> Beam label (for --dask_trace_dir)
        self.stages: dict = {}  # dask key name of a stage -> the Beam labels of its ParDos, in stage order
        self.side_items: dict = {}
        self.readers: dict = collections.defaultdict(list)  # PCollection -> the nodes that read it
        self.stage_sinks: list = []
        self.shuffle_of: dict = {}  # PCollection -> the disk shuffle that alone reads it (see shuffle_inputs)
        self.shuffles: dict = {}  # disk shuffle node -> (name, partition function)
        self.shuffle_sources: dict = {}  # PCollection only a disk shuffle reads -> its sources (disk_shuffle)

    def visit_transform(self, node):
        self.nodes.append(node)
        for pcoll in [*node.inputs, *(si.pvalue for si in node.side_inputs)]:
            if not isinstance(pcoll, PBegin):
                self.readers[pcoll].append(node)

    def translate(self) -> None:
        self.shuffle_inputs()
        plan = plan_stages(self.nodes, self.fuse)
        for node in self.nodes:
            root = plan.root(node)
            if root is node:
                self.translate_stage(plan.members[node])
            elif root is None:
                self.translate_transform(node)

    def is_disk_shuffle(self, node) -> bool:
        return self.shuffle == "disk" and isinstance(node.transform, (_GroupByKeyOnly, _Reshuffle))

    def shuffle_inputs(self) -> None:
        """Finds every PCollection whose one reader is a disk shuffle, directly or through Flattens
        and a GroupByKey's ReifyWindows (no task of their own): a stage writes such an export into
        the shuffle's file inside its own task, instead of returning it to a write task."""
        for node in reversed(self.nodes):  # readers before the nodes they read
            if self.is_disk_shuffle(node):
                name = new_shuffle_name()
                if isinstance(node.transform, _Reshuffle):
                    self.shuffles[node] = (name, _spread_key)
                else:
                    source = next(pc for pc in node.inputs if not isinstance(pc, PBegin))
                    self.shuffles[node] = (name, ByKey(key_coder(source, node.full_label)))
            for pcoll in node.outputs.values():
                readers = self.readers[pcoll]
                if len(readers) != 1:
                    continue
                reader = readers[0]
                if reader in self.shuffles:
                    self.shuffle_of[pcoll] = reader
                elif _passes_through(reader) and next(iter(reader.outputs.values())) in self.shuffle_of:
                    self.shuffle_of[pcoll] = self.shuffle_of[next(iter(reader.outputs.values()))]

    def sources_of(self, pcoll) -> list:
        return self.shuffle_sources[pcoll] if pcoll in self.shuffle_sources else [self.bags[pcoll]]

    def translate_stage(self, members: list) -> None:
        """One task per partition for the stage's ParDos; a bag per PCollection read outside it."""
        inside = set(members)
        channels: dict = {}  # PCollection -> channel
        exports: list = []  # channel -> position in the task's result, or None
        exported: list = []  # (PCollection, label) per position
        file_exports: dict = {}  # position -> FileExport
        stage_id = uuid.uuid4().hex[:12]
        steps = []
        for node in members:
            outputs = {}
            for tag, pcoll in node.outputs.items():
                channels[pcoll] = outputs[tag] = len(exports)
                if any(reader not in inside for reader in self.readers[pcoll]):
                    if pcoll in self.shuffle_of:
                        name, partition_of = self.shuffles[self.shuffle_of[pcoll]]
                        file_exports[len(exported)] = FileExport(self.shuffle_dir, f"{name}-{stage_id}-{len(exported)}",
                                                                 self.npartitions, partition_of)
                    exports.append(len(exported))
                    exported.append((pcoll, f"{node.full_label} [{tag}]"))
                else:
                    exports.append(None)
            main_input = next(iter(node.main_inputs.values()))
            steps.append(Step.of(node, None if node is members[0] else channels[main_input], outputs))
        root = members[0]
        source = self.bags[next(iter(root.main_inputs.values()))]
        side_specs = [(type(si), si._view_options()) for si in root.side_inputs]
        side_items = [self.side_input(si.pvalue) for si in root.side_inputs]
        stage = FusedStage(steps, exports, side_specs, file_exports)
        label = root.full_label if len(members) == 1 else f"{root.full_label} (+{len(members) - 1} fused)"
        # A graph layer of our own, not `map_partitions(..., *side_items)`: dask passes a collection
        # argument through its own optimisation, which copied the side input's whole upstream graph
        # under new names, so that every stage above a side input ran again for it.
        name = f"_run_stage-{uuid.uuid4().hex}"
        graph = {(name, i): (traced(stage, "bundle", label, i, self.trace_dir), i, (source.name, i),
                             *[item.key for item in side_items])
                 for i in range(source.npartitions)}
        results = db.Bag(HighLevelGraph.from_collections(name, graph, dependencies=[source, *side_items]),
                         name, source.npartitions)
        self.names[name] = f"{label} (all outputs)"
        self.stages[name] = [node.full_label for node in members]
        # The shuffles' barriers read the written files' offsets from a task of their own per partition,
        # not from the stage's result: that holds the stage's other exports, and a barrier waits for
        # every partition. A stage that exports nothing else returns only offsets: no task needed.
        only_files = len(file_exports) == len(exported)
        written = (results if only_files else results.map_partitions(_written_only)) if file_exports else None
        for position, (pcoll, output_label) in enumerate(exported):
            if position in file_exports:
                self.shuffle_sources[pcoll] = [WrittenExport(written, position)]
                continue
            self.bags[pcoll] = results.map_partitions(result_at, position)
            self.names[self.bags[pcoll].name] = output_label
        if any(not self.readers[pcoll] for pcoll in channels):
            self.stage_sinks.append(results)  # a PCollection nobody reads: the stage must still run

    def translate_transform(self, node) -> None:
        transform = node.transform
        inputs = [pc for pc in node.inputs if not isinstance(pc, PBegin)]
        if is_reify_windows(node) and not isinstance(next(iter(node.main_inputs.values())).windowing.windowfn,
                                                       GlobalWindows):
            raise NotImplementedError(f"{node.full_label}: only the global window is translated to dask")
        if _passes_through(node) and next(iter(node.outputs.values())) in self.shuffle_of:
            # No bag: what a disk shuffle alone reads is handed to it as its sources, so that the
            # stages that made them write them into its files themselves.
            self.shuffle_sources[next(iter(node.outputs.values()))] = [s for pc in inputs for s in self.sources_of(pc)]
            return
        bags = [] if self.is_disk_shuffle(node) else [self.bags[pc] for pc in inputs]  # a disk shuffle reads sources_of
        if isinstance(transform, _Create):
            values = list(transform.values)
            out = db.from_sequence(values, npartitions=max(1, min(len(values), self.npartitions))) if values \
                else db.from_sequence([None], npartitions=1).filter(lambda _: False)
        elif isinstance(transform, _Reshuffle):
            n = self.npartitions
            if self.shuffle == "disk":
                name, partition_of = self.shuffles[node]
                out = disk_shuffle(self.sources_of(inputs[0]), n, partition_of, self.shuffle_dir, node.full_label,
                                   self.trace_dir, name)
            else:
                out = (bags[0].map(lambda x: (_spread_key(x, n), x))
                       .repartition(npartitions=n)
                       .groupby(lambda kv: kv[0], shuffle="tasks")
                       .map(lambda group: [x for _, x in group[1]]).flatten())
        elif isinstance(transform, _GroupByKeyOnly):
            if self.shuffle == "disk":
                # Any number of input partitions: one file each, read by npartitions output tasks.
                name, partition_of = self.shuffles[node]
                out = disk_shuffle(self.sources_of(inputs[0]), self.npartitions, partition_of, self.shuffle_dir,
                                   node.full_label, self.trace_dir, name).map_partitions(
                    traced(_group_partition, "group", node.full_label, None, self.trace_dir))
            else:
                source = bags[0]
                if source.npartitions != self.npartitions:
                    # Flatten adds its inputs' partitions up; without this the task count grows stage by stage.
                    source = source.repartition(npartitions=self.npartitions)
                out = source.groupby(lambda kv: kv[0], shuffle="tasks").map(
                    lambda group: (group[0], [defenestrate(kv[1]) for kv in group[1]]))
        elif isinstance(transform, _GroupAlsoByWindow):
            out = bags[0]  # global windows only: the groups are already complete
        elif isinstance(transform, _Flatten):
            # The inputs' partitions side by side (their count adds up), not merged: partition i of an
            # early stage merged with partition i of a late one is held until the late one runs, so a
            # merged Flatten before a shuffle held a whole stage's output (its memory grew with the dump).
            out = db.concat(bags) if bags else db.from_sequence([None], npartitions=1).filter(lambda _: False)
        elif is_reify_windows(node):
            # In the global window a GroupByKey's window is known: no task to wrap each value in it.
            out = bags[0]
        else:
            raise NotImplementedError(f"{node.full_label}: {type(transform).__name__} is not translated to dask")
        for pcoll in node.outputs.values():
            self.bags[pcoll] = out
        self.names[out.name] = node.full_label

    def side_input(self, pcoll) -> db.Item:
        """One task that gathers the PCollection into a list, made once however many ParDos read it."""
        if pcoll not in self.side_items:
            bag = self.bags[pcoll]
            key = f"side-input-{uuid.uuid4().hex}"
            graph = {key: (traced(_concat, "side", str(pcoll), None, self.trace_dir),
                           [(bag.name, i) for i in range(bag.npartitions)])}
            self.side_items[pcoll] = db.Item(HighLevelGraph.from_collections(key, graph, dependencies=[bag]), key)
        return self.side_items[pcoll]

    def sinks(self) -> list:
        """Every PCollection nobody reads and every stage with one: computing them all runs every write, once."""
        return [bag for pcoll, bag in self.bags.items() if not self.readers[pcoll]] + self.stage_sinks


def pipeline_collection(pipeline, npartitions: int, shuffle: str = "disk", shuffle_dir: str | None = None,
                        trace_dir: str | None = None, task_order: str = "downstream_first", fuse: bool = True):
    """The whole pipeline as one dask bag to compute (already optimised and prioritised with
    downstream_first: compute it with optimize_graph=False), and the visitor that built it."""
    pipeline.replace_all(dask_overrides())
    visitor = _BagsPerPCollection(npartitions, shuffle, shuffle_dir, trace_dir, fuse)
    pipeline.visit(visitor)
    visitor.translate()
    # All sinks as one collection, so that dask optimises them together and each stage runs
    # once. `dask.optimize(*sinks)` optimises each sink on its own: a stage that feeds two sinks
    # (every multi-output ParDo's bundle feeds one chain per output) is fused into each chain
    # under a different name, so it ran once per chain (and a disk shuffle's files were written
    # by two copies of the same task).
    everything = db.concat(visitor.sinks()).map_partitions(_discard)
    return (downstream_first(everything) if task_order == "downstream_first" else everything), visitor


# The modules a task graph of this runner names: the scheduler unpickles the graph, the workers run it.
RUNNER_MODULES = ("pipelines", "corpora")

# A lambda, so that cloudpickle sends it by value: a process that cannot import this module can run it.
_missing_modules = lambda names: [n for n in names if __import__("importlib.util").util.find_spec(n) is None]  # noqa: E731


def check_cluster_imports(client) -> None:
    """Stops with one line if the scheduler or a worker cannot import the runner's modules (otherwise
    the job fails later with dask's `Error during deserialization of the task graph`)."""
    where = {"the scheduler": client.run_on_scheduler(_missing_modules, RUNNER_MODULES)}
    where.update({f"worker {address}": missing for address, missing in client.run(_missing_modules, RUNNER_MODULES).items()})
    blind = {process: missing for process, missing in where.items() if missing}
    if blind:
        process, missing = next(iter(blind.items()))
        raise SystemExit(f"error: {process} cannot import {', '.join(missing)} ({len(blind)} process(es) in all): start "
                         "the scheduler and the workers from an environment where the project is installed "
                         "(pip install 'xlu-factory[scale]'; docs/scale_out.md §4)")


@dataclasses.dataclass
class DaskRunnerResult(beam_dask.DaskRunnerResult):
    shuffle_dir: str | None = None  # removed when the pipeline has ended

    def wait_until_finish(self, duration=None) -> str:
        """Waits for the futures, then raises the first one's error, as Beam's does, but without
        gathering their results: Beam's `as_completed(..., with_results=True)` can wait forever with
        every task finished on the scheduler and nothing processing (dask/distributed#7331)."""
        try:
            try:
                distributed.wait(self.futures, timeout=None if duration is None else duration / 1000)
                failed = next((future for future in self.futures if future.status in ("error", "cancelled")), None)
                if failed is not None:
                    failed.result()  # the worker's exception, raised here
                self._state = PipelineState.DONE
            except BaseException:
                self._state = PipelineState.FAILED
                raise
            return self._state
        finally:
            if self._state in (PipelineState.DONE, PipelineState.FAILED):
                self.client.close()
                if self.shuffle_dir:
                    shutil.rmtree(self.shuffle_dir, ignore_errors=True)


class DaskRunner(beam_dask.DaskRunner):
    """`--runner pipelines.dask.runner.DaskRunner`; Beam's `--dask_*` options apply."""

    def run_pipeline(self, pipeline, options):
        import dask.distributed as ddist

        dask_options = options.view_as(beam_dask.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = beam_dask.DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        npartitions = bag_kwargs.get("npartitions") or max(1, sum(client.nthreads().values()))
        shuffle_options = options.view_as(DaskShuffleOptions)
        shuffle_dir = None
        try:
            check_cluster_imports(client)
            if shuffle_options.dask_shuffle == "disk":
                shuffle_dir = make_shuffle_dir(client, shuffle_options.dask_shuffle_dir)
            trace_dir = shuffle_options.dask_trace_dir
            if trace_dir:
                os.makedirs(trace_dir, exist_ok=True)
            everything, visitor = pipeline_collection(pipeline, npartitions, shuffle_options.dask_shuffle, shuffle_dir,
                                                      trace_dir, shuffle_options.dask_task_order,
                                                      fuse=shuffle_options.dask_fusion == "on")
            if trace_dir:
                with open(os.path.join(trace_dir, "names.json"), "w") as f:
                    json.dump(visitor.names, f, indent=0)
            futures = [client.compute(everything, optimize_graph=shuffle_options.dask_task_order == "dask")]
        except BaseException:
            client.close()
            if shuffle_dir:
                shutil.rmtree(shuffle_dir, ignore_errors=True)
            raise
        return DaskRunnerResult(client, futures, shuffle_dir)
