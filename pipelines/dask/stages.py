"""Fused stages of pipelines.dask.runner: consecutive ParDos run as one dask task per partition.

A stage is a root ParDo and every ParDo downstream of it that reads a PCollection of the stage as
its main input and has no side input (Beam's producer-consumer and sibling fusion, as its own
runners do). One task runs the whole stage on one partition as one Beam bundle per DoFn: elements go
from DoFn to DoFn as they are produced, and only the PCollections read outside the stage (by a
shuffle, a Flatten, a side input, a ParDo with side inputs) come back as lists, one per
PCollection; one that only a disk shuffle reads is written to the shuffle's file by the task
instead (FileExport). So no list is built per ParDo, and a multi-output ParDo's outputs are not
held as one result that every consumer task of every output reads (which dask moved to whichever
worker ran a consumer). A ParDo with side inputs starts a stage of its own: its side inputs are computed from
the graph before it, so the stage task can wait for them.

Per worker process, set-up DoFn instances are kept by step key, idle ones only. A task carries its
DoFns pickled; a bundle takes an idle instance of each step (or unpickles one, builds its signature
and runs setup()) and gives them back when the stage's bundle ends, as Beam's own workers reuse a
DoFn instance across bundles, one bundle at a time (a worker with several threads holds one instance
per bundle running; one whose bundle raised is dropped). Doing all that per bundle
(inspect.signature over every method, the stateful-DoFn checks, a setup that may load a model) was a
fixed cost per task. At most _MAX_STEPS steps are kept (a long-lived cluster runs job after job);
the least recently used one is torn down.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import uuid

from apache_beam import DoFn, ParDo
from apache_beam.internal import pickler
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import TimestampedValue
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, Receiver, _OutputHandler
from apache_beam.runners.dask.overrides import _GroupAlsoByWindow
from apache_beam.runners.dask.transform_evaluator import get_windowed_value
from apache_beam.transforms.core import GroupByKey
from apache_beam.transforms.sideinputs import SideInputMap
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import Timestamp
from apache_beam.utils.windowed_value import WindowedValue
from pipelines.dask.disk_shuffle import FileExport, Pieces, write_pieces
from pipelines.dask.gc_pause import collection_paused

_GLOBAL_WINDOWS = (GlobalWindow(),)
_EPOCH = Timestamp(0)


def windowed(item, window_fn) -> WindowedValue:
    # A plain element in the global window (what every bag holds) without Beam's per-element
    # Timestamp and GlobalWindow objects; anything else goes through Beam's own wrapping.
    if isinstance(item, (WindowedValue, TimestampedValue, TaggedOutput)):
        return get_windowed_value(item, window_fn)
    return WindowedValue(item, _EPOCH, _GLOBAL_WINDOWS)


_MAX_STEPS = 256
_IDLE: collections.OrderedDict = collections.OrderedDict()
_IDLE_LOCK = threading.Lock()


def _take_dofn(key: str, pickled_fn: bytes):
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(key, [])
        _IDLE.move_to_end(key)
        if idle:
            return idle.pop()
    fn = pickler.loads(pickled_fn)
    signature = DoFnSignature(fn)
    signature.setup_lifecycle_method.method_value()
    return fn, signature


def _give_back_dofn(key: str, instance) -> None:
    with _IDLE_LOCK:
        _IDLE.setdefault(key, []).append(instance)
        _IDLE.move_to_end(key)
        evicted = [_IDLE.popitem(last=False)[1] for _ in range(len(_IDLE) - _MAX_STEPS)]
    for instances in evicted:
        for _, signature in instances:
            signature.teardown_lifecycle_method.method_value()


def is_reify_windows(node) -> bool:
    return isinstance(node.transform, ParDo) and isinstance(node.transform.fn, GroupByKey.ReifyWindows)


def is_translated_pardo(node) -> bool:
    """A ParDo the runner runs as a DoFn: not a GroupByKey's ReifyWindows or GroupAlsoByWindow, which
    are no task in the global window."""
    transform = node.transform
    return isinstance(transform, ParDo) and not isinstance(transform, _GroupAlsoByWindow) and not is_reify_windows(node)


@dataclasses.dataclass
class Step:
    """One ParDo of a stage: its DoFn (pickled, under a key that names it in every process), what it
    reads (a channel of the stage, or None: the task's input partition) and where each output tag
    goes (a channel)."""

    label: str
    key: str
    pickled_fn: bytes
    window_fn: object
    args: list
    kwargs: dict
    input: int | None
    outputs: dict

    @classmethod
    def of(cls, node, input_channel: int | None, outputs: dict) -> Step:
        transform = node.transform
        args, kwargs = transform.raw_side_inputs
        main_input = next(iter(node.main_inputs.values()))
        return cls(transform.label, f"{transform.label}-{uuid.uuid4().hex}", pickler.dumps(transform.fn),
                   main_input.windowing.windowfn, list(args), kwargs, input_channel, outputs)


class _Route(Receiver):
    """A channel: each element goes to the channel's export (a list, or a shuffle's Pieces; when
    something outside the stage reads it) and to the process() of every step of the stage that reads it."""

    def __init__(self, export, processes: list):
        self.export, self.processes = export, processes

    def receive(self, windowed_value):
        if self.export is not None:
            self.export.append(windowed_value.value)
        for process in self.processes:
            process(windowed_value)


class _Outputs(dict):
    """Tag -> route; a tag the transform did not declare goes nowhere (Beam would not expose it)."""

    def __missing__(self, tag):
        return _Route(None, [])


class FusedStage:
    """The task of a stage's partition (a callable, so that dask does not look for graph keys among
    its constants): (partition index, items, *side input values) -> one result per exported channel.

    `exports[c]` is channel c's position in the result, or None when nothing outside the stage reads
    it. A position in `file_exports` (only a disk shuffle reads it) is written to the shuffle's file
    by the task itself and its result is (file name, offsets); any other position's is a list.
    `side_specs` are the root step's side inputs (view class, view options); no other step has any."""

    def __init__(self, steps: list[Step], exports: list[int | None], side_specs: list,
                 file_exports: dict[int, FileExport] | None = None):
        self.steps, self.exports, self.side_specs = steps, exports, side_specs
        self.file_exports = file_exports or {}

    def __call__(self, index: int, items, *side_values) -> tuple:
        with collection_paused():
            results = self.run(items, side_values)
            return tuple(write_pieces(result, spec.directory, f"{spec.prefix}-{index}")
                         if (spec := self.file_exports.get(position)) else result
                         for position, result in enumerate(results))

    def run(self, items, side_values) -> tuple:
        steps = self.steps
        results = tuple(Pieces(spec.n, spec.partition_of) if (spec := self.file_exports.get(position)) else []
                        for position in range(sum(e is not None for e in self.exports)))
        readers: dict[int, list] = collections.defaultdict(list)
        instances = [_take_dofn(step.key, step.pickled_fn) for step in steps]
        invokers = [None] * len(steps)
        # Consumers come after their producers in `steps`: built in reverse, each step's routes can
        # name the process() of every step that reads them.
        for i in reversed(range(len(steps))):
            step = steps[i]
            routes = _Outputs({tag: _Route(None if self.exports[c] is None else results[self.exports[c]], readers[c])
                               for tag, c in step.outputs.items()})
            handler = _OutputHandler(
                window_fn=step.window_fn, main_receivers=routes[None], tagged_receivers=routes,
                per_element_output_counter=None, output_batch_converter=None,
                process_yields_batches=False, process_batch_yields_elements=False,
            )
            side_inputs = [] if i else [
                SideInputMap(view_class, view_options, [windowed(v, step.window_fn) for v in values])
                for (view_class, view_options), values in zip(self.side_specs, side_values)
            ]
            invokers[i] = DoFnInvoker.create_invoker(
                instances[i][1], handler, context=DoFnContext(step.label, state=None), side_inputs=side_inputs,
                input_args=step.args, input_kwargs=step.kwargs, user_state_context=None,
                bundle_finalizer_param=DoFn.BundleFinalizerParam(),
            )
            if step.input is not None:
                readers[step.input].append(invokers[i].invoke_process)
        for invoker in invokers:
            invoker.invoke_start_bundle()
        process, window_fn = invokers[0].invoke_process, steps[0].window_fn
        for item in items:
            process(windowed(item, window_fn))
        # In stage order, so that what a step emits from finish_bundle reaches its readers' process()
        # before their own finish_bundle.
        for invoker in invokers:
            invoker.invoke_finish_bundle()
        for step, instance in zip(steps, instances):
            _give_back_dofn(step.key, instance)
        return results


@dataclasses.dataclass
class StagePlan:
    """Which translated ParDo belongs to which stage (keyed by the root node), in pipeline order."""

    stage_of: dict
    members: dict

    def root(self, node):
        return self.stage_of.get(node)


def plan_stages(nodes: list, fuse: bool = True) -> StagePlan:
    """Stages over the pipeline's leaf nodes (in topological order): a translated ParDo joins the
    stage of the ParDo that produces its main input when it has no side inputs; otherwise (and
    with fuse=False) it roots a stage of its own."""
    producer = {pcoll: node for node in nodes for pcoll in node.outputs.values()}
    stage_of: dict = {}
    members: dict = {}
    for node in nodes:
        if not is_translated_pardo(node):
            continue
        main_input = next(iter(node.main_inputs.values()))
        upstream = producer.get(main_input)
        root = stage_of[upstream] if fuse and upstream in stage_of and not node.side_inputs else node
        stage_of[node] = root
        members.setdefault(root, []).append(node)
    return StagePlan(stage_of, members)
