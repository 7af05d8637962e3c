"""Beam 2.77's DaskRunner, with the three fixes our jobs need to run on a dask.distributed cluster.

    PYTHONPATH=examples python -m pipelines.wiki_mrc --runner beam_dask_runner.DaskRunner \
        --dask_client_address tcp://SCHEDULER:8786 --dask_npartitions 16 --dump en=... --output ...

(the workers need the project and this file importable too: start them from the same environment,
with the same PYTHONPATH; see docs/scale_out.md.)

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
exactly that many partitions (task-based shuffle, whose partitioning hashes with dask's `tokenize`, so it
is the same in every worker process). Side inputs are computed once as a dask `Item` that every
task receives, instead of being recomputed inside each task. Counters are not collected (Beam's
DaskRunner has no metrics either); the jobs' `stats.parquet` holds every count.
"""
from __future__ import annotations

import pickle
import zlib

import dask
import dask.bag as db
from apache_beam import DoFn, ParDo
from apache_beam.pipeline import PipelineVisitor
from apache_beam.pvalue import PBegin
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, Receiver, _OutputHandler
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask.overrides import (
    _Create,
    _Flatten,
    _GroupAlsoByWindow,
    _GroupByKeyOnly,
    _Reshuffle,
    dask_overrides,
)
from apache_beam.runners.dask.transform_evaluator import defenestrate, get_windowed_value
from apache_beam.runners.runner import PipelineState
from apache_beam.transforms.sideinputs import SideInputMap


class _Collect(Receiver):
    """Receives one output tag's windowed values into the bundle's (tag, value) list."""

    def __init__(self, tag, out: list):
        self.tag, self.out = tag, out

    def receive(self, windowed_value):
        self.out.append((self.tag, windowed_value.value))


class _Receivers(dict):
    def __init__(self):
        super().__init__()
        self.out: list = []

    def __missing__(self, tag):
        receiver = self[tag] = _Collect(tag, self.out)
        return receiver


def _run_bundle(items, fn, label, window_fn, args, kwargs, side_specs, *side_values):
    """One dask partition = one Beam bundle: setup, start_bundle, process, finish_bundle, teardown.

    Receivers are made here, per bundle, so no output can leak between partitions that a worker
    runs with the same deserialised task arguments; finish_bundle's outputs are kept.
    """
    receivers = _Receivers()
    handler = _OutputHandler(
        window_fn=window_fn, main_receivers=receivers[None], tagged_receivers=receivers,
        per_element_output_counter=None, output_batch_converter=None,
        process_yields_batches=False, process_batch_yields_elements=False,
    )
    side_inputs = [
        SideInputMap(view_class, view_options, [get_windowed_value(v, window_fn) for v in values])
        for (view_class, view_options), values in zip(side_specs, side_values)
    ]
    invoker = DoFnInvoker.create_invoker(
        DoFnSignature(fn), handler, context=DoFnContext(label, state=None), side_inputs=side_inputs,
        input_args=args, input_kwargs=kwargs, user_state_context=None,
        bundle_finalizer_param=DoFn.BundleFinalizerParam(),
    )
    invoker.invoke_setup()
    invoker.invoke_start_bundle()
    for item in items:
        invoker.invoke_process(get_windowed_value(item, window_fn))
    invoker.invoke_finish_bundle()
    invoker.invoke_teardown()
    return receivers.out


def _values_of(tagged, tag):
    return [value for t, value in tagged if t == tag]


def _concat(parts):
    return [x for part in parts for x in part]


def _spread_key(element, n):
    # Stable across processes (no Python hash), so a rerun spreads elements the same way.
    return zlib.crc32(pickle.dumps(element, protocol=4)) % n


class _BagsPerPCollection(PipelineVisitor):
    """Translates the (overridden) pipeline into one dask bag per PCollection."""

    def __init__(self, npartitions: int):
        self.npartitions = npartitions
        self.bags: dict = {}
        self.consumed: set = set()

    def visit_transform(self, node):
        transform = node.transform
        inputs = [pc for pc in node.inputs if not isinstance(pc, PBegin)]
        self.consumed.update(inputs)
        self.consumed.update(si.pvalue for si in node.side_inputs)
        bags = [self.bags[pc] for pc in inputs]
        if isinstance(transform, _Create):
            values = list(transform.values)
            out = db.from_sequence(values, npartitions=max(1, min(len(values), self.npartitions))) if values \
                else db.from_sequence([None], npartitions=1).filter(lambda _: False)
        elif isinstance(transform, _Reshuffle):
            n = self.npartitions
            out = (bags[0].map(lambda x: (_spread_key(x, n), x))
                   .repartition(npartitions=n)
                   .groupby(lambda kv: kv[0], shuffle="tasks")
                   .map(lambda group: [x for _, x in group[1]]).flatten())
        elif isinstance(transform, _GroupByKeyOnly):
            source = bags[0]
            if source.npartitions != self.npartitions:
                # Flatten adds its inputs' partitions up; without this the task count grows stage by stage.
                source = source.repartition(npartitions=self.npartitions)
            out = source.groupby(lambda kv: kv[0], shuffle="tasks").map(
                lambda group: (group[0], [defenestrate(kv[1]) for kv in group[1]]))
        elif isinstance(transform, _GroupAlsoByWindow):
            out = bags[0]  # global windows only: the groups are already complete
        elif isinstance(transform, _Flatten):
            out = db.concat(bags) if bags else db.from_sequence([None], npartitions=1).filter(lambda _: False)
        elif isinstance(transform, ParDo):
            args, kwargs = transform.raw_side_inputs
            main_input = next(iter(node.main_inputs.values()))
            side_specs = [(type(si), si._view_options()) for si in node.side_inputs]
            side_items = [self.bags[si.pvalue].reduction(list, _concat) for si in node.side_inputs]
            tagged = bags[0].map_partitions(
                _run_bundle, transform.fn, transform.label, main_input.windowing.windowfn,
                list(args), kwargs, side_specs, *side_items)
            for tag, pcoll in node.outputs.items():
                self.bags[pcoll] = tagged.map_partitions(_values_of, tag)
            return
        else:
            raise NotImplementedError(f"{node.full_label}: {type(transform).__name__} is not translated to dask")
        for pcoll in node.outputs.values():
            self.bags[pcoll] = out

    def sinks(self) -> list:
        """Every PCollection nobody reads: computing them all runs every write, once."""
        return [bag for pcoll, bag in self.bags.items() if pcoll not in self.consumed]


class DaskRunnerResult(beam_dask.DaskRunnerResult):
    def wait_until_finish(self, duration=None) -> str:
        try:
            return super().wait_until_finish(duration)
        finally:
            if self._state in (PipelineState.DONE, PipelineState.FAILED):
                self.client.close()


class DaskRunner(beam_dask.DaskRunner):
    """`--runner beam_dask_runner.DaskRunner`; Beam's `--dask_*` options apply."""

    def run_pipeline(self, pipeline, options):
        import dask.distributed as ddist

        dask_options = options.view_as(beam_dask.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = beam_dask.DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        npartitions = bag_kwargs.get("npartitions") or max(1, sum(client.nthreads().values()))
        pipeline.replace_all(dask_overrides())
        visitor = _BagsPerPCollection(npartitions)
        pipeline.visit(visitor)
        sinks = visitor.sinks()
        # One graph for all sinks: dask merges the shared upstream tasks, so each stage runs once.
        futures = client.compute(dask.optimize(*sinks))
        return DaskRunnerResult(client, futures)
