"""The Dask runner's bundles: a stage's DoFn is set up once per process and reused one bundle at a
time, as Beam's workers do; an instance whose bundle failed is dropped."""
from __future__ import annotations

import threading

import apache_beam as beam
import pytest
from apache_beam.transforms.window import GlobalWindows

from pipelines.dask import runner

SETUPS: list[int] = []


class CountingFn(beam.DoFn):
    """Outputs (element, bundle number of this instance); counts setup() calls."""

    def setup(self):
        SETUPS.append(id(self))
        self.bundles = 0

    def start_bundle(self):
        self.bundles += 1
        self.seen = 0

    def process(self, element):
        if element == "boom":
            raise ValueError("bad element")
        self.seen += 1
        yield element, self.bundles

    def finish_bundle(self):
        yield beam.transforms.window.GlobalWindows.windowed_value(("seen", self.seen))


def bundle() -> runner._Bundle:
    return runner._Bundle(CountingFn(), "Count", GlobalWindows(), [], {}, [])


def test_a_stage_is_set_up_once_per_process_and_its_instance_reused():
    SETUPS.clear()
    task = bundle()
    first = task(["a", "b"])
    second = task(["c"])
    assert [v for _, v in first] == [("a", 1), ("b", 1), ("seen", 2)]
    assert [v for _, v in second] == [("c", 2), ("seen", 1)], "start_bundle ran again; finish_bundle's output kept"
    assert len(SETUPS) == 1
    other_stage = bundle()
    other_stage(["d"])
    assert len(SETUPS) == 2, "another stage has its own instance"


def test_concurrent_bundles_get_their_own_instances():
    SETUPS.clear()
    task = bundle()
    inside = threading.Barrier(2)
    results: list = []

    class Waiting(list):
        def __iter__(self):
            inside.wait(timeout=10)  # both bundles hold an instance at the same time
            return super().__iter__()

    threads = [threading.Thread(target=lambda: results.append(task(Waiting(["x"])))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(SETUPS) == 2 and len(results) == 2
    task(["y"])
    assert len(SETUPS) == 2, "both instances went back to the idle pool"


def test_an_instance_whose_bundle_failed_is_not_reused():
    SETUPS.clear()
    task = bundle()
    with pytest.raises(ValueError, match="bad element"):
        task(["a", "boom"])
    assert [v for _, v in task(["b"])] == [("b", 1), ("seen", 1)], "a fresh instance, set up again"
    assert len(SETUPS) == 2
