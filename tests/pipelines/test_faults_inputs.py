"""Fault cases on the input and record side, run as a user runs the jobs: one input given twice in any
form, records the schema cannot hold or whose identity repeats, a multistream index that lies, and
inputs whose shape fooled a reader (CR-only line ends, a `[` in a file name, JSON nested too deep).

A refused input: exit status 1 before the pipeline starts, one `error:` line naming both inputs, no
traceback. A bad record: the job finishes (every shard written), the record is in dead_letter/ with
its reason and counted in stats.parquet, and every other page or row is there.

Real data: the bundled samples and the Wikipedia excerpts in $XLU_SHARED_DATA (skipped where absent),
damaged or copied in tmp_path.
"""
from __future__ import annotations

import bz2
import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.util import assert_that, equal_to

from conftest import SHARED_DATA
from corpora.dumps import multistream
from corpora.dumps.pages import SAMPLE_DIR
from corpora.schemas import CLISM_SCHEMA, MRC_SCHEMA, row_problem
from job_files import dead_letters
from pipelines import common, row_checks, wiki_mrc
from pipelines.beam_outputs import DEAD_LETTER, STATS

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
WIKI = SHARED_DATA / "wikipedia"
DE = WIKI / "dewiki-excerpt.xml.bz2"  # 79 pages: a whole job in seconds
EN_SAMPLE = Path(str(SAMPLE_DIR)) / "enwiki-sample-pages-articles.xml.bz2"
PARALLEL = REPO / "corpora" / "samples" / "parallel"
MONO = REPO / "corpora" / "samples" / "mono"
needs_excerpts = pytest.mark.skipif(not DE.exists(), reason=f"{WIKI} not present")


def job(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"pipelines.{name}", "--runner", "DirectRunner", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr[-3000:]
    return errors[0]


def refused(run, argv: list[str]) -> str:
    """The one-line message of a job refused before its pipeline (in-process: SystemExit(message))."""
    with pytest.raises(SystemExit) as stop:
        run(argv)
    message = str(stop.value.code)
    assert message.startswith("error: ") and "\n" not in message, message
    return message


def wiki_run(out: Path, *args: str) -> dict:
    return common.stats_by_lang(wiki_mrc.run(["--runner", "DirectRunner", "--output", str(out), *args]))


def shards(out: Path, folder: str = "data") -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted((out / folder).glob("*.parquet"))}


def rewrite_dump(source: Path, target: Path, change) -> Path:
    """A copy of a dump whose pages (raw XML pieces, in order) went through `change`."""
    header, pages, footer = multistream.split_dump_pages([bz2.decompress(source.read_bytes())])
    target.write_bytes(bz2.compress(header + b"".join(change(pages)) + footer))
    return target


def with_page_id(page: bytes, new_id: bytes) -> bytes:
    return re.sub(rb"<id>\d+</id>", b"<id>" + new_id + b"</id>", page, count=1)


# ─────────────────────────────── one input given twice ───────────────────────────────


def test_a_dump_and_its_decompressed_copy_are_refused_as_one_input(tmp_path):
    plain = tmp_path / "enwiki-sample-pages-articles.xml"
    plain.write_bytes(bz2.decompress(EN_SAMPLE.read_bytes()))
    result = job("wiki_mrc", "--output", str(tmp_path / "out"), "--dump", f"en={EN_SAMPLE}", "--dump", f"en={plain}")
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert f"--dump en={EN_SAMPLE} and --dump en={plain}" in line, line
    assert "the same content, bz2-compressed and uncompressed" in line and "every page and row would be there twice" in line
    assert not (tmp_path / "out" / "data").exists()


@pytest.mark.parametrize("form", ["copy", "symlink", "hard link", "other spelling"])
def test_a_dump_under_another_name_is_refused(tmp_path, form):
    other = tmp_path / "sub" / "renamed.xml.bz2"
    other.parent.mkdir()
    if form == "copy":
        shutil.copy(EN_SAMPLE, other)
        why = "the same content (a copy)"
    elif form == "symlink":
        other.symlink_to(EN_SAMPLE)
        why = "one file under two names"
    elif form == "hard link":
        shutil.copy(EN_SAMPLE, tmp_path / "original.xml.bz2")
        other.hardlink_to(tmp_path / "original.xml.bz2")
        why = "one file under two names"
    else:
        other = f"{EN_SAMPLE.parent}/./{EN_SAMPLE.name}"  # a str: Path would drop the "/./"
        why = "have one name, so hold one dump"
    first = tmp_path / "original.xml.bz2" if form == "hard link" else EN_SAMPLE
    message = refused(wiki_mrc.run, ["--output", str(tmp_path / "out"), f"--dump=en={first}", f"--dump=en={other}"])
    assert why in message, message


