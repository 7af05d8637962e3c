"""Reading a job's output files in tests, each checked against its contract first."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpora.schemas import DEAD_LETTER_SCHEMA, check_schema


def read_checked(folder: Path, pattern: str, schema: pa.Schema) -> list[dict]:
    files = sorted(Path(folder).glob(pattern))
    for f in files:
        check_schema(pq.read_schema(f), schema, str(f))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def dead_letters(out: Path) -> list[dict]:
    return read_checked(Path(out) / "dead_letter", "*.parquet", DEAD_LETTER_SCHEMA)
