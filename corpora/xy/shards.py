"""XY-LENT training sequences (§4, Appendix A) as plain functions: MRTD packing, TRTD pairs, and
the seeded choices of which pairs are drawn and which are flipped. pipelines/xy_corpus.py runs them.

Token ids are the vocap model's (corpora/xy/vocap.py): `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3
`<mask>`=4, the ids SentencePiece gives, no offset.

MRTD: "a fixed input sequence length of 512" (Appendix A). The lines of one input file are read in
file order, each followed by `</s>`, and packed whole, as RoBERTa's FULL-SENTENCES (fairseq's
`complete` break mode) packs them: `<s>` and then as many lines as fit in max_len; a line that does
not fit in what is left opens the next sequence, and only a line longer than a sequence by itself is
cut. Every token is kept, in order.

TRTD: `<s> x </s> y </s>`, the order flipped with probability 0.5 (§4) by a generator keyed on
(seed, pair id, draw), never on iteration order.

Drawing pairs by the Sinkhorn probabilities (corpora/xy/sinkhorn.py): a language pair (a, b) with
n_ab usable pairs and probability π_ab should give π_ab · N TRTD rows out of N. Each of its pairs is
therefore drawn r = π_ab · N / n_ab times in expectation: ⌊r⌋ copies, plus one more with probability
r - ⌊r⌋ (a uniform keyed on the pair id). Pairs of a down-weighted language pair are kept with
probability r < 1; those of an up-weighted one are repeated. The per-pair decision needs only the
pair and the table, so the mix follows pair_probs whatever the order and split of the work.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

from corpora.bitext import PairSource
from corpora.seeding import keyed_rng
from corpora.xy.vocap import BOS_ID, EOS_ID

_LANG = re.compile(r"^[a-z]{2,3}$")
MIN_MAX_LEN = 8  # `<s> x </s> y </s>` needs 3 specials; below this nothing useful fits


class BitextSource(NamedTuple):
    x_lang: str  # the first column's (or first file's) language
    y_lang: str
    paths: tuple[str, ...]  # one file (TSV or `x ||| y`) or two line-aligned files

    @property
    def key(self) -> str:
        return f"{self.x_lang}-{self.y_lang}"

    def as_pair_source(self) -> PairSource:
        """corpora.bitext's readers, told to keep the column order (x first) and to carry the
        X-Y key where they carry the target language."""
        return PairSource(self.key, self.paths, True)


class TokenisedPair(NamedTuple):
    pair_id: str
    x_lang: str
    y_lang: str
    x_ids: tuple[int, ...]
    y_ids: tuple[int, ...]


def parse_bitext_spec(value: str, flag: str = "--bitext") -> BitextSource:
    """`X-Y=PATH` (TSV or `x ||| y`) or `X-Y=X_PATH,Y_PATH` (two line-aligned files) -> BitextSource."""
    key, sep, paths = value.partition("=")
    if not sep or not key or not paths:
        raise ValueError(f"{flag} {value!r}: expected X-Y=PATH, e.g. {flag} fr-ar=fr-ar.tsv or {flag} fr-ar=train.fr,train.ar")
    langs = key.split("-")
    if len(langs) != 2 or not all(_LANG.match(lang) for lang in langs):
        raise ValueError(f"{flag} {value!r}: the key must be X-Y, two language codes, the first column's first")
    if langs[0] == langs[1]:
        raise ValueError(f"{flag} {value!r}: both sides are {langs[0]}; bitext pairs two different languages")
    parts = tuple(paths.split(","))
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"{flag} {value!r}: give one file (TSV or `x ||| y`) or two line-aligned files separated by a comma")
    return BitextSource(langs[0], langs[1], parts)


def pair_key(a: str, b: str) -> str:
    """The unordered language pair, as stats and pair_probs name it: `ar-fr` for fr-ar and ar-fr."""
    return "-".join(sorted((a, b)))


def pack_sequences(lines: list[list[int]], max_len: int) -> list[list[int]]:
    """Token ids of consecutive lines -> MRTD sequences of at most max_len ids (module docstring).
    Cutting the stream every max_len - 1 tokens instead began 94% of the real NTREX rows inside a
    line, a third of those inside a word ("المس‖لمة"), and some with a bare `</s>`."""
    body = max_len - 1
    sequences: list[list[int]] = []
    current: list[int] = []
    for ids in lines:
        line = [*ids, EOS_ID]
        if current and len(current) + len(line) > body:
            sequences.append([BOS_ID, *current])
            current = []
        while len(line) > body:  # longer than a whole sequence: cut, the rest goes on
            sequences.append([BOS_ID, *line[:body]])
            line = line[body:]
        current.extend(line)
    if current:
        sequences.append([BOS_ID, *current])
    return sequences


def trtd_sequence(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[list[int], int]:
    """`<s> first </s> second </s>` and src_len, the length of `<s> first </s>`."""
    return [BOS_ID, *first, EOS_ID, *second, EOS_ID], len(first) + 2


def trtd_length(x_ids, y_ids) -> int:
    return len(x_ids) + len(y_ids) + 3


def draw_rate(prob: float, pairs: int, target: int) -> float:
    """Expected draws per pair of a language pair: its share of the `target` rows over its pairs."""
    return prob * target / pairs if pairs else 0.0


def draw_count(seed: int, pair_id: str, rate: float) -> int:
    """⌊rate⌋ copies and one more with probability rate - ⌊rate⌋, keyed on the pair id."""
    whole = math.floor(rate)
    return whole + (keyed_rng(seed, "draw", pair_id).random() < rate - whole)


def is_flipped(seed: int, pair_id: str, draw: int) -> bool:
    """§4: flip the bitext language order with probability 0.5; each copy of a pair decides anew."""
    return keyed_rng(seed, "flip", pair_id, draw).random() < 0.5