@needs_excerpts
def test_two_dumps_of_one_wiki_are_refused_by_their_first_page(tmp_path):
    # The same dump re-cut (another page order after the first): other bytes, the same pages.
    recut = rewrite_dump(DE, tmp_path / "dewiki-other-day.xml.bz2", lambda pages: [pages[0], *reversed(pages[1:])])
    message = refused(wiki_mrc.run, ["--output", str(tmp_path / "out"), f"--dump=de={DE}", f"--dump=de={recut}"])
    assert "two dumps of dewiki beginning with page" in message, message


def test_a_parallel_source_twice_is_refused_in_every_form(tmp_path):
    from pipelines import clism_pairs

    gz = tmp_path / "en-ar.tsv.gz"
    gz.write_bytes(gzip.compress((PARALLEL / "en-ar.tsv").read_bytes()))
    out = ["--output", str(tmp_path / "out")]
    message = refused(clism_pairs.run, [*out, f"--pairs=ar={PARALLEL / 'en-ar.tsv'}", f"--pairs=ar={gz}"])
    assert "the same content, gzip-compressed and uncompressed" in message and "every pair and row" in message
    two_files = f"fr={PARALLEL / 'en-fr.en'},{PARALLEL / 'en-fr.fr'}"
    message = refused(clism_pairs.run, [*out, f"--pairs={two_files}", f"--pairs={two_files}"])
    assert f"--pairs {two_files} is given twice" in message, message
    # Both sides one file: refused (here by the language check, which reads the sides first).
    refused(clism_pairs.run, [*out, f"--pairs=fr={PARALLEL / 'en-fr.en'},{PARALLEL / 'en-fr.en'}"])


def test_two_parallel_files_of_one_name_whose_ids_would_clash_are_refused(tmp_path):
    from pipelines import clism_pairs

    for corpus, lines in (("news", slice(0, 20)), ("talks", slice(20, 40))):
        (tmp_path / corpus).mkdir()
        text = (PARALLEL / "en-ar.tsv").read_text().splitlines(keepends=True)[lines]
        (tmp_path / corpus / "train.tsv").write_text("".join(text))
    message = refused(clism_pairs.run, ["--output", str(tmp_path / "out"), f"--pairs=ar={tmp_path / 'news' / 'train.tsv'}",
                                        f"--pairs=ar={tmp_path / 'talks' / 'train.tsv'}"])
    assert "both files are named train.tsv" in message and "(en-ar/train.tsv:LINE)" in message, message


def test_one_english_file_in_two_language_pairs_is_not_a_repeat(tmp_path):
    from pipelines import input_identity

    english = tmp_path / "en.txt"
    shutil.copy(PARALLEL / "en-fr.en", english)
    sources = [("fr", (str(english), str(PARALLEL / "en-fr.fr"))), ("de", (str(english), str(tmp_path / "de.txt")))]
    (tmp_path / "de.txt").write_text("Ein Satz.\n")
    assert input_identity.first_repeated_source(sources) is None
    sources.append(("fr2", (str(PARALLEL / "en-fr.fr"), str(english))))  # the first source, sides swapped
    assert input_identity.first_repeated_source(sources)[:2] == ("fr", "fr2")


def test_mono_text_twice_is_refused_in_vocap_and_xy_corpus(tmp_path):
    from pipelines import vocap, xy_corpus

    copy = tmp_path / "fr-copy.txt.bz2"
    copy.write_bytes(bz2.compress((MONO / "fr.txt").read_bytes()))
    message = refused(vocap.run, ["--output", str(tmp_path / "v"), f"--mono=fr={MONO / 'fr.txt'}", f"--mono=ar={copy}"])
    assert f"--mono ar={copy} and --mono fr={MONO / 'fr.txt'}: the same content, bz2-compressed and uncompressed" in message
    bitext = REPO / "corpora" / "samples" / "bitext"
    message = refused(xy_corpus.run, ["--output", str(tmp_path / "x"), f"--mono=fr={MONO / 'fr.txt'}",
                                      f"--mono=ar={MONO / 'ar.txt'}", f"--bitext=fr-ar={bitext / 'fr-ar.fr'},{bitext / 'fr-ar.ar'}",
                                      f"--bitext=ar-fr={bitext / 'fr-ar.ar'},{bitext / 'fr-ar.fr'}"])
    assert "--bitext fr-ar=" in message and "and --bitext ar-fr=" in message, message


