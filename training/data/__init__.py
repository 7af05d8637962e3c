"""Streaming a data job's Parquet shards (docs/design.md §1: pyarrow dataset, sharded by rank and worker).

Shared by every model; each model's own rows -> tensors step is in this package beside it
(training/data/<name>.py).

The stream is a pure function of (files, seed, epoch, slot): every epoch the row groups are put in a
seeded order, each (DDP rank, DataLoader worker) "slot" takes its share, and a seeded shuffle buffer
mixes rows within the slot. Resuming therefore needs only the number of batches already taken: the
stream is planned again on row positions (from the footers' row counts) and that many batches are
skipped without reading a single row; rows are read, a row group at a time, only for batches handed out.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch.utils.data import IterableDataset, get_worker_info

from corpora.outputs import manifests
from corpora.seeding import keyed_rng
from corpora.schemas import MRC_SCHEMA, SchemaMismatch, check_schema


class DataError(ValueError):
    """A data file that cannot be read: one line naming the file (and the row group)."""


# What pyarrow raises for a truncated, foreign or damaged file (ArrowIOError is an OSError; a damaged
# string column can fail in to_pylist with a UnicodeDecodeError, a ValueError).
_READ_ERRORS = (pa.ArrowException, OSError, ValueError)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:200]


def _open(path: Path) -> pq.ParquetFile:
    # Page CRCs are checked when the writer stored them (write_page_checksum=True); without them a
    # flipped byte inside a compressed page can decode to wrong values without any error.
    return pq.ParquetFile(path, page_checksum_verification=True)


def read_metadata(path: Path) -> pq.FileMetaData:
    try:
        return pq.read_metadata(path)
    except _READ_ERRORS as e:
        raise DataError(f"{path}: not a readable Parquet file ({_first_line(e)}); "
                        "delete it or run the data job again") from None


def read_row_group(path: Path, group: int, columns: list[str] | None = None) -> list[dict]:
    try:
        return _open(path).read_row_group(group, columns=columns).to_pylist()
    except _READ_ERRORS as e:
        raise DataError(f"{path}: row group {group}: unreadable ({_first_line(e)}); "
                        "delete the file or run the data job again") from None


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A whole (small) file, row group by row group, so that an error names the one that failed."""
    meta = read_metadata(path)
    tables = []
    for group in range(meta.num_row_groups):
        try:
            tables.append(_open(path).read_row_group(group, columns=columns))
        except _READ_ERRORS as e:
            raise DataError(f"{path}: row group {group}: unreadable ({_first_line(e)}); "
                            "delete the file or run the data job again") from None
    schema = meta.schema.to_arrow_schema()
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
    return pa.concat_tables(tables) if tables else schema.empty_table()


class DataFolderError(DataError, FileNotFoundError):
    """--data that is not a finished, unchanged data job's output: missing, a job still running or
    crashed, shards missing, extra, shrunk or changed since the job's manifest. One line."""


def data_root(data_dir: str | Path, flag: str = "--data") -> Path:
    """The data job's output folder that DIR stands for (the folder, or one inside it: data/, mrtd/):
    the project's one rule, corpora/outputs/manifests.py's resolve_data_folder."""
    try:
        return manifests.resolve_data_folder(data_dir, flag)
    except manifests.ManifestError as e:
        raise DataFolderError(str(e)) from None


def list_shards(data_dir: str | Path, split: str = "train", table: str | None = None, required: bool = True,
                flag: str = "--data", checksums: bool = True) -> list[Path]:
    """The shards of one table's split (default: the job's rows) of a data job's output, once the whole
    folder was checked against its manifest (files, rows, bytes, sha256; corpora/outputs/manifests.py).
    DIR may be the job's --output or a folder inside it. A folder of shards without a manifest (made
    by hand) is read as found, with a warning; one an older job wrote without a manifest is refused.
    `checksums=False`: rows and bytes only (DDP ranks other than the one that hashed the shards)."""
    try:
        return manifests.verified_shards(data_dir, table=table, split=split, flag=flag, required=required,
                                         checksums=checksums)
    except manifests.ManifestError as e:
        raise DataFolderError(str(e)) from None


