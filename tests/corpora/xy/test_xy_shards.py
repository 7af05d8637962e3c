"""corpora/xy/shards.py: MRTD packing, TRTD sequences, seeded draws and flips, bitext flags."""
from __future__ import annotations

import random

import pytest

from corpora.xy import shards as xy_shards
from corpora.xy.vocap import BOS_ID, EOS_ID


def random_lines(n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    # ids >= 5: never a special token, as SentencePiece never gives one; some lines longer than a sequence
    return [[rng.randrange(5, 1000) for _ in range(rng.choice([1, 3, 40, 200, 1500]))] for _ in range(n)]


@pytest.mark.parametrize("max_len", [8, 64, 512])
def test_packing_keeps_every_token_within_max_len(max_len):
    lines = random_lines(200, max_len)
    sequences = xy_shards.pack_sequences(lines, max_len)
    assert all(1 < len(s) <= max_len and s[0] == BOS_ID for s in sequences)
    stream = [t for s in sequences for t in s[1:]]
    assert stream == [t for line in lines for t in (*line, EOS_ID)]  # every token, in order, lines ended by </s>
    assert stream.count(EOS_ID) == len(lines)
    # Whole lines: a sequence opens inside a line only after a full one cut from a line too long for
    # a sequence by itself, and a line that would have fitted was never split.
    for before, after in zip(sequences, sequences[1:]):
        assert before[-1] == EOS_ID or (len(before) == max_len and EOS_ID not in before[1:]), (before, after)
        if before[-1] == EOS_ID and after[-1] == EOS_ID and EOS_ID not in after[1:-1]:
            assert len(before) + len(after) - 1 > max_len  # the next line did not fit in what was left


def test_packing_fills_sequences_with_whole_lines():
    lines = [[10] * 4, [11] * 4, [12] * 4, [13] * 9]
    assert xy_shards.pack_sequences(lines, 12) == [
        [BOS_ID, *[10] * 4, EOS_ID, *[11] * 4, EOS_ID], [BOS_ID, *[12] * 4, EOS_ID],
        [BOS_ID, *[13] * 9, EOS_ID]]
    assert xy_shards.pack_sequences([[14] * 25], 12) == [  # cut only when longer than a sequence
        [BOS_ID, *[14] * 11], [BOS_ID, *[14] * 11], [BOS_ID, *[14] * 3, EOS_ID]]


def test_packing_nothing():
    assert xy_shards.pack_sequences([], 512) == []


def test_trtd_sequence_segments():
    ids, src_len = xy_shards.trtd_sequence((10, 11, 12), (20, 21))
    assert ids == [BOS_ID, 10, 11, 12, EOS_ID, 20, 21, EOS_ID]
    assert src_len == 5 and ids[src_len - 1] == EOS_ID
    assert xy_shards.trtd_length((10, 11, 12), (20, 21)) == len(ids)


def test_flip_rate_is_one_half_and_keyed():
    ids = [f"en-fr/europarl.tsv:{n}" for n in range(20_000)]
    flips = [xy_shards.is_flipped(0, pair_id, 0) for pair_id in ids]
    assert abs(sum(flips) / len(flips) - 0.5) < 0.015  # 4.2 standard deviations
    # a pure function of (seed, pair id, draw): the same in any order, different with the seed
    assert [xy_shards.is_flipped(0, pair_id, 0) for pair_id in reversed(ids)] == flips[::-1]
    other = [xy_shards.is_flipped(1, pair_id, 0) for pair_id in ids]
    assert 0.45 < sum(a != b for a, b in zip(flips, other)) / len(ids) < 0.55
    # copies of one pair decide independently
    second = [xy_shards.is_flipped(0, pair_id, 1) for pair_id in ids]
    assert 0.45 < sum(a != b for a, b in zip(flips, second)) / len(ids) < 0.55


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.5, 1.0, 2.3])
def test_draws_follow_the_rate(rate):
    counts = [xy_shards.draw_count(7, f"p:{n}", rate) for n in range(20_000)]
    assert set(counts) <= {int(rate), int(rate) + 1}
    assert sum(counts) / len(counts) == pytest.approx(rate, abs=0.02)


def test_draw_rate_shares_the_target_by_prob():
    # 3 language pairs of 100, 10 and 1000 pairs; 200 rows to draw
    probs, sizes, target = [0.5, 0.3, 0.2], [100, 10, 1000], 200
    expected = [xy_shards.draw_rate(p, n, target) * n for p, n in zip(probs, sizes)]
    assert expected == pytest.approx([100, 60, 40])
    assert xy_shards.draw_rate(0.5, 0, target) == 0.0


def test_parse_bitext_spec():
    assert xy_shards.parse_bitext_spec("fr-ar=a.tsv") == xy_shards.BitextSource("fr", "ar", ("a.tsv",))
    source = xy_shards.parse_bitext_spec("hi-vi=x.hi,x.vi")
    assert source.paths == ("x.hi", "x.vi") and source.key == "hi-vi"
    assert source.as_pair_source().english_first  # column order kept: x first
    assert xy_shards.pair_key("vi", "hi") == xy_shards.pair_key("hi", "vi") == "hi-vi"


@pytest.mark.parametrize("value, message", [
    ("fr-ar", "expected X-Y=PATH"),
    ("fr=a.tsv", "two language codes"),
    ("fr-ar-en=a.tsv", "two language codes"),
    ("FR-ar=a.tsv", "two language codes"),
    ("fr-fr=a.tsv", "both sides are fr"),
    ("fr-ar=a,b,c", "one file"),
    ("fr-ar=a,", "one file"),
])
def test_parse_bitext_spec_errors(value, message):
    with pytest.raises(ValueError, match=message):
        xy_shards.parse_bitext_spec(value)
