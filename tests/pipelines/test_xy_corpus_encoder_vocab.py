"""pipelines/xy_corpus.py with an encoder's own tokenizer folder as --vocab (DirectRunner, real Parquet,
real NTREX-128 lines): the rows are that tokenizer's ids, the tokenizer goes beside them, and a folder
whose special ids the rows cannot use is one line."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from conftest import SHARED_DATA
from xylent_setup import e5_small, ntrex_lines, tiny_encoder_folder

from pipelines import xy_corpus as job


def write_lines(folder, lang, start, stop):
    path = folder / f"{lang}.{start}.txt"
    path.write_text("\n".join(ntrex_lines(SHARED_DATA, lang, start, stop)) + "\n", encoding="utf-8")
    return path


def run_job(vocab, tmp_path, start=0, stop=40):
    text = {lang: write_lines(tmp_path, lang, start, stop) for lang in ("de", "fr", "el", "ru")}
    mono = {lang: write_lines(tmp_path, lang, stop, stop + 30) for lang in ("de", "fr", "el", "ru")}
    out = tmp_path / "xy"
    job.run(["--runner", "DirectRunner", "--vocab", str(vocab), "--output", str(out), "--max_len", "256",
             "--bitext", f"de-fr={text['de']},{text['fr']}", "--bitext", f"el-ru={text['el']},{text['ru']}",
             *(f"--mono={lang}={path}" for lang, path in mono.items()), "--no_progress"])
    return out, text, mono


def rows(out, table):
    return [r for f in sorted((out / table).glob("train-*.parquet")) for r in pq.read_table(f).to_pylist()]


def check_rows_are_the_tokenizers_ids(folder, out, text, mono):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)

    def ids(line):
        return tokenizer(line, add_special_tokens=False)["input_ids"]

    lines = {lang: path.read_text(encoding="utf-8").split("\n") for lang, path in text.items()}
    trtd = rows(out, "trtd")
    assert len(trtd) > 40
    for row in trtd:
        first_lang = row["id"].split("/")[0].split("-")[0]  # de-fr/de.0.txt:12#0: line 12 of the de-fr bitext
        number = int(row["id"].rsplit(":", 1)[1].split("#")[0])
        x_lang, y_lang = (first_lang, {"de": "fr", "el": "ru"}[first_lang])
        x, y = ids(lines[x_lang][number - 1]), ids(lines[y_lang][number - 1])
        if row["flipped"]:
            x, y = y, x
        assert row["input_ids"] == [0, *x, 2, *y, 2]
    # MRTD: each language's rows, in id order, are its lines' ids, each closed by </s>, after <s>
    for lang, path in mono.items():
        packed = sorted((r for r in rows(out, "mrtd") if r["lang"] == lang), key=lambda r: r["id"])
        want = [i for line in path.read_text(encoding="utf-8").split("\n") if line.strip() for i in [*ids(line.strip()), 2]]
        assert all(r["input_ids"][0] == 0 for r in packed)
        assert [i for r in packed for i in r["input_ids"][1:]] == want
    # the vocabulary beside the rows, in the manifest; no spm.model to mistake for it
    assert (out / "tokenizer" / "tokenizer.json").read_bytes() == (folder / "tokenizer.json").read_bytes()
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert "tokenizer/tokenizer.json" in files and "spm.model" not in files and not (out / "spm.model").exists()
    assert "own tokenizer" in (out / "README.md").read_text()


def test_rows_are_a_tiny_encoders_tokenizer_ids(tmp_path):
    folder = tiny_encoder_folder(tmp_path / "encoder", SHARED_DATA)
    check_rows_are_the_tokenizers_ids(folder, *run_job(folder, tmp_path))


def test_rows_are_e5_smalls_ids(tmp_path):
    folder = e5_small()
    out, text, mono = run_job(folder, tmp_path, 1000, 1025)
    check_rows_are_the_tokenizers_ids(folder, out, text, mono)
    assert max(i for r in rows(out, "mrtd") for i in r["input_ids"]) > 5000  # XLM-R ids, not a vocap model's


def test_a_tokenizer_whose_specials_the_rows_cannot_use_is_one_line(tmp_path):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    folder = tmp_path / "bert_like"
    folder.mkdir()
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3, "<mask>": 4, "Hallo": 5}
    Tokenizer(WordLevel(vocab, unk_token="<unk>")).save(str(folder / "tokenizer.json"))
    with pytest.raises(SystemExit, match=r"--vocab .*bert_like: its special ids are <s>=1 <pad>=3; the rows need "
                                         r"<s>=0 <pad>=1 </s>=2"):
        run_job(folder, tmp_path)


def test_a_folder_whose_tokenizer_json_does_not_load_is_one_line(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "tokenizer.json").write_text('{"version": "1.0", "model": ', encoding="utf-8")  # cut short
    with pytest.raises(SystemExit, match=r"--vocab .*broken: tokenizer.json does not load as a tokenizer \("):
        run_job(folder, tmp_path)
