"""pipelines/xy_corpus.py run as a user would (DirectRunner, real Parquet) on the bundled samples,
with a vocabulary from the vocap job; every rule is checked on the output files."""
from __future__ import annotations

import collections
import pathlib

import pyarrow.parquet as pq
import pytest
import sentencepiece as spm

from corpora.schemas import (DEAD_LETTER_SCHEMA, XY_MRTD_SCHEMA, XY_PAIR_PROBS_SCHEMA, XY_TRTD_SCHEMA,
                             check_schema)
from corpora.vocap import BOS_ID, EOS_ID, PAD_ID
from pipelines import common
from pipelines import vocap as vocap_job
from pipelines import xy_corpus as job

from job_files import assert_rows_in_mixed_order

MONO = pathlib.Path(job.samples_dir("mono"))
PARALLEL = pathlib.Path(job.samples_dir("parallel"))
BITEXT = pathlib.Path(job.samples_dir("bitext"))


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> pathlib.Path:
    """The vocap job on its bundled sample (a few seconds): the vocabulary a user would have."""
    out = tmp_path_factory.mktemp("vocap")
    vocap_job.run(["--output", str(out)])
    return out / "spm.model"


def run(out: pathlib.Path, vocab: pathlib.Path, *args: str) -> dict[str, dict[str, int]]:
    return common.stats_by_lang(job.run(["--runner", "DirectRunner", "--vocab", str(vocab), "--output", str(out), *args]))


def rows(out: pathlib.Path, split: str) -> list[dict]:
    files = sorted((out / split).glob("train-*.parquet"))
    assert [f.name for f in files] == [f"train-{i:05d}-of-00004.parquet" for i in range(4)]
    schema = XY_MRTD_SCHEMA if split == "mrtd" else XY_TRTD_SCHEMA
    for f in files:
        check_schema(pq.read_schema(f), schema, str(f))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory, vocab):
    out = tmp_path_factory.mktemp("xy")
    return out, run(out, vocab)


