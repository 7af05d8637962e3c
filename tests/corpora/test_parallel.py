"""Readers of parallel text: the three layouts, column order, and every kind of bad line."""
from __future__ import annotations

import io

import pytest

from corpora.text_lines import decode_line
from corpora.bitext import (
    BadLine,
    PairSource,
    ParallelPair,
    count_lines,
    parse_pair_spec,
    read_single_file,
    read_two_files,
)

EN_FR = PairSource("fr", ("x",), True)


def lines(text: str) -> list[bytes]:
    return io.BytesIO(text.encode("utf-8")).readlines()


def test_pair_spec_key_gives_the_column_order():
    assert parse_pair_spec("fr=a.tsv") == PairSource("fr", ("a.tsv",), True)
    assert parse_pair_spec("en-fr=a.tsv") == PairSource("fr", ("a.tsv",), True)
    assert parse_pair_spec("ro-en=roen.src-tgt") == PairSource("ro", ("roen.src-tgt",), False)
    assert parse_pair_spec("vi=train.en,train.vi") == PairSource("vi", ("train.en", "train.vi"), True)


@pytest.mark.parametrize("bad", ["fr", "=x", "fr=", "de-fr=x", "en-en=x", "en=x", "FR=x", "fr=a,b,c", "fr=a,"])
def test_bad_pair_specs_say_what_is_expected(bad):
    with pytest.raises(ValueError, match="--pairs"):
        parse_pair_spec(bad)


def test_pipe_and_tsv_files_are_detected_and_read():
    pipe = list(read_single_file(lines("Paris is big . ||| Paris est grande .\nHi ||| Salut\n"), EN_FR, "f", 100))
    assert pipe == [ParallelPair("f:1", "fr", "Paris is big .", "Paris est grande ."), ParallelPair("f:2", "fr", "Hi", "Salut")]
    tsv = list(read_single_file(lines("Paris is big .\tParis est grande .\n"), EN_FR, "f", 100))
    assert tsv == [ParallelPair("f:1", "fr", "Paris is big .", "Paris est grande .")]


def test_english_second_column_is_swapped_to_the_source():
    ro_en = PairSource("ro", ("x",), False)
    [pair] = read_single_file(lines("de Cornel Nistorescu ||| by Cornel Nistorescu\n"), ro_en, "g", 100)
    assert (pair.src_text, pair.tgt_text) == ("by Cornel Nistorescu", "de Cornel Nistorescu")


def test_bad_lines_are_reported_with_their_reason_and_line_number():
    raw = lines("ok ||| bien\n\n ||| vide\nno separator here\n" + " ".join(["w"] * 6) + " ||| x\n")
    raw.insert(1, b"caf\xe9 ||| caf\xe9\n")  # Latin-1, not UTF-8
    records = list(read_single_file(raw, EN_FR, "f", max_words=5))
    assert isinstance(records[0], ParallelPair)
    assert [(r.pair_id, r.reason) for r in records[1:]] == [
        ("f:2", "not_utf8"), ("f:3", "empty"), ("f:4", "empty"), ("f:5", "no_separator"), ("f:6", "too_long"),
    ]
    assert all(isinstance(r, BadLine) for r in records[1:])


def test_tsv_with_a_third_column_is_a_bad_line():
    [record] = read_single_file(lines("a\tb\tc\n"), EN_FR, "f", 100)
    assert record.reason == "too_many_columns"  # not "no_separator": the line has tabs, one too many


def test_two_files_are_zipped_and_whitespace_normalised():
    records = list(read_two_files(lines("The  Nile\r\nRome\n"), lines("Le Nil\n\n"), EN_FR, "f", 100))
    assert records[0] == ParallelPair("f:1", "fr", "The Nile", "Le Nil")
    assert records[1].reason == "empty"


@pytest.mark.parametrize("text,n", [("", 0), ("a\n", 1), ("a\nb", 2), ("a\nb\n", 2), ("\n\n\n", 3)])
def test_count_lines_counts_a_last_line_without_newline(text, n):
    assert count_lines(io.BytesIO(text.encode())) == n


def test_byte_order_marks_and_windows_line_ends_are_not_text():
    # A BOM opens files saved on Windows, and each part of files joined with `cat`.
    data = "\ufeffParis is big .\tParis est grande .\r\n\ufeffHi\t\ufeffSalut\r\n".encode("utf-8")
    pairs = list(read_single_file(io.BytesIO(data).readlines(), EN_FR, "f", 100))
    assert pairs == [ParallelPair("f:1", "fr", "Paris is big .", "Paris est grande ."), ParallelPair("f:2", "fr", "Hi", "\ufeffSalut")]
    en, fr = lines("\ufeffHello\r\n"), [b"\xef\xbb\xbfBonjour\r\n"]
    assert list(read_two_files(en, fr, EN_FR, "f", 100)) == [ParallelPair("f:1", "fr", "Hello", "Bonjour")]


def test_decode_line_keeps_a_mark_inside_the_text_and_rejects_bad_bytes():
    assert decode_line("\ufeff\ufeffa\ufeffb\n".encode("utf-8")) == "a\ufeffb"
    assert decode_line(b"caf\xe9\n") is None
