"""XY-LENT data: the xy_corpus folder, the MRTD/TRTD batch stream and its collation (the recipe, with
the configs, flags and hooks, is training/recipes/xylent.py).

Data: the xy_corpus job's --output (pipelines/xy_corpus.py; docs/design.md §2):
    mrtd/train-*.parquet        XY_MRTD_SCHEMA  packed monolingual sequences of ≤ 512 ids, `<s> …`
    trtd/train-*.parquet        XY_TRTD_SCHEMA  `<s> x </s> y </s>` and its length n_ids, order flipped at write time
    (checked against the folder's manifest.json first; folders of before have them under data/)
    pair_probs.parquet          XY_PAIR_PROBS_SCHEMA  the Sinkhorn sampling probability of each pair
    spm.model                   the vocap SentencePiece model the ids are from, or
    tokenizer/                  the encoder's tokenizer the ids are from (xy_corpus --vocab FOLDER)

The stream (`XYBatches`), per DDP rank and DataLoader worker:
- MRTD rows are drawn by language with probability q_l ∝ n_l^α (--mono_alpha), XLM-E's smoothed
  multilingual sampling, by thinning: a row of language l is kept with probability
  (q_l/p_l) / max_k(q_k/p_k), p_l being its share of the rows; batches mix languages in those shares;
- a TRTD row's language order is drawn again each time a batch takes it (§4: "flip the order with
  probability 0.5"): the job's write-time flip alone would show a row in the same order every epoch;
  a fair coin on top of a fair coin is still a fair coin, so each visit's order is uniform;
- MRTD and TRTD batches alternate (one of each: XY-LENT Table 9 counts the batch "per task"), so an
  even --grad_accum gives every optimiser step the same number of batches of both tasks;
- a TRTD batch is one language pair, drawn with the current pair weights (pair_probs, or the DRO
  best response), made of rows of similar length (a pool of the pair's rows sorted by length and cut
  into batches of at most --trtd_batch_tokens padded tokens) and padded to its longest pair
  (Appendix A: "the max one is chosen across the batch");
- each stream is a training.data.ParquetBatches (seeded, split by rank and worker); the choices made
  on top (which pair, the order of bucketed batches) come from generators keyed on (seed, slot,
  batch), so the whole stream is a function of the seed and the weights.

Those choices depend on row contents (MRTD thinning on `lang`, TRTD pools on the pair and on
`n_ids`), so the stream is planned on those narrow columns alone: each row goes through thinning,
pools and buckets as a record (its row group, its row, its narrow columns), and `input_ids` is read,
a row group at a time, only for the batches handed out. Resuming therefore replays the plan from
the start and skips the batches already taken without reading their ids or collating them. TRTD shards written
before n_ids (xy_trtd v1) still work: their lengths come from the ids, read for every planned row.
"""
from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import torch
from torch.utils.data import IterableDataset, get_worker_info

from corpora.schemas import XY_MRTD_SCHEMA, XY_PAIR_PROBS_SCHEMA, XY_TRTD_SCHEMA, XY_TRTD_SCHEMA_V1, check_schema
from corpora.xy.vocap import PAD_ID
from corpora.seeding import keyed_rng
from training.data import (ParquetBatches, check_shards, data_root, list_shards, read_metadata,
                           read_row_group, read_table)
from training.data.xylent_vocabulary import artefact, vocabulary_file


# ---- the data folder ----

def _root(data_dir: str | Path) -> Path:
    return data_root(data_dir)  # the job's --output, or a folder inside it (corpora/outputs/manifests.py)


def shards(data_dir: str | Path, task: str) -> list[Path]:
    """The task's (mrtd, trtd) shards, the folder checked against its manifest first."""
    return list_shards(data_dir, "train", table=task)


def pair_key(a: str, b: str) -> str:
    return "-".join(sorted((a, b)))  # as pair_probs and corpora/xy/shards.py name an unordered pair


def read_pair_probs(data_dir: str | Path) -> tuple[list[str], list[float]]:
    """The pairs with a positive probability, in pair_probs order, and those probabilities (sum 1)."""
    path = artefact(data_dir, "pair_probs.parquet")
    table = read_table(path)
    check_schema(table.schema, XY_PAIR_PROBS_SCHEMA, str(path))
    rows = [r for r in table.to_pylist() if r["prob"] > 0]
    if not rows:
        raise ValueError(f"{path}: no language pair has a positive probability")
    total = sum(r["prob"] for r in rows)
    return [pair_key(r["src_lang"], r["tgt_lang"]) for r in rows], [r["prob"] / total for r in rows]