def test_sample_outputs(sample_run, vocab):
    out, stats = sample_run
    for name in ("pair_probs.parquet", "pair_probs.png", "spm.model", "stats.parquet"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "pair_probs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "spm.model").read_bytes() == vocab.read_bytes()
    assert {k for k in stats if "-" not in k and k != "all"} == {"ar", "en", "fr", "hi", "ru", "th", "vi", "zh"}
    assert {k for k in stats if "-" in k} == {"ar-en", "en-fr", "en-hi", "en-vi", "ar-fr", "hi-vi", "ar-hi"}


def test_mrtd_packs_every_token_of_every_line(sample_run, vocab):
    out, stats = sample_run
    sp = spm.SentencePieceProcessor(model_file=str(vocab))
    found = rows(out, "mrtd")
    assert len({r["id"] for r in found}) == len(found)
    by_file = collections.defaultdict(list)
    for r in found:
        assert 1 < len(r["input_ids"]) <= 512 and r["input_ids"][0] == BOS_ID
        assert PAD_ID not in r["input_ids"]
        by_file[r["lang"]].append(r)
    for lang, sequences in by_file.items():
        sequences.sort(key=lambda r: r["id"])  # lang/file/group/k, zero-padded: the packing order
        # one group per sample file; whole lines: every row but a piece of an overlong line ends one
        assert all(r["input_ids"][-1] == EOS_ID or len(r["input_ids"]) == 512 for r in sequences), lang
        stream = [t for r in sequences for t in r["input_ids"][1:]]
        lines = [line.strip() for line in (MONO / f"{lang}.txt").read_text(encoding="utf-8").splitlines()]
        expected = [t for line in lines if line for t in (*sp.encode(line), EOS_ID)]
        assert stream == expected, lang
        assert stats[lang]["mrtd/sequences"] == len(sequences)
        assert stats[lang]["mrtd/tokens"] == sum(len(r["input_ids"]) for r in sequences)


def sample_pairs() -> dict[str, tuple[str, str, str, str]]:
    """pair id prefix -> (x_lang, y_lang, x, y) of every bundled bitext line, read independently of the job."""
    def lines(path):
        return path.read_text(encoding="utf-8").splitlines()

    pairs = {}
    for key, (x_lang, y_lang), texts in [
        ("en-fr/en-fr.en", ("en", "fr"), zip(lines(PARALLEL / "en-fr.en"), lines(PARALLEL / "en-fr.fr"))),
        ("en-ar/en-ar.tsv", ("en", "ar"), (line.split("\t") for line in lines(PARALLEL / "en-ar.tsv"))),
        ("en-hi/en-hi.txt", ("en", "hi"), (line.split(" ||| ") for line in lines(PARALLEL / "en-hi.txt"))),
        ("en-vi/en-vi.tsv", ("en", "vi"), (line.split("\t") for line in lines(PARALLEL / "en-vi.tsv"))),
        ("fr-ar/fr-ar.fr", ("fr", "ar"), zip(lines(BITEXT / "fr-ar.fr"), lines(BITEXT / "fr-ar.ar"))),
        ("vi-hi/vi-hi.tsv", ("vi", "hi"), (line.split("\t") for line in lines(BITEXT / "vi-hi.tsv"))),
        ("ar-hi/ar-hi.txt", ("ar", "hi"), (line.split(" ||| ") for line in lines(BITEXT / "ar-hi.txt"))),
    ]:
        for number, (x, y) in enumerate(texts, 1):
            pairs[f"{key}:{number}"] = (x_lang, y_lang, x.strip(), y.strip())
    return pairs


def test_trtd_rows_are_flipped_pairs_of_the_bitext(sample_run, vocab):
    out, stats = sample_run
    sp = spm.SentencePieceProcessor(model_file=str(vocab))
    source = sample_pairs()
    found = rows(out, "trtd")
    assert len({r["id"] for r in found}) == len(found)
    for r in found:
        ids, n = r["input_ids"], r["src_len"]
        assert len(ids) <= 512 and ids[0] == BOS_ID and ids[n - 1] == EOS_ID and ids[-1] == EOS_ID
        assert ids.count(EOS_ID) == 2 and ids.count(BOS_ID) == 1
        x_lang, y_lang, x, y = source[r["id"].rsplit("#", 1)[0]]
        first, second = (y, x) if r["flipped"] else (x, y)
        assert (r["src_lang"], r["tgt_lang"]) == ((y_lang, x_lang) if r["flipped"] else (x_lang, y_lang))
        assert ids[1:n - 1] == sp.encode(first) and ids[n:-1] == sp.encode(second)
    flipped = sum(r["flipped"] for r in found) / len(found)
    assert 0.35 < flipped < 0.65, flipped  # ~230 rows; the rate itself is tested on 20,000 in test_xy_shards
    assert sum(v.get("trtd/rows", 0) for v in stats.values()) == len(found)


def test_pair_probs_and_the_drawn_mix(sample_run):
    out, stats = sample_run
    table = pq.read_table(out / "pair_probs.parquet")
    check_schema(table.schema, XY_PAIR_PROBS_SCHEMA, "pair_probs.parquet")
    probs = table.to_pylist()
    assert sum(r["prob"] for r in probs) == pytest.approx(1.0)
    assert sum(r["plan_mass"] for r in probs) == pytest.approx(1.0)
    with_data = {f"{r['src_lang']}-{r['tgt_lang']}": r for r in probs if r["pairs"]}
    assert set(with_data) == {k for k in stats if "-" in k}
    assert all(r["prob"] == 0 for r in probs if not r["pairs"])  # fr-hi, fr-vi, ar-vi and the diagonal
    assert all(r["prob"] > 0.01 for r in with_data.values())
    for key, r in with_data.items():
        assert r["pairs"] == stats[key]["pairs/usable"]
    target = stats["all"]["trtd/target_rows"]
    assert target == sum(r["pairs"] for r in with_data.values())  # default: as many rows as usable pairs
    assert sum(r["expected_draws"] for r in probs) == pytest.approx(target)
    # the drawn mix follows pair_probs (binomial noise on ~230 draws)
    for key, r in with_data.items():
        assert abs(stats[key].get("trtd/rows", 0) - r["expected_draws"]) < 4 * max(r["expected_draws"], 1) ** 0.5 + 2, key
    # the sample has X-Y pairs in every language but en, so the marginals are reachable on pairs with data
    assert stats["all"].get("sinkhorn/removed_mass_ppb", 0) < 1_000
    assert stats["all"].get("sinkhorn/marginal_error_ppb", 0) < 1_000  # the balanced plan met p^(1/T)


def test_same_seed_same_bytes_other_seed_other_draws(sample_run, vocab, tmp_path):
    out, _ = sample_run
    again = tmp_path / "again"
    run(again, vocab)
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(again)) for p in again.rglob("*") if p.is_file())
    for name in names:
        if name not in ("README.md", "manifest.json"):  # they quote the command, whose --output differs
            assert (again / name).read_bytes() == (out / name).read_bytes(), name
    other = tmp_path / "seed1"
    run(other, vocab, "--seed", "1")
    for name in names:
        same = (other / name).read_bytes() == (out / name).read_bytes()
        # MRTD packing has no random choice but its row order is seeded; the TRTD draws and flips are
        # random, and so are the counts of them
        assert same == (not name.startswith(("mrtd/", "trtd/", "stats", "README", "manifest"))), name
    assert rows(other, "trtd") != rows(out, "trtd")
    assert sorted(r["id"] for r in rows(other, "mrtd")) == sorted(r["id"] for r in rows(out, "mrtd"))