def check_shards(files: list[Path], schema=MRC_SCHEMA, older: tuple = ()) -> int:
    """Check every shard against the contract (or one of the `older` versions the reader still
    handles) and return the total row count (from footers only).

    The data jobs write every shard, empty ones too (pipelines/beam_outputs.py), so an empty shard is fine;
    shards that are all empty are not: there is nothing to train on."""
    total = 0
    for f in files:
        meta = read_metadata(f)
        found = meta.schema.to_arrow_schema()
        if not any(_matches(found, old) for old in older):
            check_schema(found, schema, str(f))
        total += meta.num_rows
    if files and not total:
        where = str(files[0]) if len(files) == 1 else f"{files[0].parent}: all {len(files)} shards ({files[0].name} …)"
        raise DataError(f"{where}: 0 rows; the data job kept nothing (see its dead_letter/ and stats), "
                        "run it again on more input")
    return total


def _matches(found: pa.Schema, expected: pa.Schema) -> bool:
    try:
        check_schema(found, expected, "")
    except SchemaMismatch:
        return False
    return True


class ParquetBatches(IterableDataset):
    """An endless stream of batches (lists of row dicts), epochs one after another.

    Endless because training is counted in optimiser steps: DDP ranks never run out at different
    times, and an epoch boundary needs no special case in the loop.
    """

    def __init__(
        self,
        files: list[Path],
        batch_size: int,
        collate: Callable[[list[dict]], dict] | None = None,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
        shuffle_buffer: int = 10_000,
        start_batch: int = 0,
        columns: list[str] | None = None,
        interleave_units: int = 8,
        optional_columns: list[str] = (),
    ):
        self.files = [Path(f) for f in files]
        self.batch_size = batch_size
        self.collate = collate
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.shuffle_buffer = max(1, shuffle_buffer)
        self.start_batch = start_batch  # batches this rank's loader has already handed out
        self.columns = columns
        self.file_columns: list[list[str] | None] = []  # per file: `columns` and the optional ones it has
        self.interleave_units = max(1, interleave_units)
        # (file index, row group) units and their row counts, read from the footers once: the stream is
        # planned on row positions alone, and rows are read only for the batches that are handed out.
        self.units, self.unit_rows = [], {}
        for i, f in enumerate(self.files):
            meta = read_metadata(f)
            present = set(meta.schema.to_arrow_schema().names)
            self.file_columns.append(None if columns is None else [*columns, *(c for c in optional_columns if c in present)])
            for g in range(meta.num_row_groups):
                self.units.append((i, g))
                self.unit_rows[(i, g)] = meta.row_group(g).num_rows

    def _slot(self) -> tuple[int, int, int, int]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        # The DataLoader always asks worker 0 first; after start_batch batches the next one belongs to
        # stream start_batch % workers, so worker ids are rotated to make that stream come first.
        worker = (worker + self.start_batch) % workers
        return self.rank * workers + worker, self.world_size * workers, worker, workers

    def _positions(self, epoch: int, slot: int, slots: int, planned: Counter | None = None) -> Iterator[tuple]:
        """(unit, row) positions of this slot's rows in one epoch; `planned[unit]` is raised by the number
        of positions of a unit when it is opened (so its rows are kept until all are used)."""
        units = list(self.units)
        keyed_rng(self.seed, "units", epoch).shuffle(units)
        # Whole row groups per slot when there are enough of them (each slot reads only its share);
        # with fewer row groups than slots, every slot reads all and keeps every slots-th row.
        by_unit = len(units) >= slots
        mine = units[slot::slots] if by_unit else units
        assigned, index = [], 0
        for unit in mine:
            n = self.unit_rows[unit]
            rows = range(n) if by_unit else range((slot - index) % slots, n, slots)
            if len(rows):
                assigned.append((unit, rows))
            index += n
        return self._interleaved(assigned, keyed_rng(self.seed, "interleave", epoch, slot), planned)

    def _interleaved(self, assigned: list[tuple], rng: random.Random, planned: Counter | None) -> Iterator[tuple]:
        """Positions drawn from `interleave_units` open row groups at a time, each draw from a group chosen
        with probability proportional to its remaining rows.

        The shuffle buffer alone mixes only neighbouring rows: a shard sorted by language (as every job
        wrote before rows were shuffled at write time, or any Parquet from elsewhere) would still give
        batches of one language. Drawing across groups makes the batch mix follow the corpus mix."""
        pending = iter(assigned)
        window: list[list] = []  # [unit, rows, next row index]

        def open_next() -> None:
            unit_rows = next(pending, None)
            if unit_rows is not None:
                unit, rows = unit_rows
                if planned is not None:
                    planned[unit] += len(rows)
                window.append([unit, rows, 0])

        for _ in range(self.interleave_units):
            open_next()
        while window:
            k = rng.choices(range(len(window)), weights=[len(rows) - i for _, rows, i in window])[0] \
                if len(window) > 1 else 0
            unit, rows, i = window[k]
            yield unit, rows[i]
            window[k][2] = i + 1
            if i + 1 == len(rows):
                del window[k]
                open_next()

    def _shuffled(self, items: Iterator, rng: random.Random) -> Iterator:
        buffer: list = []
        for item in items:
            buffer.append(item)
            if len(buffer) >= self.shuffle_buffer:
                k = rng.randrange(len(buffer))
                buffer[k], buffer[-1] = buffer[-1], buffer[k]
                yield buffer.pop()
        rng.shuffle(buffer)
        yield from buffer

    def position_batches(self, planned: Counter | None = None) -> Iterator[list[tuple]]:
        """The endless stream of batches, as row positions (no row is read)."""
        slot, slots, _, _ = self._slot()
        epoch = 0
        while True:
            positions = self._shuffled(self._positions(epoch, slot, slots, planned), keyed_rng(self.seed, "rows", epoch, slot))
            batch: list[tuple] = []
            produced = False
            for position in positions:
                batch.append(position)
                if len(batch) == self.batch_size:
                    produced = True
                    yield batch
                    batch = []
            if batch:  # the epoch's remainder is a short batch rather than mixed into the next epoch
                produced = True
                yield batch
            if not produced:
                raise ValueError(f"{self.files[0].parent}: slot {slot} of {slots} received no rows; use fewer workers or ranks")
            epoch += 1

    def _batches(self, skip: int = 0) -> Iterator[list[dict]]:
        """Row batches after the first `skip` ones, which are planned but never read (cheap resume)."""
        planned: Counter = Counter()
        tables: dict[tuple, list[dict]] = {}  # row groups with positions still to come
        for n, batch in enumerate(self.position_batches(planned)):
            if n >= skip:
                rows = []
                for unit, row in batch:
                    if unit not in tables:
                        tables[unit] = self._read(unit)
                    rows.append(tables[unit][row])
            for unit, _ in batch:
                planned[unit] -= 1
                if not planned[unit]:
                    del planned[unit]
                    tables.pop(unit, None)
            if n >= skip:
                yield rows

    def _read(self, unit: tuple[int, int]) -> list[dict]:
        file_index, group = unit
        return read_row_group(self.files[file_index], group, self.file_columns[file_index])

    def raw_batches(self) -> Iterator[list[dict]]:
        """The endless stream of batches of row dicts, epochs one after another."""
        return self._batches()

    def __iter__(self) -> Iterator:
        _, _, worker, workers = self._slot()
        # The DataLoader takes batches from its workers round-robin, so of the first start_batch
        # batches this worker made len(range(worker, start_batch, workers)).
        for batch in self._batches(skip=len(range(worker, self.start_batch, workers))):
            yield self.collate(batch) if self.collate else batch


