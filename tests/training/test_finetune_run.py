"""`python -m training.finetune` end to end, one run per task, on a tiny random reader: it overfits a
handful of examples written from the bundled English sample and then scores high on those same
examples (decoding, word offsets and labels line up). Also the generic-encoder path (a plain
XLMRobertaModel, a fresh extractor), and that every flag is documented."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from training import finetune
from training.models.mpmr import MPMRForWAE, build_config
from training.tasks.reader import MRCReader, load_reader
from training.tasks.words import split_words
from training.tokenizer import train_tiny_tokenizer

SAMPLE = Path(__file__).resolve().parents[2] / "corpora" / "samples" / "mono" / "en.txt"
PARAGRAPHS = [p for p in SAMPLE.read_text(encoding="utf-8").splitlines() if p.strip()]

# (paragraph index, question, answer): answers are verbatim substrings of the paragraph.
QUESTIONS = [
    (0, "What is the capital and largest city of Portugal?", "Lisbon"),
    (0, "Which country does Portugal border to the north and east?", "Spain"),
    (0, "Where is the second city, Porto?", "at the mouth of the Douro"),
    (1, "Who took the title of king in the 12th century?", "Afonso Henriques"),
    (1, "When did the monarchy fall?", "1910"),
    (1, "Which navigator opened the sea route to India?", "Vasco da Gama"),
    (1, "What ended the Estado Novo dictatorship?", "the Carnation Revolution of 1974"),
    (3, "Who wrote the national epic?", "Luís de Camões"),
]

CONLL = """-DOCSTART- -X- -X- O

Portugal NNP B-NP B-LOC
joined VBD B-VP O
the DT B-NP O
European NNP I-NP B-ORG
Economic NNP I-NP I-ORG
Community NNP I-NP I-ORG
in IN B-PP O
1986 CD B-NP O
. . O O

Luís NNP B-NP B-PER
de NNP I-NP I-PER
Camões NNP I-NP I-PER
wrote VBD B-VP O
the DT B-NP O
national JJ I-NP O
epic NN I-NP O
, , O O
Os NNP B-NP B-MISC
Lusíadas NNP I-NP I-MISC
. . O O

In IN B-PP O
the DT B-NP O
Age NNP I-NP B-MISC
of IN B-PP I-MISC
Discovery NNP B-NP I-MISC
Portuguese JJ B-NP B-MISC
navigators NNS I-NP O
such JJ B-PP O
as IN I-PP O
Vasco NNP B-NP B-PER
da NNP I-NP I-PER
Gama NNP I-NP I-PER
opened VBD B-VP O
the DT B-NP O
sea NN I-NP O
route NN I-NP O
to TO B-PP O
India NNP B-NP B-LOC
. . O O

Porto NNP B-NP B-LOC
is VBZ B-VP O
served VBN I-VP O
by IN B-PP O
Francisco NNP B-NP B-LOC
Sá NNP I-NP I-LOC
Carneiro NNP I-NP I-LOC
Airport NNP I-NP I-LOC
. . O O

