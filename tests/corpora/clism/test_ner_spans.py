"""Informative-span rules (CLISM Appendix B) and the spaCy NER pipeline they run on."""
from __future__ import annotations

import pytest

from corpora.clism.ner_spans import Span, check_span_rules, informative_spans, load_ner_pipeline, ner_pipeline_available
from corpora.words import stop_words

EN_STOP = stop_words("en")


def spans_of(words, entities, **kw):
    return informative_spans(words.split(), entities, EN_STOP, **kw)


def test_plain_entities_are_kept_with_inclusive_offsets():
    kept, rejected = spans_of("Barack Obama visited Berlin .", [(0, 2, "PERSON"), (3, 4, "GPE")])
    assert kept == [Span(0, 1, "PERSON"), Span(3, 3, "GPE")] and rejected == {}


def test_stop_word_only_and_punctuation_only_spans_are_rejected():
    kept, rejected = spans_of("It was the one that \" came .", [(0, 1, "X"), (2, 4, "CARDINAL"), (5, 6, "X")])
    assert kept == [] and rejected == {"only_stop_words": 2, "no_word": 1}


def test_spans_longer_than_ten_words_are_rejected():
    words = " ".join(f"w{i}" for i in range(12))
    kept, rejected = spans_of(words, [(0, 11, "ORG"), (0, 10, "ORG")])
    assert kept == [Span(0, 9, "ORG")] and rejected == {"too_long": 1}
    kept, rejected = spans_of(words, [(0, 4, "ORG")], max_words=3)
    assert kept == [] and rejected == {"too_long": 1}


def test_a_names_label_on_words_without_a_capital_is_rejected():
    # en_core_web_sm on real NTREX sentences: "sty" ORG, "tarpaulin" GPE, "electrician" NORP.
    kept, rejected = spans_of("The pig left the sty for Texas and a tarpaulin .",
                              [(4, 5, "ORG"), (6, 7, "GPE"), (9, 10, "GPE")])
    assert kept == [Span(6, 6, "GPE")] and rejected == {"lower_case_name": 2}
    # Values are not names, and a lower-cased corpus has no capitals to go by.
    kept, rejected = spans_of("it cost five dollars", [(2, 4, "MONEY")])
    assert kept == [Span(2, 3, "MONEY")] and rejected == {}
    kept, rejected = spans_of("the pig left texas", [(3, 4, "GPE")])
    assert kept == [Span(3, 3, "GPE")] and rejected == {}


def test_punctuation_at_the_edges_is_trimmed_to_the_words():
    kept, _ = spans_of("\" Star Wars \" opened", [(0, 4, "WORK_OF_ART")])
    assert kept == [Span(1, 2, "WORK_OF_ART")]
    # An amount keeps its currency and percent signs: they are part of what the [QUE] mask hides.
    kept, _ = spans_of("It cost $ 2 million , or 14 % more .", [(2, 5, "MONEY"), (7, 9, "PERCENT")])
    assert kept == [Span(2, 4, "MONEY"), Span(7, 8, "PERCENT")]
    assert check_span_rules("It cost $ 2 million".split(), Span(2, 4, "MONEY"), EN_STOP) == []
    kept, _ = spans_of("\" $ 5 \"", [(0, 4, "CARDINAL")])
    assert kept == [Span(2, 2, "CARDINAL")]


def test_label_filter_and_overlaps():
    kept, rejected = spans_of("Paris Hilton met Paris", [(0, 2, "PERSON"), (1, 2, "ORG"), (3, 4, "GPE")],
                              labels=frozenset({"PERSON", "ORG"}))
    assert kept == [Span(0, 1, "PERSON")] and rejected == {"overlap": 1, "label": 1}


def test_check_span_rules_reports_each_violation():
    words = "the of Paris , London".split()
    assert check_span_rules(words, Span(2, 2, "GPE"), EN_STOP) == []
    assert check_span_rules(words, Span(0, 1, "X"), EN_STOP) == ["only_stop_words"]
    assert check_span_rules(words, Span(2, 3, "X"), EN_STOP) == ["edge_not_a_word"]
    assert check_span_rules(words, Span(4, 5, "X"), EN_STOP) == ["out_of_range"]
    assert check_span_rules(words, Span(0, 4, "X"), EN_STOP, max_words=3) == ["too_long"]


needs_model = pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")


@needs_model
def test_the_pypi_model_loads_by_its_spacy_name_with_only_ner():
    nlp = load_ner_pipeline("en_core_web_sm")
    assert nlp.pipe_names == ["ner"]
    doc = nlp("Angela Merkel met Emmanuel Macron in Paris on Monday.")
    labels = {(e.text, e.label_) for e in doc.ents}
    assert {("Angela Merkel", "PERSON"), ("Emmanuel Macron", "PERSON"), ("Paris", "GPE")} <= labels


@needs_model
def test_pretokenized_docs_keep_the_given_words():
    from spacy.tokens import Doc

    nlp = load_ner_pipeline("en_core_web_sm")
    words = "The president of the European Central Bank met Angela Merkel in Berlin .".split()
    [doc] = nlp.pipe([Doc(nlp.vocab, words=words)])
    assert [t.text for t in doc] == words
    assert ("Angela Merkel", "PERSON") in {(e.text, e.label_) for e in doc.ents}


def test_a_trailing_possessive_is_not_part_of_the_span():
    # en_core_web_sm tags "the European Central Bank 's" as one ORG.
    kept, _ = spans_of("the European Central Bank 's president", [(0, 5, "ORG")])
    assert kept == [Span(0, 3, "ORG")]


def test_a_missing_pipeline_fails_clearly():
    assert not ner_pipeline_available("no_such_pipeline_xyz")
    with pytest.raises(OSError):
        load_ner_pipeline("no_such_pipeline_xyz")
