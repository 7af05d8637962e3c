"""The Dask runner's stage tasks: a stage's DoFns are set up once per process and reused one bundle at
a time, as Beam's workers do; an instance whose bundle failed is dropped; fused ParDos pass elements
from DoFn to DoFn, finish_bundle's outputs included."""
from __future__ import annotations

import threading
import uuid

import apache_beam as beam
import pytest
from apache_beam.internal import pickler
from apache_beam.transforms.window import GlobalWindows

from pipelines.dask.stages import FusedStage, Step

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


def step(fn, input_channel=None, outputs=None) -> Step:
    return Step(type(fn).__name__, f"{type(fn).__name__}-{uuid.uuid4().hex}", pickler.dumps(fn), GlobalWindows(), [], {},
                input_channel, outputs or {None: 0})


def one_step_stage():
    """A stage of CountingFn alone whose task returns its one output as a list."""
    stage = FusedStage([step(CountingFn())], exports=[0], side_specs=[])
    return lambda items: [(None, value) for value in stage(0, items)[0]]


def bundle():
    return one_step_stage()


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


class SplitFn(beam.DoFn):
    """Words to the main output, their lengths to "lengths"; a total from finish_bundle."""

    def start_bundle(self):
        self.total = 0

    def process(self, element):
        self.total += len(element)
        yield element
        yield beam.pvalue.TaggedOutput("lengths", len(element))

    def finish_bundle(self):
        yield beam.transforms.window.GlobalWindows.windowed_value("<total %d>" % self.total)


class UpperFn(beam.DoFn):
    """Upper-cases what it reads; counts it in finish_bundle, which must come after its producer's."""

    def start_bundle(self):
        self.seen = []

    def process(self, element):
        self.seen.append(element)
        yield element.upper()

    def finish_bundle(self):
        yield beam.transforms.window.GlobalWindows.windowed_value(("upper saw", len(self.seen)))


def test_fused_steps_pass_elements_and_finish_bundle_outputs_downstream():
    # channels: 0 = SplitFn's main output (read by UpperFn, not exported), 1 = its lengths (exported
    # at position 1), 2 = UpperFn's output (exported at position 0)
    stage = FusedStage([step(SplitFn(), None, {None: 0, "lengths": 1}), step(UpperFn(), 0, {None: 2})],
                       exports=[None, 1, 0], side_specs=[])
    upper, lengths = stage(0, ["ab", "cde"])
    assert lengths == [2, 3]
    assert upper == ["AB", "CDE", "<TOTAL 5>", ("upper saw", 3)], "the producer's finish_bundle output reached UpperFn first"


def test_an_export_only_a_shuffle_reads_is_written_to_the_shuffle_file_by_the_stage_task(tmp_path):
    from pipelines.dask.disk_shuffle import FileExport, _shuffle_read

    def partition_of(item, n):
        return len(str(item[0])) % n

    as_list = FusedStage([step(CountingFn())], exports=[0], side_specs=[])(0, ["a", "bb", "ccc", "dd"])[0]
    written = FusedStage([step(CountingFn())], exports=[0], side_specs=[],
                         file_exports={0: FileExport(str(tmp_path), "shuffle-x-stage-0", 3, partition_of)})
    (result,) = written(7, ["a", "bb", "ccc", "dd"])
    file_name, offsets = result
    assert file_name == "shuffle-x-stage-0-7" and (tmp_path / file_name).exists() and len(offsets) == 4
    pieces = [_shuffle_read((result,), str(tmp_path), j) for j in range(3)]
    assert all(partition_of(item, 3) == j for j, piece in enumerate(pieces) for item in piece)
    assert sorted(item for piece in pieces for item in piece) == sorted(as_list)
    assert pieces[2] == [("bb", 1), ("dd", 1)], "a piece keeps the stage's order"
