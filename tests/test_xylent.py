"""XY-LENT (training/models/xylent.py, training/data/xylent.py, training/recipes/xylent.py) on real shards: the bundled sample run
through `pipelines.vocap` and `pipelines.xy_corpus`, then the tiny config on the CPU."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from corpora.vocap import BOS_ID, EOS_ID, MASK_ID, PAD_ID
from training import run
from training.data import xylent as data_xylent
from training.models import xylent
from training.models.xylent import (XYLentConfig, XYLentForPreTraining, choose_masked, chi2_best_response,
                                    rtd_inputs)
from training.recipes import xylent as recipe

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    from pipelines import vocap

    out = tmp_path_factory.mktemp("vocap")
    vocap.run(["--output", str(out)])
    return out / "spm.model"


@pytest.fixture(scope="module")
def xy_data(vocab, tmp_path_factory):
    """The xy_corpus job's output on the bundled samples (TRTD rows drawn by pair_probs, the default)."""
    from pipelines import xy_corpus

    out = tmp_path_factory.mktemp("xy")
    xy_corpus.run(["--vocab", str(vocab), "--output", str(out)])
    return out


@pytest.fixture(scope="module")
def xy_once(vocab, tmp_path_factory):
    """The same with `--trtd_draws once`: every bitext pair once, whatever pair_probs says."""
    from pipelines import xy_corpus

    out = tmp_path_factory.mktemp("xy_once")
    xy_corpus.run(["--vocab", str(vocab), "--output", str(out), "--trtd_draws", "once"])
    return out


def tiny_cfg(**changes):
    return recipe.CONFIGS["tiny"].replace(**changes)


def stream(data, cfg=None, start_batch=0):
    return recipe.make_dataset(None, cfg or tiny_cfg(), str(data), None, 0, 1, start_batch)


def tiny_model(data, **changes):
    tokenizer = recipe.make_tokenizer(None, tiny_cfg(), str(data))
    torch.manual_seed(0)
    model = XYLentForPreTraining(recipe.model_config(tiny_cfg(**changes), tokenizer))
    return model, tokenizer


def metrics(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]


# ---- data ----

def test_stream_alternates_tasks_and_buckets_trtd_by_pair_and_length(xy_data):
    data = stream(xy_data)
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
    xy_data = request.getfixturevalue("xy_data" if draws == "pair_probs" else "xy_once")
    data = stream(xy_data)
    counts = {name: 0 for name in data.pair_names}
    for _, (pair, _rows) in zip(range(1200), data.raw_batches()):
        if pair is not None:
            counts[pair] += 1
    total = sum(counts.values())
    for name, prob in zip(data.pair_names, data.pair_probs):
        assert abs(counts[name] / total - prob) < 0.06, (name, counts[name] / total, prob)
    # all weight on one pair: only that pair comes out from then on
    data = stream(xy_data)
    target = data.pair_names.index("ar-hi")
    data.set_pair_weights([1.0 if k == target else 0.0 for k in range(len(data.pair_names))])
    pairs = [pair for _, (pair, _rows) in zip(range(40), data.raw_batches()) if pair is not None]
    assert set(pairs) == {"ar-hi"}


@pytest.mark.parametrize("alpha", [0.3, 0.7])
def test_mrtd_languages_follow_smoothed_shares(xy_data, alpha):
    counts = data_xylent.mono_rows_by_language(xy_data)
    assert len(counts) > 3 and sum(counts.values()) == len(pq_rows(xy_data / "data" / "mrtd"))
    smoothed = {lang: n ** alpha for lang, n in counts.items()}
    expected = {lang: v / sum(smoothed.values()) for lang, v in smoothed.items()}
    data = stream(xy_data, tiny_cfg(mono_alpha=alpha))
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


