"""The task graph of pipelines.dask.runner as it is handed to the scheduler: optimised as dask.bag
does, with no Alias task left, and each task given the priority of its depth (the runner's
`--dask_task_order downstream_first`)."""
from __future__ import annotations

import collections

import dask.bag as db
from dask._task_spec import Alias
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer


def under_their_own_keys(graph: dict) -> dict:
    """dask's linear fusion gives a fused chain a new key and keeps the chain's last key as an Alias
    of it: a task of its own, which the scheduler tracks and a worker runs like any other, one per
    fused chain (docs/scale_out.md §4 counts them). Here a fused task that only its alias reads takes
    the alias's key instead."""
    readers = collections.Counter(dependency for node in graph.values() for dependency in node.dependencies)
    merged = dict(graph)
    for key, node in graph.items():
        if isinstance(node, Alias) and readers[node.target] == 1 and node.target in graph \
                and not isinstance(graph[node.target], Alias):
            merged[key] = graph[node.target].substitute({}, key=key)
            del merged[node.target]
    return merged


def downstream_first(bag: db.Bag) -> db.Bag:
    """`bag` optimised as dask.bag does (cull, fuse linear chains; no Alias tasks), each task
    annotated with the priority of its depth in the graph (the longest path from a task without
    dependencies), so that a worker with several ready tasks runs the one furthest downstream first.

    Without it dask ran a stage's partitions ahead of their consumers (dask.order's ranking): a
    worker held parsed partitions whose consumers had not run, and their count grew with the dump
    (docs/scale_out.md §4 measures it). Task order changes nothing in the output: shuffles read their
    pieces in input order whenever they run."""
    from dask.core import get_dependencies, toposort

    graph = under_their_own_keys(db.core.optimize(bag.__dask_graph__(), bag.__dask_keys__()))
    dependencies = {key: get_dependencies(graph, key) for key in graph}
    depth: dict = {}
    for key in toposort(graph, dependencies=dependencies):
        depth[key] = 1 + max((depth[d] for d in dependencies[key]), default=-1)
    layer = MaterializedLayer(graph, annotations={"priority": depth.__getitem__})
    return db.Bag(HighLevelGraph({bag.name: layer}, {bag.name: set()}), bag.name, bag.npartitions)
