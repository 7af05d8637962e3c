"""The last step before a job writes its rows: a row the schema cannot hold, or whose id another row
has, goes to the dead letter with a reason and a count; every other row is written as it is.

Without it, one bad value (a page id beyond int64 in one page of a dump) made pyarrow raise in the
shard writer, which killed the job with one shard of four written; and two rows with one id (two
pages sharing an id) were both written, and a reader keyed by id took one for the other.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apache_beam as beam

from corpora.schemas import row_problem
from pipelines.beam_outputs import DEAD_LETTER, STATS, TallyingDoFn, dead_letter

STAGE = "write"


def row_lang(row: dict) -> str:
    """The stats `lang` of a row: its language, or its language pair (unordered)."""
    if "lang" in row:
        return str(row["lang"])
    return "-".join(sorted((str(row.get("src_lang")), str(row.get("tgt_lang")))))


def _excerpt(row: dict, column: str) -> str:
    value = row.get(column) if isinstance(row, dict) else row
    return f"{column}: {value!r}"[:200]


# Declared, so that building the pipeline does not infer it: Beam would walk the bytecode of the
# whole schema checker (row_problem and everything it calls) each time a job is constructed.
@beam.typehints.with_output_types(Any)
class CheckRowFn(TallyingDoFn):
    def __init__(self, schema, lang_of: Callable[[dict], str]):
        self.schema, self.lang_of = schema, lang_of

    def process(self, row):
        problem = row_problem(row, self.schema)
        if problem is None:
            yield row
            return
        reason, column = problem
        lang = self.lang_of(row) if isinstance(row, dict) else "?"
        self.tally(STAGE, reason, lang)
        record_id = str(row.get("id", "?")) if isinstance(row, dict) else "?"
        yield dead_letter(lang, record_id, STAGE, reason, _excerpt(row, column))


class UniqueIdFn(TallyingDoFn):
    """Rows that share an id: copies of one row are written once (the others counted as
    `duplicate_row`); rows that differ are none of them written (`duplicate_id`), since nothing
    says which one the id names."""

    def __init__(self, lang_of: Callable[[dict], str]):
        self.lang_of = lang_of

    def process(self, element):
        row_id, rows = element
        rows = list(rows)
        if len(rows) == 1:
            yield rows[0]
            return
        lang = self.lang_of(rows[0])
        distinct = {repr(sorted(r.items())) for r in rows}
        if len(distinct) == 1:
            self.tally(STAGE, "duplicate_row", lang, len(rows) - 1)
            yield rows[0]
            for _ in rows[1:]:
                yield dead_letter(lang, str(row_id), STAGE, "duplicate_row", f"{len(rows)} copies of one row")
            return
        self.tally(STAGE, "duplicate_id", lang, len(rows))
        for row in sorted(rows, key=lambda r: repr(sorted(r.items()))):
            yield dead_letter(lang, str(row_id), STAGE, "duplicate_id", f"{len(rows)} different rows with this id: "
                              f"{repr(sorted(row.items()))}")


class CheckRows(beam.PTransform):
    """rows -> {"rows": rows to write, STATS: counts, DEAD_LETTER: rejected rows with reasons}."""

    def __init__(self, schema, lang_of: Callable[[dict], str] = row_lang, unique_ids: bool = True):
        super().__init__()
        self.schema, self.lang_of, self.unique_ids = schema, lang_of, unique_ids

    def expand(self, rows):
        checked = rows | "CheckSchema" >> beam.ParDo(CheckRowFn(self.schema, self.lang_of)).with_outputs(
            STATS, DEAD_LETTER, main="rows")
        if not self.unique_ids:
            return {"rows": checked.rows, STATS: checked[STATS], DEAD_LETTER: checked[DEAD_LETTER]}
        unique = (
            checked.rows
            | "KeyById" >> beam.Map(lambda row: (row["id"], row))
            | "GroupById" >> beam.GroupByKey()
            | "OneRowPerId" >> beam.ParDo(UniqueIdFn(self.lang_of)).with_outputs(STATS, DEAD_LETTER, main="rows")
        )
        return {
            "rows": unique.rows,
            STATS: (checked[STATS], unique[STATS]) | "CheckStats" >> beam.Flatten(),
            DEAD_LETTER: (checked[DEAD_LETTER], unique[DEAD_LETTER]) | "CheckDeadLetters" >> beam.Flatten(),
        }