def test_trtd_order_is_drawn_again_at_every_visit(xy_data):
    import random

    row = {"src_lang": "fr", "tgt_lang": "ar", "src_len": 4, "input_ids": [BOS_ID, 11, 12, EOS_ID, 21, 22, 23, EOS_ID]}
    flips = [data_xylent.flipped_at_random([row], random.Random(k))[0] for k in range(400)]
    turned = [r for r in flips if r["src_lang"] == "ar"]
    assert 150 < len(turned) < 250
    assert turned[0]["input_ids"] == [BOS_ID, 21, 22, 23, EOS_ID, 11, 12, EOS_ID] and turned[0]["src_len"] == 5
    # In the stream: a pair comes back over the epochs in both orders.
    orders: dict = {}
    for pair, rows in itertools.islice(stream(xy_data).raw_batches(), 600):
        for r in rows if pair is not None else ():
            ids, cut = r["input_ids"], r["src_len"]
            first, second = tuple(ids[1:cut - 1]), tuple(ids[cut:-1])
            orders.setdefault(frozenset((first, second)), set()).add(first)
    seen_twice = [o for o in orders.values()]
    both = sum(len(o) == 2 for o in seen_twice)
    assert both > 0.5 * len(orders), (both, len(orders))


def test_pair_weights_reach_dataloader_workers(xy_data):
    from training.data import make_loader

    data = stream(xy_data)
    batches = iter(make_loader(data, 2))
    first = [next(batches) for _ in range(8)]
    assert {int(b["pair_index"][0]) for b in first[1::2]} != {data.pair_names.index("en-vi")}
    target = data.pair_names.index("en-vi")
    data.set_pair_weights([float(k == target) for k in range(len(data.pair_names))])  # in the main process
    later = [next(batches) for _ in range(40)][20:]  # past what the workers had prefetched
    trtd = [int(b["pair_index"][0]) for b in later if b["pair_index"][0] >= 0]
    assert len(trtd) == 10 and set(trtd) == {target}


def test_resuming_skips_exactly_the_batches_taken(xy_data):
    full = [b for _, b in zip(range(14), stream(xy_data))]
    resumed = [b for _, b in zip(range(5), stream(xy_data, start_batch=9))]
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

    from training.data import ParquetBatches, _rng

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


def trtd_v1_copy(xy_data: Path, out: Path) -> Path:
    """xy_data with its TRTD shards as the job wrote them before n_ids (xy_trtd v1), row groups kept."""
    import shutil

    import pyarrow.parquet as pq
    from corpora.schemas import XY_TRTD_SCHEMA_V1

    shutil.copytree(xy_data, out)
    for f in sorted((out / "data" / "trtd").glob("*.parquet")):
        file = pq.ParquetFile(f)
        groups = [file.read_row_group(g).drop_columns(["n_ids"]).cast(XY_TRTD_SCHEMA_V1)
                  for g in range(file.num_row_groups)]
        with pq.ParquetWriter(f, XY_TRTD_SCHEMA_V1) as writer:
            for table in groups:
                writer.write_table(table)
    return out


@pytest.mark.parametrize("alpha", [0.7, 1.0])  # MRTD thinned by language (the default), and not
def test_planned_stream_equals_the_stream_of_whole_rows(xy_data, tmp_path, alpha):
    cfg = tiny_cfg(mono_alpha=alpha)
    old_data = trtd_v1_copy(xy_data, tmp_path / "v1")
    for data in (stream(xy_data, cfg), stream(old_data, cfg)):  # lengths from n_ids, and from the ids
        # 600 batches: past a dozen epochs of the sample's TRTD rows and dozens of its MRTD rows
        for (pair, rows), (old_pair, old_rows) in itertools.islice(zip(data.raw_batches(), reference_raw_batches(data)), 600):
            assert pair == old_pair and len(rows) == len(old_rows)
            assert [{k: r[k] for k in old} for r, old in zip(rows, old_rows)] == old_rows
    # and collated, through the DataLoader's path
    reference = reference_raw_batches(stream(xy_data, cfg))
    for batch, (pair, rows) in zip(itertools.islice(stream(xy_data, cfg), 40), reference):
        assert torch.equal(batch["input_ids"], data_xylent.collate(rows, max_len=None if pair else cfg.max_seq_len)["input_ids"])


@pytest.mark.parametrize("workers", [0, 2])
def test_resuming_at_batch_30_gives_the_uninterrupted_stream(xy_data, workers):
    from training.data import make_loader

    full = list(itertools.islice(make_loader(stream(xy_data), workers), 40))
    resumed = list(itertools.islice(make_loader(stream(xy_data, start_batch=30), workers), 10))
    for a, b in zip(full[30:], resumed, strict=True):
        for key in ("input_ids", "attention_mask", "pair_index"):
            assert torch.equal(a[key], b[key])