def test_every_pair_once_for_a_trainer_that_samples_pairs_itself(vocab, tmp_path):
    out = tmp_path / "once"
    stats = run(out, vocab, "--trtd_draws", "once")
    found = rows(out, "trtd")
    assert sorted(r["id"] for r in found) == sorted(f"{pair_id}#0" for pair_id in sample_pairs())
    probs = pq.read_table(out / "pair_probs.parquet").to_pylist()
    assert all(r["expected_draws"] == r["pairs"] for r in probs)
    assert sum(r["prob"] for r in probs) == pytest.approx(1.0)  # the mix is still there, for the trainer
    for key in (k for k in stats if "-" in k):
        assert stats[key]["trtd/rows"] == stats[key]["pairs/usable"]


def test_bad_lines_are_counted_and_dead_lettered(vocab, tmp_path):
    mono = tmp_path / "fr.txt"  # not UTF-8, blank, only a zero-width space (tokenises to nothing), then text
    mono.write_bytes(b"caf\xe9 cr\xe8me\n\n\xe2\x80\x8b\n" + (MONO / "fr.txt").read_bytes())
    ar = tmp_path / "ar.txt"
    ar.write_bytes((MONO / "ar.txt").read_bytes())
    long_fr = " ".join(["Le Parlement européen a adopté la résolution."] * 30)
    bitext = tmp_path / "fr-ar.tsv"
    bitext.write_bytes(
        b"Bonjour\t\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7\n"  # good
        b"caf\xe9\tx\n"  # not UTF-8
        b"no separator here\n"
        b"\xe2\x80\x8b\t\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7\n"  # the French side tokenises to nothing
        + f"{long_fr}\tقصير\n".encode()  # over --max_len 128
        + (BITEXT / "fr-ar.fr").read_text(encoding="utf-8").splitlines()[0].encode() + b"\t"
        + (BITEXT / "fr-ar.ar").read_text(encoding="utf-8").splitlines()[0].encode() + b"\n")
    out = tmp_path / "out"
    stats = run(out, vocab, "--mono", f"fr={mono}", "--mono", f"ar={ar}", "--bitext", f"fr-ar={bitext}",
                "--max_len", "128")
    assert stats["fr"]["read/not_utf8"] == 1 and stats["fr"]["read/empty"] == 1
    assert stats["fr"]["tokenise/empty"] == 1
    assert stats["fr"]["mrtd/lines"] == stats["fr"]["read/lines"] - 3
    pair = stats["ar-fr"]
    assert (pair["read/lines"], pair["read/not_utf8"], pair["read/no_separator"]) == (6, 1, 1)
    assert (pair["tokenise/empty"], pair["pairs/too_long"], pair["pairs/usable"]) == (1, 1, 2)
    files = sorted((out / "dead_letter").glob("*.parquet"))
    check_schema(pq.read_schema(files[0]), DEAD_LETTER_SCHEMA, "dead_letter")
    dead = {(d["stage"], d["reason"], d["record_id"]) for f in files for d in pq.read_table(f).to_pylist()}
    assert dead == {("read", "not_utf8", "1"), ("tokenise", "empty", "3"), ("read", "not_utf8", "fr-ar/fr-ar.tsv:2"),
                    ("read", "no_separator", "fr-ar/fr-ar.tsv:3"), ("tokenise", "empty", "fr-ar/fr-ar.tsv:4"),
                    ("tokenise", "too_long", "fr-ar/fr-ar.tsv:5")}
    assert all(len(r["input_ids"]) <= 128 for split in ("mrtd", "trtd") for r in rows(out, split))


