"""The disk shuffle of pipelines.dask.runner (`--dask_shuffle disk`, the default): GroupByKey and
Reshuffle through files, so that neither dask's scheduler nor its workers hold a shuffle.

Each input partition is written, split by destination, to one file under `--dask_shuffle_dir`
(default: the launching process's temporary directory), and only the byte offsets of the pieces
are returned; one barrier task gathers the offsets; output partition j is one task that reads piece
j of every file, in input order. A fused stage whose output only the shuffle reads (directly or
through Flattens) writes that file itself, inside its own task (FileExport); any other input
partition takes a write task. So a shuffle is at most 2n+1 tasks and 2n edges (n = partitions), and
its data never passes through dask's messaging or a worker's managed memory.
The files stay until the pipeline ends (then the folder is removed): the disk needed is what the
job shuffles. Every worker must see the folder under the same path: true of a local cluster (one
file system); on several machines give a shared mount. `make_shuffle_dir` checks it before the job
starts (a marker file every worker must read back) and stops with one line if a worker cannot.

Not dask.bag's own `groupby(shuffle="disk")`: its partd.File store deletes its directory when a copy
of the store is garbage-collected (`__del__`, in whichever worker process unpickled one), and
partition tasks append to shared files under locks in whatever order they run, so values within a
group would come out in a timing-dependent order.

Which output partition a key goes to is a 64-bit BLAKE2b digest of the key encoded with Beam's
deterministic coder for the key type (as Beam's own shuffles group by encoded keys), modulo n: the
same in every process, where Python's `hash()` of str/bytes is randomised per process
(PYTHONHASHSEED) and would send one key to different partitions from different workers, so that it
came out as two groups.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import shutil
import tempfile
import uuid
from functools import partial

import dask.bag as db
from apache_beam import coders
from apache_beam.typehints import Any as AnyType
from apache_beam.typehints.typehints import TupleConstraint
from dask.highlevelgraph import HighLevelGraph
from pipelines.dask.gc_pause import collection_paused
from pipelines.dask.task_trace import traced


def key_coder(pcoll, label: str):
    """Beam's deterministic coder for the keys of a PCollection of (key, value)."""
    element_type = getattr(pcoll, "element_type", None)
    key_type = element_type.tuple_types[0] if isinstance(element_type, TupleConstraint) and len(
        element_type.tuple_types) == 2 else AnyType
    try:
        return coders.registry.get_coder(key_type).as_deterministic_coder(label)
    except ValueError:
        return coders.registry.get_coder(AnyType).as_deterministic_coder(label)


def key_partition(key, n: int, coder) -> int:
    """The output partition of `key`: a 64-bit digest of its encoding, the same in every process."""
    digest = hashlib.blake2b(coder.encode(key), digest_size=8).digest()
    return int.from_bytes(digest, "little") % n


class ByKey:
    """Picklable partition function of a GroupByKey: (key, value) -> key_partition(key)."""

    def __init__(self, coder):
        self.coder = coder

    def __call__(self, kv, n: int) -> int:
        return key_partition(kv[0], n, self.coder)


class Pieces:
    """One shuffle input partition's elements, split by destination partition as they arrive."""

    def __init__(self, n: int, partition_of):
        self.n, self.partition_of = n, partition_of
        self.pieces: list[list] = [[] for _ in range(n)]

    def append(self, item) -> None:
        self.pieces[self.partition_of(item, self.n)].append(item)


def write_pieces(pieces: Pieces, directory: str, file_name: str) -> tuple[str, list[int]]:
    """The pieces, pickled one after another into one file; returns (file name, their n+1 offsets).

    Written under a temporary name and renamed, so a task that is run again (a lost worker) leaves
    one whole file."""
    path = os.path.join(directory, file_name)
    offsets = [0]
    with open(f"{path}.{uuid.uuid4().hex}.tmp", "wb") as f:
        for piece in pieces.pieces:
            if piece:
                pickle.dump(piece, f, protocol=pickle.HIGHEST_PROTOCOL)
            offsets.append(f.tell())
        tmp = f.name
    os.replace(tmp, path)
    return file_name, offsets