The DT B-NP O
Belém NNP I-NP B-LOC
Tower NNP I-NP I-LOC
and CC O O
the DT B-NP O
Jerónimos NNP I-NP B-LOC
Monastery NNP I-NP I-LOC
stand VBP B-VP O
in IN B-PP O
Belém NNP B-NP B-LOC
. . O O
"""

# PAWS-X style: paraphrases (1) and word-swapped non-paraphrases (0) of the sample's sentences.
PAIRS = [
    ("Lisbon is the capital and largest city of Portugal.", "The capital and largest city of Portugal is Lisbon.", 1),
    ("Porto is the second-largest city in Portugal, after Lisbon.", "Lisbon is the second-largest city in Portugal, after Porto.", 0),
    ("The Douro reaches the Atlantic at Porto.", "The Douro flows into the Atlantic at Porto.", 1),
    ("The Tagus is longer than the Ebro.", "The Ebro is longer than the Tagus.", 0),
    ("Fado is sung in the taverns of Alfama.", "In the taverns of Alfama, fado is sung.", 1),
    ("Lisbon replaced Coimbra as the capital in 1255.", "Coimbra replaced Lisbon as the capital in 1255.", 0),
]


def squad_json() -> dict:
    paragraphs = {}
    for n, (p, question, answer) in enumerate(QUESTIONS):
        context = PARAGRAPHS[p]
        start = context.index(answer)
        paragraphs.setdefault(p, {"context": context, "qas": []})["qas"].append(
            {"id": f"q{n}", "question": question, "answers": [{"text": answer, "answer_start": start}]})
    return {"version": "1.1", "data": [{"title": "Portugal", "paragraphs": list(paragraphs.values())}]}


def pairs_tsv() -> str:
    return "id\tsentence1\tsentence2\tlabel\n" + "".join(
        f"{n}\t{a}\t{b}\t{label}\n" for n, (a, b, label) in enumerate(PAIRS, 1))


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("tasks")
    (d / "squad.json").write_text(json.dumps(squad_json(), ensure_ascii=False), encoding="utf-8")
    (d / "train.conll").write_text(CONLL, encoding="utf-8")
    (d / "pawsx.tsv").write_text(pairs_tsv(), encoding="utf-8")
    return {"squad": d / "squad.json", "ner": d / "train.conll", "pair": d / "pawsx.tsv"}


def tiny_tokenizer():
    from training.tasks import conll, pair_cls
    texts = PARAGRAPHS + [q for _, q, _ in QUESTIONS] + [s for a, b, _ in PAIRS for s in (a, b)]
    texts += list(conll.LABEL_DESCRIPTIONS.values()) + list(pair_cls.DESCRIPTIONS.values())
    return train_tiny_tokenizer([[w for w, _, _ in split_words(t)] for t in texts], 600)


@pytest.fixture(scope="session")
def tiny_mpmr(tmp_path_factory) -> Path:
    """A random MPMRForWAE of run.py's tiny shape, saved as `training.run` saves its final model."""
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = MPMRForWAE(build_config(tokenizer, hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128,
                                    max_seq_len=256, extractor_hidden_size=128, dropout=0.0))
    path = tmp_path_factory.mktemp("tiny_mpmr")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_xlmr(tmp_path_factory) -> Path:
    """A random plain encoder (no extractor): what `--init xlm-roberta-base` looks like, locally."""
    from transformers import XLMRobertaConfig, XLMRobertaModel
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=128, max_position_embeddings=258, pad_token_id=tokenizer.pad_token_id,
                              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    path = tmp_path_factory.mktemp("tiny_xlmr")
    XLMRobertaModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(autouse=True)
def one_thread():
    # One intra-op thread: on a small shared CPU, torch's default thread pool oversubscribes the cores
    # and these tiny runs become ten times slower. Restored after each test.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def run(task: str, init: Path, train: Path, out: Path, *extra: str) -> dict:
    finetune.main(["--task", task, "--init", str(init), "--train", str(train), "--eval", str(train),
                   "--output", str(out), "--lr", "2e-3", "--warmup_ratio", "0", "--log_every", "5", "--device", "cpu",
                   *extra])
    return json.loads((out / "metrics.json").read_text())


