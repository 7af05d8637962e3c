"""wiki_mrc on bad input and misconfiguration: one line to fix a fatal mistake before the run, a
dead letter with a reason for damaged dumps and pages while the job goes on."""
from __future__ import annotations

import bz2

import pytest

from corpora.dumps import pages as dumps
from job_files import dead_letters
from pipelines import wiki_dump_reading, wiki_mrc
from test_wiki_mrc_job import EXCERPT, needs_excerpt, rows, run_job


def test_a_dump_given_twice_or_in_two_forms_is_refused_before_it_doubles_every_row(tmp_path, capsys):
    # A dump folder holds X.xml.bz2 and X-multistream.xml.bz2 (and both in parts): "X*.bz2" matches both.
    from importlib import resources

    sample = resources.files("corpora") / "samples" / "wiki"
    for dumps_given, message in [
        ([f"en={sample}/enwiki-*.bz2"], "hold the same dump .* in 2 forms"),
        ([f"en={sample}/{dumps.SAMPLE_DUMPS['en']}"] * 2, "is given twice"),
    ]:
        with pytest.raises(SystemExit, match=message) as err:
            wiki_mrc.run(["--output", str(tmp_path / "out"), *(f"--dump={d}" for d in dumps_given)])
        assert "\n" not in str(err.value)
    parts = [tmp_path / f"enwiki-x-pages-articles-multistream{n}.xml-p{n}p{n}.bz2" for n in (1, 2)]
    for n, part in enumerate(parts):
        part.write_bytes(bz2.compress(b"<page>%d</page>" % n))
    parts = [str(part) for part in parts]
    assert wiki_dump_reading.same_pages_twice(parts) is None  # the parts of one dump are one dump once
    assert "2 forms" in wiki_dump_reading.same_pages_twice([*parts, "enwiki-x-pages-articles2.xml-p2p2.bz2"])
    # A link to a dump, or a copy under another name, is the same input (pipelines/input_identity.py).
    (tmp_path / "elsewhere.xml.bz2").symlink_to(parts[0])
    assert "one file under two names" in wiki_dump_reading.repeated_dumps({"en": [parts[0], str(tmp_path / "elsewhere.xml.bz2")]})
    # A multistream dump without its index is read, with a note that says what one worker reading it costs.
    lone = tmp_path / dumps.SAMPLE_DUMPS["en"]
    lone.write_bytes((sample / dumps.SAMPLE_DUMPS["en"]).read_bytes())
    run_job(tmp_path / "lone", "--dump", f"en={lone}")
    assert "no multistream index beside it" in capsys.readouterr().err


@needs_excerpt
def test_truncated_archive_keeps_the_pages_before_the_cut(tmp_path):
    data = EXCERPT.read_bytes()
    cut = tmp_path / "enwiki-cut-pages-articles.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    stats = run_job(tmp_path / "out", "--dump", f"en={cut}", "--min_mentions_en", "2")
    assert 0 < stats[("en", "pages/read")] < 206
    assert stats[("en", "read/truncated_archive")] == 1
    assert any(d["reason"] == "truncated_archive" for d in dead_letters(tmp_path / "out"))


@pytest.mark.parametrize(
    "args,message",
    [
        (["--dump", "en=/nonexistent/enwiki.xml.bz2"], "file not found"),
        (["--dump", "xx=/tmp"], "unknown language 'xx'"),
        (["--dump", "enwiki.xml.bz2"], "expected LANG=PATH"),
        (["--context_words", "0"], "--context_words must be at least 1"),
    ],
)
def test_misconfiguration_fails_fast_in_one_line(tmp_path, args, message):
    with pytest.raises(SystemExit, match=message) as err:
        wiki_mrc.run(["--output", str(tmp_path), *args])
    assert "\n" not in str(err.value)


@needs_excerpt
def test_oversized_pages_go_to_the_dead_letter_and_the_job_goes_on(tmp_path):
    stats = run_job(tmp_path, "--dump", f"en={EXCERPT}", "--min_mentions_en", "2", "--max_page_bytes", "150000")
    too_large = stats[("en", "read/page_too_large")]
    assert too_large > 0
    assert stats[("en", "pages/read")] + too_large == 206
    assert sum(d["reason"] == "page_too_large" for d in dead_letters(tmp_path)) == too_large


def test_damaged_multistream_index_falls_back_to_one_sequential_read(tmp_path):
    from importlib import resources

    sample = resources.files("corpora") / "samples" / "wiki"
    dump = tmp_path / "enwiki-s-pages-articles-multistream.xml.bz2"
    dump.write_bytes((sample / dumps.SAMPLE_DUMPS["en"]).read_bytes())
    (tmp_path / "enwiki-s-pages-articles-multistream-index.txt.bz2").write_bytes(bz2.compress(b"12:3:Lisbon\nnot an index line\n"))
    good = run_job(tmp_path / "good", "--dump", f"en={sample / dumps.SAMPLE_DUMPS['en']}")
    damaged = run_job(tmp_path / "damaged", "--dump", f"en={dump}")
    assert damaged[("en", "pages/read")] == good[("en", "pages/read")]
    assert rows(tmp_path / "damaged") == rows(tmp_path / "good")
    assert [d["reason"] for d in dead_letters(tmp_path / "damaged") if d["stage"] == "read" and d["record_id"] == "index"] == [
        "bad_multistream_index"
    ]


@needs_excerpt
def test_a_dump_whose_bytes_contradict_its_name_is_refused_in_one_line(tmp_path):
    # Plain XML named .xml.bz2 was read as one damaged bz2 region: the whole dump lost, exit status 0.
    plain = tmp_path / "dewiki-pages-articles.xml.bz2"
    plain.write_bytes(bz2.decompress(EXCERPT.read_bytes())[:100_000])
    with pytest.raises(SystemExit, match=r"is plain XML, not bzip2 as its name says; rename it to "
                                         r"dewiki-pages-articles\.xml") as err:
        wiki_mrc.run(["--output", str(tmp_path / "out"), "--dump", f"en={plain}"])
    assert "\n" not in str(err.value)
    packed = tmp_path / "enwiki-pages-articles.xml"
    packed.write_bytes(EXCERPT.read_bytes())
    with pytest.raises(SystemExit, match=r"is bzip2-compressed; name it enwiki-pages-articles\.xml\.bz2"):
        wiki_mrc.run(["--output", str(tmp_path / "out"), "--dump", f"en={packed}"])