def test_english_centric_input_reports_the_removed_mass(vocab, tmp_path):
    out = tmp_path / "out"
    stats = run(out, vocab, *[f"--mono={lang}={MONO / f'{lang}.txt'}" for lang in ("en", "fr", "ar", "hi")],
                "--bitext", f"en-fr={PARALLEL / 'en-fr.en'},{PARALLEL / 'en-fr.fr'}",
                "--bitext", f"en-ar={PARALLEL / 'en-ar.tsv'}", "--bitext", f"en-hi={PARALLEL / 'en-hi.txt'}",
                "--trtd_pairs", "1000")
    probs = pq.read_table(out / "pair_probs.parquet").to_pylist()
    removed = sum(r["plan_mass"] for r in probs if not r["pairs"])
    assert removed > 0.1  # English holds 1/3 of p^(1/T) < 1/2
    assert stats["all"]["sinkhorn/removed_mass_ppb"] == pytest.approx(removed * 1e9, abs=2)
    assert {f"{r['src_lang']}-{r['tgt_lang']}" for r in probs if r["prob"] > 0} == {"ar-en", "en-fr", "en-hi"}
    # 1,000 rows from 3 x 42 pairs of equal counts (equal probs): each pair drawn 7 or 8 times (rate 7.94),
    # each copy with its own id and flip
    found = rows(out, "trtd")
    assert len({r["id"] for r in found}) == len(found)
    copies = collections.Counter(r["id"].rsplit("#", 1)[0] for r in found)
    assert set(copies.values()) <= {7, 8} and len(copies) == 126
    assert abs(len(found) - 1000) < 30