# ─────────────────────────────── records the schema cannot hold ───────────────────────────────


def test_a_page_id_beyond_int64_is_dead_lettered_and_the_job_finishes(tmp_path):
    clean = wiki_run(tmp_path / "clean", "--dump", f"en={EN_SAMPLE}", "--min_mentions_en", "1")["en"]
    # Lisbon, an entity with examples: its rows carried the id into an int64 column.
    bad = rewrite_dump(EN_SAMPLE, tmp_path / "enwiki-bad-pages-articles.xml.bz2",
                       lambda pages: [*pages[:2], with_page_id(pages[2], b"99999999999999999999"), *pages[3:]])
    stats = wiki_run(tmp_path / "out", "--dump", f"en={bad}", "--min_mentions_en", "1")["en"]
    assert stats["read/page_id_out_of_range"] == 1
    assert stats["pages/read"] == clean["pages/read"] - 1
    assert len(list((tmp_path / "out" / "data").glob("train-*-of-00004.parquet"))) == 4
    dead = [d for d in dead_letters(tmp_path / "out") if d["reason"] == "page_id_out_of_range"]
    assert [d["record_id"] for d in dead] == ["99999999999999999999"]
    assert "Lisbon" in dead[0]["excerpt"]


def test_rows_the_schema_cannot_hold_or_sharing_an_id_go_to_the_dead_letter():
    good = {"id": "fr:1", "src_lang": "en", "tgt_lang": "fr", "src_words": ["a"], "src_spaces": [False],
            "tgt_words": ["b"], "tgt_spaces": [False],
            "spans": [{"src_start": 0, "src_end": 0, "tgt_start": 0, "tgt_end": 0, "label": "PER"}]}
    too_big = {**good, "id": "fr:2", "spans": [{**good["spans"][0], "tgt_end": 2**31}]}
    surrogate = {**good, "id": "fr:3", "tgt_words": ["\ud800"]}
    not_text = {**good, "id": "fr:3", "tgt_words": [7]}
    copy_a, copy_b = {**good, "id": "fr:4"}, {**good, "id": "fr:4"}
    clash_a, clash_b = {**good, "id": "fr:5"}, {**good, "id": "fr:5", "tgt_words": ["c"]}
    assert row_problem(too_big, CLISM_SCHEMA) == ("int_out_of_range", "spans")
    assert row_problem(surrogate, CLISM_SCHEMA) == ("invalid_text", "tgt_words")
    assert row_problem({"id": "x"}, CLISM_SCHEMA) == ("missing_column", "src_lang")
    # Beam's coder itself refuses a lone surrogate between stages, so the pipeline gets a wrong type.
    with beam.Pipeline("DirectRunner") as p:
        checked = (p | beam.Create([good, too_big, not_text, copy_a, copy_b, clash_a, clash_b])
                   | row_checks.CheckRows(CLISM_SCHEMA))
        assert_that(checked["rows"] | beam.Map(lambda r: r["id"]), equal_to(["fr:1", "fr:4"]), label="rows")
        assert_that(checked[DEAD_LETTER] | beam.Map(lambda d: (d["record_id"], d["reason"])),
                    equal_to([("fr:2", "int_out_of_range"), ("fr:3", "wrong_type"), ("fr:4", "duplicate_row"),
                              ("fr:5", "duplicate_id"), ("fr:5", "duplicate_id")]), label="dead")
        assert_that(checked[STATS] | beam.CombinePerKey(sum),
                    equal_to([(("en-fr", "write/int_out_of_range"), 1), (("en-fr", "write/wrong_type"), 1),
                              (("en-fr", "write/duplicate_row"), 1), (("en-fr", "write/duplicate_id"), 2)]), label="stats")


