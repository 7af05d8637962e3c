"""Answers and unanswerable contexts where names inflect (corpora/wiki/inflections.py)."""
from corpora.mrc.examples import answer_spans, contains_any, find_spans
from corpora.wiki.inflections import name_inflection


def test_an_inflected_form_of_a_name_is_an_answer_and_a_derivation_is_not():
    bn = name_inflection("bn")
    words = "ভারত দক্ষিণ এশিয়ার দেশ । ভারতের রাজধানী দিল্লি । ভারতীয় সংস্কৃতি প্রাচীন ।".split()
    assert find_spans(words, ["ভারত"], True) == [(0, 0)]  # without the table: the exact name only
    assert answer_spans(words, [["ভারত"]], True, bn.bases, True) == ((0, 0), (5, 5))  # not ভারতীয় (Indian)
    el = name_inflection("el")
    words = "Η ιστορία της Παρισινής Κομμούνας είναι σύντομη".split()
    assert find_spans(words, ["Παρισινή", "Κομμούνα"], True, el.bases, True) == [(3, 4)]
    en = name_inflection("en")
    words = "Angola exports oil ; Angolan troops fought".split()
    assert answer_spans(words, [["Angola"]], True, en.bases, True) == ((0, 0),)


def test_an_unanswerable_context_holds_no_inflected_form():
    bn = name_inflection("bn")
    context = "ভারতের রাজধানী দিল্লি".split()
    assert not contains_any(context, [("ভারত",)], True, True)
    assert contains_any(context, [("ভারত",)], True, True, bn.bases)


def test_inflected_spans_are_every_run_whose_words_each_match():
    """find_spans with `bases` against its definition, on random word lists (targets longer than the
    words included): a span is every position whose words each equal the target's or inflect it."""
    import random

    inflected = {"as": frozenset({"a"}), "bs": frozenset({"b"}), "abs": frozenset({"a", "b"})}
    bases = lambda word: inflected.get(word, frozenset())  # noqa: E731
    rng = random.Random(7)
    vocabulary = ["a", "b", "c", "as", "bs", "abs"]
    for _ in range(500):
        words = [rng.choice(vocabulary) for _ in range(rng.randrange(0, 8))]
        target = [rng.choice("abc") for _ in range(rng.randrange(1, 4))]
        expected = [(i, i + len(target) - 1) for i in range(len(words) - len(target) + 1)
                    if all(w == g or g in bases(w) for w, g in zip(words[i:], target))]
        assert find_spans(words, target, True, bases) == expected, (words, target)