@dataclasses.dataclass(frozen=True)
class FileExport:
    """Where a stage task writes an export that only a disk shuffle reads (pipelines/dask/stages.py):
    file `{prefix}-{partition}` in `directory`, split into n pieces by partition_of."""

    directory: str
    prefix: str
    n: int
    partition_of: object


@dataclasses.dataclass(frozen=True)
class WrittenExport:
    """A shuffle input that its stage's tasks wrote themselves: position `position` of the results of
    each task of `results` is a written file (file name, offsets)."""

    results: db.Bag
    position: int


def _shuffle_write(items, directory: str, name: str, index: int, n: int, partition_of) -> tuple[str, list[int]]:
    """One input partition -> one file `name-index` of n pickled pieces."""
    with collection_paused():
        pieces = Pieces(n, partition_of)
        for item in items:
            pieces.append(item)
        return write_pieces(pieces, directory, f"{name}-{index}")


def result_at(results: tuple, position: int):
    return results[position]


def _shuffle_barrier(*written):
    return written


def _shuffle_read(written: tuple, directory: str, j: int) -> list:
    """Output partition j: piece j of every input partition's file, in input order."""
    out: list = []
    with collection_paused():
        for file_name, offsets in written:
            start, end = offsets[j], offsets[j + 1]
            if end > start:
                with open(os.path.join(directory, file_name), "rb") as f:
                    f.seek(start)
                    out.extend(pickle.load(f))
    return out


def new_shuffle_name() -> str:
    return f"shuffle-{uuid.uuid4().hex[:12]}"


def disk_shuffle(sources: list, n: int, partition_of, directory: str, label: str = "",
                 trace_dir: str | None = None, name: str | None = None) -> db.Bag:
    """The sources (bags, and WrittenExports already in files), concatenated in order and
    re-partitioned into n partitions through files (item -> partition_of(item, n)); a bag's
    partitions are written by a task each."""
    name = name or new_shuffle_name()
    write, barrier, read = f"{name}-write", f"{name}-barrier", f"{name}-read"
    graph: dict = {}
    written: list = []  # one task or task expression per input partition, giving (file name, offsets)
    for source in sources:
        if isinstance(source, WrittenExport):
            written += [(result_at, (source.results.name, i), source.position)
                        for i in range(source.results.npartitions)]
            continue
        for i in range(source.npartitions):
            index = len(written)
            graph[(write, index)] = (traced(partial(_shuffle_write, directory=directory, name=name, index=index, n=n,
                                                    partition_of=partition_of), "write", label, index, trace_dir),
                                     (source.name, i))
            written.append((write, index))
    graph[barrier] = (_shuffle_barrier, *written)
    graph.update({(read, j): (traced(partial(_shuffle_read, directory=directory, j=j), "read", label, j, trace_dir),
                              barrier)
                  for j in range(n)})
    dependencies = [source.results if isinstance(source, WrittenExport) else source for source in sources]
    return db.Bag(HighLevelGraph.from_collections(read, graph, dependencies=dependencies), read, n)


def _reads_marker(path: str, token: str) -> bool:
    try:
        with open(path) as f:
            return f.read() == token
    except OSError:
        return False


def make_shuffle_dir(client, root: str | None) -> str:
    """A new folder for this pipeline's shuffle files, checked to be the same folder for every worker."""
    root = root or tempfile.gettempdir()
    try:
        os.makedirs(root, exist_ok=True)  # as --output is made: a new disk's folder need not exist yet
        directory = tempfile.mkdtemp(prefix="beam-dask-shuffle-", dir=root)
    except OSError as error:
        raise SystemExit(f"error: --dask_shuffle_dir {root}: cannot create a folder there ({error.strerror})") from None
    marker, token = os.path.join(directory, "marker"), uuid.uuid4().hex
    with open(marker, "w") as f:
        f.write(token)
    blind = sorted(worker for worker, ok in client.run(_reads_marker, marker, token).items() if not ok)
    if blind:
        shutil.rmtree(directory, ignore_errors=True)
        raise SystemExit(f"error: --dask_shuffle disk: {len(blind)} dask worker(s) (e.g. {blind[0]}) cannot read "
                         f"{directory}; give a --dask_shuffle_dir every worker sees under the same path "
                         "(a shared mount), or --dask_shuffle tasks")
    return directory

