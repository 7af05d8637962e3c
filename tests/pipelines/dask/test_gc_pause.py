"""The collector is off while the runner's tasks run, survivors are frozen when the last one ends,
and a reference cycle made in a task is freed by the next full collection, which comes due by CPU
time whether or not the tasks overlap."""
from __future__ import annotations

import gc
import math
import weakref

import pytest

from pipelines.dask import gc_pause


class Node:
    pass


@pytest.fixture(autouse=True)
def collector_restored(monkeypatch):
    monkeypatch.setattr(gc_pause, "_next_full_collection", math.inf)  # none due unless a test says so
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    (gc.enable if was_enabled else gc.disable)()


def cycle() -> weakref.ref:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_collector_is_off_inside_a_task_and_survivors_are_frozen_after():
    gc.unfreeze()
    with gc_pause.collection_paused():
        assert not gc.isenabled()
        with gc_pause.collection_paused():  # a second task of another worker thread
            assert not gc.isenabled()
        assert not gc.isenabled(), "still off while the first task runs"
        result = [(i, str(i)) for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() > len(result), "the task's result is frozen, not scanned again"


def test_a_cycle_made_in_a_task_is_freed_when_a_full_collection_comes_due():
    with gc_pause.collection_paused():
        alive = cycle()
    gc.collect()
    assert alive() is not None, "frozen with the task's other survivors: automatic collections skip it"
    gc_pause._next_full_collection = 0.0
    with gc_pause.collection_paused():
        pass
    assert alive() is None
    assert gc_pause._next_full_collection >= gc_pause.MIN_SECONDS_BETWEEN_FULL_COLLECTIONS, "the next one is later"


def test_overlapping_tasks_still_collect_cycles():
    """A worker whose threads always have a task running never turns the collector back on: a due
    full collection runs at a task's end all the same."""
    with gc_pause.collection_paused():  # a long task on another thread
        with gc_pause.collection_paused():
            alive = cycle()
        assert alive() is not None
        gc_pause._next_full_collection = 0.0
        with gc_pause.collection_paused():
            pass
        assert alive() is None and not gc.isenabled()


def test_a_collector_the_user_disabled_stays_disabled():
    gc.disable()
    with gc_pause.collection_paused():
        pass
    assert not gc.isenabled()
