"""XY-LENT (training/models/xylent.py, training/recipes/xylent.py) on real shards: the ELECTRA step,
DRO, and the whole run with saving, loading and fine-tuning (the stream is tests/test_xylent_stream.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xylent_setup import metrics, stream, tiny_model, torch

from corpora.xy.vocap import BOS_ID, EOS_ID, MASK_ID, PAD_ID
from training import run
from training.models import xylent
from training.models.xylent import XYLentConfig, XYLentForPreTraining, choose_masked, chi2_best_response, rtd_inputs
from training.recipes import xylent as recipe

REPO = Path(__file__).resolve().parents[2]


# ---- the ELECTRA step ----

def test_cls_is_never_masked_and_fifteen_percent_are(xylent_shards):
    for n, batch in zip(range(10), stream(xylent_shards)):
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


def test_a_generator_that_reproduces_every_token_gives_no_replaced_label(xylent_shards, monkeypatch):
    model, _ = tiny_model(xylent_shards)
    batch = next(iter(stream(xylent_shards)))
    batch.pop("counts")
    seen = {}

    def perfect_generator(hidden):  # all mass on the original token of each masked position
        logits = torch.full((hidden.shape[0], model.config.vocab_size), -30.0)
        logits[torch.arange(hidden.shape[0]), seen["targets"]] = 30.0
        return logits

    real_choose = xylent.choose_masked

    def choose(input_ids, attention_mask, mask_prob, generator=None, **special):
        masked = real_choose(input_ids, attention_mask, mask_prob, generator, **special)
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


def test_losses_fall_on_real_shards(xylent_shards):
    model, _ = tiny_model(xylent_shards)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-6)
    logs_by_step = []
    for n, batch in zip(range(60), stream(xylent_shards)):
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


def test_shared_token_embeddings_and_no_generator_dropout(xylent_shards):
    model, _ = tiny_model(xylent_shards, dropout=0.1)
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


def test_dro_weights_are_logged_and_follow_the_pair_losses(xylent_shards, tmp_path):
    out = tmp_path / "dro"
    run.main(["--model", "xylent", "--data", str(xylent_shards), "--output", str(out), "--config", "tiny",
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

def test_a_resumed_run_continues_exactly(xylent_shards, tmp_path):
    def train(out, steps, *extra):
        run.main(["--model", "xylent", "--data", str(xylent_shards), "--output", str(out), "--config", "tiny",
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
def trained(xylent_shards, tmp_path_factory):
    """`python -m training.run --model xylent ... --config tiny` as a user runs it."""
    out = tmp_path_factory.mktemp("run")
    result = subprocess.run([sys.executable, "-m", "training.run", "--model", "xylent", "--data", str(xylent_shards),
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
def test_saved_models_load_with_auto_classes_and_give_identical_outputs(trained, xylent_shards):
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
    batch = next(iter(stream(xylent_shards)))
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