def test_resuming_reads_ids_only_for_the_batches_handed_out(xy_data, monkeypatch):
    reads = {"ids": 0, "other": 0}
    read_row_group = data_xylent.read_row_group

    def counting(path, group, columns=None):
        reads["ids" if columns is None or "input_ids" in columns else "other"] += 1
        return read_row_group(path, group, columns)

    monkeypatch.setattr(data_xylent, "read_row_group", counting)
    data = stream(xy_data, start_batch=3000)  # ~100 epochs of the sample's TRTD rows, ~200 of its MRTD rows
    groups = len(data.mrtd.units) + len(data.trtd.units)
    batches = list(itertools.islice(data, 4))
    assert len(batches) == 4 and batches[1]["pair_index"][0] >= 0
    assert reads["other"] > 100 * groups  # the skipped batches were planned, on the narrow columns
    assert reads["ids"] <= groups  # ids only for the 4 batches handed out: each row group at most once
    reads.update(ids=0, other=0)
    list(itertools.islice(stream(xy_data), 3004))
    assert reads["ids"] > 100 * groups  # what the uninterrupted stream reads to get there


def test_trtd_rows_store_their_length(xy_data, tmp_path):
    import pyarrow.parquet as pq
    from corpora.schemas import XY_TRTD_SCHEMA, check_schema

    for f in data_xylent.shards(xy_data, "trtd"):
        check_schema(pq.read_schema(f), XY_TRTD_SCHEMA, str(f))  # v2, with n_ids
    rows = pq_rows(xy_data / "data" / "trtd")
    assert rows and all(r["n_ids"] == len(r["input_ids"]) for r in rows)
    # shards written before n_ids are still read
    assert data_xylent.check_folder(trtd_v1_copy(xy_data, tmp_path / "v1")) == data_xylent.check_folder(xy_data)


def test_missing_data_is_one_clear_error(tmp_path, xy_data):
    import shutil

    with pytest.raises(FileNotFoundError, match="folder not found"):
        data_xylent.check_folder(str(tmp_path / "nowhere"))
    shutil.copytree(xy_data / "data" / "mrtd", tmp_path / "data" / "mrtd")
    with pytest.raises(FileNotFoundError, match=r"no trtd shards .*pipelines.xy_corpus"):
        data_xylent.check_folder(str(tmp_path))
    shutil.copytree(xy_data / "data" / "trtd", tmp_path / "data" / "trtd")
    with pytest.raises(FileNotFoundError, match="pair_probs.parquet not found"):
        data_xylent.check_folder(str(tmp_path / "data"))  # the data/ folder itself is accepted too
    shutil.copy(xy_data / "pair_probs.parquet", tmp_path)
    shutil.copy(xy_data / "spm.model", tmp_path)
    assert data_xylent.check_folder(str(tmp_path)) == data_xylent.check_folder(str(xy_data))


