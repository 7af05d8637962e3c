"""Multistream byte ranges through indexed_bzip2 (corpora/dumps/decoding.py) read as libbz2, the
reference, reads them: the real English excerpt re-packed as Wikimedia publishes it, whole and with a
stream truncated or corrupted, from a local file and through Beam's filesystems."""
from __future__ import annotations

import bz2
import os
import subprocess
import sys
from pathlib import Path

import pytest
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from corpora.dumps import decoding as dump_bytes
from corpora.dumps import pages as dumps
from corpora.dumps.multistream import read_index_offsets, split_dump_pages, stream_ranges, write_multistream

from libbz2_calls import reference_calls  # noqa: F401  (a fixture)

REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("XLU_SHARED_DATA", REPO.parent / "shared" / "data")) / "wikipedia"
EXCERPT = SHARED / "enwiki-excerpt.xml.bz2"
PAGES_PER_STREAM = 10  # the excerpt's ~200 pages in ~20 streams, so that ranges are many
STREAMS_PER_RANGE = 3

if dump_bytes._indexed_bzip2 is None:
    if os.environ.get("CI") and os.environ.get("XLU_PURE_PYTHON") != "1":
        raise RuntimeError("indexed_bzip2 is not installed: pip install -e . installs it")
    pytest.skip("indexed_bzip2 not installed", allow_module_level=True)
if not EXCERPT.exists():
    pytest.skip(f"{EXCERPT} not present", allow_module_level=True)


@pytest.fixture(scope="module")
def multistream(tmp_path_factory) -> tuple[Path, list[tuple[int, int | None]]]:
    """The excerpt re-packed as a multistream dump, and its byte ranges as the job plans them."""
    folder = tmp_path_factory.mktemp("multistream")
    dump, index = folder / "enwiki-x-pages-articles-multistream.xml.bz2", folder / "index.txt.bz2"
    with bz2.open(EXCERPT, "rb") as f:
        header, pages, footer = split_dump_pages(iter(lambda: f.read(1 << 20), b""))
    write_multistream(pages, header, footer, dump, index, PAGES_PER_STREAM)
    with open(index, "rb") as f:
        offsets = read_index_offsets(f)
    return dump, stream_ranges(offsets, dump.stat().st_size, STREAMS_PER_RANGE)


def read_ranges(open_dump, ranges) -> list:
    with open_dump() as f:
        return [record for start, end in ranges for record in dumps.read_stream_range(f, start, end, f"d:{start}-{end}")]


def read_by_reference(path: Path, ranges, monkeypatch) -> list:
    with monkeypatch.context() as patched:
        patched.setattr(dump_bytes, "_indexed_bzip2", None)
        return read_ranges(lambda: open(path, "rb"), ranges)


def test_ranges_of_a_real_dump_need_no_reference(multistream, reference_calls, monkeypatch):
    path, ranges = multistream
    assert len(ranges) > 3
    fast = read_ranges(lambda: open(path, "rb"), ranges)
    assert reference_calls == []  # every range decoded by indexed_bzip2 and checked to its last byte
    reference = read_by_reference(path, ranges, monkeypatch)
    assert fast == reference
    assert all(isinstance(r, dumps.RawPage) for r in fast) and len(fast) > 100


def test_ranges_through_beam_filesystems(multistream, reference_calls, monkeypatch):
    path, ranges = multistream
    beam_open = lambda: FileSystems.open(str(path), compression_type=CompressionTypes.UNCOMPRESSED)  # noqa: E731
    fast = read_ranges(beam_open, ranges)
    assert reference_calls == []
    assert fast == read_by_reference(path, ranges, monkeypatch)


def test_the_decoder_reports_the_file_position_inside_a_range(multistream):
    path, ranges = multistream
    start, end = ranges[2]
    with open(path, "rb") as f:
        f.seek(start)
        chunks = dump_bytes.bz2_chunks(f, end - start, False)
        next(chunks)
        assert start < dump_bytes.compressed_position(f) <= end
        chunks.close()
        assert id(f) not in dump_bytes._DECODERS


def flip(data: bytes, at: int, n: int = 16) -> bytes:
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + n]) + data[at + n :]


def damaged(path: Path, ranges, kind: str) -> bytes:
    """The dump with the middle stream of the third range corrupted, or cut off (the file ends in it)."""
    data = path.read_bytes()
    start, end = ranges[2]
    if kind == "corrupt":
        return flip(data, (start + end) // 2)
    return data[: (start + end) // 2]


@pytest.mark.parametrize("kind", ["corrupt", "truncate"])
def test_a_damaged_stream_is_dead_lettered_and_the_rest_read(multistream, reference_calls, monkeypatch, tmp_path, kind):
    path, ranges = multistream
    bad = tmp_path / path.name
    bad.write_bytes(damaged(path, ranges, kind))
    size = bad.stat().st_size
    bad_ranges = [(s, e) for s, e in ranges if s < size]
    bad_ranges[-1] = (bad_ranges[-1][0], None if kind == "truncate" else bad_ranges[-1][1])
    fast = read_ranges(lambda: open(bad, "rb"), bad_ranges)
    assert len(reference_calls) == 1  # the damaged range alone, read again by libbz2
    reference = read_by_reference(bad, bad_ranges, monkeypatch)
    assert fast == reference
    dead = [r for r in fast if isinstance(r, dumps.BadRecord)]
    expected = "corrupt_archive" if kind == "corrupt" else "truncated_archive"
    assert dead and {r.reason for r in dead} == {expected}
    assert all(r.source == f"d:{ranges[2][0]}-{bad_ranges[2][1]}" for r in dead)
    pages_of = lambda some: [r for r in read_ranges(lambda: open(path, "rb"), some)]  # noqa: E731
    kept = [r for r in fast if isinstance(r, dumps.RawPage)]
    before, hit = pages_of(ranges[:2]), pages_of(ranges[2:3])
    assert kept[: len(before)] == before  # the ranges before the damage are read in full
    if kind == "corrupt":  # and those after it; the damaged range loses one stream's pages at most
        after = pages_of(ranges[3:])
        assert kept[len(kept) - len(after):] == after
        assert len(hit) - PAGES_PER_STREAM <= len(kept) - len(before) - len(after) < len(hit)
    else:  # the file ends inside the third range: its streams before the cut are read
        assert 0 < len(kept) - len(before) < len(hit)


def test_an_abandoned_range_read_lets_the_process_exit(multistream):
    """indexed_bzip2 aborts the interpreter at exit when a reader over a Python file object is still
    open; a read given up mid-way (its generator never closed) must not do that."""
    path, ranges = multistream
    start, end = ranges[1]
    script = (
        "import io, sys\n"
        "from corpora.dumps import decoding\n"
        f"data = open({str(path)!r}, 'rb').read()\n"
        f"f = io.BytesIO(data); f.seek({start})\n"
        f"chunks = decoding.bz2_chunks(f, {end - start}, False)\n"
        "next(chunks)\n"
        "sys.modules['__main__'].keep = chunks\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-500:]
