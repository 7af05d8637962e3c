"""Fault injection on the data side (issue 14): bad inputs and mistakes, run as a user runs the jobs.

Each test is one case: a damaged or wrong input, or a wrong flag. A case holds when the job either
stops before its pipeline starts with exit status 1 and one line that names the flag and the fix (no
traceback, nothing written), or runs and accounts for every input page or line in its counts and
dead letters. Usage errors run `python -m pipelines.<job>` in a subprocess (exit status and stderr are
what a user sees); complete runs call the job in-process on small real dumps, to keep the suite fast.

Real data: the Wikipedia excerpts in shared/data (skipped where absent), damaged in tmp_path.
"""
from __future__ import annotations

import bz2
import collections
import gzip
import io
import os
import random
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpora.dumps import pages as dumps
from corpora.dumps.pages import RawPage
from pipelines import beam_outputs, common

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("XLU_SHARED", REPO.parent / "shared")) / "data" / "wikipedia"
EN = SHARED / "enwiki-excerpt.xml.bz2"
DE = SHARED / "dewiki-excerpt.xml.bz2"  # 79 pages, 3 bz2 blocks: small enough for a whole job in seconds
MONO = REPO / "corpora" / "samples" / "mono"
SAMPLE_EN = REPO / "corpora" / "samples" / "wiki" / "enwiki-sample-pages-articles.xml.bz2"

needs_dumps = pytest.mark.skipif(not (EN.exists() and DE.exists()), reason=f"{SHARED} not present")


def job(name: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"pipelines.{name}", "--runner", "DirectRunner", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout)


def assert_usage_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 1, no traceback, the message on one line naming the flag and what to do."""
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr[-3000:]
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def run_wiki(out: Path, *args: str) -> dict:
    from pipelines import wiki_mrc

    stats = wiki_mrc.run(["--runner", "DirectRunner", "--output", str(out), "--min_mentions", "1", *args])
    return common.stats_by_lang(stats)


def dead_letters(out: Path) -> list[dict]:
    return [row for f in sorted((out / "dead_letter").glob("*.parquet")) for row in pq.read_table(f).to_pylist()]


def data_bytes(out: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted((out / "data").glob("*.parquet"))}


def flip(data: bytes, at: int, n: int = 64) -> bytes:
    damaged = bytearray(data)
    for i in range(at, at + n):
        damaged[i] ^= 0xFF
    return bytes(damaged)


@pytest.fixture(scope="module")
def de_run(tmp_path_factory):
    """The German excerpt as it is: the reference the damaged variants are compared with."""
    out = tmp_path_factory.mktemp("de") / "out"
    return out, run_wiki(out, "--dump", f"de={DE}")


# ─────────────────────────── readers: nothing readable is lost ───────────────────────────


@needs_dumps
@pytest.mark.parametrize("damage", ["inverted", "zeroed", "random"])
def test_corrupt_bz2_block_in_the_real_english_excerpt_costs_only_its_pages(damage):
    """64 bytes in the middle. Before: 99 pages (zeroed or random bytes; 115 with inverted ones) and
    1 dead letter. After: 178, every page outside the damaged block (of 206), and one dead letter for
    the page the damage cut."""
    data = bytearray(EN.read_bytes())
    mid = len(data) // 2
    rng = random.Random(0)
    for i in range(mid, mid + 64):
        data[i] = {"inverted": data[i] ^ 0xFF, "zeroed": 0, "random": rng.randrange(256)}[damage]
    records = list(dumps.iter_pages_from_file(io.BytesIO(bytes(data)), "rot.bz2", "bz2"))
    assert sum(isinstance(r, RawPage) for r in records) == 178
    assert [r.reason for r in records if not isinstance(r, RawPage)] == ["corrupt_archive"]


@needs_dumps
def test_corrupt_bz2_block_in_a_job_is_counted_and_the_rest_is_read(tmp_path, de_run):
    """79 readable pages in the German excerpt (one an empty talk page, read and left with the other
    namespaces); 64 flipped bytes in its middle block (of 3). Before: 0 pages read (the reader's first
    1 MiB call raised). After: 55 read, 1 dead letter."""
    _, clean = de_run
    dump = tmp_path / "dewiki-rot.xml.bz2"
    dump.write_bytes(flip(DE.read_bytes(), DE.stat().st_size // 2))
    stats = run_wiki(tmp_path / "out", "--dump", f"de={dump}")["de"]
    assert clean["de"]["pages/read"] == 79
    assert stats["pages/read"] == 55 and stats["read/corrupt_archive"] == 1
    reasons = collections.Counter(d["reason"] for d in dead_letters(tmp_path / "out"))
    assert reasons["corrupt_archive"] == 1


def sample_text() -> str:
    # The sample holds one deliberately non-UTF-8 page, which no UTF-16 file can hold: it is replaced
    # (U+FFFD) in the reference too, so that only the encoding differs.
    return bz2.decompress(SAMPLE_EN.read_bytes()).decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The bundled English sample in UTF-8: small, and it yields examples, so rows can be compared."""
    base = tmp_path_factory.mktemp("sample")
    dump = base / "enwiki-utf8.xml.bz2"
    dump.write_bytes(bz2.compress(sample_text().encode("utf-8")))
    return base / "out", run_wiki(base / "out", "--dump", f"en={dump}", "--min_mentions_en", "2")