def test_squad_overfits_and_extracts_the_answers_through_sliding_windows(tiny_mpmr, data, tmp_path):
    # max_seq_len 64: every context needs several windows, so window offsets must map back right.
    result = run("squad", tiny_mpmr, data["squad"], tmp_path, "--max_steps", "200", "--batch_size", "8",
                 "--max_seq_len", "64", "--max_query_tokens", "24", "--doc_stride", "16")
    print(f"squad: {result['metrics']} in {result['train_seconds']:.1f}s, {result['train_rows']} rows")
    assert result["train_rows"] > len(QUESTIONS)  # the windows
    losses = [h["loss"] for h in result["losses"]]
    assert losses[-1] < 0.1 * losses[0]
    assert result["metrics"]["f1"] >= 80.0
    predictions = json.loads((tmp_path / "predictions.json").read_text())
    assert set(predictions) == {f"q{n}" for n in range(len(QUESTIONS))}
    right = [n for n, (_, _, answer) in enumerate(QUESTIONS) if predictions[f"q{n}"] == answer]
    assert len(right) >= 5, predictions  # verbatim context text, not re-joined words
    assert isinstance(load_reader(str(tmp_path / "final")), MPMRForWAE)  # the extractor is kept

    # Evaluation only (--max_steps 0) of the saved model on several files, one of them gzipped as
    # XQuAD is distributed: each file scores as the run's own evaluation did, the mean is theirs.
    import gzip
    zipped = tmp_path / "again.json.gz"
    zipped.write_bytes(gzip.compress(data["squad"].read_bytes()))
    out = tmp_path / "eval_only"
    finetune.main(["--task", "squad", "--init", str(tmp_path / "final"), "--train", str(data["squad"]),
                   "--eval", str(data["squad"]), str(zipped), "--max_steps", "0", "--output", str(out),
                   "--max_seq_len", "64", "--max_query_tokens", "24", "--doc_stride", "16", "--device", "cpu",
                   "--no_progress"])
    again = json.loads((out / "metrics.json").read_text())
    assert again["steps"] == 0 and not (out / "final").exists()
    assert list(again["metrics_by_eval"]) == [data["squad"].stem, "again"]
    for metrics in again["metrics_by_eval"].values():
        assert metrics == pytest.approx(result["metrics"])
    assert again["metrics"] == pytest.approx(result["metrics"])
    assert json.loads((out / "predictions" / "again.json").read_text()) == predictions

    # MLQA's own metric, its language read from MLQA's file name: on these English answers it gives
    # v1.1's scores; a file that does not name its language, without --eval_language, is one line.
    mlqa_named = tmp_path / "test-context-en-question-en.json"
    mlqa_named.write_bytes(data["squad"].read_bytes())
    eval_only = ["--task", "squad", "--init", str(tmp_path / "final"), "--train", str(data["squad"]), "--max_steps", "0",
                 "--max_seq_len", "64", "--max_query_tokens", "24", "--doc_stride", "16", "--device", "cpu",
                 "--no_progress", "--qa_metric", "mlqa"]
    finetune.main([*eval_only, "--eval", str(mlqa_named), "--output", str(tmp_path / "mlqa")])
    assert json.loads((tmp_path / "mlqa" / "metrics.json").read_text())["metrics"] == pytest.approx(result["metrics"])
    with pytest.raises(SystemExit, match=r"no context language in the file name .* give --eval_language"):
        finetune.main([*eval_only, "--eval", str(data["squad"]), "--output", str(tmp_path / "mlqa2")])


def test_ner_overfits_and_decodes_typed_entities(tiny_mpmr, data, tmp_path):
    result = run("ner", tiny_mpmr, data["ner"], tmp_path, "--max_steps", "200", "--batch_size", "20", "--eval_every", "50")
    print(f"ner: {result['metrics']} in {result['train_seconds']:.1f}s")
    assert [e["step"] for e in result["evaluations"]] == [50, 100, 150, 200]
    assert result["evaluations"][-1]["f1"] == result["metrics"]["f1"]
    assert result["train_rows"] == 5 * 4  # five sentences x PER/LOC/ORG/MISC
    assert result["metrics"]["gold"] == 13
    assert result["metrics"]["f1"] >= 90.0
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert [4, 6, "PER"] in records[2]["predicted"] or [4, 6, "PER"] not in records[2]["gold"]