def test_defaults_after_vocap_with_no_flags(tmp_path, monkeypatch):
    """`python -m pipelines.vocap` then `python -m pipelines.xy_corpus`, both with no flags."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="run `python -m pipelines.vocap` first"):
        job.run([])
    vocap_job.run([])
    stats = common.stats_by_lang(job.run([]))
    assert (tmp_path / "output" / "xy_corpus" / "mrtd").is_dir()
    assert sum(v.get("trtd/rows", 0) for v in stats.values()) > 100


def test_mismatched_bitext_files_fail_fast_naming_both_counts(vocab, tmp_path):
    fr = tmp_path / "x.fr"
    ar = tmp_path / "x.ar"
    fr.write_text("un\ndeux\ntrois\n", encoding="utf-8")
    ar.write_text("واحد\nاثنان\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"line counts differ: .*x\.fr has 3 lines, .*x\.ar has 2"):
        run(tmp_path / "out", vocab, "--mono", f"fr={MONO / 'fr.txt'}", "--mono", f"ar={MONO / 'ar.txt'}",
            "--bitext", f"fr-ar={fr},{ar}")


@pytest.mark.parametrize("argv, message", [
    (["--mono", f"fr={MONO / 'fr.txt'}", "--bitext", f"fr-ar={BITEXT / 'fr-ar.fr'},{BITEXT / 'fr-ar.ar'}"],
     "without --mono text: ar"),
    (["--mono", f"fr={MONO / 'fr.txt'}"], "no --bitext given"),
    (["--bitext", f"vi-hi={BITEXT / 'vi-hi.tsv'}"], "no --mono given"),
    (["--mono", f"fr={MONO / 'fr.txt'}", "--bitext", "fr-ar=/no/such.tsv"], "file not found"),
    (["--mono", f"fr={MONO / 'fr.txt'}", "--bitext", "fr=/x.tsv"], "X-Y"),
    (["--max_len", "4"], "--max_len"),
    (["--temperature", "0"], "--temperature"),
    (["--trtd_pairs", "0"], "--trtd_pairs"),
    (["--trtd_pairs", "10", "--trtd_draws", "once"], "one or the other"),
    (["--mono", f"zh-yue={MONO / 'zh.txt'}", "--bitext", f"vi-hi={BITEXT / 'vi-hi.tsv'}"], "unknown language 'zh-yue'"),
])
def test_usage_errors(argv, message, vocab, tmp_path):
    with pytest.raises(SystemExit, match=message):
        run(tmp_path, vocab, *argv)


def test_vocab_that_is_not_a_vocap_model(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(SystemExit, match="not a SentencePiece model"):
        job.run(["--vocab", str(bad), "--output", str(tmp_path / "out")])


def test_rows_come_in_mixed_language_order(sample_run):
    out, _ = sample_run
    assert_rows_in_mixed_order(out / "mrtd", "train-*.parquet")
    assert_rows_in_mixed_order(out / "trtd", "train-*.parquet", group=lambda r: (r["src_lang"], r["tgt_lang"]))


def test_mrtd_and_trtd_load_as_two_configs_with_their_full_schemas(sample_run, tmp_path):
    pandas = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    out, _ = sample_run
    for config, schema in (("mrtd", XY_MRTD_SCHEMA), ("trtd", XY_TRTD_SCHEMA)):
        loaded = datasets.load_dataset(str(out), config, cache_dir=str(tmp_path / "cache"))["train"]
        assert loaded.features == datasets.Features.from_arrow_schema(schema), config
        assert loaded.num_rows == len(rows(out, config))
        assert list(pandas.read_parquet(out / config).columns) == schema.names
    default = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]
    assert default.column_names == XY_MRTD_SCHEMA.names


def test_monolingual_lines_lose_byte_order_marks_and_line_ends(tmp_path):
    from pipelines.xy_transforms import ReadMonoFn

    mono = tmp_path / "fr.txt"
    mono.write_bytes("\ufeffBonjour le monde\r\n\ufeffSalut\r\n".encode("utf-8"))
    read = ReadMonoFn()
    read.start_bundle()
    batches = [out for out in read.process(("fr", "fr.txt", str(mono))) if isinstance(out, tuple)]
    assert batches == [("fr", "fr.txt", [(1, "Bonjour le monde"), (2, "Salut")])]


def test_pairs_with_data_that_pair_probs_starves_are_named(capsys):
    # The stats of a real NTREX run of 13 pairs (docs/xy_corpus.md): Sinkhorn gave en-fr and en-zh
    # ~1e-7 of 14,185 rows, hi-ko's 200 pairs 0.147.
    values = {"en-fr": {"pairs/usable": 1997, "pairs/prob_ppb": 100}, "en-zh": {"pairs/usable": 1997, "pairs/prob_ppb": 150},
              "hi-ko": {"pairs/usable": 200, "pairs/prob_ppb": 147_400_000}, "de-en": {"pairs/usable": 1997}}
    job._warn_of_starved_pairs(values, 14_185)
    err = capsys.readouterr().err
    assert err.startswith("warning: 2 language pair(s) with data get under one of the 14,185 TRTD rows")
    assert "en-fr (1,997 pairs, prob 1.0e-07), en-zh (1,997 pairs, prob 1.5e-07)" in err and "hi-ko" not in err
    job._warn_of_starved_pairs({"hi-ko": values["hi-ko"]}, 14_185)
    assert capsys.readouterr().err == ""
