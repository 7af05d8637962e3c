"""The Parquet contracts between the Beam jobs and the torch side (docs/design.md §1–2).

Every schema is defined once here, carries its name and version in the Arrow metadata, and is used
by the writers (pipelines/) and checked by the readers (training/). Changing one is a deliberate
change on both sides: bump the version.
"""
from __future__ import annotations

import pyarrow as pa

SCHEMA_NAME_KEY = b"xlu_factory.schema"
SCHEMA_VERSION_KEY = b"xlu_factory.schema_version"


def _with_version(schema: pa.Schema, name: str, version: int) -> pa.Schema:
    return schema.with_metadata({SCHEMA_NAME_KEY: name.encode(), SCHEMA_VERSION_KEY: str(version).encode()})


WORD_SPAN = pa.struct([("start", pa.int32()), ("end", pa.int32())])

# Per word of the list before it, whether whitespace follows the word in the text it came from
# (spaCy's Token.whitespace_, for every tokeniser: corpora/spacing.py). Words and flags give the running
# text back: each word, then one space where its flag is set.
SPACES = pa.list_(pa.bool_())

# One MRC triple of the mPMR paper (§2.2). Answer offsets are word indices into context_words,
# both inclusive; an unanswerable example has no answers. v2 added query_spaces and context_spaces.
MRC_SCHEMA = _with_version(
    pa.schema(
        [
            ("id", pa.string()),
            ("lang", pa.string()),
            ("entity", pa.string()),
            ("query_words", pa.list_(pa.string())),
            ("query_spaces", SPACES),
            ("context_words", pa.list_(pa.string())),
            ("context_spaces", SPACES),
            ("answers", pa.list_(WORD_SPAN)),
            ("answerable", pa.bool_()),
            ("definition_page", pa.int64()),
            ("mention_page", pa.int64()),
        ]
    ),
    "mrc",
    2,
)
# v1, words without their spacing: still read (training rebuilds the text by a script rule there).
MRC_SCHEMA_V1 = _with_version(
    pa.schema([f for f in MRC_SCHEMA if f.name not in ("query_spaces", "context_spaces")]),
    "mrc",
    1,
)

# One CLISM pair (CLISM paper §3.1, docs/design.md §2): English source words with informative NER spans
# and the target words of the aligned span of each. All four offsets are word indices, both
# inclusive: src_start..src_end into src_words, tgt_start..tgt_end into tgt_words. v2 added src_spaces
# and tgt_spaces.
CLISM_SPAN = pa.struct(
    [("src_start", pa.int32()), ("src_end", pa.int32()), ("tgt_start", pa.int32()), ("tgt_end", pa.int32()),
     ("label", pa.string())]
)
CLISM_SCHEMA = _with_version(
    pa.schema(
        [
            ("id", pa.string()),
            ("src_lang", pa.string()),
            ("tgt_lang", pa.string()),
            ("src_words", pa.list_(pa.string())),
            ("src_spaces", SPACES),
            ("tgt_words", pa.list_(pa.string())),
            ("tgt_spaces", SPACES),
            ("spans", pa.list_(CLISM_SPAN)),
        ]
    ),
    "clism",
    2,
)
# v1, without src_spaces and tgt_spaces: still read.
CLISM_SCHEMA_V1 = _with_version(
    pa.schema([f for f in CLISM_SCHEMA if f.name not in ("src_spaces", "tgt_spaces")]),
    "clism",
    1,
)
# The spacing column of each word column, in every schema that has one.
SPACING_COLUMNS = {"query_words": "query_spaces", "context_words": "context_spaces",
                   "src_words": "src_spaces", "tgt_words": "tgt_spaces"}

# docs/design.md §6: every job's rejects, one row per rejected record, with enough to find it again.
DEAD_LETTER_SCHEMA = _with_version(
    pa.schema(
        [
            ("source", pa.string()),
            ("record_id", pa.string()),
            ("stage", pa.string()),
            ("reason", pa.string()),
            ("excerpt", pa.string()),
        ]
    ),
    "dead_letter",
    1,
)

# Long format so that every job can report any metric per language without a schema change.
STATS_SCHEMA = _with_version(
    pa.schema([("lang", pa.string()), ("metric", pa.string()), ("value", pa.int64())]),
    "stats",
    1,
)

# VoCAP (pipelines/vocap.py): one row per (language, grid model). `size` is the model's piece count
# (its own <unk> included), `alp` the average held-out log-probability (corpora/xy/vocap.py).
ALP_SCHEMA = _with_version(
    pa.schema([("lang", pa.string()), ("size", pa.int64()), ("alp", pa.float64())]),
    "alp",
    1,
)

# VoCAP allocation, one row per language: `size` pieces allocated to it (languages share pieces, so
# the sizes sum to more than the merged vocabulary), `share` its smoothed data share q_i, `alp` its
# ALP at that size.
ALLOCATION_SCHEMA = _with_version(
    pa.schema([("lang", pa.string()), ("size", pa.int64()), ("share", pa.float64()), ("alp", pa.float64())]),
    "allocation",
    1,
)

# XY-LENT MRTD (pipelines/xy_corpus.py): one packed monolingual sequence of at most --max_len token
# ids of the vocap model: `<s>` then lines of one language, each followed by `</s>`, cut at the
# length (a line may continue in the next sequence). No padding is stored.
XY_MRTD_SCHEMA = _with_version(
    pa.schema([("id", pa.string()), ("lang", pa.string()), ("input_ids", pa.list_(pa.int32()))]),
    "xy_mrtd",
    1,
)

