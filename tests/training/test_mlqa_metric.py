"""MLQA's EM/F1 (training/tasks/mlqa_metric.py) against hand-computed values: Unicode punctuation,
each language's articles, Chinese by characters."""
from __future__ import annotations

import pytest

from training.tasks import mlqa_metric as mlqa
from training.tasks import squad


def test_articles_and_unicode_punctuation_go_where_squads_metric_keeps_them():
    assert mlqa.normalize_answer("Die Stadt «Berlin»", "de") == "stadt berlin"
    assert squad.normalize_answer("Die Stadt «Berlin»") == "die stadt «berlin»"
    assert mlqa.exact_match_score("el río Ebro", "río Ebro", "es")
    assert mlqa.exact_match_score("những người", "người", "vi")
    assert mlqa.normalize_answer("البيت", "ar") == "بيت"
    assert mlqa.normalize_answer("Der Hindi-Satz", "hi") == "der hindisatz"  # hi: no articles to drop


def test_chinese_is_scored_by_characters_other_text_by_words():
    assert mlqa.normalize_answer("2008年北京奥运会", "zh") == "2008 年 北 京 奥 运 会"
    # 北京市 against 北京: precision 2/3, recall 1
    assert mlqa.f1_score("北京市", "北京", "zh") == pytest.approx(0.8)
    assert squad.f1_score("北京市", "北京") == 0.0  # one whitespace token each, different
    assert mlqa.f1_score("the Beijing Games", "Beijing", "en") == pytest.approx(2 / 3)


def test_the_file_name_gives_the_context_language_and_unknown_languages_are_refused():
    assert mlqa.language_of_file("MLQA_V1/test/test-context-de-question-en.json") == "de"
    assert mlqa.language_of_file("xquad.de.json.gz") is None
    with pytest.raises(ValueError, match="MLQA's metric knows en, es, hi, vi, de, ar, zh; not 'th'"):
        mlqa.mlqa_evaluate([], {}, "th")
