"""Multistream dumps (corpora/dumps/multistream.py): byte ranges read on their own give the same pages as
one sequential read, index files and their damage, ranges that end mid-stream."""
from __future__ import annotations

import bz2
import io

import pytest

from corpora.dumps import pages as dumps
from corpora.dumps import multistream
from test_dumps import bad_of, excerpt_records, excerpt_xml, needs_excerpt, pages_of  # noqa: F401  (two are fixtures)


# ─────────────────────────────── multistream ───────────────────────────────


@pytest.fixture(scope="module")
def excerpt_multistream(tmp_path_factory, excerpt_xml):
    header, pages, footer = multistream.split_dump_pages([excerpt_xml])
    out = tmp_path_factory.mktemp("ms")
    dump, index = out / "enwiki-multistream.xml.bz2", out / "enwiki-multistream-index.txt.bz2"
    multistream.write_multistream(pages, header, footer, dump, index, pages_per_stream=10)
    return dump, index


@needs_excerpt
def test_split_dump_pages_round_trips(excerpt_xml):
    header, pages, footer = multistream.split_dump_pages([excerpt_xml])
    assert len(pages) == 206 and header + b"".join(pages) + footer == excerpt_xml
    assert header.rstrip().endswith(b"</siteinfo>") and footer.strip() == b"</mediawiki>"


@needs_excerpt
@pytest.mark.parametrize("streams_per_range", [1, 2, 7, 1000])
def test_multistream_ranges_equal_sequential_read(excerpt_multistream, excerpt_records, streams_per_range):
    dump, index = excerpt_multistream
    with open(index, "rb") as f:
        offsets = multistream.read_index_offsets(f)
    assert len(offsets) == 21  # 206 pages, 10 per stream; the header stream is not indexed
    ranges = multistream.stream_ranges(offsets, dump.stat().st_size, streams_per_range)
    assert ranges[0][0] == 0 and ranges[-1][1] == dump.stat().st_size
    records = []
    with open(dump, "rb") as f:
        for start, end in ranges:
            records += dumps.read_stream_range(f, start, end, f"{dump}:{start}-{end}")
    assert records == excerpt_records
    # The whole multistream file read as one .bz2 gives the same pages too.
    with open(dump, "rb") as f:
        assert list(dumps.iter_pages_from_file(f, str(dump), "bz2")) == excerpt_records


@needs_excerpt
def test_multistream_index_lines(excerpt_multistream, excerpt_records):
    _, index = excerpt_multistream
    lines = bz2.decompress(index.read_bytes()).decode().splitlines()
    assert len(lines) == 206
    offset, page_id, title = lines[1].split(":", 2)
    assert (int(page_id), title) == (12, "Anarchism")
    assert lines[-1].endswith(":" + excerpt_records[-1].title)


@needs_excerpt
def test_range_that_ends_mid_stream(excerpt_multistream):
    dump, index = excerpt_multistream
    with open(index, "rb") as f:
        offsets = multistream.read_index_offsets(f)
    with open(dump, "rb") as f:
        records = list(dumps.read_stream_range(f, offsets[0], offsets[1] - 100, "r"))
    assert records[-1].reason == "truncated_archive"
    with open(dump, "rb") as f:  # a start that is not a stream start: its block is found by its magic
        records = list(dumps.read_stream_range(f, offsets[0] + 1, offsets[1], "r"))
    assert [r.reason for r in bad_of(records)] == ["corrupt_archive"] and len(pages_of(records)) == 10


def test_read_index_offsets_plain_and_bz2():
    text = b"600:10:A\n600:12:Help:Contents: a title with colons\n9000:13:C\n\n"
    assert multistream.read_index_offsets(io.BytesIO(text)) == [600, 9000]
    assert multistream.read_index_offsets(io.BytesIO(bz2.compress(text) + bz2.compress(b"700:14:D\n"))) == [600, 700, 9000]


@pytest.mark.parametrize(
    "text, message",
    [
        (b"600:10:A\n600:12:B\nnot an index line\n", "line 3: expected 'offset:page_id:title'"),
        (b"600:10:A\nx600:12:B\n", "line 2"),
        (b"600:A\n", "line 1"),
        (b"", "no index lines"),
    ],
)
def test_read_index_offsets_errors(text, message):
    with pytest.raises(ValueError, match=message):
        multistream.read_index_offsets(io.BytesIO(text))


def test_read_index_offsets_bad_bz2():
    with pytest.raises(ValueError, match="cannot decompress"):
        multistream.read_index_offsets(io.BytesIO(b"BZh9 not really bzip2"))


def test_stream_ranges():
    assert multistream.stream_ranges([600, 700, 800], 900, 2) == [(0, 700), (700, 900)]
    assert multistream.stream_ranges([0, 700, 800], None, 1) == [(0, 700), (700, 800), (800, None)]
    assert multistream.stream_ranges([800, 600, 600], 900, 10) == [(0, 900)]
    with pytest.raises(ValueError, match="at least 1"):
        multistream.stream_ranges([0], 10, 0)
    with pytest.raises(ValueError, match="past the end"):
        multistream.stream_ranges([0, 50], 40, 1)