def test_a_row_with_an_int64_overflow_is_dead_lettered_not_a_crash():
    row = {"id": "en:1:a00", "lang": "en", "entity": "E", "query_words": ["q"], "query_spaces": [False],
           "context_words": ["c"], "context_spaces": [False], "answers": [], "answerable": False,
           "definition_page": 2**63, "mention_page": 1}
    assert row_problem(row, MRC_SCHEMA) == ("int_out_of_range", "definition_page")
    assert row_problem({**row, "definition_page": 2**63 - 1}, MRC_SCHEMA) is None


def test_pages_sharing_an_id_or_a_title_are_dead_lettered_and_no_row_id_repeats(tmp_path):
    # Porto given Lisbon's page id, a second "Lisbon" page under a new id, and a copy of Tagus.
    bad = rewrite_dump(EN_SAMPLE, tmp_path / "enwiki-dup-pages-articles.xml.bz2",
                       lambda pages: [*pages[:4], with_page_id(pages[4], b"3003"), *pages[5:],
                                      with_page_id(pages[2], b"4003"), pages[6]])
    stats = wiki_run(tmp_path / "out", "--dump", f"en={bad}", "--min_mentions_en", "1")["en"]
    dead = dead_letters(tmp_path / "out")
    by_reason = sorted((d["reason"], d["record_id"], d["stage"]) for d in dead if d["reason"].startswith("duplicate"))
    assert by_reason == [("duplicate_page", "3007", "query"), ("duplicate_page_id", "3003", "query"),
                         ("duplicate_page_id", "3003", "query"), ("duplicate_title", "3007", "links"),
                         ("duplicate_title", "4003", "links")], by_reason
    assert (stats["pages/duplicate_page_id"], stats["pages/duplicate_page"], stats["pages/duplicate_title"]) == (2, 1, 2)
    rows = [r for f in sorted((tmp_path / "out" / "data").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) > 0
    # Neither page of the shared id defines an entity or gives a context: which is which is unknown.
    assert not [r for r in rows if 3003 in (r["definition_page"], r["mention_page"])]


# ─────────────────────────────── a multistream index that lies ───────────────────────────────


@pytest.fixture(scope="module")
def de_multistream(tmp_path_factory):
    """The German excerpt as a multistream dump of 3 pages a stream (27 streams), read 2 streams a
    range, and its job's output with the true index."""
    folder = tmp_path_factory.mktemp("de_ms")
    header, pages, footer = multistream.split_dump_pages([bz2.decompress(DE.read_bytes())])
    dump = folder / "dewiki-x-pages-articles-multistream.xml.bz2"
    index = folder / "dewiki-x-pages-articles-multistream-index.txt.bz2"
    multistream.write_multistream(pages, header, footer, dump, index, pages_per_stream=3)
    stats = wiki_run(folder / "out", "--dump", f"de={dump}", "--min_mentions", "1", "--streams_per_range", "2")
    return dump, index, stats["de"], shards(folder / "out")


def _lie(index: Path, how: str, dump_size: int) -> None:
    lines = bz2.decompress(index.read_bytes()).decode().splitlines(keepends=True)
    offsets = sorted({int(line.split(":", 1)[0]) for line in lines})

    def moved(line, by):
        offset, rest = line.split(":", 1)
        return f"{int(offset) + by}:{rest}"

    if how == "shifted by 37 bytes":
        lines = [moved(line, 37) for line in lines]
    elif how == "one offset mid-stream":
        lines = [moved(line, 37) if int(line.split(":")[0]) == offsets[5] else line for line in lines]
    elif how == "an offset past the end":
        lines.append(f"{dump_size + 1000}:999999:Nowhere\n")
    elif how == "offsets out of order":
        lines = [lines[-1], *lines[:-1]]
    index.write_bytes(bz2.compress("".join(lines).encode()))


@needs_excerpts
@pytest.mark.parametrize("how", ["shifted by 37 bytes", "one offset mid-stream", "an offset past the end"])
def test_a_lying_multistream_index_loses_no_page(de_multistream, tmp_path, capsys, how):
    dump, index, good_stats, good_shards = de_multistream
    lying = tmp_path / dump.name
    shutil.copy(dump, lying)
    shutil.copy(index, tmp_path / index.name)
    _lie(tmp_path / index.name, how, dump.stat().st_size)
    stats = wiki_run(tmp_path / "out", "--dump", f"de={lying}", "--min_mentions", "1", "--streams_per_range", "2")["de"]
    assert good_stats["pages/read"] == 79 and stats["pages/read"] == 79
    assert stats["read/bad_multistream_index"] == 1 and "read/truncated_archive" not in stats
    assert shards(tmp_path / "out") == good_shards
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: de: 1 multistream index(es) unreadable or not matching the dump; the dump was read "
                        "sequentially (read/bad_multistream_index; see dead_letter/)"]
    [dead] = [d for d in dead_letters(tmp_path / "out") if d["reason"] == "bad_multistream_index"]
    assert dead["excerpt"].startswith("the dump was read sequentially: ") and " offset " in dead["excerpt"]


