"""CLISM + CACR + MLM (training/models/clism.py, training/data/clism.py, training/recipes/clism.py) on real clism_pairs rows:
the collated [QUE] questions and answers against the words, MLM never on answers, CACR against a
hand-computed value, each loss term falling on a tiny model, save/reload, and `training.run` end to end."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from corpora.clism.ner_spans import ner_pipeline_available
from training import run
from training.data import list_shards
from training.data.clism import IGNORE, QUE_TOKEN, CLISMCollator, add_que_token
from training.models.clism import CLISMForPreTraining, cacr_loss, clism_loss, contrastive_loss, masked_mean
from training.recipes.clism import CONFIGS, SPEC
from training.tokenizer import train_tiny_tokenizer

pytestmark = pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")
QUIET = ["--no_progress", "--no_tensorboard"]


@pytest.fixture(scope="module")
def job_out(tmp_path_factory) -> Path:
    from pipelines import clism_pairs
    out = tmp_path_factory.mktemp("clism_pairs")
    clism_pairs.run(["--runner", "DirectRunner", "--output", str(out)])
    return out


@pytest.fixture(scope="module")
def rows(job_out) -> list[dict]:
    return [r for f in list_shards(job_out) for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def tokenizer(rows):
    return add_que_token(train_tiny_tokenizer((w for r in rows for w in (r["src_words"], r["tgt_words"])), 2000))


@pytest.fixture(scope="module")
def few_rows(job_out, tmp_path_factory) -> Path:
    """Eight real pairs, two per language, as a one-shard data folder (the job's schema kept)."""
    table = pa.concat_tables([pq.read_table(f) for f in list_shards(job_out)])
    langs = table.column("tgt_lang").to_pylist()
    pick = [i for lang in sorted(set(langs)) for i in [k for k, x in enumerate(langs) if x == lang][:2]]
    few = tmp_path_factory.mktemp("few")
    (few / "data").mkdir()
    pq.write_table(table.take(pick), few / "data" / "train-00000-of-00001.parquet")
    return few


def subwords(tokenizer, words: list[str], spaces: list[bool] | None = None) -> list[list[int]]:
    """Each word's subwords; with the row's space flags, as training/data/word_pieces.py encodes them (a
    word glued to the one before without the "▁": tests/training/test_training_data.py checks that rule)."""
    if spaces is not None:
        from training.data.word_pieces import WordPieces

        return [list(p) for p in WordPieces(tokenizer)([words], [spaces])[0]]
    enc = tokenizer([words], is_split_into_words=True, add_special_tokens=False)
    out = [[] for _ in words]
    for t, w in zip(enc["input_ids"][0], enc.word_ids(0)):
        out[w].append(t)
    return out


def tensors(batch: dict) -> dict:
    return {k: v for k, v in batch.items() if k != "counts"}


# ---- the collated batch against the words ----

def test_que_positions_and_answer_spans_match_the_words(rows, tokenizer):
    collator = CLISMCollator(tokenizer, mlm=False)
    batch = collator(rows[:32])
    que = tokenizer.convert_tokens_to_ids(QUE_TOKEN)
    ids = batch["input_ids"]
    total = 0
    for b, row in enumerate(rows[:32]):
        src = subwords(tokenizer, row["src_words"], row["src_spaces"])
        tgt = subwords(tokenizer, row["tgt_words"], row["tgt_spaces"])
        spans = sorted(row["spans"], key=lambda s: s["src_start"])
        asked = batch["answer_start"][b] != IGNORE
        n = int(asked.sum())
        assert n == len(spans)  # short sentences: nothing cut, every span is a question
        total += n
        positions = batch["que_positions"][b, :n].tolist()
        assert [p for p in range(ids.shape[1]) if ids[b, p] == que] == positions
        # The masked source with each [QUE] put back as its span's subwords is the source again.
        source = ids[b][batch["source_mask"][b]].tolist()
        rebuilt, k = [], 0
        for t in source:
            if t == que:
                rebuilt.extend(x for word in src[spans[k]["src_start"]: spans[k]["src_end"] + 1] for x in word)
                k += 1
            else:
                rebuilt.append(t)
        assert rebuilt == [x for word in src for x in word]
        # The target slice is the target's subwords, and each answer is exactly its aligned words.
        t0 = int(batch["target_mask"][b].nonzero()[0])
        assert ids[b][batch["target_mask"][b]].tolist() == [x for word in tgt for x in word]
        for q, s in enumerate(spans):
            a, e = int(batch["answer_start"][b, q]), int(batch["answer_end"][b, q])
            assert batch["target_mask"][b, a] and batch["target_mask"][b, e]
            expected = [x for word in tgt[s["tgt_start"]: s["tgt_end"] + 1] for x in word]
            assert ids[b, a: e + 1].tolist() == expected
            assert a == t0 + sum(len(word) for word in tgt[: s["tgt_start"]])
    assert batch["counts"]["spans/questions"] == total
    # Layout <s> ŝˢ </s></s> sᵗ </s>.
    assert (ids[:, 0] == tokenizer.cls_token_id).all()


def test_truncation_drops_and_counts_spans_never_mislabels(rows, tokenizer):
    collator = CLISMCollator(tokenizer, max_sentence_tokens=6, max_seq_len=16, mlm=False)
    batch = collator(rows[:32])
    counts = batch["counts"]
    assert counts["spans/cut_by_truncation"] > 0 and counts["rows/target_truncated"] > 0
    assert counts["spans/questions"] + counts["spans/cut_by_truncation"] == sum(len(r["spans"]) for r in rows[:32])
    assert batch["input_ids"].shape[1] <= 16
    for b in range(32):
        assert int(batch["source_mask"][b].sum()) <= 6 and int(batch["target_mask"][b].sum()) <= 6
        for q in range(batch["answer_start"].shape[1]):
            a, e = int(batch["answer_start"][b, q]), int(batch["answer_end"][b, q])
            if a != IGNORE:
                assert batch["target_mask"][b, a: e + 1].all()  # inside the kept target, whole


def test_spans_per_pair_and_label_filter(rows, tokenizer):
    many = [r for r in rows if len(r["spans"]) >= 2][:16]
    one = CLISMCollator(tokenizer, spans_per_pair=1, mlm=False)(many)
    assert ((one["answer_start"] != IGNORE).sum(1) == 1).all()
    # The choice depends on (seed, pair id) only: the same alone as in a batch; other seeds differ somewhere.
    alone = CLISMCollator(tokenizer, spans_per_pair=1, mlm=False)
    assert [int(alone([r])["answer_start"][0, 0]) for r in many] == one["answer_start"][:, 0].tolist()
    picks = {tuple(CLISMCollator(tokenizer, spans_per_pair=1, mlm=False, seed=s)(many)["answer_start"][:, 0].tolist())
             for s in range(5)}
    assert len(picks) > 1
    label = many[0]["spans"][0]["label"]
    only = CLISMCollator(tokenizer, span_labels=label, mlm=False)(many)
    assert int((only["answer_start"] != IGNORE).sum()) == sum(s["label"] == label for r in many for s in r["spans"])


def test_mlm_never_masks_answers_specials_or_que_over_many_seeds(rows, tokenizer):
    que = tokenizer.convert_tokens_to_ids(QUE_TOKEN)
    specials = set(tokenizer.all_special_ids) | {que}
    plain = CLISMCollator(tokenizer, mlm=False)(rows[:32])
    predicted = eligible = masked = kept = 0
    for seed in range(40):
        batch = CLISMCollator(tokenizer, seed=seed)(rows[:32])
        labels, ids = batch["mlm_labels"], batch["input_ids"]
        assert torch.equal(batch["que_positions"], plain["que_positions"])
        for b in range(32):
            chosen = (labels[b] != IGNORE).nonzero().flatten().tolist()
            answers = {k for q in range(batch["answer_start"].shape[1])
                       if batch["answer_start"][b, q] != IGNORE
                       for k in range(int(batch["answer_start"][b, q]), int(batch["answer_end"][b, q]) + 1)}
            assert chosen, "every pair gets at least one MLM prediction"
            for k in chosen:
                assert k not in answers
                assert int(plain["input_ids"][b, k]) not in specials
                assert int(labels[b, k]) == int(plain["input_ids"][b, k])  # the label is the original token
            for k in answers:  # answers are never changed, neither masked nor replaced
                assert ids[b, k] == plain["input_ids"][b, k]
            assert int(ids[b][ids[b] == que].numel()) == int((plain["input_ids"][b] == que).sum())
            n_eligible = sum(1 for k in range(int(plain["attention_mask"][b].sum()))
                             if int(plain["input_ids"][b, k]) not in specials and k not in answers)
            predicted += len(chosen)
            eligible += n_eligible
            masked += sum(int(ids[b, k] == tokenizer.mask_token_id) for k in chosen)
            kept += sum(int(ids[b, k] == plain["input_ids"][b, k]) for k in chosen)
    assert 0.13 < predicted / eligible < 0.20  # 15%, rounded per pair with at least one
    assert 0.74 < masked / predicted < 0.86 and 0.05 < kept / predicted < 0.16  # 80/10/10


# ---- the losses against hand-computed values ----

def test_cacr_loss_equals_the_hand_computed_value():
    # B = 2, d = 2. Cosines: Ψ(rᵗ₀, r̂ˢ₀) = 1, Ψ(rᵗ₀, r̂ˢ₁) = 0, Ψ(rᵗ₁, r̂ˢ₀) = 0.6, Ψ(rᵗ₁, r̂ˢ₁) = 0.8, ...
    r_t = torch.tensor([[2.0, 0.0], [3.0, 4.0]])
    r_hat_s = torch.tensor([[1.0, 0.0], [0.0, 5.0]])
    r_s = torch.tensor([[1.0, 1.0], [0.0, -1.0]])

    def cos(a, b):
        return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    def eq7(anchor, cand, k):
        total = 0.0
        for i in range(2):
            logits = [cos(anchor[i], cand[j]) * k for j in range(2)]
            total += -(logits[i] - math.log(sum(math.exp(x) for x in logits)))
        return total / 2

    a, h, s = r_t.tolist(), r_hat_s.tolist(), r_s.tolist()
    for reading, k in (("scale", 20.0), ("divide", 1 / 20.0)):
        expected = eq7(a, h, k) + eq7(s, h, k) + eq7(a, s, k)
        assert cacr_loss(r_t, r_hat_s, r_s, 20.0, reading).item() == pytest.approx(expected, rel=1e-5)
    # By hand, scale reading, first term: row 0 logits (20, 0), positive 20 -> log(1+e^-20) = 2.06e-9;
    # row 1 logits (12, 16), positive 16 -> log(1+e^-4) = 0.0181499; mean 0.0090750.
    assert contrastive_loss(r_t, r_hat_s, 20.0).item() == pytest.approx(0.0090750, rel=1e-4)
    # Swapped candidates make every positive the worse one: row 0 -> log(1+e^20) = 20.0000000021,
    # row 1 -> log(1+e^4) = 4.0181499; mean 12.0090750.
    assert contrastive_loss(r_t, r_hat_s.flip(0), 20.0).item() == pytest.approx(12.0090750, rel=1e-6)
    with pytest.raises(ValueError, match="cacr_tau_reading"):
        contrastive_loss(r_t, r_hat_s, 20.0, "times")


def test_divide_reading_cannot_leave_log_b():
    # |Ψ/20| <= 0.05, so every Eq. 7 term lies within 0.1 of log B whatever the encoder does: the
    # printed formula gives CACR no room to train (docs/clism_model.md has the curves).
    torch.manual_seed(0)
    for _ in range(20):
        x, y = torch.randn(16, 8), torch.randn(16, 8)
        assert abs(contrastive_loss(x, y, 20.0, "divide").item() - math.log(16)) <= 0.1
    # The scale reading can reach 0: orthogonal pairs give log(1 + 15·e^-20) = 3.1e-8 (0 in float32).
    same = 3 * torch.eye(16)
    assert contrastive_loss(same, same, 20.0, "scale").item() < 1e-6


def test_masked_mean_and_clism_loss_by_hand():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    assert masked_mean(hidden, torch.tensor([[0, 1, 1]])).tolist() == [[4.0, 5.0]]
    # One real question (start 1, end 2) and one padding slot (-100) that must not count.
    start = torch.tensor([[[0.0, 1.0, 0.0], [9.0, 9.0, 9.0]]])
    end = torch.tensor([[[0.0, 0.0, 2.0], [9.0, 9.0, 9.0]]])
    expected = -(1 - math.log(2 + math.e)) - (2 - math.log(2 + math.exp(2)))
    got = clism_loss(start, end, torch.tensor([[1, IGNORE]]), torch.tensor([[2, IGNORE]]))
    assert got.item() == pytest.approx(expected, rel=1e-6)


def test_question_logits_are_w_x_q_dot_each_target_token(rows, tokenizer):
    torch.manual_seed(0)
    model = SPEC.build_random(CONFIGS["tiny"], tokenizer).eval()
    batch = CLISMCollator(tokenizer, mlm=False)(rows[:4])
    with torch.no_grad():
        hidden = model.encode(batch["input_ids"], batch["attention_mask"])
        start, end = model.question_logits(hidden, batch["que_positions"], batch["target_mask"])
    b, q = 1, 0
    p = int(batch["que_positions"][b, q])
    for k in range(hidden.shape[1]):
        if batch["target_mask"][b, k]:
            assert start[b, q, k].item() == pytest.approx((model.w_s(hidden[b, p]) @ hidden[b, k]).item(), rel=1e-4, abs=1e-5)
            assert end[b, q, k].item() == pytest.approx((model.w_e(hidden[b, p]) @ hidden[b, k]).item(), rel=1e-4, abs=1e-5)
        else:
            assert start[b, q, k] < -1e30  # the softmax runs over the target only


# ---- training ----

def test_tiny_model_overfits_real_rows_and_each_term_falls(rows, tokenizer):
    torch.manual_seed(0)
    model = SPEC.build_random(CONFIGS["tiny"], tokenizer)
    batch = tensors(SPEC.collator(CONFIGS["tiny"], tokenizer)(rows[::20][:8]))
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    history = []
    for _ in range(60):
        loss, logs = model(**batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        history.append({k: float(v) for k, v in logs.items()})
    first, last = history[0], history[-1]
    print({k: (round(first[k], 4), round(last[k], 4)) for k in first})
    assert last["clism_loss"] < 0.05 * first["clism_loss"]
    assert last["cacr_loss"] < 0.05 * first["cacr_loss"]
    assert last["mlm_loss"] < 0.7 * first["mlm_loss"]
    assert last["clism_exact"] == 1.0  # every [QUE] finds its aligned target span


def test_switches_drop_their_terms(rows, tokenizer):
    cfg = CONFIGS["tiny"].replace(no_cacr=True, no_mlm=True)
    model = SPEC.build_random(cfg, tokenizer)
    batch = SPEC.collator(cfg, tokenizer)(rows[:4])
    assert "source_input_ids" not in batch and (batch["mlm_labels"] == IGNORE).all()
    loss, logs = model(**tensors(batch))
    assert set(logs) == {"clism_loss", "clism_exact"} and loss.item() == pytest.approx(logs["clism_loss"].item())
    loss.backward()
    assert not model.lm_head.dense.weight.requires_grad  # unused, so DDP needs no find_unused_parameters


def test_save_and_from_pretrained_give_identical_logits(rows, tokenizer, tmp_path):
    torch.manual_seed(0)
    model = SPEC.build_random(CONFIGS["tiny"], tokenizer).eval()
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    from transformers import AutoTokenizer
    tok2 = AutoTokenizer.from_pretrained(tmp_path)
    assert QUE_TOKEN in tok2.get_vocab() and tok2.convert_tokens_to_ids(QUE_TOKEN) == model.config.que_token_id
    again = CLISMForPreTraining.from_pretrained(tmp_path).eval()
    assert again.get_input_embeddings().weight.shape[0] == len(tok2)
    batch = tensors(CLISMCollator(tok2, seed=3)(rows[:6]))
    with torch.no_grad():
        outputs = []
        for m in (model, again):
            hidden = m.encode(batch["input_ids"], batch["attention_mask"])
            outputs.append((*m.question_logits(hidden, batch["que_positions"], batch["target_mask"]), m.mlm_logits(hidden),
                            m(**batch)[0]))
    for a, b in zip(*outputs):
        assert torch.equal(a, b)
    # The LM decoder stays tied to the input embeddings after reloading.
    assert again.lm_head.decoder.weight.data_ptr() == again.roberta.embeddings.word_embeddings.weight.data_ptr()


def test_init_from_an_xlmr_checkpoint_loads_encoder_and_lm_head_and_adds_que(rows, tmp_path):
    """--init with any XLM-R masked LM: its encoder and LM head are taken, [QUE] gets a new row."""
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM
    plain = train_tiny_tokenizer((w for r in rows for w in (r["src_words"], r["tgt_words"])), 2000)
    torch.manual_seed(1)
    xlmr = XLMRobertaForMaskedLM(XLMRobertaConfig(vocab_size=len(plain), hidden_size=32, num_hidden_layers=1,
                                                  num_attention_heads=2, intermediate_size=64, max_position_embeddings=300,
                                                  pad_token_id=1, bos_token_id=0, eos_token_id=2))
    xlmr.save_pretrained(tmp_path / "xlmr")
    plain.save_pretrained(tmp_path / "xlmr")
    from transformers import AutoTokenizer
    tok = add_que_token(AutoTokenizer.from_pretrained(tmp_path / "xlmr"))
    cfg = CONFIGS["tiny"].replace(init=str(tmp_path / "xlmr"))
    model = SPEC.build_pretrained(cfg, tok, cfg.init)
    emb = model.roberta.embeddings.word_embeddings.weight
    assert emb.shape[0] == len(plain) + 1 == len(tok)
    assert torch.equal(emb[: len(plain)], xlmr.roberta.embeddings.word_embeddings.weight)
    assert torch.equal(model.lm_head.dense.weight, xlmr.lm_head.dense.weight)
    assert model.lm_head.decoder.weight.data_ptr() == emb.data_ptr()
    assert model.config.que_token_id == len(plain)
    loss, logs = model(**tensors(CLISMCollator(tok)(rows[:4])))
    assert torch.isfinite(loss) and set(logs) >= {"clism_loss", "cacr_loss", "mlm_loss"}


def test_training_run_end_to_end(few_rows, tmp_path):
    out = tmp_path / "run"
    run.main(["--model", "clism", "--data", str(few_rows), "--output", str(out), "--config", "tiny",
              "--max_steps", "40", "--lr", "2e-3", *QUIET])
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 40
    for term in ("clism_loss", "cacr_loss", "mlm_loss"):
        assert records[-1][term] < records[0][term], term
    assert records[-1]["clism_loss"] < 0.2 * records[0]["clism_loss"]
    assert records[0]["rows"] == 8 and records[0]["spans/questions"] > 0
    final = out / "final"
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= {p.name for p in final.iterdir()}
    from transformers import AutoTokenizer
    assert QUE_TOKEN in AutoTokenizer.from_pretrained(final).get_vocab()
    assert CLISMForPreTraining.from_pretrained(final).config.use_cacr

    ablated = tmp_path / "ablated"
    run.main(["--model", "clism", "--data", str(few_rows), "--output", str(ablated), "--config", "tiny",
              "--max_steps", "2", "--no_cacr", "--no_mlm", *QUIET])
    record = json.loads((ablated / "metrics.jsonl").read_text().splitlines()[-1])
    assert "clism_loss" in record and "cacr_loss" not in record and "mlm_loss" not in record


def test_every_flag_is_documented(capsys):
    with pytest.raises(SystemExit):
        run.parse_args(["--model", "clism", "--help"])
    text = capsys.readouterr().out
    for flag in ("--spans_per_pair", "--span_labels", "--cacr_temperature", "--cacr_tau_reading", "--no_cacr",
                 "--no_mlm", "--max_sentence_tokens", "--mlm_probability", "--warmup_steps"):
        assert flag in text
    base = CONFIGS["base"]
    assert (base.lr, base.warmup_steps, base.batch_size * base.grad_accum, base.max_steps, base.max_seq_len,
            base.max_sentence_tokens, base.cacr_temperature) == (1e-5, 1500, 64, 15_000, 256, 128, 20.0)


def test_resumed_run_equals_uninterrupted_run(few_rows, tmp_path):
    # The masking depends on (seed, pair id) only, so the data position and RNG are all a resume needs.
    import shutil
    args = ["--model", "clism", "--data", str(few_rows), "--config", "tiny", "--max_steps", "4", "--batch_size", "4",
            "--dropout", "0.1", "--save_every", "2", *QUIET]
    whole = tmp_path / "whole"
    run.main([*args, "--output", str(whole)])
    resumed = tmp_path / "resumed"
    (resumed / "checkpoints").mkdir(parents=True)
    shutil.copytree(whole / "tokenizer", resumed / "tokenizer")
    shutil.copy(whole / "checkpoints" / "step-00000002.pt", resumed / "checkpoints")
    run.main([*args, "--output", str(resumed), "--resume"])
    losses = [[json.loads(x)["loss"] for x in (out / "metrics.jsonl").read_text().splitlines()] for out in (whole, resumed)]
    assert losses[1] == losses[0][2:]


@pytest.mark.slow
@pytest.mark.parametrize("switches", [[], ["--no_mlm"]])
def test_two_gloo_processes_train_every_variant(few_rows, tmp_path, switches):
    """DDP without find_unused_parameters: every trainable parameter gets a gradient in each variant."""
    import subprocess
    import sys
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                    "-m", "training.run", "--model", "clism", "--data", str(few_rows), "--config", "tiny",
                    "--max_steps", "3", "--batch_size", "4", "--output", str(tmp_path), *switches, *QUIET],
                   check=True, env=env, timeout=300, capture_output=True)
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 3
