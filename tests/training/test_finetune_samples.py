"""Fine-tuning with no input flags (issue 18 item 4): the bundled samples, --max_seq_len within the
model's positions, no LOAD REPORT, no progress bar with --no_progress.

Tiny random models of the shape `training.run --config tiny` saves, with 130 positions (128 subwords),
so that every default --max_seq_len (384, 192) is over the limit and must be clamped.
"""
import fnmatch
import json
import tomllib
from pathlib import Path

import pytest
import torch
from conftest import SHARED_DATA, SKIP_HINT

from training import finetune, finetune_clism
from training.models.mpmr import MPMRForWAE, build_config
from training.tasks import bundled, conll, pair_cls, squad
from training.tasks.words import split_words
from training.tokenizer import train_tiny_tokenizer

REPO = Path(__file__).resolve().parents[2]
READERS = {"squad": squad.read_squad, "ner": conll.read_conll, "pair": pair_cls.read_pairs}
COUNTS = {"squad": (135, 37), "ner": (120, 80), "pair": (120, 60)}  # (train, eval) examples
POSITIONS = 130  # XLM-R numbers positions from padding_idx + 1 = 2: 128 subwords


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared 2-core CPU: more threads only oversubscribe
    yield
    torch.set_num_threads(before)


def sample_words() -> list[list[str]]:
    texts = []
    for task in READERS:
        for path in bundled.sample_paths(task):
            texts.extend(Path(path).read_text(encoding="utf-8").splitlines())
    texts += list(conll.LABEL_DESCRIPTIONS.values()) + list(pair_cls.DESCRIPTIONS.values())
    return [[w for w, _, _ in split_words(t)] for t in texts if t.strip()]


@pytest.fixture(scope="module")
def tiny_mpmr(tmp_path_factory) -> Path:
    tokenizer = train_tiny_tokenizer(sample_words(), 800)
    torch.manual_seed(0)
    model = MPMRForWAE(build_config(tokenizer, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                                    max_seq_len=POSITIONS - 2, extractor_hidden_size=32, dropout=0.0))
    path = tmp_path_factory.mktemp("tiny_mpmr")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_masked_lm(tiny_mpmr, tmp_path_factory) -> Path:
    """An XLM-R with its MLM head, as a CLISM pre-training or xlm-roberta-base checkpoint holds it."""
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaForMaskedLM
    tokenizer = AutoTokenizer.from_pretrained(tiny_mpmr)
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=POSITIONS, pad_token_id=tokenizer.pad_token_id)
    path = tmp_path_factory.mktemp("tiny_mlm")
    XLMRobertaForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


# ---- the sample files ----

@pytest.mark.parametrize("task", sorted(READERS))
def test_samples_are_small_and_read_by_their_task(task):
    for path, expected in zip(bundled.sample_paths(task), COUNTS[task]):
        assert Path(path).stat().st_size < 40_000, path
        assert len(READERS[task](path)) == expected, path


def test_samples_are_package_data():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["training"]
    files = [p.relative_to(REPO / "training").as_posix() for p in bundled.SAMPLES.rglob("*") if p.is_file()]
    assert "tasks/samples/README.md" in files
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


def test_readme_names_every_file_its_source_and_licence():
    text = (bundled.SAMPLES / "README.md").read_text()
    for name in [f for pair in bundled.SAMPLE_FILES.values() for f in pair]:
        assert f"`{name}`" in text, name
    for source in ("XQuAD", "CC BY-SA 4.0", "WikiANN", "CC BY-SA 3.0", "PAWS-X", "Google LLC"):
        assert source in text, source


@pytest.mark.skipif(not (SHARED_DATA / "eval").exists(), reason="../shared/data/eval is not present" + SKIP_HINT)
def test_samples_are_the_documented_cut_of_the_real_sets():
    for name, text in bundled.cut_samples(SHARED_DATA).items():
        assert (bundled.SAMPLES / name).read_text(encoding="utf-8") == text, name


# ---- the commands on them ----

@pytest.mark.parametrize("task,default_len", [("squad", 384), ("ner", 192), ("pair", 192)])
def test_finetune_without_input_flags_runs_on_the_bundled_sample(task, default_len, tiny_mpmr, tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.chdir(tmp_path)
    finetune.main(["--task", task, "--init", str(tiny_mpmr), "--max_steps", "2", "--max_train_examples", "8",
                   "--max_eval_examples", "4", "--device", "cpu", "--no_progress"])
    out = tmp_path / "output" / f"finetune_{task}"
    result = json.loads((out / "metrics.json").read_text())
    sample_train, sample_eval = bundled.sample_paths(task)
    assert (result["train"], result["eval"]) == (sample_train, [sample_eval])  # --eval takes several files
    assert result["args"]["max_seq_len"] == POSITIONS - 2
    assert (out / "final" / "config.json").exists()
    captured = capsys.readouterr()
    assert (f"training.finetune: --max_seq_len {default_len} is more than the model's {POSITIONS - 2} positions; "
            f"using {POSITIONS - 2}") in captured.err.splitlines()
    assert f"  fine-tuned model: output/finetune_{task}/final   (--init accepts it)" in captured.out.splitlines()
    # The score says it is the sample's: a newcomer read the sample's F1 as a result.
    assert any(line.startswith(f"{task} ") and "(the bundled sample, a smoke test: pass --eval for a real score): "
               in line for line in captured.out.splitlines())
    assert "LOAD REPORT" not in captured.err and "it/s" not in captured.err and "warning" not in captured.err


def test_progress_bar_without_no_progress(tiny_mpmr, tmp_path, capsys):
    finetune.main(["--task", "ner", "--init", str(tiny_mpmr), "--max_steps", "2", "--max_train_examples", "4",
                   "--max_eval_examples", "2", "--device", "cpu", "--output", str(tmp_path / "o")])
    assert "finetune ner: 100%" in capsys.readouterr().err


def test_readme_few_shot_flow_on_a_small_model(tiny_masked_lm, tmp_path, monkeypatch, capsys):
    """README: `finetune_clism --few_shot 64,128 --head que standard` after a tiny pre-training, which
    crashed with "index 258 is out of bounds" (384 > 256 positions) and printed 20 LOAD REPORTs."""
    monkeypatch.chdir(tmp_path)
    result = finetune_clism.main(["--init", str(tiny_masked_lm), "--few_shot", "64,128", "--head", "que", "standard",
                                  "--seeds", "1", "--max_steps", "1", "--max_eval_examples", "2", "--device", "cpu",
                                  "--no_progress"])
    assert [(s["head"], s["examples"], s["seeds"]) for s in result["summary"]] == [
        ("que", 64, 1), ("standard", 64, 1), ("que", 128, 1), ("standard", 128, 1)]
    assert (tmp_path / "output" / "finetune_clism" / "metrics.json").exists()
    err = capsys.readouterr().err
    clamp = f"training.finetune_clism: --max_seq_len 384 is more than the model's {POSITIONS - 2} positions; using {POSITIONS - 2}"
    assert err.splitlines().count(clamp) == 1  # once, not once per run
    # Expected differences (the MLM head unused, W_s/W_e or qa_outputs new) are not reported at all.
    assert "LOAD REPORT" not in err and "warning" not in err and "it/s" not in err


def test_unexpected_weights_are_still_one_warning_line(tiny_mpmr, capsys):
    """An mPMR model as --init of finetune_clism: its extractor is of no use to a CLISM QA head."""
    finetune_clism.load_model(str(tiny_mpmr), "que")
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "checkpoint weights the model does not use (extractor." in warnings[0], err
    assert "LOAD REPORT" not in err
