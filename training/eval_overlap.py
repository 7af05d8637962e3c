"""Is the held-out data also training data? A sample check before training starts.

Rows are compared by their content without their `id` (xy_corpus writes one pair drawn twice as two
ids). The first EVAL_ROWS held-out rows are looked for in the first TRAIN_ROWS training rows: the
jobs write rows in a seeded random order, so both are fair samples, and the check costs one read of
a few thousand rows, not of the training set.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.parquet as pq

EVAL_ROWS = 2_000
TRAIN_ROWS = 50_000


def _fingerprints(files: list[Path], limit: int) -> list[bytes]:
    prints: list[bytes] = []
    for f in files:
        parquet = pq.ParquetFile(f)
        columns = [name for name in parquet.schema_arrow.names if name != "id"]
        for group in range(parquet.num_row_groups):
            if len(prints) >= limit:
                return prints
            table = parquet.read_row_group(group, columns=columns, use_threads=False)
            for row in table.to_pylist()[: limit - len(prints)]:
                prints.append(hashlib.blake2b(repr(sorted(row.items())).encode(), digest_size=16).digest())
    return prints


def overlap_warning(train_files: list[Path], eval_files: list[Path], where: str) -> str | None:
    """One warning line when held-out rows are also in the training rows sampled; None otherwise."""
    held_out = _fingerprints(eval_files, EVAL_ROWS)
    if not held_out or not train_files:
        return None
    seen = set(_fingerprints(train_files, TRAIN_ROWS))
    shared = sum(p in seen for p in held_out)
    if not shared:
        return None
    return (f"warning: {shared:,} of the first {len(held_out):,} held-out rows ({where}) are also training rows "
            f"(of the first {min(len(seen), TRAIN_ROWS):,} read): held-out metrics will overstate; make the data with "
            f"a held-out split (wiki_mrc --test_entities, clism_pairs / xy_corpus --test_sentences) or give "
            f"--eval_data from other text")


def training_files(data: str, subfolder: str) -> list[Path]:
    root = Path(data) / "data" if (Path(data) / "data").is_dir() else Path(data)
    return sorted((root / subfolder).glob("train-*.parquet"))
