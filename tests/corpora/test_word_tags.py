"""Parts of speech of ja, ko and zh words (corpora/word_tags.py) line up with the job's own words."""
from __future__ import annotations

from pathlib import Path

import pytest

from corpora.word_tags import tag_words
from corpora.words import get_tokenizer

NTREX = Path(__file__).resolve().parents[3] / "shared" / "data" / "parallel" / "ntrex128"


@pytest.mark.parametrize("lang", ["ja", "ko", "zh"])
def test_every_real_sentence_gets_one_tag_per_word(lang):
    path = NTREX / f"{lang}.txt"
    if not path.exists():
        pytest.skip(f"{path} not here")
    lines = path.read_text(encoding="utf-8").splitlines()[:200]
    tokenizer = get_tokenizer(lang)
    for line in lines:
        words = tokenizer.tokenize(line)
        assert len(tag_words(lang, line, words)) == len(words), line


def test_no_tags_for_other_languages_or_other_words():
    assert tag_words("en", "The White House said.", ["The", "White", "House", "said", "."]) == ()
    assert tag_words("ja", "クラーク氏は述べた。", ["クラーク氏", "は", "述べ", "た", "。"]) == ()  # not Sudachi's words
    assert tag_words("ko", "힐은 보도했습니다.", get_tokenizer("ko").tokenize("힐은 보도했습니다."))[:2] == ("NNG", "JX")
    # zh: jieba's dictionary tags; a word outside it (a name jieba made up) has none.
    assert tag_words("zh", "路透社未能核实", ["路透社", "未能", "核实"]) == ("n", "v", "n")
    assert tag_words("zh", "推特", ["推特"]) == ("",)
