"""Continued XY-LENT pre-training of an encoder as a user runs it: xy_corpus with the encoder's
tokenizer as --vocab on real NTREX lines, `training.run --model xylent --init ENCODER` with held-out
rows, then fine-tuning its final/. A tiny random XLM-R encoder stands for multilingual-e5-small (the
smoke run with the real one is in docs/xylent.md); the vocabulary checks are one line each."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATA, built_once
from xylent_setup import metrics, ntrex_lines, tiny_encoder_folder

from training.recipes import xylent as recipe
from training.run_folder import RunFolderError

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def xy_corpus(vocab, folder: Path, start: int, stop: int) -> Path:
    from pipelines import xy_corpus as job

    folder.mkdir(parents=True)
    files = {}
    for lang in ("de", "fr", "el", "ru"):
        for kind, (a, b) in (("bitext", (start, stop)), ("mono", (stop, stop + (stop - start)))):
            files[kind, lang] = folder / f"{kind}.{lang}"
            files[kind, lang].write_text("\n".join(ntrex_lines(SHARED_DATA, lang, a, b)) + "\n", encoding="utf-8")
    out = folder / "xy"
    job.run(["--vocab", str(vocab), "--output", str(out), "--max_len", "128", "--no_progress",
             "--bitext", f"de-fr={files['bitext', 'de']},{files['bitext', 'fr']}",
             "--bitext", f"el-ru={files['bitext', 'el']},{files['bitext', 'ru']}",
             *(f"--mono={lang}={files['mono', lang]}" for lang in ("de", "fr", "el", "ru"))])
    return out


# Made once per test session (conftest.built_once), not once per xdist worker and module visit.
@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return built_once(tmp_path_factory, "xylent-encoder", lambda folder: tiny_encoder_folder(folder, SHARED_DATA))


@pytest.fixture(scope="module")
def data(encoder, tmp_path_factory):
    def build(folder):
        xy_corpus(encoder, folder / "train", 0, 120)
        xy_corpus(encoder, folder / "eval", 1500, 1530)

    base = built_once(tmp_path_factory, "xylent-encoder-data", build)
    return base / "train" / "xy", base / "eval" / "xy"


def train(encoder, train_data, eval_data, out, *extra):
    return subprocess.run(
        [sys.executable, "-m", "training.run", "--model", "xylent", "--init", str(encoder), "--data", str(train_data),
         "--eval_data", str(eval_data), "--output", str(out), "--config", "base", "--batch_size", "4", "--grad_accum", "1",
         "--max_seq_len", "128", "--max_steps", "4", "--lr", "1e-4", "--warmup_steps", "1", "--num_workers", "0",
         "--generator_layers", "1", "--eval_every", "2", "--eval_batches", "4", "--log_every", "1", "--no_progress", *extra],
        cwd=REPO, capture_output=True, text=True, env=ENV)


@pytest.fixture(scope="module")
def trained(encoder, data, tmp_path_factory):
    """The run folder and what the run printed (kept beside it for the workers that did not run it)."""
    def build(folder):
        result = train(encoder, *data, folder / "run")
        assert result.returncode == 0, result.stderr[-3000:]
        (folder / "stdout").write_text(result.stdout, encoding="utf-8")
        (folder / "stderr").write_text(result.stderr, encoding="utf-8")

    base = built_once(tmp_path_factory, "xylent-encoder-run", build)
    printed = subprocess.CompletedProcess([], 0, (base / "stdout").read_text(encoding="utf-8"),
                                          (base / "stderr").read_text(encoding="utf-8"))
    return base / "run", printed


def test_run_from_an_encoder_reports_held_out_generator_accuracy_and_discriminator_f1(trained):
    out, result = trained
    assert "--init" in result.stderr and "generator = its first 1 layers" in result.stderr
    said = result.stdout + result.stderr
    assert "step 2: held-out" in said and "gen_acc" in said and "disc_f1" in said
    records = metrics(out)
    evaluated = [r for r in records if "eval/disc_f1" in r]
    assert [r["step"] for r in evaluated] == [0, 2, 4]
    assert all("eval/gen_acc" in r and "eval/disc_f1/el-ru" in r for r in evaluated)
    steps = [r for r in records if "loss" in r]
    assert len(steps) == 4 and all(r["gen_loss"] > 0 and r["disc_loss"] > 0 for r in steps)


def test_the_final_discriminator_fine_tunes(trained, tmp_path):
    """training.finetune reads final/ as an encoder (AutoModel) and takes a step on the bundled sample."""
    out, _ = trained
    result = subprocess.run([sys.executable, "-m", "training.finetune", "--task", "pair", "--init", str(out / "final"),
                             "--output", str(tmp_path / "ft"), "--max_steps", "1", "--batch_size", "2",
                             "--max_seq_len", "128", "--no_progress"],
                            cwd=REPO, capture_output=True, text=True, env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "warning" not in result.stderr  # the RTD head is an expected leftover, the encoder is whole
    assert (tmp_path / "ft" / "metrics.json").is_file()


def test_data_in_another_vocabulary_than_the_encoders_is_one_line(encoder, xylent_shards):
    """Rows of a vocap model would train the encoder's embedding rows for other pieces."""
    cfg = recipe.CONFIGS["tiny"].replace(init=str(encoder))
    with pytest.raises(RunFolderError, match=r"its token ids are from spm.model beside the rows, another vocabulary "
                                             r"than --init .*; make the data with `python -m pipelines.xy_corpus --vocab"):
        recipe.check_data(cfg, str(xylent_shards))
    assert recipe.check_data(cfg.replace(init=None), str(xylent_shards)) > 0


