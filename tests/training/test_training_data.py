"""training/ data side: Parquet streaming split by rank and worker, resumable position, the tiny
tokenizer, and the mPMR collator's subword spans checked against the words on real wiki_mrc rows."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from corpora.schemas import SchemaMismatch
from pipelines import wiki_mrc
from training.data.mpmr import MPMRCollator
from training.data import ParquetBatches, check_shards, list_shards, make_loader
from training.tokenizer import train_tiny_tokenizer


@pytest.fixture(scope="session")
def mrc_output(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wiki_mrc")
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(out)])  # the bundled sample, ~5 s
    return out


@pytest.fixture(scope="session")
def rows(mrc_output) -> list[dict]:
    return [r for f in list_shards(mrc_output) for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="session")
def tokenizer(rows):
    return train_tiny_tokenizer((ws for r in rows for ws in (r["query_words"], r["context_words"])), 2000)


def ids_of(batches) -> list[str]:
    return [r["id"] for b in batches for r in b]


def test_shards_are_found_and_checked(mrc_output, rows, tmp_path):
    files = list_shards(mrc_output)
    assert files == list_shards(mrc_output / "data") and len(files) >= 2
    assert check_shards(files) == len(rows) > 100
    foreign = tmp_path / "data" / "train-00000-of-00001.parquet"
    foreign.parent.mkdir()
    pq.write_table(pa.table({"id": ["x"]}), foreign)
    with pytest.raises(SchemaMismatch, match="train-00000-of-00001.parquet: schema"):
        check_shards(list_shards(tmp_path))
    with pytest.raises(FileNotFoundError, match="no train-"):
        list_shards(mrc_output / "dead_letter")


def test_one_epoch_is_split_between_slots_without_overlap(mrc_output, rows):
    files = list_shards(mrc_output)
    # 3 slots: fewer than the row groups, so each reads whole row groups; 9: more, so rows are strided.
    for slots in (3, 9):
        ds = ParquetBatches(files, batch_size=5, seed=1, world_size=slots)
        per_slot = [[ds._read(unit)[row]["id"] for unit, row in ds._positions(0, slot, slots)] for slot in range(slots)]
        together = [i for ids in per_slot for i in ids]
        assert sorted(together) == sorted(r["id"] for r in rows)  # every row exactly once per epoch
        assert all(per_slot)


def test_order_is_seeded_and_changes_per_epoch(mrc_output, rows):
    files = list_shards(mrc_output)
    n = -(-len(rows) // 10)  # batches per epoch
    first = ParquetBatches(files, 10, seed=0).raw_batches()
    a = ids_of(next(first) for _ in range(2 * n))
    b = ids_of(next(ParquetBatches(files, 10, seed=0).raw_batches()) for _ in range(1))
    assert a[:10] == b
    assert a[: len(rows)] != a[len(rows):]  # epoch 2 is reshuffled...
    assert sorted(a[: len(rows)]) == sorted(a[len(rows):])  # ...over the same rows
    assert ids_of(next(ParquetBatches(files, 10, seed=1).raw_batches()) for _ in range(1)) != b


def test_workers_split_the_stream_and_resume_skips_exactly(mrc_output):
    files = list_shards(mrc_output)
    loader = make_loader(ParquetBatches(files, 4, seed=0, shuffle_buffer=8), num_workers=2)
    it = iter(loader)
    first = [next(it) for _ in range(12)]
    ids = ids_of(first)
    assert len(ids) == len(set(ids)) == 48  # two workers, disjoint rows
    for start in (6, 7):  # resuming on either worker's turn
        resumed = iter(make_loader(ParquetBatches(files, 4, seed=0, shuffle_buffer=8, start_batch=start), num_workers=2))
        assert ids_of(next(resumed) for _ in range(12 - start)) == ids_of(first[start:])


def test_resume_skips_batches_without_reading_their_rows(mrc_output, monkeypatch):
    files = list_shards(mrc_output)
    per_epoch = -(-check_shards(files) // 4)
    skip = 3 * per_epoch + 5  # into the fourth epoch
    whole = ParquetBatches(files, 4, seed=0, shuffle_buffer=8).raw_batches()
    expected = [next(whole) for _ in range(skip + 10)][skip:]
    reads = []
    real_read = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, group, **kw: reads.append(group) or real_read(self, group, **kw))
    resumed = iter(ParquetBatches(files, 4, seed=0, shuffle_buffer=8, start_batch=skip))
    assert ids_of(next(resumed) for _ in range(10)) == ids_of(expected)
    # Only row groups of the 10 batches handed out are read, never those of the skipped three
    # epochs (reading them would cost at least 3 reads per row group).
    units = len(ParquetBatches(files, 4).units)
    assert 0 < len(reads) <= units


def test_tiny_tokenizer_has_the_trained_vocabulary(tokenizer, rows, tmp_path):
    # transformers 5 can silently build a 5-token vocabulary from a SentencePiece file.
    assert len(tokenizer) > 1000
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3, 4]) == ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    assert (tokenizer.cls_token_id, tokenizer.pad_token_id, tokenizer.sep_token_id) == (0, 1, 2)
    words = rows[0]["context_words"][:30]
    ids = tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
    assert tokenizer.unk_token_id not in ids and len(ids) < 4 * len(words)
    tokenizer.save_pretrained(tmp_path)
    from transformers import AutoTokenizer
    again = AutoTokenizer.from_pretrained(tmp_path)
    assert len(again) == len(tokenizer)
    assert again(words, is_split_into_words=True, add_special_tokens=False)["input_ids"] == ids


def span_text(tokenizer, ids, i, j) -> str:
    return "".join(tokenizer.convert_ids_to_tokens(ids[i: j + 1])).replace("▁", "")


def test_collator_spans_match_the_answer_words(tokenizer, rows):
    collate = MPMRCollator(tokenizer)
    batch = collate(rows)
    assert batch["counts"].get("spans/cut_by_truncation", 0) == 0
    assert len(batch["answer_spans"]) == sum(len(r["answers"]) for r in rows)
    for b, i, j in batch["answer_spans"].tolist():
        row = rows[b]
        ids = batch["input_ids"][b].tolist()
        words = {(a["start"], a["end"]) for a in row["answers"]}
        start, end = batch["context_word"][b, i].item(), batch["context_word"][b, j].item()
        assert (start, end) in words
        assert span_text(tokenizer, ids, i, j) == "".join(row["context_words"][start: end + 1])
        assert i == 0 or batch["context_word"][b, i - 1] != start  # first subword of the first word
        assert batch["context_word"][b, j + 1] != end  # last subword of the last word
    assert batch["answerable"].tolist() == [float(r["answerable"]) for r in rows]
    # Layout: <s> query </s></s> context </s>, then padding.
    for b in range(len(rows)):
        ids = batch["input_ids"][b][batch["attention_mask"][b].bool()].tolist()
        ctx = batch["context_mask"][b].nonzero()[:, 0]
        first, last = ctx.min().item(), ctx.max().item()
        assert ids[0] == 0 and ids[first - 2: first] == [2, 2] and ids[-1] == 2 and last == len(ids) - 2
        assert first - 3 <= 128


def test_truncation_drops_and_counts_spans_never_mislabels(tokenizer, rows):
    collate = MPMRCollator(tokenizer, max_query_tokens=16, max_seq_len=64)
    batch = collate(rows)
    counts = batch["counts"]
    assert batch["input_ids"].shape[1] <= 64
    assert counts["spans/cut_by_truncation"] > 0 and counts["rows/context_truncated"] > 0
    assert counts["spans/kept"] + counts["spans/cut_by_truncation"] == sum(len(r["answers"]) for r in rows)
    for b, i, j in batch["answer_spans"].tolist():
        start, end = batch["context_word"][b, i].item(), batch["context_word"][b, j].item()
        assert (start, end) in {(a["start"], a["end"]) for a in rows[b]["answers"]}
        assert span_text(tokenizer, batch["input_ids"][b].tolist(), i, j) == "".join(rows[b]["context_words"][start: end + 1])
    kept_rows = Counter(b for b, _, _ in batch["answer_spans"].tolist())
    for b, row in enumerate(rows):
        # An answerable row whose every answer was cut is trained as unanswerable, and counted.
        assert batch["answerable"][b].item() == float(row["answerable"] and kept_rows[b] > 0)
    assert counts["rows/answerable_lost_to_truncation"] == sum(
        1 for b, r in enumerate(rows) if r["answerable"] and not kept_rows[b])


def test_answerable_row_without_spans_stays_answerable(tokenizer, rows):
    # Sentence-pair classification rows: the label is the [CLS] cell, there is no answer span to lose.
    label_rows = [{**rows[0], "answers": [], "answerable": True}, {**rows[0], "answers": [], "answerable": False}]
    batch = MPMRCollator(tokenizer)(label_rows)
    assert batch["answerable"].tolist() == [1.0, 0.0]
    assert batch["answer_spans"].shape == (0, 3) and "rows/answerable_lost_to_truncation" not in batch["counts"]


def test_query_mask_word_becomes_the_tokenizers_mask_token(tokenizer, rows):
    masked = [r for r in rows if "[MASK]" in r["query_words"]][:20]
    assert masked
    batch = MPMRCollator(tokenizer)(masked)
    for b, row in enumerate(masked):
        ids = batch["input_ids"][b].tolist()
        query = ids[1: ids.index(tokenizer.sep_token_id)]
        assert query.count(tokenizer.mask_token_id) == row["query_words"].count("[MASK]")
        pieces = "".join(tokenizer.convert_ids_to_tokens(query))
        assert "MASK" not in pieces and "[" not in pieces.replace("<mask>", "")


def test_rows_carry_their_spacing_and_it_shapes_the_subwords(tokenizer, rows):
    """The flags say which words follow their neighbour without a space ("Paris" ","), so those are
    encoded without the "▁" a word after a space gets; the answer words still map to their subwords."""
    assert all(len(r["context_spaces"]) == len(r["context_words"]) for r in rows)
    glued = [r for r in rows if not all(r["context_spaces"][:-1])]
    assert glued
    from training.data.word_pieces import WordPieces

    pieces = WordPieces(tokenizer)([r["context_words"] for r in glued], [r["context_spaces"] for r in glued])
    for row, per_word in zip(glued, pieces):
        for k in range(1, len(per_word)):
            first = tokenizer.convert_ids_to_tokens(per_word[k][:1])
            assert first[0].startswith("▁") == row["context_spaces"][k - 1], (row["context_words"][k - 1: k + 1], first)
    with_flags = MPMRCollator(tokenizer)(glued)
    without = MPMRCollator(tokenizer, use_spacing=False)(glued)
    assert not with_flags["input_ids"].equal(without["input_ids"])
    assert len(with_flags["answer_spans"]) == len(without["answer_spans"])
    for b, i, j in with_flags["answer_spans"].tolist():
        start, end = with_flags["context_word"][b, i].item(), with_flags["context_word"][b, j].item()
        assert (start, end) in {(a["start"], a["end"]) for a in glued[b]["answers"]}
        text = span_text(tokenizer, with_flags["input_ids"][b].tolist(), i, j)
        assert text == "".join(glued[b]["context_words"][start: end + 1])


def test_v1_shards_without_spacing_are_still_read_with_the_script_rule(mrc_output, rows, tokenizer, tmp_path):
    from corpora.schemas import MRC_SCHEMA, MRC_SCHEMA_V1
    from training.recipes.mpmr import SPEC

    v1_rows = [{k: v for k, v in r.items() if not k.endswith("_spaces")} for r in rows]
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(v1_rows, schema=MRC_SCHEMA_V1), path)
    with pytest.raises(SchemaMismatch, match="expected mrc v2"):
        check_shards([path], MRC_SCHEMA)
    assert check_shards([path], SPEC.schema, SPEC.older_schemas) == len(rows)
    stream = ParquetBatches([path], 8, seed=0, shuffle_buffer=1, columns=SPEC.columns + ["id"],
                            optional_columns=SPEC.optional_columns)
    batch = next(iter(stream.raw_batches()))
    assert "context_spaces" not in batch[0]
    by_id = {r["id"]: r for r in rows}
    v2 = [by_id[r["id"]] for r in batch]
    current = ParquetBatches(list_shards(mrc_output), 8, columns=SPEC.columns, optional_columns=SPEC.optional_columns)
    assert {"query_spaces", "context_spaces"} <= set(next(iter(current.raw_batches()))[0])
    assert MPMRCollator(tokenizer)(batch)["input_ids"].equal(MPMRCollator(tokenizer, use_spacing=False)(v2)["input_ids"])