def test_held_out_data_of_another_vocabulary_is_refused(tmp_path, xy_data):
    """XY-LENT rows are token ids: --eval_data made with another vocap model would be read as other
    pieces without a word. training.run stops with one line; the same vocabulary passes."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(xy_data, other)
    (other / "spm.model").write_bytes((xy_data / "spm.model").read_bytes() + b"\0")
    argv = ["--model", "xylent", "--data", str(xy_data), "--config", "tiny", "--max_steps", "2", "--eval_every", "2",
            "--no_progress", "--no_tensorboard"]
    with pytest.raises(SystemExit, match=r"--eval_data .*other: made with another vocabulary than --data"):
        run.main([*argv, "--output", str(tmp_path / "refused"), "--eval_data", str(other)])
    run.main([*argv, "--output", str(tmp_path / "same"), "--eval_data", str(xy_data)])
    assert (tmp_path / "same" / "final").exists()


# ---- the ELECTRA step ----

def test_cls_is_never_masked_and_fifteen_percent_are(xy_data):
    for n, batch in zip(range(10), stream(xy_data)):
        ids, mask = batch["input_ids"], batch["attention_mask"]
        masked = choose_masked(ids, mask, 0.15)
        assert not masked[ids == BOS_ID].any()  # XY-LENT §4: never [CLS]/<s>
        assert not masked[ids == EOS_ID].any()  # nor any other special token
        assert not masked[:, 0].any() and not masked[mask == 0].any()
        candidates = (~torch.isin(ids, torch.tensor([BOS_ID, EOS_ID, MASK_ID])) & (mask == 1)).sum(1)
        assert torch.equal(masked.sum(1), (candidates.float() * 0.15).round().long().clamp(min=1))


def test_labels_are_zero_where_the_generator_reproduced_the_original():
    ids = torch.tensor([[0, 10, 11, 12, 13, 2], [0, 20, 21, 22, 2, 1]])
    masked = torch.tensor([[0, 1, 1, 0, 1, 0], [0, 1, 0, 1, 0, 0]], dtype=torch.bool)
    sampled = torch.tensor([10, 99, 13, 77, 22])  # reproduced, replaced, reproduced, replaced, reproduced
    disc_input, labels = rtd_inputs(ids, masked, sampled)
    assert disc_input.tolist() == [[0, 10, 99, 12, 13, 2], [0, 77, 21, 22, 2, 1]]
    assert labels.long().tolist() == [[0, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0]]


def test_a_generator_that_reproduces_every_token_gives_no_replaced_label(xy_data, monkeypatch):
    model, _ = tiny_model(xy_data)
    batch = next(iter(stream(xy_data)))
    batch.pop("counts")
    seen = {}

    def perfect_generator(hidden):  # all mass on the original token of each masked position
        logits = torch.full((hidden.shape[0], model.config.vocab_size), -30.0)
        logits[torch.arange(hidden.shape[0]), seen["targets"]] = 30.0
        return logits

    real_choose = xylent.choose_masked

    def choose(input_ids, attention_mask, mask_prob, generator=None):
        masked = real_choose(input_ids, attention_mask, mask_prob, generator)
        seen["targets"] = input_ids[masked]
        return masked

    monkeypatch.setattr(xylent, "choose_masked", choose)
    monkeypatch.setattr(model.generator, "vocab_logits", perfect_generator)
    labels = []
    real_bce = xylent.F.binary_cross_entropy_with_logits

    def capture(logits, target, **kw):  # D's targets, as the loss sees them
        labels.append(target)
        return real_bce(logits, target, **kw)

    monkeypatch.setattr(xylent.F, "binary_cross_entropy_with_logits", capture)
    _, logs = model(**batch)
    assert len(labels) == 1 and labels[0].sum() == 0 and float(logs["replaced_share"]) == 0.0


def test_sampling_never_gives_pad_or_mask():
    logits = torch.zeros(2000, 8)
    logits[:, PAD_ID] = logits[:, MASK_ID] = 50.0  # even when G prefers them
    assert not torch.isin(xylent.sample_replacements(logits), torch.tensor([PAD_ID, MASK_ID])).any()
    # and otherwise draws from G's softmax
    logits = torch.full((20000, 8), -1e4)
    logits[:, 5:8] = torch.log(torch.tensor([0.2, 0.3, 0.5]))
    freq = torch.bincount(xylent.sample_replacements(logits, torch.Generator().manual_seed(0)), minlength=8) / 20000
    assert torch.allclose(freq[5:], torch.tensor([0.2, 0.3, 0.5]), atol=0.015) and freq[:5].sum() == 0


def test_losses_fall_on_real_shards(xy_data):
    model, _ = tiny_model(xy_data)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-6)
    logs_by_step = []
    for n, batch in zip(range(60), stream(xy_data)):
        batch.pop("counts")
        loss, logs = model(**batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad()
        logs_by_step.append({k: float(v) for k, v in logs.items()})

    def mean(key, part):
        return sum(r[key] for r in part) / len(part)
    first, last = logs_by_step[:10], logs_by_step[-10:]
    print({k: (round(mean(k, first), 3), round(mean(k, last), 3)) for k in ("gen_loss", "disc_loss", "gen_acc")})
    assert mean("gen_loss", last) < mean("gen_loss", first) - 1.0  # from ln|V| ≈ 7.6 towards unigram and beyond
    assert mean("disc_loss", last) < mean("disc_loss", first) - 0.1
    assert mean("disc_acc_original", last) > 0.8


def test_shared_token_embeddings_and_no_generator_dropout(xy_data):
    model, _ = tiny_model(xy_data, dropout=0.1)
    assert model.generator.xylent.embeddings.word_embeddings is model.discriminator.xylent.embeddings.word_embeddings
    assert model.generator.config.hidden_dropout_prob == 0.0 and model.discriminator.config.hidden_dropout_prob == 0.1
    assert len(model.generator.xylent.layers) == 1 and len(model.discriminator.xylent.layers) == 2
    n_shared = sum(p.numel() for p in model.parameters())  # parameters() counts a shared tensor once
    assert n_shared < sum(p.numel() for p in model.discriminator.parameters()) + sum(p.numel() for p in model.generator.parameters())


def test_flops_per_token_matches_the_flops_torch_counts():
    # the MFU of benchmarks/xylent_throughput.py rests on this estimate
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    config = XYLentConfig(vocab_size=8000, hidden_size=128, num_hidden_layers=3, num_attention_heads=4,
                          intermediate_size=512, max_position_embeddings=128, generator_layers=1,
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = XYLentForPreTraining(config)
    ids = torch.randint(5, 8000, (8, 128))
    ids[:, 0] = BOS_ID
    with FlopCounterMode(display=False) as counter:
        loss, _ = model(ids, torch.ones_like(ids))
        loss.backward()
    estimate = xylent.flops_per_token(config, 128) * ids.numel()
    assert counter.get_total_flops() == pytest.approx(estimate, rel=0.02)


# ---- DRO ----

def chi2(p, q):
    return float(((p - q) ** 2 / q).sum())


def test_chi2_best_response_is_the_worst_case_in_the_ball():
    torch.manual_seed(1)
    q = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)
    losses = torch.tensor([1.0, 3.0, 2.0, 5.0], dtype=torch.float64)
    for rho in (0.01, 0.1, 0.5, 2.0):
        p = chi2_best_response(losses, q, rho)
        assert abs(float(p.sum()) - 1) < 1e-9 and (p >= 0).all()
        assert abs(chi2(p, q) - rho) < 1e-6  # the constraint binds: more weight on losses pays
        ratio = (p / q).tolist()  # up-weighting follows the losses
        assert ratio[3] >= ratio[1] >= ratio[2] >= ratio[0]
        # no feasible distribution does better (random points of the ball, pushed onto its surface)
        best = float((p * losses).sum())
        for _ in range(300):
            d = torch.randn(4, dtype=torch.float64)
            d = d - d.mean()  # stays a distribution: Σ d = 0
            scale = (rho / float((d ** 2 / q).sum())) ** 0.5
            cand = q + d * scale
            if (cand >= 0).all():
                assert float((cand * losses).sum()) <= best + 1e-9
    assert torch.allclose(chi2_best_response(losses, q, 0.0), q)
    assert torch.allclose(chi2_best_response(torch.ones(4, dtype=torch.float64), q, 0.3), q)
    # a radius past the corner: everything on the worst pair
    assert torch.allclose(chi2_best_response(losses, q, 100.0), torch.tensor([0, 0, 0, 1.0], dtype=torch.float64))


def test_dro_weights_are_logged_and_follow_the_pair_losses(xy_data, tmp_path):
    out = tmp_path / "dro"
    run.main(["--model", "xylent", "--data", str(xy_data), "--output", str(out), "--config", "tiny",
              "--max_steps", "24", "--dro", "1", "--dro_resamples", "2", "--dro_rho", "0.2", "--no_progress",
              "--no_tensorboard"])
    records = metrics(out)
    config = json.loads((out / "final" / "config.json").read_text())
    names, q = config["pair_names"], torch.tensor(config["pair_probs"], dtype=torch.float64)
    weights = [torch.tensor([r[f"dro_weight/{n}"] for n in names], dtype=torch.float64) for r in records]
    assert torch.allclose(weights[0], q, atol=1e-6)  # before the first update: pair_probs
    changes = [k for k in range(1, len(weights)) if not torch.allclose(weights[k], weights[k - 1], atol=1e-6)]
    assert len(changes) == 2  # --dro_resamples 2: steps 8 and 16, seen in the records of steps 9 and 17
    assert [records[k]["step"] for k in changes] == [9, 17]
    final = weights[-1]
    assert abs(float(final.sum()) - 1) < 1e-5 and abs(chi2(final, q) - 0.2) < 1e-3
    # the weights are the best response to the losses the model measured (kept in the checkpoint)
    state = torch.load(sorted((out / "checkpoints").glob("step-*.pt"))[-1], weights_only=True)
    losses = state["model"]["dro_losses"]
    assert not torch.isnan(losses).any()
    assert torch.allclose(chi2_best_response(losses, q, 0.2), state["model"]["dro_weights"])
    ratio = final / q
    assert int(ratio.argmax()) == int(losses.argmax()) and int(ratio.argmin()) == int(losses.argmin())


# ---- the whole run, saving, loading, fine-tuning ----

def test_a_resumed_run_continues_exactly(xy_data, tmp_path):
    def train(out, steps, *extra):
        run.main(["--model", "xylent", "--data", str(xy_data), "--output", str(out), "--config", "tiny",
                  "--max_steps", str(steps), "--save_every", "4", "--no_progress", "--no_tensorboard", *extra])
        return {r["step"]: r for r in metrics(out)}

    import shutil

    whole = train(tmp_path / "whole", 8)
    # the same run as if interrupted after step 4: its checkpoint of step 4, nothing later
    shutil.copytree(tmp_path / "whole", tmp_path / "cut", ignore=shutil.ignore_patterns("step-00000008.pt", "final"))
    (tmp_path / "cut" / "metrics.jsonl").unlink()
    resumed = train(tmp_path / "cut", 8, "--resume")
    assert min(resumed) == 5
    for step in range(5, 9):  # the data position, masking RNG, optimiser and schedule all carry over
        for key in ("loss", "gen_loss", "disc_loss", "batches"):
            assert resumed[step][key] == pytest.approx(whole[step][key], rel=1e-5), (step, key)



@pytest.fixture(scope="module")
def trained(xy_data, tmp_path_factory):
    """`python -m training.run --model xylent ... --config tiny` as a user runs it."""
    out = tmp_path_factory.mktemp("run")
    result = subprocess.run([sys.executable, "-m", "training.run", "--model", "xylent", "--data", str(xy_data),
                             "--output", str(out), "--config", "tiny", "--max_steps", "40", "--no_progress"],
                            cwd=REPO, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_help_lists_every_xylent_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.parse_args(["--model", "xylent", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for flag in recipe.EXTRA_FLAGS:
        assert f"--{flag}" in text, flag
    with pytest.raises(SystemExit):  # a typo in --dro is one argparse line, not a silent False
        run.parse_args(["--model", "xylent", "--data", "x", "--dro", "yes please"])
    assert "invalid on/off value" in capsys.readouterr().err


@pytest.mark.slow  # the `trained` run: ~70 s of set-up on 2 cores
def test_run_end_to_end_logs_both_losses_and_saves_both_models(trained):
    records = metrics(trained)
    assert [r["step"] for r in records] == list(range(1, 41))
    for key in ("gen_loss", "disc_loss", "disc_acc_replaced", "disc_acc_original", "tokens_per_s"):
        assert all(key in r for r in records), key
    assert sum(r.get("mrtd_batches", 0) for r in records) == 20 == sum(r.get("trtd_batches", 0) for r in records)
    assert sum(r["gen_loss"] for r in records[-5:]) < sum(r["gen_loss"] for r in records[:5]) - 2.0
    final = trained / "final"
    for name in ("config.json", "model.safetensors", "xylent.py", "gated_rel_pos.py", "tokenizer.json",
                 "generator/config.json", "generator/model.safetensors", "generator/xylent.py", "generator/tokenizer.json"):
        assert (final / name).exists(), name
    train_config = json.loads((trained / "train_config.json").read_text())
    assert train_config["disc_weight"] == 50.0 and train_config["generator_layers"] == 1


@pytest.mark.slow  # the `trained` run: ~70 s of set-up on 2 cores
def test_saved_models_load_with_auto_classes_and_give_identical_outputs(trained, xy_data):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    from training import checkpoint

    state = checkpoint.load(sorted((trained / "checkpoints").glob("step-*.pt"))[-1])
    model = XYLentForPreTraining(XYLentConfig.from_dict(state["model_config"]))
    model.load_state_dict(state["model"])
    model.eval()
    final = trained / "final"
    disc = AutoModel.from_pretrained(final, trust_remote_code=True).eval()
    gen = AutoModelForMaskedLM.from_pretrained(final / "generator", trust_remote_code=True).eval()
    # `import training` registers the local classes, which transformers prefers even with
    # trust_remote_code; the folder's own copy of the code, as users outside the project load it, is
    # checked in a fresh process by test_faults_training.py.
    assert type(disc).__name__ == "XYLentModel"
    tokenizer = AutoTokenizer.from_pretrained(final, trust_remote_code=True)
    enc = tokenizer(["Lisbon is the capital of Portugal.", "Hanoi là thủ đô của Việt Nam, bên sông Hồng."],
                    padding=True, return_tensors="pt")
    with torch.no_grad():
        want = model.discriminator.xylent(enc["input_ids"], enc["attention_mask"]).last_hidden_state
        got = disc(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
        assert torch.equal(got, want)
        assert torch.equal(gen(enc["input_ids"], enc["attention_mask"]),
                           model.generator(enc["input_ids"], enc["attention_mask"]))
    # and the pre-training model rebuilt from the two folders (continued pre-training, --init final)
    again = XYLentForPreTraining.from_parts(final).eval()
    batch = next(iter(stream(xy_data)))
    batch.pop("counts")
    torch.manual_seed(5)
    loss_a, _ = model(**batch)
    torch.manual_seed(5)
    loss_b, _ = again(**batch)
    assert torch.equal(loss_a, loss_b)


XNLI = [  # premise, hypothesis, label: sentences of the bundled English sample
    ("Lisbon is the capital and largest city of Portugal.", "Portugal's capital is Lisbon.", "entailment"),
    ("Lisbon is the capital and largest city of Portugal.", "Porto is the capital of Portugal.", "contradiction"),
    ("Lisbon is the capital and largest city of Portugal.", "Lisbon has a famous football club.", "neutral"),
    ("The monarchy fell in 1910.", "Portugal had a king until 1910.", "entailment"),
    ("The monarchy fell in 1910.", "The monarchy lasted until 1974.", "contradiction"),
    ("The monarchy fell in 1910.", "The last king went into exile in England.", "neutral"),
]


@pytest.mark.slow  # the `trained` run: ~70 s of set-up on 2 cores
def test_fine_tuning_the_saved_discriminator_on_sentence_pairs(trained, tmp_path):
    from training import finetune

    tsv = tmp_path / "xnli.tsv"
    tsv.write_text("premise\thypo\tlabel\n" + "".join(f"{p}\t{h}\t{lab}\n" for p, h, lab in XNLI), encoding="utf-8")
    result = finetune.finetune(finetune.build_parser().parse_args([
        "--task", "pair", "--init", str(trained / "final"), "--train", str(tsv), "--eval", str(tsv),
        "--output", str(tmp_path / "ft"), "--max_steps", "80", "--batch_size", "18", "--lr", "1e-3",
        "--max_seq_len", "128", "--extractor_hidden_size", "64", "--show_rationales", "0"]))
    print("fine-tune:", result["metrics"], [round(r["loss"], 3) for r in result["losses"]])
    assert result["eval_examples"] == len(XNLI)
    losses = [r["loss"] for r in result["losses"]]  # full batches (6 pairs x 3 label rows): a steady fall
    assert losses[-1] < 0.5 * losses[0]
    assert result["metrics"]["accuracy"] == 100.0  # the 6 training pairs (all 6 right by chance: 1 in 729)
    predictions = (tmp_path / "ft" / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == len(XNLI)
    from transformers import AutoModel
    assert type(AutoModel.from_pretrained(tmp_path / "ft" / "final", trust_remote_code=True)).__name__ == "XYLentModel"
