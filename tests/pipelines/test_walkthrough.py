"""examples/: the end-to-end walkthrough (sample dumps -> wiki_mrc -> mPMR tiny -> QA) and its SQuAD converter."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def load_converter():
    spec = importlib.util.spec_from_file_location("mrc_to_squad", EXAMPLES / "mrc_to_squad.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_word_spans_become_squad_character_offsets():
    words = ["Paris", "is", "the", "capital", ";", "Paris", "Saint-Germain", "plays", "in", "Île-de-France"]
    context, answers = load_converter().squad_answers(words, [{"start": 0, "end": 0}, {"start": 5, "end": 5},
                                                              {"start": 9, "end": 9}, {"start": 5, "end": 6}])
    assert context == " ".join(words)
    # "Paris is the capital ; " is 23 characters; "Paris Saint-Germain plays in " 29 more.
    assert answers == [{"text": "Paris", "answer_start": 0}, {"text": "Paris", "answer_start": 23},
                       {"text": "Île-de-France", "answer_start": 52}, {"text": "Paris Saint-Germain", "answer_start": 23}]
    for a in answers:
        assert context[a["answer_start"]:a["answer_start"] + len(a["text"])] == a["text"]


def test_squad_context_keeps_the_rows_spacing():
    words, spaces = ["東京", "都", "は", "Tokyo", "、", "首都", "。"], [False] * 7
    context, answers = load_converter().squad_answers(words, [{"start": 0, "end": 1}, {"start": 3, "end": 3}], spaces)
    assert context == "東京都はTokyo、首都。"
    assert answers == [{"text": "東京都", "answer_start": 0}, {"text": "Tokyo", "answer_start": 4}]
    words, spaces = ["Paris", ",", "the", "capital"], [False, True, True, False]
    context, answers = load_converter().squad_answers(words, [{"start": 2, "end": 3}], spaces)
    assert context == "Paris, the capital" and answers == [{"text": "the capital", "answer_start": 7}]


@pytest.mark.slow
def test_walkthrough_runs_end_to_end(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    work = tmp_path / "walk"
    env = {**os.environ, "PRETRAIN_STEPS": "20", "FINETUNE_STEPS": "10", "OMP_NUM_THREADS": "1",
           "FINETUNE_ARGS": "--max_seq_len 192 --batch_size 4 --max_eval_examples 10"}
    result = subprocess.run(["bash", str(EXAMPLES / "walkthrough.sh"), str(work)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert sorted(p.name for p in (work / "wiki_mrc" / "data").iterdir())[0] == "train-00000-of-00004.parquet"
    assert (work / "pretrain" / "final" / "model.safetensors").exists()
    train = json.loads((work / "squad" / "train.json").read_text())
    evaluation = json.loads((work / "squad" / "eval.json").read_text())
    titles = [{a["title"] for a in split["data"]} for split in (train, evaluation)]
    assert titles[0] and titles[1] and not titles[0] & titles[1], "the QA split is by entity"
    metrics = json.loads((work / "qa" / "metrics.json").read_text())
    assert metrics["steps"] == 10 and metrics["train_examples"] == len(train["data"])
    assert metrics["eval_examples"] == min(10, len(evaluation["data"]))
    assert 0 <= metrics["metrics"]["exact_match"] <= metrics["metrics"]["f1"] <= 100
    assert (work / "qa" / "predictions.json").exists()
    assert "QA on" in result.stdout and "exact match" in result.stdout
