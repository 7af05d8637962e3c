"""training/finetune_clism.py: the `<s> Q [QUE] </s></s> P </s>` input and its answer span checked against the
words, a tiny model learning a small SQuAD-format file with the [QUE] head, and the few-shot protocol
command end to end (both heads, mean and spread printed)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from training import finetune_clism
from training.data.clism import QUE_TOKEN, add_que_token
from training.data.word_pieces import WordPieces
from training.finetune_clism import QACollator, best_span
from training.recipes.clism import CONFIGS, SPEC
from training.tasks import squad
from training.tasks.words import split_words
from training.tokenizer import train_tiny_tokenizer

PEOPLE = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Marie Curie", "Nikola Tesla", "Rosalind Franklin",
          "Emmy Noether", "Srinivasa Ramanujan", "Katherine Johnson", "Tim Berners-Lee", "Hedy Lamarr", "Carl Gauss"]
PLACES = ["London", "Manchester", "New York", "Paris", "Belgrade", "Cambridge", "Erlangen", "Madras",
          "Virginia", "Geneva", "Vienna", "Brunswick"]
YEARS = ["1843", "1936", "1952", "1898", "1891", "1952", "1915", "1913", "1962", "1989", "1941", "1801"]


def squad_file(path: Path, n: int = 12) -> Path:
    """n questions, one paragraph each, answers at their true character offsets."""
    paragraphs = []
    for k in range(n):
        person, place, year = PEOPLE[k % len(PEOPLE)], PLACES[k % len(PLACES)], YEARS[k % len(YEARS)]
        context = (f"In {year}, {person} published a famous paper in {place}. "
                   f"The work made {person} known far beyond {place}, and it is still read today.")
        kind = k % 2
        question = f"Where did {person} publish a famous paper?" if kind == 0 else f"When did {person} publish a famous paper?"
        answer = place if kind == 0 else year
        paragraphs.append({"context": context, "qas": [{"id": f"q{k}", "question": question,
                                                         "answers": [{"text": answer, "answer_start": context.index(answer)}]}]})
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}))
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("squad")
    squad_file(folder / "train.json", 12)
    squad_file(folder / "eval.json", 12)
    return folder


@pytest.fixture(scope="module")
def tiny_clism(data, tmp_path_factory) -> Path:
    """A saved tiny CLISM model (random weights) with [QUE] in its tokenizer, as training.run leaves it."""
    examples = squad.read_squad(data / "train.json")
    sentences = [[w for w, _, _ in split_words(t)] for ex in examples for t in (ex.question, ex.context)]
    tokenizer = add_que_token(train_tiny_tokenizer(sentences * 4, 300))
    torch.manual_seed(0)
    model = SPEC.build_random(CONFIGS["tiny"].replace(max_seq_len=384), tokenizer)
    folder = tmp_path_factory.mktemp("clism") / "final"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_que_follows_the_question_and_answers_match_the_words(data, tiny_clism):
    model, tokenizer = finetune_clism.load_model(str(tiny_clism), "que")
    # The pre-trained W_s and W_e are the ones the [QUE] head starts from.
    from training.models.clism import CLISMForPreTraining
    pretrained = CLISMForPreTraining.from_pretrained(tiny_clism)
    assert torch.equal(model.w_s.weight, pretrained.w_s.weight) and torch.equal(model.w_e.weight, pretrained.w_e.weight)
    examples = squad.read_squad(data / "train.json")
    rows, _ = squad.to_rows(examples, tokenizer, 64, 383, 128, train=True)
    batch = QACollator(tokenizer, "que", 64, 384)(rows, train=True)
    que = tokenizer.convert_tokens_to_ids(QUE_TOKEN)
    for b, (row, ex) in enumerate(zip(rows, examples)):
        ids = batch["input_ids"][b].tolist()
        q = [t for p in WordPieces(tokenizer)([row["query_words"]], [row["query_spaces"]])[0] for t in p]
        p = int(batch["que_position"][b])
        assert ids[: p + 3] == [tokenizer.cls_token_id, *q, que, tokenizer.sep_token_id, tokenizer.sep_token_id]
        assert ids.count(que) == 1
        a, e = int(batch["answer_start"][b]), int(batch["answer_end"][b])
        words = batch["context_word"][b]
        assert batch["passage_mask"][b, a] and batch["passage_mask"][b, e]
        gold = squad.answer_word_span(squad.context_words(ex.context), ex.answers[0])
        assert (int(words[a]), int(words[e])) == gold
        assert squad.predict_text(ex, int(words[a]), int(words[e])) == ex.answers[0]["text"]
        assert int(words[a - 1]) != int(words[a]) or a == p + 3  # the first subword of the first word
    standard = QACollator(tokenizer, "standard", 64, 384)(rows[:2], train=True)
    assert que not in standard["input_ids"].flatten().tolist()


def test_best_span_respects_order_length_and_passage():
    start = torch.tensor([9.0, 1.0, 0.0, 5.0, 0.0])
    end = torch.tensor([9.0, 0.0, 4.0, 0.0, 3.0])
    words = torch.tensor([-1, 0, 1, 2, 3])  # position 0 is not passage
    assert best_span(start, end, words, 30) == (5.0 + 3.0, 2, 3)  # start 3, end 4 (end 2 is before it)
    assert best_span(start, end, words, 1) == (5.0, 2, 2)  # one subword at most


def test_evaluation_in_length_order_equals_scoring_each_window_alone(data, tiny_clism):
    """evaluate() batches windows shortest first; the predictions must be those of scoring every window on its
    own in input order (a slip in mapping a batch back to its windows would give another question's span)."""
    model, tokenizer = finetune_clism.load_model(str(tiny_clism), "que")
    args = finetune_clism.build_parser().parse_args(["--init", str(tiny_clism), "--max_seq_len", "64",
                                                     "--doc_stride", "16", "--eval_batch_size", "3"])
    base = squad.read_squad(data / "eval.json")
    # Contexts of 1 to 6 repeats: windows of very different lengths, the long ones cut into several windows.
    examples = [squad.SquadExample(ex.id, ex.question, " ".join([ex.context] * (1 + k % 6)), ex.answers)
                for k, ex in enumerate(base)]
    collator = QACollator(tokenizer, "que", args.max_query_tokens, args.max_seq_len)
    off = torch.autocast("cpu", enabled=False)
    _, predictions = finetune_clism.evaluate(model, collator, examples, tokenizer, args, "que", torch.device("cpu"), off)

    rows, wins = squad.to_rows(examples, tokenizer, args.max_query_tokens, args.max_seq_len - 1, args.doc_stride,
                                train=False)
    assert len(rows) > len(examples) and len({len(r["context_words"]) for r in rows}) > 3
    best = {}
    with torch.no_grad():
        for row, w in zip(rows, wins):
            batch = collator([row])
            start, end = model.span_logits(batch["input_ids"], batch["attention_mask"], batch["passage_mask"],
                                           batch["que_position"])
            found = best_span(start[0], end[0], batch["context_word"][0], args.max_answer_tokens)
            if found and (w.example not in best or found[0] > best[w.example][0]):
                best[w.example] = (found[0], w.first + found[1], w.first + found[2])
    expected = {ex.id: squad.predict_text(ex, *best[n][1:]) for n, ex in enumerate(examples)}
    assert predictions == expected


@pytest.mark.slow  # ~90 s on 2 cores: a few-shot sweep to convergence
def test_tiny_model_learns_a_small_squad_file_with_the_que_head(data, tiny_clism, tmp_path, capsys):
    result = finetune_clism.main(["--init", str(tiny_clism), "--train", str(data / "train.json"),
                                  "--eval", str(data / "train.json"), "--output", str(tmp_path),
                                  "--max_steps", "60", "--batch_size", "12", "--lr", "3e-3", "--warmup_ratio", "0",
                                  "--log_every", "1"])
    run = result["runs"][0]
    print(capsys.readouterr().out)
    assert run["head"] == "que" and run["losses"][-1]["loss"] < 0.1 * run["losses"][0]["loss"]
    assert run["f1"] >= 90.0, run["f1"]
    saved = json.loads((tmp_path / "que" / "predictions.json").read_text())
    assert set(saved) == {f"q{k}" for k in range(12)}
    assert (tmp_path / "que" / "final" / "model.safetensors").exists()


def test_few_shot_command_end_to_end_with_both_heads(data, tiny_clism, tmp_path, capsys):
    finetune_clism.main(["--init", str(tiny_clism), "--train", str(data / "train.json"), "--eval", str(data / "eval.json"),
                         "--output", str(tmp_path), "--few_shot", "4,8", "--seeds", "2", "--max_steps", "3",
                         "--head", "que", "standard", "--batch_size", "4"])
    printed = capsys.readouterr().out
    assert "F1 mean ± sd" in printed and "EM mean ± sd" in printed
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    summary = {(s["head"], s["examples"]): s for s in metrics["summary"]}
    assert set(summary) == {("que", 4), ("que", 8), ("standard", 4), ("standard", 8)}
    for s in summary.values():
        assert s["seeds"] == 2 and s["f1"]["min"] <= s["f1"]["mean"] <= s["f1"]["max"]
        assert f"{s['f1']['mean']:6.2f} ± {s['f1']['std']:5.2f}" in printed
    runs = metrics["runs"]
    assert len(runs) == 8 and all(r["steps"] == 3 and 0 <= r["f1"] <= 100 for r in runs)
    assert {r["train_examples"] for r in runs} == {4, 8}


def test_several_eval_files_are_each_scored_and_averaged(data, tiny_clism, tmp_path, capsys):
    """XQuAD's languages in one run: each file's F1/EM, their mean as the run's, a table per file."""
    second = squad_file(tmp_path / "eval.de.json", 6)
    result = finetune_clism.main(["--init", str(tiny_clism), "--train", str(data / "train.json"),
                                  "--eval", str(data / "eval.json"), str(second), "--output", str(tmp_path / "out"),
                                  "--few_shot", "4", "--seeds", "2", "--max_steps", "2", "--head", "standard",
                                  "--batch_size", "4"])
    printed = capsys.readouterr().out
    for run in result["runs"]:
        assert set(run["by_eval"]) == {"eval", "eval.de"}
        for key in ("f1", "exact_match"):
            assert run[key] == pytest.approx((run["by_eval"]["eval"][key] + run["by_eval"]["eval.de"][key]) / 2)
    summary = result["summary"][0]
    assert summary["by_eval"]["eval.de"]["f1"]["mean"] == pytest.approx(
        sum(r["by_eval"]["eval.de"]["f1"] for r in result["runs"]) / 2)
    assert "eval.de" in printed and f"{summary['by_eval']['eval.de']['f1']['mean']:.2f}" in printed

    full = finetune_clism.main(["--init", str(tiny_clism), "--train", str(data / "train.json"),
                                "--eval", str(data / "eval.json"), str(second), "--output", str(tmp_path / "full"),
                                "--max_steps", "1", "--head", "standard", "--batch_size", "4"])
    assert set(full["runs"][0]["by_eval"]) == {"eval", "eval.de"}
    saved = json.loads((tmp_path / "full" / "standard" / "predictions" / "eval.de.json").read_text())
    assert set(saved) == {f"q{k}" for k in range(6)}


def test_plain_xlmr_init_gets_a_que_row_and_too_many_shots_is_one_line(data, tmp_path):
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel
    examples = squad.read_squad(data / "train.json")
    plain = train_tiny_tokenizer([[w for w, _, _ in split_words(ex.context)] for ex in examples] * 4, 300)
    XLMRobertaModel(XLMRobertaConfig(vocab_size=len(plain), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=400, pad_token_id=1)).save_pretrained(tmp_path / "x")
    plain.save_pretrained(tmp_path / "x")
    model, tok = finetune_clism.load_model(str(tmp_path / "x"), "que")
    assert len(tok) == len(AutoTokenizer.from_pretrained(tmp_path / "x")) + 1
    assert model.roberta.embeddings.word_embeddings.weight.shape[0] == len(tok)
    with pytest.raises(SystemExit) as stop:
        finetune_clism.main(["--init", str(tmp_path / "x"), "--train", str(data / "train.json"), "--eval",
                             str(data / "eval.json"), "--output", str(tmp_path / "o"), "--few_shot", "64"])
    assert str(stop.value.code) == f"training.finetune_clism: --few_shot 64: --train {data / 'train.json'} has only 12 examples"


def test_every_flag_is_documented(capsys):
    parser = finetune_clism.build_parser()
    assert all(action.help for action in parser._actions)
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    text = capsys.readouterr().out
    for flag in ("--few_shot", "--seeds", "--head", "--max_steps", "--max_answer_tokens", "--doc_stride"):
        assert flag in text