@pytest.mark.parametrize("encoding", ["UTF-16", "UTF-16BE", "UTF-8-SIG"])
def test_utf16_and_bom_dumps_give_the_same_rows(tmp_path, sample_run, encoding):
    """Before: a UTF-16 dump gave exit 0, 0 pages, no stats, no dead letter. After: the same
    counts and byte-identical Parquet as the UTF-8 dump."""
    reference, clean = sample_run
    dump = tmp_path / "enwiki-utf16.xml.bz2"
    text = sample_text()
    if encoding == "UTF-16BE":
        text = "\ufeff" + text
    dump.write_bytes(bz2.compress(text.encode(encoding.lower())))
    stats = run_wiki(tmp_path / "out", "--dump", f"en={dump}", "--min_mentions_en", "2")
    assert clean["en"]["examples/answerable"] > 0 and stats == clean
    assert data_bytes(tmp_path / "out") == data_bytes(reference)


@needs_dumps
def test_other_encoding_is_one_counted_dead_letter(tmp_path, capsys):
    dump = tmp_path / "latin1.xml"
    head = b'<?xml version="1.0" encoding="ISO-8859-1"?>\n'
    dump.write_bytes(head + bz2.decompress(DE.read_bytes())[:100_000])
    stats = run_wiki(tmp_path / "out", "--dump", f"de={dump}")["de"]
    assert stats == {"read/unsupported_encoding": 1}
    (dead,) = dead_letters(tmp_path / "out")
    assert dead["reason"] == "unsupported_encoding" and "iconv -f iso-8859-1 -t UTF-8" in dead["excerpt"]
    assert "warning: de: 1 input file(s) in an encoding other than UTF-8 or UTF-16" in capsys.readouterr().out


@needs_dumps
@pytest.mark.parametrize("content, reason", [(b"", "empty_input"), (bz2.compress(b""), "no_pages"),
                                             (bz2.compress(b"<mediawiki>\n</mediawiki>\n"), "no_pages")],
                         ids=["empty-file", "empty-bz2-stream", "no-page"])