def mono_rows_by_language(data_dir: str | Path) -> dict[str, int]:
    """MRTD rows per language: the job's own count (stats.parquet, `mrtd/sequences`) when it is there,
    else the shards' lang column (one narrow column, read once)."""
    root = _root(data_dir)
    counts: dict[str, int] = {}
    if (root / "stats.parquet").exists():
        for row in read_table(root / "stats.parquet").to_pylist():
            if row["metric"] == "mrtd/sequences" and row["value"] > 0:
                counts[row["lang"]] = row["value"]
    if not counts:
        for f in shards(data_dir, "mrtd"):
            for lang in read_table(f, ["lang"]).column("lang").to_pylist():
                counts[lang] = counts.get(lang, 0) + 1
    return counts


def smoothed_keep_rates(rows_by_lang: dict[str, int], alpha: float) -> dict[str, float]:
    """Per language, the share of its rows to keep so that kept rows follow q ∝ n^α: keeping
    (q_l/p_l) / max_k(q_k/p_k) of language l (the rarest language keeps all of its rows)."""
    if not 0 < alpha <= 1:
        raise ValueError(f"--mono_alpha {alpha}: must be in (0, 1]")
    total = sum(rows_by_lang.values())
    smoothed = {lang: n ** alpha for lang, n in rows_by_lang.items()}
    norm = sum(smoothed.values())
    ratio = {lang: (smoothed[lang] / norm) / (n / total) for lang, n in rows_by_lang.items()}
    top = max(ratio.values())
    return {lang: r / top for lang, r in ratio.items()}


def check_folder(data_dir: str | Path) -> int:
    """Both tasks' shards against their contracts, pair_probs and the vocabulary present; total rows."""
    rows = (check_shards(shards(data_dir, "mrtd"), XY_MRTD_SCHEMA)
            + check_shards(shards(data_dir, "trtd"), XY_TRTD_SCHEMA, older=(XY_TRTD_SCHEMA_V1,)))
    read_pair_probs(data_dir)
    vocabulary_file(data_dir)
    return rows


# ---- collation ----

def collate(rows: list[dict], pair_index: int = -1, pair: str | None = None, max_len: int | None = None) -> dict:
    """Rows -> input_ids and attention_mask padded to the longest row, pair_index per row (-1: MRTD)."""
    ids = [r["input_ids"][:max_len] if max_len else r["input_ids"] for r in rows]
    longest = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), longest), PAD_ID, dtype=torch.long)
    attention_mask = torch.zeros((len(ids), longest), dtype=torch.long)
    for n, x in enumerate(ids):
        input_ids[n, :len(x)] = torch.tensor(x, dtype=torch.long)
        attention_mask[n, :len(x)] = 1
    tokens = sum(len(x) for x in ids)
    if pair is None:
        counts = {"mrtd_batches": 1, "mrtd_rows": len(ids), "mrtd_tokens": tokens}
    else:
        counts = {"trtd_batches": 1, "trtd_rows": len(ids), "trtd_tokens": tokens,
                  "trtd_padded_tokens": longest * len(ids), f"trtd_rows/{pair}": len(ids)}
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "pair_index": torch.full((len(ids),), pair_index, dtype=torch.long), "counts": counts}


def flipped_at_random(rows: list[dict], rng: random.Random) -> list[dict]:
    """Each row `<s> x </s> y </s>` as it is or as `<s> y </s> x </s>`, with probability ½ each."""
    out = []
    for row in rows:
        if rng.random() < 0.5:
            ids, cut = row["input_ids"], row["src_len"]  # cut: the length of `<s> x </s>`
            row = {**row, "src_lang": row["tgt_lang"], "tgt_lang": row["src_lang"], "src_len": len(ids) - cut + 1,
                   "input_ids": [ids[0], *ids[cut:-1], ids[cut - 1], *ids[1:cut - 1], ids[-1]]}
        out.append(row)
    return out


