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


def assert_rows_in_mixed_order(folder: Path, pattern: str, group=lambda row: row["lang"]) -> tuple[float, float]:
    """Rows of each shard are in a pseudo-random order, not grouped by language (issue 15).

    In a random order, two adjacent rows of a shard share a language with probability
    Σ n_l(n_l - 1) / (N(N - 1)) (≈ Σp²); a shard sorted by language gives nearly 1. Returns the
    observed and expected rates over all shards."""
    same = expected = pairs = 0.0
    for f in sorted(Path(folder).glob(pattern)):
        labels = [group(r) for r in pq.read_table(f).to_pylist()]
        n = len(labels)
        if n < 2:
            continue
        same += sum(a == b for a, b in zip(labels, labels[1:]))
        counts: dict = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        expected += (n - 1) * sum(c * (c - 1) for c in counts.values()) / (n * (n - 1))
        pairs += n - 1
    assert pairs >= 20, f"{folder}/{pattern}: too few rows to judge the order"
    observed, rate = same / pairs, expected / pairs
    tolerance = 4 * (rate * (1 - rate) / pairs) ** 0.5 + 0.02
    assert abs(observed - rate) <= tolerance, (
        f"{folder}/{pattern}: adjacent rows share a language {observed:.3f} of the time, a random order gives "
        f"{rate:.3f} ± {tolerance:.3f}")
    return observed, rate


def batch_mix_chi2(batches: list[list], shares: dict) -> float:
    """Mean over batches of Pearson's χ² of a batch's label counts against the corpus shares.

    A batch drawn at random from the corpus gives L - 1 on average (L labels; less when drawn without
    replacement); a batch of one language gives about B(1/p - 1): the statistic says how far batches
    are from the corpus mix."""
    total = 0.0
    for batch in batches:
        counts: dict = {}
        for label in batch:
            counts[label] = counts.get(label, 0) + 1
        total += sum((counts.get(label, 0) - len(batch) * p) ** 2 / (len(batch) * p) for label, p in shares.items())
    return total / len(batches)
