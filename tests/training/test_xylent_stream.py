"""XY-LENT's training stream (training/data/xylent.py) on real shards: task alternation, pair and
language weights, length buckets, resuming, and the data checks of `training.run`."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from xylent_setup import stream, tiny_cfg, torch

from corpora.xy.vocap import BOS_ID, EOS_ID, PAD_ID
from training import run
from training.data import xylent as data_xylent


# ---- data ----

def test_stream_alternates_tasks_and_buckets_trtd_by_pair_and_length(xylent_shards):
    data = stream(xylent_shards)
    names = data.pair_names
    seen_pairs = set()
    for n, batch in zip(range(40), data):
        ids, mask, pairs = batch["input_ids"], batch["attention_mask"], batch["pair_index"]
        assert (ids[:, 0] == BOS_ID).all()  # both tasks start with <s>
        assert (ids[mask == 0] == PAD_ID).all()
        lengths = mask.sum(1)
        assert lengths.max() == ids.shape[1]  # padded to the longest row of the batch, no further
        if n % 2 == 0:
            assert (pairs == -1).all() and batch["counts"]["mrtd_batches"] == 1
            assert ids.shape[1] <= data.max_seq_len
        else:
            assert (pairs == pairs[0]).all() and pairs[0] >= 0  # one language pair per TRTD batch
            pair = names[int(pairs[0])]
            seen_pairs.add(pair)
            assert batch["counts"][f"trtd_rows/{pair}"] == len(ids)
            assert len(ids) * ids.shape[1] <= data.budget  # the token budget, padding included
            # a TRTD row is <s> x </s> y </s>: exactly two </s> inside the row, the last token one of them
            for row, length in zip(ids.tolist(), lengths.tolist()):
                assert row[:length].count(2) >= 2 and row[length - 1] == 2
    assert len(seen_pairs) >= 4


@pytest.mark.parametrize("draws", ["pair_probs", "once"])
def test_trtd_pairs_follow_the_weights(draws, request):
    # with `once` the shards hold every pair once (ar-fr 30 rows, en-fr 42) but pair_probs favours
    # ar-fr 0.25 to 0.14: the stream itself must draw by pair_probs
    xylent_shards = request.getfixturevalue("xylent_shards" if draws == "pair_probs" else "xylent_shards_once")
    data = stream(xylent_shards)
    counts = {name: 0 for name in data.pair_names}
    for _, (pair, _rows) in zip(range(1200), data.raw_batches()):
        if pair is not None:
            counts[pair] += 1
    total = sum(counts.values())
    for name, prob in zip(data.pair_names, data.pair_probs):
        assert abs(counts[name] / total - prob) < 0.06, (name, counts[name] / total, prob)
    # all weight on one pair: only that pair comes out from then on
    data = stream(xylent_shards)
    target = data.pair_names.index("ar-hi")
    data.set_pair_weights([1.0 if k == target else 0.0 for k in range(len(data.pair_names))])
    pairs = [pair for _, (pair, _rows) in zip(range(40), data.raw_batches()) if pair is not None]
    assert set(pairs) == {"ar-hi"}


@pytest.mark.parametrize("alpha", [0.3, 0.7])
def test_mrtd_languages_follow_smoothed_shares(xylent_shards, alpha):
    counts = data_xylent.mono_rows_by_language(xylent_shards)
    assert len(counts) > 3 and sum(counts.values()) == len(pq_rows(xylent_shards / "mrtd"))
    smoothed = {lang: n ** alpha for lang, n in counts.items()}
    expected = {lang: v / sum(smoothed.values()) for lang, v in smoothed.items()}
    data = stream(xylent_shards, tiny_cfg(mono_alpha=alpha))
    seen = {lang: 0 for lang in counts}
    mrtd = (rows for pair, rows in data.raw_batches() if pair is None)
    for rows in (next(mrtd) for _ in range(400)):
        for row in rows:
            seen[row["lang"]] += 1
    total = sum(seen.values())
    for lang, q in expected.items():
        assert abs(seen[lang] / total - q) < 0.03, (lang, seen[lang] / total, q, counts[lang] / sum(counts.values()))
    raw = data_xylent.smoothed_keep_rates(counts, 1.0)
    assert set(raw.values()) == {1.0}  # α = 1: every row kept, the corpus's own shares


def pq_rows(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_trtd_order_is_drawn_again_at_every_visit(xylent_shards):
    import random

    row = {"src_lang": "fr", "tgt_lang": "ar", "src_len": 4, "input_ids": [BOS_ID, 11, 12, EOS_ID, 21, 22, 23, EOS_ID]}
    flips = [data_xylent.flipped_at_random([row], random.Random(k))[0] for k in range(400)]
    turned = [r for r in flips if r["src_lang"] == "ar"]
    assert 150 < len(turned) < 250
    assert turned[0]["input_ids"] == [BOS_ID, 21, 22, 23, EOS_ID, 11, 12, EOS_ID] and turned[0]["src_len"] == 5
    # In the stream: a pair comes back over the epochs in both orders.
    orders: dict = {}
    for pair, rows in itertools.islice(stream(xylent_shards).raw_batches(), 600):
        for r in rows if pair is not None else ():
            ids, cut = r["input_ids"], r["src_len"]
            first, second = tuple(ids[1:cut - 1]), tuple(ids[cut:-1])
            orders.setdefault(frozenset((first, second)), set()).add(first)
    seen_twice = [o for o in orders.values()]
    both = sum(len(o) == 2 for o in seen_twice)
    assert both > 0.5 * len(orders), (both, len(orders))


def test_pair_weights_reach_dataloader_workers(xylent_shards):
    from training.data import make_loader

    data = stream(xylent_shards)
    batches = iter(make_loader(data, 2))
    first = [next(batches) for _ in range(8)]
    assert {int(b["pair_index"][0]) for b in first[1::2]} != {data.pair_names.index("en-vi")}
    target = data.pair_names.index("en-vi")
    data.set_pair_weights([float(k == target) for k in range(len(data.pair_names))])  # in the main process
    later = [next(batches) for _ in range(40)][20:]  # past what the workers had prefetched
    trtd = [int(b["pair_index"][0]) for b in later if b["pair_index"][0] >= 0]
    assert len(trtd) == 10 and set(trtd) == {target}


def test_resuming_skips_exactly_the_batches_taken(xylent_shards):
    full = [b for _, b in zip(range(14), stream(xylent_shards))]
    resumed = [b for _, b in zip(range(5), stream(xylent_shards, start_batch=9))]
    for a, b in zip(full[9:], resumed):
        assert torch.equal(a["input_ids"], b["input_ids"]) and torch.equal(a["pair_index"], b["pair_index"])


# The stream as XYBatches made it before issue 15 item 5c, when every row was read whole (ids and
# all) in stream order: the reference the planned stream must equal, batch for batch and flip for flip.
def reference_length_buckets(rows, budget, rng):
    rows = sorted(rows, key=lambda r: len(r["input_ids"]))
    batches, current = [], []
    for row in rows:
        if current and (len(current) + 1) * len(row["input_ids"]) > budget:
            batches.append(current)
            current = []
        current.append(row)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def reference_raw_batches(data):
    from collections import deque

    from corpora.seeding import keyed_rng as _rng
    from training.data import ParquetBatches

    keep = data.mono_keep
    mrtd_pb = ParquetBatches(data.mrtd.files, data.batch_size, None, data.seed, 0, 1, data.mrtd.shuffle_buffer,
                             columns=["input_ids"] if keep is None else ["lang", "input_ids"])
    trtd_pb = ParquetBatches(data.trtd.files, 256, None, data.seed + 1, 0, 1, data.trtd.shuffle_buffer,
                             columns=["src_lang", "tgt_lang", "input_ids", "src_len"])
    slot = 0

    def mrtd_batches():
        if keep is None:
            yield from mrtd_pb.raw_batches()
            return
        rng, batch = _rng(data.seed, "mono-keep", slot), []
        for rows in mrtd_pb.raw_batches():
            for row in rows:
                if rng.random() < keep.get(row["lang"], 1.0):
                    batch.append(row)
                    if len(batch) == data.batch_size:
                        yield batch
                        batch = []

    mrtd = mrtd_batches()
    trtd_rows = (row for batch in trtd_pb.raw_batches() for row in batch)
    index = {name: k for k, name in enumerate(data.pair_names)}
    buffers = {name: [] for name in data.pair_names}
    ready = {name: deque() for name in data.pair_names}
    absent = set()

    def refill(pair):
        read = 0
        while len(buffers[pair]) < data.pool_rows and read <= data.trtd_total:
            if read == data.trtd_total and buffers[pair]:
                break
            row = next(trtd_rows)
            read += 1
            key = data_xylent.pair_key(row["src_lang"], row["tgt_lang"])
            if len(row["input_ids"]) <= data.max_seq_len and key in index and len(buffers[key]) < data.pool_rows:
                buffers[key].append(row)
        if not buffers[pair]:
            absent.add(pair)
            return
        rng = _rng(data.seed, "buckets", slot, pair, len(ready[pair]), read)
        ready[pair].extend(reference_length_buckets(buffers[pair], data.budget, rng))
        buffers[pair] = []

    n = 0
    while True:
        if n % 2 == 0:
            yield None, next(mrtd)
        else:
            while True:
                live = [(name, w) for name, w in zip(data.pair_names, data.pair_weights.tolist())
                        if name not in absent and w > 0]
                u = _rng(data.seed, "pair", slot, n).random() * sum(w for _, w in live)
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
            yield pair, data_xylent.flipped_at_random(ready[pair].popleft(), _rng(data.seed, "trtd-order", slot, n))
        n += 1


def trtd_v1_copy(xylent_shards: Path, out: Path) -> Path:
    """xylent_shards with its TRTD shards as the job wrote them before n_ids (xy_trtd v1), row groups kept."""
    import shutil

    import pyarrow.parquet as pq
    from corpora.schemas import XY_TRTD_SCHEMA_V1

    shutil.copytree(xylent_shards, out)
    for name in ("manifest.json", ".xlu-job"):  # shards changed by hand: no longer the job's output
        (out / name).unlink()
    for f in sorted((out / "trtd").glob("*.parquet")):
        file = pq.ParquetFile(f)
        groups = [file.read_row_group(g).drop_columns(["n_ids"]).cast(XY_TRTD_SCHEMA_V1)
                  for g in range(file.num_row_groups)]
        with pq.ParquetWriter(f, XY_TRTD_SCHEMA_V1) as writer:
            for table in groups:
                writer.write_table(table)
    return out


@pytest.mark.parametrize("alpha", [0.7, 1.0])  # MRTD thinned by language (the default), and not
def test_planned_stream_equals_the_stream_of_whole_rows(xylent_shards, tmp_path, alpha):
    cfg = tiny_cfg(mono_alpha=alpha)
    old_data = trtd_v1_copy(xylent_shards, tmp_path / "v1")
    for data in (stream(xylent_shards, cfg), stream(old_data, cfg)):  # lengths from n_ids, and from the ids
        # 600 batches: past a dozen epochs of the sample's TRTD rows and dozens of its MRTD rows
        for (pair, rows), (old_pair, old_rows) in itertools.islice(zip(data.raw_batches(), reference_raw_batches(data)), 600):
            assert pair == old_pair and len(rows) == len(old_rows)
            assert [{k: r[k] for k in old} for r, old in zip(rows, old_rows)] == old_rows
    # and collated, through the DataLoader's path
    reference = reference_raw_batches(stream(xylent_shards, cfg))
    for batch, (pair, rows) in zip(itertools.islice(stream(xylent_shards, cfg), 40), reference):
        assert torch.equal(batch["input_ids"], data_xylent.collate(rows, max_len=None if pair else cfg.max_seq_len)["input_ids"])


@pytest.mark.parametrize("workers", [0, 2])
def test_resuming_at_batch_30_gives_the_uninterrupted_stream(xylent_shards, workers):
    from training.data import make_loader

    full = list(itertools.islice(make_loader(stream(xylent_shards), workers), 40))
    resumed = list(itertools.islice(make_loader(stream(xylent_shards, start_batch=30), workers), 10))
    for a, b in zip(full[30:], resumed, strict=True):
        for key in ("input_ids", "attention_mask", "pair_index"):
            assert torch.equal(a[key], b[key])


def test_resuming_reads_ids_only_for_the_batches_handed_out(xylent_shards, monkeypatch):
    reads = {"ids": 0, "other": 0}
    read_row_group = data_xylent.read_row_group

    def counting(path, group, columns=None):
        reads["ids" if columns is None or "input_ids" in columns else "other"] += 1
        return read_row_group(path, group, columns)

    monkeypatch.setattr(data_xylent, "read_row_group", counting)
    data = stream(xylent_shards, start_batch=3000)  # ~100 epochs of the sample's TRTD rows, ~200 of its MRTD rows
    groups = len(data.mrtd.units) + len(data.trtd.units)
    batches = list(itertools.islice(data, 4))
    assert len(batches) == 4 and batches[1]["pair_index"][0] >= 0
    assert reads["other"] > 100 * groups  # the skipped batches were planned, on the narrow columns
    # ids only for the 4 batches handed out: a row group's ids are read at most once per epoch that their
    # planning crosses (4 MRTD batches; at most two of TRTD's 256-row planning batches), n rows of a table
    # of R rows crossing at most ceil(n / R) + 1 epochs
    def epochs(rows, table):
        return -(-rows // sum(table.unit_rows.values())) + 1

    bound = (len(data.mrtd.units) * epochs(4 * tiny_cfg().batch_size, data.mrtd)
             + len(data.trtd.units) * epochs(2 * data.trtd.batch_size, data.trtd))
    assert reads["ids"] <= bound < 100 * groups
    reads.update(ids=0, other=0)
    list(itertools.islice(stream(xylent_shards), 3004))
    assert reads["ids"] > 100 * groups  # what the uninterrupted stream reads to get there


def test_trtd_rows_store_their_length(xylent_shards, tmp_path):
    import pyarrow.parquet as pq
    from corpora.schemas import XY_TRTD_SCHEMA, check_schema

    for f in data_xylent.shards(xylent_shards, "trtd"):
        check_schema(pq.read_schema(f), XY_TRTD_SCHEMA, str(f))  # v2, with n_ids
    rows = pq_rows(xylent_shards / "trtd")
    assert rows and all(r["n_ids"] == len(r["input_ids"]) for r in rows)
    # shards written before n_ids are still read
    assert data_xylent.check_folder(trtd_v1_copy(xylent_shards, tmp_path / "v1")) == data_xylent.check_folder(xylent_shards)


def test_missing_data_is_one_clear_error(tmp_path, xylent_shards):
    import shutil

    with pytest.raises(FileNotFoundError, match="folder not found"):
        data_xylent.check_folder(str(tmp_path / "nowhere"))
    shutil.copytree(xylent_shards / "mrtd", tmp_path / "data" / "mrtd")
    with pytest.raises(FileNotFoundError, match=r"no train-\*\.parquet shards \(in trtd/"):
        data_xylent.check_folder(str(tmp_path))
    shutil.copytree(xylent_shards / "trtd", tmp_path / "data" / "trtd")
    with pytest.raises(FileNotFoundError, match="pair_probs.parquet not found"):
        data_xylent.check_folder(str(tmp_path / "data"))  # the data/ folder itself is accepted too
    shutil.copy(xylent_shards / "pair_probs.parquet", tmp_path)
    shutil.copy(xylent_shards / "spm.model", tmp_path)
    assert data_xylent.check_folder(str(tmp_path)) == data_xylent.check_folder(str(xylent_shards))


def test_held_out_data_of_another_vocabulary_is_refused(tmp_path, xylent_shards):
    """XY-LENT rows are token ids: --eval_data made with another vocap model would be read as other
    pieces without a word. training.run stops with one line; the same vocabulary passes."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(xylent_shards, other)
    for name in ("manifest.json", ".xlu-job"):  # changed by hand: no longer the job's output as it wrote it
        (other / name).unlink()
    (other / "spm.model").write_bytes((xylent_shards / "spm.model").read_bytes() + b"\0")
    argv = ["--model", "xylent", "--data", str(xylent_shards), "--config", "tiny", "--max_steps", "2", "--eval_every", "2",
            "--no_progress", "--no_tensorboard"]
    with pytest.raises(SystemExit, match=r"--eval_data .*other: made with another vocabulary than --data"):
        run.main([*argv, "--output", str(tmp_path / "refused"), "--eval_data", str(other)])
    run.main([*argv, "--output", str(tmp_path / "same"), "--eval_data", str(xylent_shards)])
    assert (tmp_path / "same" / "final").exists()