def test_pair_overfits_from_the_cls_cell_and_prints_rationales(tiny_mpmr, data, tmp_path, capsys):
    # The two label rows of a pair differ only in their query: the [CLS] logits sit at log 2 for
    # ~100 steps before the tiny model finds the query-context interaction, then separate.
    result = run("pair", tiny_mpmr, data["pair"], tmp_path, "--max_steps", "200", "--batch_size", "12", "--lr", "1e-3")
    print(f"pair: {result['metrics']} in {result['train_seconds']:.1f}s")
    assert result["train_rows"] == len(PAIRS) * 2
    assert result["metrics"]["accuracy"] == 100.0
    out = capsys.readouterr().out
    assert "rationale:" in out
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert [r["predicted"] for r in records] == [str(label) for _, _, label in PAIRS]
    for r, (a, b, _) in zip(records, PAIRS):
        assert r["rationale"] and all(0.0 <= x["prob"] <= 1.0 for x in r["rationale"])


def test_pair_rationale_template_extracts_a_span_of_each_sentence(tiny_mpmr, data, tmp_path):
    result = run("pair", tiny_mpmr, data["pair"], tmp_path, "--max_steps", "60", "--batch_size", "12",
                 "--pair_template", "rationale")
    assert result["metrics"]["accuracy"] >= 5 / 6 * 100
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    for r, (a, b, _) in zip(records, PAIRS):
        first, second = r["rationale"]  # the paper's two passes: sentence 2 as context, then sentence 1
        assert first["text"] in b and second["text"] in a


def test_generic_encoder_gets_a_fresh_extractor_and_round_trips(tiny_xlmr, data, tmp_path):
    result = run("squad", tiny_xlmr, data["squad"], tmp_path, "--max_steps", "200", "--batch_size", "8",
                 "--max_seq_len", "64", "--max_query_tokens", "24", "--doc_stride", "16", "--extractor_hidden_size", "96")
    print(f"generic encoder squad: {result['metrics']}")
    assert result["metrics"]["f1"] >= 80.0
    final = tmp_path / "final"
    reader = load_reader(str(final))
    assert isinstance(reader, MRCReader) and reader.extractor.ffn[0].out_features == 96
    # The saved folder is also a plain encoder checkpoint for anyone who wants only the encoder.
    from transformers import AutoModel
    assert type(AutoModel.from_pretrained(final)).__name__ == "XLMRobertaModel"
    ids = torch.tensor([[0, 10, 11, 2, 2, 12, 13, 14, 2]])
    again = load_reader(str(final)).eval()
    with torch.no_grad():
        assert torch.equal(reader.eval().span_logits(ids, torch.ones_like(ids)), again.span_logits(ids, torch.ones_like(ids)))


def test_every_flag_is_documented():
    parser = finetune.build_parser()
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.dest
    names = {a.dest for a in parser._actions}
    assert {"task", "init", "train", "eval", "output", "max_steps", "epochs", "lr", "batch_size", "seed",
            "max_train_examples", "device", "max_seq_len", "max_query_tokens"} <= names


def test_a_missing_file_is_one_clear_line(tiny_mpmr, tmp_path):
    with pytest.raises(SystemExit, match="nope.json: file not found"):
        finetune.main(["--task", "squad", "--init", str(tiny_mpmr), "--train", str(tmp_path / "nope.json"),
                       "--eval", str(tmp_path / "nope.json"), "--output", str(tmp_path / "out")])


def test_an_init_that_is_not_a_model_is_one_clear_line(data, tmp_path, monkeypatch):
    # A folder that is not there, named as a user names one (runs/ exists): not Hugging Face's
    # "Repo id must be in the form 'repo_name' or 'namespace/repo_name'".
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    for init in (str(tmp_path / "no_model"), "runs/nonexist"):
        with pytest.raises(SystemExit) as stop:
            finetune.main(["--task", "pair", "--init", init, "--train", str(data["pair"]), "--eval", str(data["pair"]),
                           "--output", str(tmp_path / "out")])
        assert str(stop.value) == (f"training.finetune: --init {init}: no such folder (a saved model is a folder "
                                   "holding config.json)")
