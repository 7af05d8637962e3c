"""CachedNer: spaCy NER once per distinct English text, the same words and entities as without it."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest

from corpora.clism.ner_spans import CachedNer, TaggedText, load_ner_pipeline, ner_pipeline_available
from pipelines import clism_pairs

pytestmark = pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed")

ENGLISH = (Path(clism_pairs.sample_dir()) / "en-fr.en").read_text(encoding="utf-8").splitlines()

# Texts the NER pipeline really processed: a spaCy component after `ner` that counts every Doc.
SEEN: collections.Counter = collections.Counter()


def count_docs(doc):
    SEEN[doc.text] += 1
    return doc


@pytest.fixture(scope="module")
def nlp():
    from spacy.language import Language

    if "test_count_docs" not in Language.factories:
        Language.component("test_count_docs", func=count_docs)
    nlp = load_ner_pipeline("en_core_web_sm")
    nlp.add_pipe("test_count_docs", last=True)
    return nlp


def uncached(nlp, texts, pretokenized=False):
    from spacy.tokens import Doc

    inputs = [Doc(nlp.vocab, words=t.split()) for t in texts] if pretokenized else texts
    return [TaggedText(tuple(t.text for t in doc), tuple((e.start, e.end, e.label_) for e in doc.ents))
            for doc in nlp.pipe(inputs)]


def batches(texts, size):
    return [texts[k:k + size] for k in range(0, len(texts), size)]


def test_repeated_lines_are_tagged_once_with_the_same_words_and_entities(nlp):
    # The sample's 42 English lines three times over (as three target languages would pair them),
    # in batches that cut the repeats in odd places: some repeats in the same batch, some later.
    texts = ENGLISH * 3
    expected = uncached(nlp, texts)
    assert sum(1 for t in expected if t.entities) > 30  # real entities to compare, not empty tuples
    SEEN.clear()
    derived = []
    ner = CachedNer(nlp, derive=lambda words, entities: derived.append(words) or len(entities))
    got = [tagged for batch in batches(texts, 50) for tagged in ner.tag(batch)]
    assert got == [t._replace(derived=len(t.entities)) for t in expected]
    assert SEEN == collections.Counter(set(ENGLISH)) and ner.texts_tagged == len(set(ENGLISH))
    assert len(derived) == len(set(ENGLISH))  # derive() too runs once per distinct text


def test_a_small_cache_evicts_and_tags_again_and_zero_tags_everything(nlp):
    texts = ENGLISH * 2
    expected = uncached(nlp, texts)
    for entries, tagged in ((10, len(texts)), (0, len(texts))):
        # 10 entries hold less than the 42 lines between two sightings of a line: every line is
        # evicted before it comes back (and with 0 nothing is kept), yet the output is the same.
        ner = CachedNer(nlp, max_entries=entries)
        got = [t for batch in batches(texts, 8) for t in ner.tag(batch)]
        assert got == expected and ner.texts_tagged == tagged and len(ner.cache) <= entries
    ner = CachedNer(nlp, max_entries=42)
    assert [t for batch in batches(texts, 8) for t in ner.tag(batch)] == expected
    assert ner.texts_tagged == len(set(ENGLISH))


def test_pretokenized_texts_keep_their_words(nlp):
    texts = ["Angela Merkel met Emmanuel Macron in Paris .", "The Bank 's chief , Jane Doe , spoke ."] * 2
    ner = CachedNer(nlp, pretokenized=True)
    got = ner.tag(texts)
    assert got == uncached(nlp, texts, pretokenized=True) and ner.texts_tagged == 2
    assert got[0].words == tuple(texts[0].split())
