"""Sentences of a query's words, to drop the ones that hold another entity's longer name with the
entity's own inside it ("the Gulf of Mexico" in Mexico's query, "του Βασιλείου της Δανίας" in
Denmark's): masking half of that name corrupts it, keeping it leaks the answer, and without the
sentence the query is still the definition's start (`--names_in_longer_names drop_sentence`)."""
from __future__ import annotations

from collections.abc import Sequence

from corpora.mrc.entity_masking import MaskedQuery, mask_lead

# Words that end a sentence: the full stop, question and exclamation marks of the scripts the
# tokenisers split off, the danda (and a pipe typed for it), the Armenian full stop, CJK and
# Arabic/Urdu marks, Ethiopic and Burmese full stops.
_SENTENCE_ENDS = frozenset(".!?।॥|。！？։؟۔።။" + "…")


def is_sentence_end(word: str) -> bool:
    return bool(word) and all(ch in _SENTENCE_ENDS for ch in word)


def sentence_bounds(words: Sequence[str], at: int) -> tuple[int, int]:
    """The first and last word index of the sentence holding word `at` (its end mark included)."""
    start = at
    while start > 0 and not is_sentence_end(words[start - 1]):
        start -= 1
    end = at
    while end < len(words) - 1 and not is_sentence_end(words[end]):
        end += 1
    return start, end


def without_sentences(
    words: Sequence[str], ranges: Sequence[tuple[int, int]], other_names: Sequence[tuple[int, int]]
) -> tuple[list[str], list[tuple[int, int]], list[int]]:
    """`words` less every sentence that holds one of `ranges`, `other_names` (word ranges) moved to the
    words left, and the index each word left had; the last sentence may be unfinished (the lead was
    cut), and goes all the same."""
    dropped: set[int] = set()
    for first, last in ranges:
        start, _ = sentence_bounds(words, first)
        _, end = sentence_bounds(words, last)
        dropped.update(range(start, end + 1))
    new_index, kept = {}, []
    for i, word in enumerate(words):
        if i not in dropped:
            new_index[i] = len(kept)
            kept.append(word)
    moved = [(new_index[a], new_index[b]) for a, b in other_names if a in new_index and b in new_index]
    return kept, moved, sorted(new_index)


def masked_without_longer_name_sentences(
    words, forms, query_words: int, joins: bool, other_names, masked: MaskedQuery
) -> MaskedQuery:
    """The query without the sentences holding a longer name of another entity with the entity's in
    it; each pass may bring a later such sentence into the window. Its `longer_names` are left
    non-empty when no sentence without one is left. Its `last_sources` index the words given."""
    origin = list(range(len(words)))  # the index in the words given of each word still read
    for _ in range(8):
        if not masked.longer_names:
            break
        words, other_names, left = without_sentences(words, masked.longer_names, other_names)
        if not words:
            break
        origin = [origin[i] for i in left]
        masked = mask_lead(words, forms, query_words, joins, other_names, "keep")
    return masked._replace(last_sources=tuple(origin[i] for i in masked.last_sources))
