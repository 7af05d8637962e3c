"""corpora.titles: MediaWiki's canonical title form, and qualifier stripping."""
import pytest

from corpora.titles import normalise_title, strip_qualifier


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("political philosophy", "Political philosophy"),
        ("Political_philosophy", "Political philosophy"),
        ("  state   (polity) ", "State (polity)"),
        ("foo_ _bar\tbaz\nqux", "Foo bar baz qux"),
        ("AT&amp;T", "AT&T"),
        ("New&nbsp;York", "New York"),
        ("Caf&#233;", "Café"),
        ("Caf&#xE9; de Flore", "Café de Flore"),
        ("Paris#History", "Paris"),
        ("Paris#History_of_Paris", "Paris"),
        ("#History", ""),
        ("#", ""),
        ("", ""),
        ("   ", ""),
        (":Category:Cities", "Category:Cities"),
        (": fr:Paris", "Fr:Paris"),
        ("iPod", "IPod"),
        ("ébène", "Ébène"),
        ("москва", "Москва"),
        ("北京", "北京"),
        ("ß-Lactam", "ß-Lactam"),  # MediaWiki does not expand ß to SS
        ("თბილისი", "თბილისი"),  # Georgian keeps its lower-case first letter
        ("100%25_pure", "100% pure"),
        ("Foo%20bar", "Foo bar"),
        ("100%", "100%"),
        ("\u200eParis\u200f", "Paris"),
        ("Already Fine", "Already Fine"),
    ],
)
def test_normalise_title(raw, expected):
    assert normalise_title(raw) == expected


def test_normalise_title_is_idempotent():
    for raw in ["a_b#c", " ébène ", "AT&amp;T", "x  y", ":foo"]:
        once = normalise_title(raw)
        assert normalise_title(once) == once


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Mercury (planet)", "Mercury"),
        ("Mercury (element)", "Mercury"),
        ("Paris, Texas", "Paris, Texas"),
        ("Mercury", "Mercury"),
        ("(Untitled)", "(Untitled)"),
        ("Georgia (U.S. state)", "Georgia"),
        ("Bond (finance) (disambiguation)", "Bond (finance)"),
        ("Left (of centre) party", "Left (of centre) party"),
    ],
)
def test_strip_qualifier(title, expected):
    assert strip_qualifier(title) == expected
