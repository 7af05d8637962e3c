"""pipelines/vocap.py run as a user would: the bundled sample, bad input, reproducibility, errors."""
from __future__ import annotations

import pathlib

import pyarrow.parquet as pq
import pytest
import sentencepiece as spm

from corpora.schemas import ALLOCATION_SCHEMA, ALP_SCHEMA, check_schema
from pipelines import common
from pipelines import vocap as job

OUTPUTS = ("spm.model", "spm.vocab", "alp.parquet", "allocation.parquet", "stats.parquet", "alp_curves.png")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("vocap")
    stats = job.run(["--output", str(out)])
    return out, common.stats_by_lang(stats)


def test_sample_outputs(sample_run):
    out, stats = sample_run
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    assert (out / "alp_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    assert sp.get_piece_size() == job.SAMPLE_VOCAB_SIZE
    assert stats["all"]["allocation/union_pieces"] == job.SAMPLE_VOCAB_SIZE - 5
    assert [sp.id_to_piece(i) for i in range(5)] == ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    assert len((out / "spm.vocab").read_text(encoding="utf-8").splitlines()) == job.SAMPLE_VOCAB_SIZE
    langs = sorted(k for k in stats if k != "all")
    assert len(langs) >= 6 and {"ar", "en", "hi", "th", "zh", "ru"} <= set(langs)
    alp = pq.read_table(out / "alp.parquet")
    check_schema(alp.schema, ALP_SCHEMA, "alp.parquet")
    for lang in langs:
        rows = [r for r in alp.to_pylist() if r["lang"] == lang]
        assert len(rows) == stats[lang]["grid/models"]
    allocation = pq.read_table(out / "allocation.parquet")
    check_schema(allocation.schema, ALLOCATION_SCHEMA, "allocation.parquet")
    rows = allocation.to_pylist()
    assert [r["lang"] for r in rows] == langs
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert all(r["size"] == stats[r["lang"]]["allocation/pieces"] > 0 for r in rows)
    # languages share pieces (digits, punctuation, Latin names), so the sizes sum to at least the union
    assert sum(r["size"] for r in rows) >= job.SAMPLE_VOCAB_SIZE - 5
    # every language's text is covered: few unknown pieces on its own sample (held-out lines included)
    for lang in langs:
        lines = pathlib.Path(job.sample_dir(), f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        ids = [i for line in lines[:20] for i in sp.encode(line)]
        assert ids.count(sp.unk_id()) <= 0.05 * len(ids), lang  # zh: 2.3% (rare Han characters, coverage 0.9995)


def test_hugging_face_tokenizer_folder(sample_run):
    transformers = pytest.importorskip("transformers")
    out, _ = sample_run
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    # transformers 5's XLMRobertaTokenizer(vocab_file=spm.model) silently builds 5 tokens; this folder does not
    tok = transformers.XLMRobertaTokenizerFast.from_pretrained(str(out / "hf_tokenizer"))
    assert len(tok) == sp.get_piece_size() == job.SAMPLE_VOCAB_SIZE
    assert tok.convert_ids_to_tokens(list(range(len(tok)))) == [sp.id_to_piece(i) for i in range(len(tok))]
    assert tok.mask_token_id == 4 and tok.pad_token_id == 1
    assert tok("Bangkok")["input_ids"] == [0, *sp.encode("Bangkok"), 2]


def test_same_seed_same_bytes(sample_run, tmp_path):
    out, _ = sample_run
    job.run(["--output", str(tmp_path)])
    names = OUTPUTS + (("hf_tokenizer/tokenizer.json",) if (out / "hf_tokenizer").exists() else ())
    for name in names:
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name


def test_bad_lines_counted_and_dead_lettered(tmp_path):
    sample = pathlib.Path(job.sample_dir())
    bad = tmp_path / "vi.txt"  # a Latin-1 line, then two empty ones (one only spaces), then the sample
    bad.write_bytes(b"Xin ch\xe0o th\xe9 gi\xef\n\n   \n" + (sample / "vi.txt").read_bytes())
    fr = tmp_path / "fr.txt"
    fr.write_bytes((sample / "fr.txt").read_bytes())
    out = tmp_path / "out"
    stats = common.stats_by_lang(job.run(["--mono", f"vi={bad}", "--mono", f"fr={fr}", "--vocab_size", "400",
                                          "--grid", "100:400:100", "--output", str(out)]))
    assert stats["vi"]["read/not_utf8"] == 1
    assert stats["vi"]["read/empty"] == 2
    assert stats["vi"]["read/sentences"] == stats["vi"]["read/lines"] - 3
    dead = pq.read_table(out / "dead_letter").to_pylist()
    assert [(d["stage"], d["reason"], d["record_id"]) for d in dead] == [("read", "not_utf8", "1")]
    assert spm.SentencePieceProcessor(model_file=str(out / "spm.model")).get_piece_size() == 400


@pytest.mark.parametrize("argv, message", [
    (["--mono", "en=/no/such/file.txt"], "file not found"),
    (["--mono", "en"], "expected LANG=PATH"),
    (["--grid", "100:50:10"], "--grid"),
    (["--vocab_size", "5"], "--vocab_size"),
    (["--heldout", "1.5"], "--heldout"),
])
def test_usage_errors(argv, message, tmp_path):
    with pytest.raises(SystemExit, match=message):
        job.run(argv + ["--output", str(tmp_path)])


def test_tables_load_as_card_configs(sample_run, tmp_path):
    datasets = pytest.importorskip("datasets")
    out, _ = sample_run
    for config, schema, name in (("allocation", ALLOCATION_SCHEMA, "allocation.parquet"), ("alp", ALP_SCHEMA, "alp.parquet")):
        loaded = datasets.load_dataset(str(out), config, cache_dir=str(tmp_path / "cache"))["train"]
        assert loaded.num_rows == pq.read_metadata(out / name).num_rows
        assert loaded.features == datasets.Features.from_arrow_schema(schema)
    assert "license: apache-2.0" in (out / "README.md").read_text()


def test_monolingual_lines_lose_byte_order_marks_and_line_ends(tmp_path):
    # A file saved on Windows, then another part appended with `cat`: neither mark is text.
    mono = tmp_path / "fr.txt"
    mono.write_bytes("\ufeffBonjour le monde\r\n\ufeffSalut\r\n".encode("utf-8"))
    read = job.ReadMonoFn(max_sentences=10, seed=0)
    read.start_bundle()
    [(lang, sentences, characters)] = [out for out in read.process(("fr", [str(mono)])) if isinstance(out, tuple)]
    assert (lang, sentences, characters) == ("fr", ["Bonjour le monde", "Salut"], 21)


def test_a_vocab_size_below_the_smallest_models_ends_in_one_line_with_the_number_in_the_dead_letter(tmp_path):
    # Known only once the models are trained: it ended in a 121-line traceback, three times.
    with pytest.raises(SystemExit, match="--vocab_size is below the pieces the smallest grid models") as error:
        job.run(["--vocab_size", "100", "--output", str(tmp_path)])
    assert "\n" not in str(error.value)
    [dead] = [d for d in pq.read_table(tmp_path / "dead_letter").to_pylist() if d["stage"] == "allocate"]
    assert dead["reason"] == "vocab_size_too_small" and "vocabulary size 100 is below the" in dead["excerpt"]


def test_a_language_left_out_of_the_vocabulary_is_named_with_what_to_change(tmp_path, capsys):
    # zh's characters need more than 300 pieces: it got none, and only a stats row said so.
    job.run(["--grid", "100:300:100", "--vocab_size", "1500", "--output", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "warning: zh: left out of the vocabulary: its characters need more pieces than the grid's largest size; " \
           "raise the end of --grid" in printed
    assert "warning: en" not in printed