def long_tensor(rows: list[list[int]]) -> torch.Tensor:
    """Equal-length rows of ints as an int64 tensor: through numpy, which converts Python ints
    faster than torch.tensor (benchmarks/README.md)."""
    return torch.from_numpy(np.array(rows, dtype=np.int64))


def span_mask(spans: list[tuple[int, int]], length: int) -> torch.Tensor:
    """[rows, length] bool: True at the positions start <= p < end of each row's (start, end)."""
    bounds = torch.tensor(spans, dtype=torch.long).reshape(-1, 2)
    positions = torch.arange(length)
    return (positions >= bounds[:, :1]) & (positions < bounds[:, 1:])


def subword_span(first: dict[int, int], last: dict[int, int], start: int, end: int) -> tuple[int, int] | None:
    """Word span start..end (inclusive) -> (first subword of its first word, last subword of its last
    word), given each word's first/last subword position; None when none of its words has a subword.
    A word with no subwords of its own (rare: zero-width characters) is skipped over. Shared by the
    collators that map word-level answers to subwords (mPMR's, CLISM's)."""
    inside = [w for w in range(start, end + 1) if w in first]
    return (first[inside[0]], last[inside[-1]]) if inside else None


def make_loader(dataset: ParquetBatches, num_workers: int) -> torch.utils.data.DataLoader:
    # batch_size=None: the dataset batches itself, so that skipping on resume costs no collation.
    return torch.utils.data.DataLoader(
        dataset, batch_size=None, num_workers=num_workers, persistent_workers=False, in_order=True,
        # Its own generator: creating the iterator would otherwise draw from the global RNG, and a
        # resumed run (which creates it after restoring that RNG) would get different dropout.
        generator=torch.Generator().manual_seed(0),
    )
