"""The side-language check of clism_pairs on real NTREX-128 text: every real pair passes, swapped or
mislabelled sides do not."""
from __future__ import annotations

import pytest

import itertools

from corpora.language_check import SAMPLE_LINES, bitext_side_mismatch, language_mismatch
from conftest import SHARED_DATA

NTREX = SHARED_DATA / "parallel" / "ntrex128"
pytestmark = pytest.mark.skipif(not NTREX.exists(), reason="../shared/data is not beside this checkout")
LANGS = "ar bn de el es fi fr hi id it ja ko nl pl pt ru sv sw te th tr vi zh".split()


def lines(lang: str) -> list[str]:
    return (NTREX / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:SAMPLE_LINES]


def test_every_real_pair_passes_and_swapped_sides_do_not():
    english = lines("en")
    for lang in LANGS:
        assert language_mismatch(english, lines(lang), lang) is None, lang
        assert "the sides are swapped" in language_mismatch(lines(lang), english, lang), lang


@pytest.mark.parametrize("declared, text", [("ja", "zh"), ("ar", "hi"), ("el", "ru"), ("ko", "ja"), ("th", "vi")])
def test_a_file_in_another_language_is_named(declared, text):
    assert language_mismatch(lines("en"), lines(text), declared).startswith(f"the {declared} side does not read as")


@pytest.mark.slow  # every NTREX X-Y pair both ways: ~55 CPU-s
def test_every_real_x_y_pair_passes_and_swapped_sides_do_not():
    # xy_corpus's bitext: all 276 pairs of NTREX's 24 languages, in order and swapped.
    text = {lang: lines(lang) for lang in ["en", *LANGS]}
    for x, y in itertools.combinations(sorted(text), 2):
        assert bitext_side_mismatch(text[x], text[y], x, y) is None, (x, y)
        assert bitext_side_mismatch(text[y], text[x], x, y) is not None, (x, y)
    assert "the sides are swapped" in bitext_side_mismatch(text["en"], text["ja"], "ja", "en")
    assert bitext_side_mismatch(text["ja"], text["en"], "ja", "de").startswith("the de side reads as English")
