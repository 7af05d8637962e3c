"""Readers of English-X parallel text: two line-aligned files, a TSV, or `src ||| tgt` lines.

A `PairSource` names where one language pair's text is and which column holds English; the CLISM
source side is always English (spaCy NER runs there), so rows come out as (English, X) whatever the
column order of the file (the ro-en gold set has Romanian first).

Reading yields `ParallelPair` for good lines and `BadLine` (a counted drop with a reason) for the
rest: not UTF-8, a missing separator, more than two TSV columns, an empty side, a side over `max_words` words. Line numbers are
1-based, as editors show them.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from corpora.text_lines import decode_line

PIPE = " ||| "


class PairSource(NamedTuple):
    tgt_lang: str
    paths: tuple[str, ...]  # one file (tsv or pipe) or two line-aligned files
    english_first: bool  # column (or file) order: True when English is the first column


class ParallelPair(NamedTuple):
    pair_id: str
    tgt_lang: str
    src_text: str  # English
    tgt_text: str


class BadLine(NamedTuple):
    pair_id: str
    tgt_lang: str
    reason: str
    excerpt: str


_LANG = re.compile(r"^[a-z]{2,3}$")


def parse_pair_spec(value: str, flag: str = "--pairs") -> PairSource:
    """`fr=PATH` | `en-fr=PATH` | `ro-en=PATH` | `fr=EN_PATH,FR_PATH` -> PairSource.

    The key names the column order; a bare `X` means English first. Raises ValueError with a
    message that says what is expected.
    """
    key, sep, paths = value.partition("=")
    if not sep or not key or not paths:
        raise ValueError(f"{flag} {value!r}: expected LANG=PATH, e.g. {flag} fr=en-fr.tsv or {flag} fr=train.en,train.fr")
    langs = key.split("-")
    if len(langs) == 1:
        langs = ["en", langs[0]]
    if len(langs) != 2 or not all(_LANG.match(lang) for lang in langs) or "en" not in langs or langs[0] == langs[1]:
        raise ValueError(f"{flag} {value!r}: the key must be X, en-X or X-en with X a language code other than en")
    english_first = langs[0] == "en"
    tgt_lang = langs[1] if english_first else langs[0]
    parts = tuple(p for p in paths.split(","))
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"{flag} {value!r}: give one file (TSV or `src ||| tgt`) or two line-aligned files separated by a comma")
    return PairSource(tgt_lang, parts, english_first)


def detect_format(first_line: str) -> str:
    """A single file is `src ||| tgt` if its first line has the separator, else a TSV."""
    return "pipe" if PIPE.strip() in first_line else "tsv"


def _split(line: str, fmt: str) -> tuple[str, str] | None:
    if fmt == "pipe":
        if "|||" not in line:
            return None
        a, _, b = line.partition("|||")
        return a, b
    parts = line.split("\t")
    if len(parts) != 2:
        return None
    return parts[0], parts[1]


def count_lines(stream) -> int:
    """Lines in a binary stream (a last line without a newline counts), in 1 MiB reads."""
    n, last = 0, b"\n"
    while chunk := stream.read(1 << 20):
        n += chunk.count(b"\n")
        last = chunk[-1:]
    return n + (last != b"\n")


def check_pair(pair_id: str, tgt_lang: str, first: str, second: str, english_first: bool,
               max_words: int) -> ParallelPair | BadLine:
    """Normalise whitespace and apply the line rules to one pair of sides."""
    first, second = " ".join(first.split()), " ".join(second.split())
    src, tgt = (first, second) if english_first else (second, first)
    excerpt = f"{src} ||| {tgt}"
    if not src or not tgt:
        return BadLine(pair_id, tgt_lang, "empty", excerpt)
    # Whitespace-separated words bound the cost of NER and alignment before any tokeniser runs;
    # the job re-checks the limit on the tokenised words.
    if len(src.split()) > max_words or len(tgt.split()) > max_words:
        return BadLine(pair_id, tgt_lang, "too_long", excerpt)
    return ParallelPair(pair_id, tgt_lang, src, tgt)


def read_single_file(lines: Iterable[bytes], source: PairSource, name: str, max_words: int,
                     fmt: str | None = None) -> Iterator[ParallelPair | BadLine]:
    """Pairs from one TSV or `|||` file given as raw byte lines; the format is detected if None."""
    for number, raw in enumerate(lines, 1):
        pair_id = f"{name}:{number}"
        line = decode_line(raw)
        if line is None:
            yield BadLine(pair_id, source.tgt_lang, "not_utf8", raw[:200].decode("utf-8", "replace"))
            continue
        if fmt is None:
            fmt = detect_format(line)
        sides = _split(line, fmt)
        if sides is None:
            if not line.strip():
                reason = "empty"
            elif fmt == "tsv" and "\t" in line:
                # Three or more columns: which two are the pair cannot be known, and calling it
                # "no_separator" would send the user looking for a missing tab.
                reason = "too_many_columns"
            else:
                reason = "no_separator"
            yield BadLine(pair_id, source.tgt_lang, reason, line)
            continue
        yield check_pair(pair_id, source.tgt_lang, sides[0], sides[1], source.english_first, max_words)


def read_two_files(first_lines: Iterable[bytes], second_lines: Iterable[bytes], source: PairSource, name: str,
                   max_words: int) -> Iterator[ParallelPair | BadLine]:
    """Pairs from two line-aligned files (their line counts are checked before the job starts)."""
    for number, (raw_a, raw_b) in enumerate(zip(first_lines, second_lines), 1):
        pair_id = f"{name}:{number}"
        a, b = decode_line(raw_a), decode_line(raw_b)
        if a is None or b is None:
            bad = raw_a if a is None else raw_b
            yield BadLine(pair_id, source.tgt_lang, "not_utf8", bad[:200].decode("utf-8", "replace"))
            continue
        yield check_pair(pair_id, source.tgt_lang, a, b, source.english_first, max_words)