def test_held_out_rows_in_another_vocabulary_are_one_line(data, xylent_shards):
    from training.evaluation import EvalDataError

    train_data, eval_data = data
    cfg = recipe.CONFIGS["tiny"]
    recipe.check_eval_data(cfg, str(train_data), str(eval_data))  # the same tokenizer: fine
    with pytest.raises(EvalDataError, match="made with another vocabulary"):
        recipe.check_eval_data(cfg, str(train_data), str(xylent_shards))
    with pytest.raises(EvalDataError, match="made with another vocabulary"):
        recipe.check_eval_data(cfg.replace(init=str(train_data)), str(xylent_shards), str(eval_data))


def test_the_que_head_refuses_an_xylent_encoder_in_one_line(trained, tmp_path):
    """The [QUE] head sits on XLM-R: an XY-LENT final/ there would run with a random encoder."""
    from training import finetune_clism

    out, _ = trained
    with pytest.raises(SystemExit) as stop:
        finetune_clism.main(["--init", str(out / "final"), "--head", "que", "standard", "--max_steps", "1",
                             "--output", str(tmp_path / "ftc")])
    assert str(stop.value.code) == (f"training.finetune_clism: --init {out / 'final'}: a 'xylent' model; the [QUE] head "
                                    "fine-tunes XLM-R encoders (a CLISM run's final/ or any XLM-R); fine-tune it with "
                                    "--head standard, or `python -m training.finetune --task squad --init ...` (any "
                                    "AutoModel encoder)")
    assert not (tmp_path / "ftc" / "standard").exists()


def test_the_standard_head_fine_tunes_an_xylent_encoder_and_saves_it_whole(trained, tmp_path):
    """--head standard on the discriminator: its encoder weights are used (not left random), the
    saved final/ is the encoder folder plus the start/end classifier, and both load back."""
    import torch
    from safetensors.torch import load_file

    from training import finetune_clism
    from training.tasks.start_end_reader import HEAD_WEIGHTS, StartEndReader

    out, _ = trained
    result = finetune_clism.main(["--init", str(out / "final"), "--head", "standard", "--max_steps", "2",
                                  "--batch_size", "2", "--max_seq_len", "128", "--no_progress",
                                  "--output", str(tmp_path / "ftc")])
    run = result["runs"][0] if "runs" in result else result
    assert run["steps"] == 2 and 0 <= run["f1"] <= 100
    saved = tmp_path / "ftc" / "standard" / "final"
    reader = StartEndReader.from_pretrained(saved)
    assert torch.equal(reader.qa_outputs.weight, load_file(str(saved / HEAD_WEIGHTS))["weight"])
    trained_d = StartEndReader.from_pretrained(out / "final").encoder.state_dict()
    tuned = reader.encoder.state_dict()
    assert trained_d.keys() == tuned.keys()
    assert any(not torch.equal(trained_d[k], tuned[k]) for k in tuned)  # fine-tuning moved the encoder
    # loaded, not left random: two small steps move the embeddings by far less than their spread
    assert torch.allclose(trained_d["embeddings.word_embeddings.weight"], tuned["embeddings.word_embeddings.weight"], atol=1e-2)


def test_new_params_lr_trains_only_what_init_did_not_supply_at_its_own_rate(encoder, data):
    """--new_params_lr 0 holds the new heads and tables at their initialisation while the encoder moves."""
    import torch

    from training.run_setup import make_optimizer
    from training.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(str(encoder))
    cfg = recipe.CONFIGS["tiny"].replace(init=str(encoder), generator_layers=1, max_seq_len=32, lr=1e-2,
                                         new_params_lr=0.0)
    model = recipe.build_pretrained(cfg, tokenizer, str(encoder))
    new = model.new_parameter_names
    assert "discriminator.rtd_head.0.weight" in new and "generator.lm_dense.weight" in new
    assert not any(name.startswith("discriminator.xylent.layers.0.attention.qkv") for name in new)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = make_optimizer(model, cfg, torch.device("cpu"))
    loss = sum((p.float() ** 2).sum() for p in model.parameters())
    loss.backward()
    optimizer.step()
    moved = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    assert moved and not moved & new
    assert "discriminator.xylent.embeddings.word_embeddings.weight" in moved


@pytest.mark.slow  # two training runs in subprocesses
def test_a_run_with_new_params_lr_resumes_with_its_optimiser_groups(encoder, data, tmp_path):
    import torch

    out = tmp_path / "run"
    first = train(encoder, *data, out, "--new_params_lr", "1e-3", "--eval_every", "0", "--max_steps", "2",
                  "--save_every", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = train(encoder, *data, out, "--new_params_lr", "1e-3", "--eval_every", "0", "--max_steps", "3", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    state = torch.load(sorted((out / "checkpoints").glob("step-*.pt"))[-1], weights_only=False)
    assert state["step"] == 3
    rates = sorted({group["initial_lr"] for group in state["optimizer"]["param_groups"]})
    assert rates == [1e-4, 1e-3]
    assert "generator.lm_dense.weight" in state["new_parameters"]