class Record(NamedTuple):
    """A row of the stream before its ids are read: where it is, and its narrow columns."""
    unit: tuple[int, int]  # (file index, row group), as ParquetBatches names a row group
    row: int
    cols: dict


def length_buckets(rows: list[Record], budget: int, rng: random.Random) -> list[list[Record]]:
    """Rows sorted by length (n_ids), cut into batches of at most `budget` padded tokens (rows x
    longest), the batches in a seeded order so that short and long ones alternate at random."""
    rows = sorted(rows, key=lambda r: r.cols["n_ids"])
    batches: list[list[Record]] = []
    current: list[Record] = []
    for row in rows:
        # sorted ascending, so the row being added is the batch's longest
        if current and (len(current) + 1) * row.cols["n_ids"] > budget:
            batches.append(current)
            current = []
        current.append(row)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


# ---- the stream ----

class _TaskRows:
    """One task's rows for one pass over the stream: positions become Records (their narrow columns
    read a row group at a time), and the wide columns are read only for the batches handed out.

    A row group's wide columns are kept while it still has positions to come (read once, as
    ParquetBatches does); once all its positions are Records, only the rows still waiting in a pool or
    a partial batch keep theirs, so that a down-weighted pair's few pooled rows do not hold whole
    row groups in memory."""

    def __init__(self, batches: ParquetBatches, narrow: list[str], wide: list[str], reading: bool,
                 ids_for_lengths: set[int] = frozenset()):
        self.batches, self.narrow, self.wide = batches, narrow, wide
        # False while the batches being planned are skipped ones; from the first batch handed out on,
        # every row is handed out, so a row group's wide columns come in the same read as its narrow ones.
        self.reading = reading
        self.ids_for_lengths = ids_for_lengths  # files without n_ids (xy_trtd v1)
        self.open: Counter = Counter()  # per row group, its positions not yet made Records
        self.waiting: dict[tuple, dict[int, int]] = {}  # per row group, its Records not yet settled: row -> count
        self.tables: dict[tuple, list[dict]] = {}  # wide columns of row groups still open
        self.kept: dict[tuple, dict] = {}  # wide columns of waiting rows of closed row groups

    def _read(self, unit: tuple[int, int], columns: list[str]) -> list[dict]:
        file_index, group = unit
        return read_row_group(self.batches.files[file_index], group, columns)

    def _read_planned(self, unit: tuple[int, int]) -> list[dict]:
        """The narrow columns of a row group being opened (with the wide ones once reading)."""
        columns = list(self.narrow)
        lengths_from_ids = "n_ids" in columns and unit[0] in self.ids_for_lengths
        if lengths_from_ids:
            columns[columns.index("n_ids")] = "input_ids"
        if self.reading:
            columns += [c for c in self.wide if c not in columns]
        if not columns:
            return [{}] * self.batches.unit_rows[unit]
        rows = self._read(unit, columns)
        if lengths_from_ids:
            for row in rows:
                row["n_ids"] = len(row["input_ids"] if self.reading else row.pop("input_ids"))
        if self.reading:
            self.tables[unit] = rows
        return rows

    def records(self) -> Iterator[list[Record]]:
        """ParquetBatches' batches of positions, as Records."""
        narrow: dict[tuple, list[dict]] = {}
        open_, waiting_by_unit = self.open, self.waiting
        for batch in self.batches.position_batches(open_):
            records = []
            for unit, row in batch:
                table = narrow.get(unit)
                if table is None:
                    table = narrow[unit] = self._read_planned(unit)
                records.append(Record(unit, row, table[row]))
                waiting = waiting_by_unit.get(unit)
                if waiting is None:
                    waiting = waiting_by_unit[unit] = {}
                waiting[row] = waiting.get(row, 0) + 1
                open_[unit] -= 1
                if not open_[unit]:
                    del open_[unit], narrow[unit]
                    table = self.tables.pop(unit, None)
                    if table is not None:
                        self.kept.update(((unit, r), table[r]) for r in waiting)
            yield records

    def rows(self, records: list[Record]) -> list[dict]:
        """The records' rows, narrow and wide columns."""
        out = []
        for unit, row, cols in records:
            table = self.tables.get(unit)
            if table is not None:
                wide = table[row]
            elif (unit, row) in self.kept:
                wide = self.kept[(unit, row)]
            else:
                table = self._read(unit, self.wide)
                if unit in self.open:
                    self.tables[unit] = table
                else:
                    self.kept.update(((unit, r), table[r]) for r in self.waiting[unit])
                wide = table[row]
            out.append({**cols, **wide})
        return out

    def settle(self, records: list[Record]) -> None:
        """The records are done with: in a batch (handed out or skipped), or dropped."""
        for unit, row, _ in records:
            waiting = self.waiting[unit]
            left = waiting[row] - 1
            if left:
                waiting[row] = left
                continue
            del waiting[row]
            if self.kept:
                self.kept.pop((unit, row), None)
            if not waiting:
                del self.waiting[unit]