def test_empty_dump_is_a_counted_and_printed_reason(tmp_path, content, reason):
    """Before: exit 0, no count, no warning. After: exit 0, counted, a dead letter and a warning line."""
    dump = tmp_path / "dewiki-empty.xml.bz2"
    dump.write_bytes(content)
    result = job("wiki_mrc", "--dump", f"de={dump}", "--output", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"read/{reason}" in result.stdout
    assert f"warning: de: 1 " in result.stdout and f"(read/{reason}; see dead_letter/)" in result.stdout
    assert [d["reason"] for d in dead_letters(tmp_path / "out")] == [reason]


@needs_dumps
def test_declared_language_is_checked_against_siteinfo(tmp_path):
    """Before: an English dump declared zh gave 200 rows labelled zh. After: one line, before the job."""
    result = job("wiki_mrc", "--dump", f"zh={EN}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "--dump 'zh=", 'xml:lang="en"', "dbname enwiki", f"--dump en={EN}",
                       "--allow_language_mismatch")
    assert not (tmp_path / "out").exists()


@needs_dumps
def test_language_mismatch_can_be_allowed(tmp_path):
    stats = run_wiki(tmp_path / "out", "--dump", f"fr={DE}", "--allow_language_mismatch")
    assert set(stats) == {"fr"} and stats["fr"]["pages/read"] == 79


# ──────────────────────── user mistakes fail before the pipeline ────────────────────────


@pytest.mark.parametrize("make, fragments", [
    (lambda d: d.mkdir() or d, ["is a directory", "give one file"]),
    (lambda d: (d.with_suffix(".xml.gz").write_bytes(gzip.compress(b"<mediawiki/>")), d.with_suffix(".xml.gz"))[1],
     ["unsupported file type (.xml.gz)", ".xml or .xml.bz2", "gunzip -c dewiki.xml.gz | bzip2 > dewiki.xml.bz2"]),
    (lambda d: (zipfile.ZipFile(d.with_suffix(".zip"), "w").close(), d.with_suffix(".zip"))[1],
     ["unsupported file type (.zip)", "unzip -p dewiki.zip | bzip2"]),
], ids=["directory", "gz", "zip"])
def test_dump_that_is_not_a_dump_file(tmp_path, make, fragments):
    """Before: a 100+ line Beam traceback once the job ran. After: one line, nothing written."""
    path = make(tmp_path / "dewiki")
    result = job("wiki_mrc", "--dump", f"de={path}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "--dump 'de=", *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("output", ["file/out", "/proc/xlu-out"], ids=["under-a-file", "proc"])
def test_unwritable_output_fails_before_the_job(tmp_path, output):
    """Before: the whole job ran, then failed in WriteDeadLetters. After: one line at once."""
    (tmp_path / "file").write_text("not a folder")
    target = output if output.startswith("/") else str(tmp_path / output)
    result = job("wiki_mrc", "--output", target)
    assert_usage_error(result, f"--output {target}: cannot write there", "choose a writable --output")


def test_output_that_is_a_file(tmp_path):
    (tmp_path / "out").write_text("x")
    assert_usage_error(job("vocap", "--output", str(tmp_path / "out")), "is a file, not a folder")


@pytest.mark.slow
@needs_dumps
def test_earlier_run_is_replaced_and_foreign_output_refused(tmp_path, de_run):
    """The decision (README, --help): a rerun of the same job replaces data/, dead_letter/ and
    stats.parquet; the same names from another job, or without the .xlu-job marker, need --overwrite."""
    reference, _ = de_run
    out = tmp_path / "out"
    (out / "data").mkdir(parents=True)
    (out / "data" / "stale-00000-of-00001.parquet").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    refused = job("wiki_mrc", "--dump", f"de={DE}", "--output", str(out))
    assert_usage_error(refused, f"--output {out}: holds data", "no .xlu-job marker", "--overwrite")
    run_wiki(out, "--dump", f"de={DE}", "--overwrite")
    assert data_bytes(out) == data_bytes(reference)  # the stale shard is gone, the rows are the same
    run_wiki(out, "--dump", f"de={DE}")  # a rerun of the same job needs no flag
    assert data_bytes(out) == data_bytes(reference) and (out / "notes.txt").read_text() == "mine"
    other = job("clism_pairs", "--output", str(out))
    assert_usage_error(other, "written by the wiki_mrc job", "--overwrite")


def test_vocap_with_only_an_empty_file(tmp_path):
    """Before: a SentencePiece traceback (`!sentences_.empty()`) after the pipeline started."""
    (tmp_path / "fr.txt").write_text("\n \n\n")
    result = job("vocap", "--mono", f"fr={tmp_path / 'fr.txt'}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "--mono fr=", "no non-empty line", "drop --mono fr")


def test_a_wiki_dump_given_as_monolingual_text_is_refused(tmp_path):
    """Before: vocap and xy_corpus read a dump's XML and wikitext as sentences (78% of an MRTD run's
    rows on the real English excerpt), exit 0."""
    result = job("vocap", "--mono", f"de={DE}", "--mono", f"fr={MONO / 'fr.txt'}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, f"--mono de={DE}", "a MediaWiki XML dump, not text", "pipelines.wiki_mrc")


def test_xy_corpus_takes_the_vocap_folder_for_its_model(tmp_path):
    """Before: a traceback ending in IsADirectoryError."""
    from pipelines import xy_corpus

    (tmp_path / "vocap").mkdir()
    (tmp_path / "vocap" / "spm.model").write_bytes(b"x")
    assert xy_corpus.model_in_folder(str(tmp_path / "vocap")) == str(tmp_path / "vocap" / "spm.model")
    assert xy_corpus.model_in_folder(str(tmp_path / "vocap" / "spm.model")) == str(tmp_path / "vocap" / "spm.model")
    (tmp_path / "empty").mkdir()
    result = job("xy_corpus", "--mono", f"fr={MONO / 'fr.txt'}", "--mono", f"ar={MONO / 'ar.txt'}",
                 "--bitext", f"fr-ar={MONO.parent / 'bitext' / 'fr-ar.fr'},{MONO.parent / 'bitext' / 'fr-ar.ar'}",
                 "--vocab", str(tmp_path / "empty"),
                 "--output", str(tmp_path / "out"))
    assert_usage_error(result, f"--vocab {tmp_path / 'empty'}: a folder without spm.model")


def test_xy_corpus_with_an_empty_bitext_file(tmp_path):
    """Before: a late failure whose message pointed at an empty dead_letter/."""
    (tmp_path / "fr-ar.tsv").write_text("")
    result = job("xy_corpus", "--mono", f"fr={MONO / 'fr.txt'}", "--mono", f"ar={MONO / 'ar.txt'}",
                 "--bitext", f"fr-ar={tmp_path / 'fr-ar.tsv'}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "--bitext 'fr-ar=", "has no non-empty line")


def test_vocap_with_too_little_text_ends_with_one_line(tmp_path):
    """Lines present but too few for a model. Before: a worker traceback pointing at a dead_letter/
    that the failed run never wrote. After: the run completes its counts and dead letters, then exit 1
    with one line."""
    (tmp_path / "fr.txt").write_text("Une seule phrase.\n")
    result = job("vocap", "--mono", f"fr={tmp_path / 'fr.txt'}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "vocap: no language has enough text", "dead_letter/", "too_little_text: give more text")
    assert [d["reason"] for d in dead_letters(tmp_path / "out")] == ["too_little_text"]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    from pipelines import vocap

    out = tmp_path_factory.mktemp("vocap") / "out"
    vocap.run(["--runner", "DirectRunner", "--output", str(out)])
    return out / "spm.model"


@pytest.mark.slow
def test_xy_corpus_with_no_usable_bitext_line_ends_with_one_line(tmp_path, vocab):
    # Separated lines, each with a side missing: known only by reading the file to its end.
    (tmp_path / "fr-ar.tsv").write_text("\tseulement l'arabe manque\nno separator two\nle français\t\n")
    result = job("xy_corpus", "--mono", f"fr={MONO / 'fr.txt'}", "--mono", f"ar={MONO / 'ar.txt'}", "--vocab", str(vocab),
                 "--bitext", f"fr-ar={tmp_path / 'fr-ar.tsv'}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "xy_corpus: no usable bitext pair", "dead_letter/")
    assert "read/no_separator" in result.stdout
    assert sorted(d["reason"] for d in dead_letters(tmp_path / "out")) == ["empty", "empty", "no_separator"]
    # A file without a single separated line is one language's file: refused before the run.
    (tmp_path / "fr.txt").write_text("no separator one\nno separator two\n")
    result = job("xy_corpus", "--mono", f"fr={MONO / 'fr.txt'}", "--mono", f"ar={MONO / 'ar.txt'}", "--vocab", str(vocab),
                 "--bitext", f"fr-ar={tmp_path / 'fr.txt'}", "--output", str(tmp_path / "out2"))
    assert_usage_error(result, "holds one side only", "fr-ar=FR_FILE,AR_FILE")


@pytest.mark.parametrize("kind", ["directory", "empty"])
def test_clism_pairs_input_that_is_not_text(tmp_path, kind):
    path = tmp_path / "en-fr.tsv"
    path.mkdir() if kind == "directory" else path.write_text("")
    result = job("clism_pairs", "--pairs", f"fr={path}", "--output", str(tmp_path / "out"))
    assert_usage_error(result, "--pairs 'fr=", "is a directory" if kind == "directory" else "no non-empty line")


def test_clism_pairs_three_column_tsv_has_a_truthful_reason(tmp_path):
    """Before: dead-lettered as `no_separator`. After: `too_many_columns`; the good lines are kept."""
    from pipelines import clism_pairs

    path = tmp_path / "en-fr.tsv"
    path.write_text("Angela Merkel visited Paris .\tAngela Merkel a visité Paris .\n" * 3
                    + "Angela Merkel visited Paris .\tAngela Merkel a visité Paris .\textra\n"
                    + "no tab at all\n")
    stats = common.stats_by_lang(clism_pairs.run(["--runner", "DirectRunner", "--pairs", f"fr={path}",
                                                  "--pretokenized", "--output", str(tmp_path / "out")]))
    pair = stats["en-fr"]
    assert (pair["read/lines"], pair["read/too_many_columns"], pair["read/no_separator"]) == (5, 1, 1)
    reasons = collections.Counter(d["reason"] for d in dead_letters(tmp_path / "out"))
    assert reasons["too_many_columns"] == 1 and reasons["no_separator"] == 1


# ─────────────────────────── cases that already held (kept held) ───────────────────────────


@pytest.mark.parametrize("args, fragments", [
    (["--dump", "en=/nonexistent/enwiki.xml.bz2"], ["file not found"]),
    (["--dump", "enwiki.xml.bz2"], ["expected LANG=PATH"]),
    (["--query_words", "0"], ["--query_words must be at least 1"]),
])
def test_wiki_mrc_flag_mistakes(tmp_path, args, fragments):
    assert_usage_error(job("wiki_mrc", *args, "--output", str(tmp_path / "out")), *fragments)


@needs_dumps
def test_truncated_dump_yields_the_pages_before_the_cut():
    data = EN.read_bytes()
    records = list(dumps.iter_pages_from_file(io.BytesIO(data[: len(data) // 2]), "cut.bz2", "bz2"))
    assert sum(isinstance(r, RawPage) for r in records) == len(records) - 1
    assert records[-1].reason == "truncated_archive"


# ─────────────────────────── exit: no crash after a complete run ───────────────────────────


def test_reading_stats_starts_no_arrow_thread(tmp_path):
    """The cause of "terminate called without an active exception" (exit 134) after complete runs:
    `pq.read_table` in read_stats started Arrow's thread pools, whose std::threads were torn down by
    static destructors at exit (apache/arrow#34314). read_stats must not start them."""
    import pyarrow as pa

    beam_outputs.write_parquet_file(str(tmp_path / "stats.parquet"), [{"lang": "en", "metric": "m", "value": 1}],
                              pa.schema([("lang", pa.string()), ("metric", pa.string()), ("value", pa.int64())]))
    code = ("import os; from pipelines import common; n = len(os.listdir('/proc/self/task')); "
            f"common.read_stats({str(tmp_path)!r}); print(len(os.listdir('/proc/self/task')) - n)")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "0", result.stdout + result.stderr[-2000:]


@pytest.mark.slow
def test_sample_job_exits_cleanly_under_parallel_load(tmp_path):
    """Before: 1 of 16 runs exited 134 after printing its summary. Runs two at a time."""
    def one(i: int):
        return job("wiki_mrc", "--output", str(tmp_path / f"out{i}"), timeout=600)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, range(6)))
    for result in results:
        assert result.returncode == 0 and "terminate called" not in result.stderr, result.stderr[-2000:]
