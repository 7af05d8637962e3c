"""The two bz2 decoders of corpora/dumps/decoding.py give the same pages and the same dead letters: the
real excerpts and every kind of damage, each read from a file on disk (indexed_bzip2, falling back
to libbz2 on anything unusual), from memory (indexed_bzip2 through a range view) and by libbz2 alone,
the reference. Multistream byte ranges: test_dump_range_decoders.py."""
from __future__ import annotations

import bz2
import io
import os
from pathlib import Path

import pytest

from corpora.dumps import decoding as dump_bytes
from corpora.dumps import pages as dumps
from corpora.dumps.decoding import Gap

from libbz2_calls import reference_calls  # noqa: F401  (a fixture)

REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("XLU_SHARED", REPO.parent / "shared")) / "data" / "wikipedia"
REAL_DUMPS = sorted(SHARED.glob("*.xml.bz2"))
EXCERPT = SHARED / "enwiki-excerpt.xml.bz2"

if dump_bytes._indexed_bzip2 is None:
    if os.environ.get("CI") and os.environ.get("XLU_PURE_PYTHON") != "1":
        raise RuntimeError("indexed_bzip2 is not installed: pip install -e . installs it")
    pytest.skip("indexed_bzip2 not installed", allow_module_level=True)


def as_list(chunks) -> list:
    """Chunks with the bytes between two gaps joined: the decoders cut their output differently."""
    out, run = [], bytearray()
    for chunk in chunks:
        if isinstance(chunk, Gap):
            out += [bytes(run), (chunk.reason, chunk.detail)]
            run = bytearray()
        else:
            run += chunk
    return out + [bytes(run)]


@pytest.mark.skipif(not REAL_DUMPS, reason=f"no dumps in {SHARED}")
@pytest.mark.parametrize("path", REAL_DUMPS, ids=lambda p: p.name)
def test_real_dumps_decode_the_same_without_the_reference(path, reference_calls):
    with open(path, "rb") as f:
        fast = as_list(dump_bytes.bz2_chunks(f, None, True))
    assert reference_calls == []  # indexed_bzip2 read it all, checked to the file's last byte
    assert fast == [bz2.decompress(path.read_bytes())]


def flip(data: bytes, at: int, n: int = 64) -> bytes:
    damaged = bytearray(data)
    for i in range(at, at + n):
        damaged[i] ^= 0xFF
    return bytes(damaged)


def small_dump(n_pages: int = 5) -> list[bytes]:
    from test_dumps import FOOTER, HEADER, page_xml

    return [bz2.compress(HEADER)] + [bz2.compress(page_xml(i, f"P{i}", "word " * 50)) for i in range(1, n_pages + 1)] + [
        bz2.compress(FOOTER)
    ]


def damaged_inputs() -> dict[str, bytes]:
    cases = {"empty": b"", "not_bz2": b"<mediawiki>\n</mediawiki>\n", "header_only": b"BZh9"}
    streams = small_dump()
    cases["multistream"] = b"".join(streams)
    bad_stream = list(streams)
    bad_stream[3] = bad_stream[3][:20] + flip(bad_stream[3][20:40], 0, 20) + bad_stream[3][40:]
    cases["multistream_bad_stream"] = b"".join(bad_stream)
    cases["multistream_cut_between_streams"] = b"".join(streams[:3])
    cases["multistream_zeros_between"] = b"".join(streams[:3]) + b"\0" * 16 + b"".join(streams[3:])
    if EXCERPT.exists():
        data = EXCERPT.read_bytes()
        for where in (0.0005, 0.5, 0.999):
            cases[f"flipped_at_{where}"] = flip(data, int(len(data) * where))
        cases["cut_in_half"] = data[: len(data) // 2]
        cases["cut_3_bytes_short"] = data[:-3]
        cases["trailing_garbage"] = data + b"garbage!"
        cases["trailing_zeros"] = data + b"\0" * 4
        cases["two_copies"] = data + data
    return cases


CASES = damaged_inputs()


@pytest.mark.parametrize("name", sorted(CASES))
def test_damage_reads_as_the_reference_reads_it(name, tmp_path, monkeypatch):
    data = CASES[name]
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(data)
    with open(path, "rb") as f:
        from_disk = list(dumps.iter_pages_from_file(f, "d.bz2", "bz2"))
    from_memory = list(dumps.iter_pages_from_file(io.BytesIO(data), "d.bz2", "bz2"))  # no descriptor: a view
    monkeypatch.setattr(dump_bytes, "_indexed_bzip2", None)
    reference = list(dumps.iter_pages_from_file(io.BytesIO(data), "d.bz2", "bz2"))
    assert from_disk == reference
    assert from_memory == reference


def drained(chunks) -> tuple[list, str | None]:
    """(the chunks as `as_list` joins them, the reason of the ArchiveError that ended them or None)."""
    seen = []
    try:
        for chunk in chunks:
            seen.append(chunk)
    except dump_bytes.ArchiveError as error:
        return as_list(seen), error.reason
    return as_list(seen), None


@pytest.mark.parametrize("name", ["flipped_at_0.5", "cut_in_half", "multistream_bad_stream"])
def test_damage_falls_back_once_and_keeps_the_checked_bytes(name, tmp_path, reference_calls):
    if name not in CASES:
        pytest.skip(f"{EXCERPT} not present")
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(CASES[name])
    with open(path, "rb") as f:
        fast = drained(dump_bytes.bz2_chunks(f, None, True))
    assert len(reference_calls) == 1
    with open(path, "rb") as f:
        assert fast == drained(dump_bytes.libbz2_chunks(f, None, True))


class Unseekable(io.RawIOBase):
    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def test_seekable_inputs_go_to_indexed_bzip2_and_streams_to_libbz2(tmp_path, reference_calls):
    streams = small_dump()
    data = b"".join(streams)
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(data)
    with open(path, "rb") as f:  # the last multistream range, to the end of the file
        pages = list(dumps.read_stream_range(f, len(streams[0]), None, "d.bz2"))
    assert [p.title for p in pages] == ["P1", "P2", "P3", "P4", "P5"]
    with open(path, "rb") as f:  # a range in the middle
        pages = list(dumps.read_stream_range(f, len(streams[0]) + len(streams[1]), len(data) - len(streams[-1]), "d.bz2"))
    assert [p.title for p in pages] == ["P2", "P3", "P4", "P5"]
    list(dump_bytes.bz2_chunks(io.BytesIO(data), None, True))
    assert reference_calls == []
    unseekable = list(dump_bytes.bz2_chunks(Unseekable(data), None, True))
    assert len(reference_calls) == 1 and b"".join(unseekable) == bz2.decompress(data)