class XYBatches(IterableDataset):
    """Endless alternating MRTD / TRTD batches (module docstring); `pair_weights` is in shared
    memory so that the DRO hook reaches DataLoader worker processes too."""

    def __init__(self, mrtd_files: list[Path], trtd_files: list[Path], pair_names: list[str], pair_probs: list[float],
                 batch_size: int, max_seq_len: int, trtd_batch_tokens: int | None = None, pool_rows: int = 1000,
                 seed: int = 0, rank: int = 0, world_size: int = 1, shuffle_buffer: int = 10_000, start_batch: int = 0,
                 mono_keep: dict[str, float] | None = None):
        self.pair_names = list(pair_names)
        self.pair_probs = [float(p) for p in pair_probs]
        self.pair_weights = torch.tensor(pair_probs, dtype=torch.float64).share_memory_()
        self.batch_size = batch_size
        self.max_seq_len = max_seq_len
        self.budget = trtd_batch_tokens or batch_size * max_seq_len
        if self.budget < max_seq_len:
            raise ValueError(f"--trtd_batch_tokens {self.budget}: below --max_seq_len {max_seq_len}, a long pair would never fit")
        self.pool_rows = max(1, pool_rows)
        self.seed = seed
        self.start_batch = start_batch
        footers = [read_metadata(f) for f in trtd_files]
        self.trtd_total = sum(meta.num_rows for meta in footers)
        self.trtd_ids_for_lengths = {k for k, meta in enumerate(footers) if "n_ids" not in meta.schema.to_arrow_schema().names}
        # None: every MRTD row in the corpus's proportions; else the share of each language's rows kept.
        self.mono_keep = mono_keep
        # Planners of row positions only (rows are read by _TaskRows); start_batch is passed on only
        # for the worker rotation (ParquetBatches._slot): skipping is done here, on the combined stream.
        self.mrtd = ParquetBatches(mrtd_files, batch_size, None, seed, rank, world_size, shuffle_buffer, start_batch)
        self.trtd = ParquetBatches(trtd_files, 256, None, seed + 1, rank, world_size, shuffle_buffer, start_batch)

    def set_pair_weights(self, weights) -> None:
        weights = torch.as_tensor(weights, dtype=torch.float64).cpu()
        if weights.shape != self.pair_weights.shape or not (weights >= 0).all() or weights.sum() <= 0:
            raise ValueError(f"pair weights {weights.tolist()}: need {len(self.pair_names)} non-negative values")
        self.pair_weights.copy_(weights / weights.sum())

    def _worker(self) -> tuple[int, int]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        return (worker + self.start_batch) % workers, workers  # the rotation of ParquetBatches._slot

    def _mrtd_batches(self, slot: int, mrtd: _TaskRows) -> Iterator[list[Record]]:
        if self.mono_keep is None:
            yield from mrtd.records()
            return
        # One generator drawn in stream order: the stream is replayed from its start on resume.
        rng, batch = keyed_rng(self.seed, "mono-keep", slot), []
        for records in mrtd.records():
            for record in records:
                if rng.random() < self.mono_keep.get(record.cols["lang"], 1.0):
                    batch.append(record)
                    if len(batch) == self.batch_size:
                        yield batch
                        batch = []
                else:
                    mrtd.settle([record])

    def _plan(self, slot: int, mrtd_rows: _TaskRows, trtd_rows: _TaskRows) -> Iterator[tuple[str | None, list[Record]]]:
        """(pair or None for MRTD, records): the whole stream, chosen on the narrow columns."""
        mrtd = self._mrtd_batches(slot, mrtd_rows)
        trtd = (record for records in trtd_rows.records() for record in records)
        index = {name: k for k, name in enumerate(self.pair_names)}
        buffers: dict[str, list[Record]] = {name: [] for name in self.pair_names}
        ready: dict[str, deque] = {name: deque() for name in self.pair_names}
        absent: set[str] = set()  # pairs this slot's share of the shards does not hold
        self.skipped = {"trtd_too_long": 0, "trtd_unknown_pair": 0, "trtd_buffer_full": 0}

        def refill(pair: str) -> None:
            # Read until the pair has a full pool, or a whole pass of the shards brought none.
            read = 0
            while len(buffers[pair]) < self.pool_rows and read <= self.trtd_total:
                if read == self.trtd_total and buffers[pair]:
                    break
                record = next(trtd)
                read += 1
                key = pair_key(record.cols["src_lang"], record.cols["tgt_lang"])
                if record.cols["n_ids"] > self.max_seq_len:
                    self.skipped["trtd_too_long"] += 1  # cutting a pair would cut its second sentence
                elif key not in index:
                    self.skipped["trtd_unknown_pair"] += 1  # a pair pair_probs gives no probability
                elif len(buffers[key]) >= self.pool_rows:
                    self.skipped["trtd_buffer_full"] += 1  # a down-weighted pair: its surplus rows are skipped
                else:
                    buffers[key].append(record)
                    continue
                trtd_rows.settle([record])
            if not buffers[pair]:
                absent.add(pair)
                return
            rng = keyed_rng(self.seed, "buckets", slot, pair, len(ready[pair]), read)
            ready[pair].extend(length_buckets(buffers[pair], self.budget, rng))
            buffers[pair] = []

        n = 0
        while True:
            if n % 2 == 0:
                yield None, next(mrtd)
            else:
                while True:
                    weights = self.pair_weights.tolist()
                    live = [(name, w) for name, w in zip(self.pair_names, weights) if name not in absent and w > 0]
                    if not live:
                        raise ValueError(f"TRTD slot {slot}: none of the pairs {self.pair_names} has rows here; "
                                         "use fewer workers or ranks, or check the shards")
                    u = keyed_rng(self.seed, "pair", slot, n).random() * sum(w for _, w in live)
                    pair = live[-1][0]
                    for name, w in live:
                        u -= w
                        if u < 0:
                            pair = name
                            break
                    if not ready[pair]:
                        refill(pair)
                    if ready[pair]:
                        break
                yield pair, ready[pair].popleft()
            n += 1

    def _batches(self, skip: int = 0) -> Iterator[tuple[str | None, list[dict]]]:
        """(pair or None, rows) after the first `skip` batches, which are planned but whose ids are never read."""
        slot = self.mrtd._slot()[0]
        mrtd = _TaskRows(self.mrtd, [] if self.mono_keep is None else ["lang"], ["input_ids"], not skip)
        trtd = _TaskRows(self.trtd, ["src_lang", "tgt_lang", "n_ids"], ["input_ids", "src_len"], not skip,
                         self.trtd_ids_for_lengths)
        for n, (pair, records) in enumerate(self._plan(slot, mrtd, trtd)):
            task = mrtd if pair is None else trtd
            if n == skip:
                mrtd.reading = trtd.reading = True
            rows = task.rows(records) if n >= skip else None
            task.settle(records)
            if rows is None:
                continue
            # The order is drawn at the batch (a generator of its own), so a skipped batch draws nothing.
            yield pair, rows if pair is None else flipped_at_random(rows, keyed_rng(self.seed, "trtd-order", slot, n))

    def raw_batches(self) -> Iterator[tuple[str | None, list[dict]]]:
        """(pair or None for MRTD, rows), uncollated."""
        return self._batches()

    def __iter__(self) -> Iterator[dict]:
        worker, workers = self._worker()
        index = {name: k for k, name in enumerate(self.pair_names)}
        for pair, rows in self._batches(skip=len(range(worker, self.start_batch, workers))):
            if pair is None:
                yield collate(rows, max_len=self.max_seq_len)
            else:
                batch = collate(rows, index[pair], pair)
                batch["counts"].update({k: v for k, v in self.skipped.items() if v})
                self.skipped = dict.fromkeys(self.skipped, 0)
                yield batch