@needs_excerpts
def test_index_lines_out_of_order_but_true_are_read_in_parallel(de_multistream, tmp_path):
    # Every offset a stream start: the ranges still tile the file, so nothing is lost and no warning.
    dump, index, good_stats, good_shards = de_multistream
    shutil.copy(dump, tmp_path / dump.name)
    shutil.copy(index, tmp_path / index.name)
    _lie(tmp_path / index.name, "offsets out of order", dump.stat().st_size)
    stats = wiki_run(tmp_path / "out", "--dump", f"de={tmp_path / dump.name}", "--min_mentions", "1",
                     "--streams_per_range", "2")["de"]
    assert stats["pages/read"] == 79 and "read/bad_multistream_index" not in stats
    assert shards(tmp_path / "out") == good_shards


def test_index_mismatch_names_the_offset():
    import io

    streams = bz2.compress(b"<mediawiki>") + bz2.compress(b"<page>1</page>")
    second = len(bz2.compress(b"<mediawiki>"))
    assert multistream.index_mismatch(io.BytesIO(streams), [0, second], len(streams)) is None
    assert "offset 5 is not the start of a bz2 stream" in multistream.index_mismatch(io.BytesIO(streams), [0, 5], len(streams))
    assert "outside the" in multistream.index_mismatch(io.BytesIO(streams), [0, len(streams)], len(streams))


# ─────────────────────────────── inputs whose shape fooled a reader ───────────────────────────────


def test_a_tsv_with_cr_only_line_ends_is_refused_in_one_line(tmp_path):
    from pipelines import clism_pairs, vocap

    cr = tmp_path / "en-ar.tsv"
    cr.write_bytes((PARALLEL / "en-ar.tsv").read_bytes().replace(b"\n", b"\r"))
    message = refused(clism_pairs.run, ["--output", str(tmp_path / "out"), f"--pairs=ar={cr}"])
    assert "en-ar.tsv ends its lines with CR alone" in message and "tr '\\r' '\\n'" in message, message
    mono = tmp_path / "fr.txt"
    mono.write_bytes((MONO / "fr.txt").read_bytes().replace(b"\n", b"\r"))
    assert "ends its lines with CR alone" in refused(vocap.run, ["--output", str(tmp_path / "v"), f"--mono=fr={mono}"])
    crlf = tmp_path / "crlf.tsv"  # CRLF is fine: read as lines
    crlf.write_bytes((PARALLEL / "en-ar.tsv").read_bytes().replace(b"\n", b"\r\n"))
    from pipelines.input_checks import check_line_ends
    check_line_ends("--pairs", "ar=crlf.tsv", str(crlf))


def test_a_dump_with_a_bracket_in_its_name_is_read_as_that_file(tmp_path):
    folder = tmp_path / "dumps [2024]"
    folder.mkdir()
    multi = folder / "enwiki-[x]-pages-articles-multistream.xml.bz2"
    sample_multi = Path(str(SAMPLE_DIR)) / "enwiki-sample-pages-articles-multistream.xml.bz2"
    shutil.copy(sample_multi, multi)
    shutil.copy(str(sample_multi).replace("multistream.xml", "multistream-index.txt"),
                str(multi).replace("multistream.xml", "multistream-index.txt"))
    stats = wiki_run(tmp_path / "out", "--dump", f"en={multi}")["en"]
    assert stats["pages/read"] == 29 and "read/bad_multistream_index" not in stats


def test_a_squad_file_nested_200000_deep_is_one_line(tmp_path):
    from training.tasks.squad import read_squad

    deep = tmp_path / "deep.json"
    deep.write_text('{"data": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(ValueError, match="JSON nested too deeply to read; expected a SQuAD v1.1-format file"):
        read_squad(deep)