# XY-LENT TRTD: one translation pair as `<s> x </s> y </s>` token ids. src_lang is the language that
# comes first (after the random flip), n_ids = len(input_ids), src_len the number of tokens of
# `<s> x </s>`, so input_ids[:src_len] is the first segment and input_ids[src_len:] the second.
# `flipped` says that the order is the reverse of the bitext file's. n_ids (v2) lets the trainer
# plan its length buckets, and skip batches on resume, without reading the ids.
XY_TRTD_SCHEMA = _with_version(
    pa.schema([("id", pa.string()), ("src_lang", pa.string()), ("tgt_lang", pa.string()),
               ("input_ids", pa.list_(pa.int32())), ("n_ids", pa.int32()), ("src_len", pa.int32()),
               ("flipped", pa.bool_())]),
    "xy_trtd",
    2,
)
# v1, without n_ids: still read (training/data/xylent.py then takes the lengths from the ids).
XY_TRTD_SCHEMA_V1 = _with_version(
    pa.schema([f for f in XY_TRTD_SCHEMA if f.name != "n_ids"]),
    "xy_trtd",
    1,
)

# XY-LENT pair sampling (corpora/xy/sinkhorn.py), one row per unordered language pair (src_lang <=
# tgt_lang, same-language pairs too): bitext `pairs`, their `data_share`, the balanced Sinkhorn
# plan's `plan_mass`, the sampling `prob` after the zero-data mass is removed, and the
# `expected_draws` of TRTD rows (prob x --trtd_pairs).
XY_PAIR_PROBS_SCHEMA = _with_version(
    pa.schema([("src_lang", pa.string()), ("tgt_lang", pa.string()), ("pairs", pa.int64()),
               ("data_share", pa.float64()), ("plan_mass", pa.float64()), ("prob", pa.float64()),
               ("expected_draws", pa.float64())]),
    "xy_pair_probs",
    1,
)

class SchemaMismatch(ValueError):
    pass


def check_schema(found: pa.Schema, expected: pa.Schema, where: str) -> None:
    """Fail with a one-line message when a file was not written with the expected contract."""
    meta = found.metadata or {}
    name = meta.get(SCHEMA_NAME_KEY, b"?").decode()
    version = meta.get(SCHEMA_VERSION_KEY, b"?").decode()
    want_name = expected.metadata[SCHEMA_NAME_KEY].decode()
    want_version = expected.metadata[SCHEMA_VERSION_KEY].decode()
    if (name, version) != (want_name, want_version):
        raise SchemaMismatch(
            f"{where}: schema {name} v{version}, expected {want_name} v{want_version}; regenerate the data with this version"
        )
    if not found.remove_metadata().equals(expected.remove_metadata()):
        raise SchemaMismatch(f"{where}: columns differ from the {want_name} v{want_version} contract: {found.names}")


# ─────────────── what a row must be for its schema to hold it (checked before a writer) ───────────────

_INT_BOUNDS = {pa.int8(): 7, pa.int16(): 15, pa.int32(): 31, pa.int64(): 63}
MAX_TEXT_BYTES = 2**31 - 1  # one Arrow string (and one list) is indexed by int32 offsets


def row_problem(row: dict, schema: pa.Schema) -> tuple[str, str] | None:
    """(reason, column) for the first value of `row` that `schema` cannot hold, or None.

    Reasons: `missing_column`, `int_out_of_range`, `invalid_text` (not a str, or not encodable as
    UTF-8: a lone surrogate), `value_too_long`, `wrong_type`, `spaces_length_mismatch` (a spacing
    column with not one flag per word). A writer given such a row fails for the
    whole shard, so the job checks each row first and dead-letters the few that would.
    """
    if not isinstance(row, dict):
        return "wrong_type", "row"
    for field in schema:
        if field.name not in row:
            return "missing_column", field.name
        reason = _value_problem(row[field.name], field.type)
        if reason:
            return reason, field.name
    for words, spaces in SPACING_COLUMNS.items():
        if spaces in schema.names and len(row[spaces] or ()) != len(row[words] or ()):
            return "spaces_length_mismatch", spaces
    return None


def _value_problem(value, kind: pa.DataType) -> str | None:
    if value is None:
        return None
    if kind in _INT_BOUNDS:
        if isinstance(value, bool) or not isinstance(value, int):
            return "wrong_type"
        bits = _INT_BOUNDS[kind]
        return None if -(1 << bits) <= value < (1 << bits) else "int_out_of_range"
    if pa.types.is_string(kind):
        return _texts_problem((value,))
    if pa.types.is_boolean(kind):
        return None if isinstance(value, bool) else "wrong_type"
    if pa.types.is_floating(kind):
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "wrong_type"
    if pa.types.is_list(kind):
        if not isinstance(value, (list, tuple)):
            return "wrong_type"
        if len(value) > MAX_TEXT_BYTES:
            return "value_too_long"
        item = kind.value_type
        if pa.types.is_string(item):
            return _texts_problem(value)
        for element in value:
            reason = _value_problem(element, item)
            if reason:
                return reason
        return None
    if pa.types.is_struct(kind):
        if not isinstance(value, dict):
            return "wrong_type"
        for i in range(kind.num_fields):
            sub = kind.field(i)
            reason = _value_problem(value.get(sub.name), sub.type)
            if reason:
                return reason
        return None
    return None  # a type no schema here uses: pyarrow decides


def _texts_problem(values) -> str | None:
    """Strings checked together: one encode of their join, not one per word."""
    if not all(type(v) is str for v in values):
        return "wrong_type" if any(v is not None and not isinstance(v, str) for v in values) else None
    try:
        encoded = "\x00".join(values).encode("utf-8")
    except UnicodeEncodeError:
        return "invalid_text"
    return "value_too_long" if len(encoded) > MAX_TEXT_BYTES else None
