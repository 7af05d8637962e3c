"""Anonymise an entity in its own definition article: the mPMR query (paper §2.2, "Unified Q/C").

The paper masks "the anchor entity in the query" without saying which strings count as the
entity. We mask every *surface form* of it, one `[MASK]` per occurrence:
  * the title, and the title without a parenthetical qualifier ("Mercury (planet)" -> "Mercury");
  * the bold names of the lead (Wikipedia's convention: '''Barack Hussein Obama II''');
  * the titles of redirects to it;
  * anchor texts of links to it that *name* it: the anchor shares at least one content word
    (word-like, not a stop word, compared case-insensitively) with one of the names above.
    So "Obama" -> [[Barack Obama]] is a name and is masked, while generic link texts such as
    "the city" -> [[Paris]] share no content word and stay.
A person's surname alone ("Obama") is therefore masked exactly when the corpus links it to the
entity at least once, which any entity above the mention threshold in practice is; we do not
mask lone title words otherwise, because that over-masks common words ("United" in "United
States" would vanish from every mention of other "United ..." names in its query).

Matching is whole-word: in languages written with spaces a form matches a run of whole words
(so "Paris" never touches "Parisian"); in languages without spaces (zh, ja, th), where the word
segmenter may split a name differently in context than alone, a form matches characters of the
joined words and every word it overlaps is masked, so no part of a name survives.
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from corpora.titles import strip_qualifier

MASK = "[MASK]"


@dataclass(frozen=True)
class SurfaceForms:
    """Every string that names the entity, as word tuples (case-folded)."""

    forms: tuple[tuple[str, ...], ...]

    def as_strings(self, joins_with_space: bool) -> tuple[str, ...]:
        sep = " " if joins_with_space else ""
        return tuple(sep.join(form) for form in self.forms)


def _fold(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(w.casefold() for w in words)


def collect_surface_forms(
    tokenizer,
    title: str,
    bold_names: Sequence[str],
    redirect_titles: Sequence[str],
    anchor_texts: Sequence[str],
    stop_words: frozenset[str],
    is_word_like,
) -> SurfaceForms:
    """Tokenise every candidate name once and keep the anchor texts that name the entity."""
    names = [title, strip_qualifier(title), *bold_names]
    for redirect in redirect_titles:
        names += [redirect, strip_qualifier(redirect)]
    names = [n for n in dict.fromkeys(n.strip() for n in names) if n]
    anchors = [a for a in dict.fromkeys(a.strip() for a in anchor_texts) if a]
    tokenised = tokenizer.tokenize_many(names + anchors)
    name_forms = [_fold(words) for words in tokenised[: len(names)]]
    content = {
        w for form in name_forms for w in form if w not in stop_words and is_word_like(w)
    }
    forms = set(f for f in name_forms if f)
    joined_names = ["".join(f) for f in name_forms]
    for words in tokenised[len(names):]:
        folded = _fold(words)
        if any(w in content for w in folded) or (
            not tokenizer.joins_with_space and _shares_half_of(folded, joined_names)
        ):
            forms.add(folded)
    # Longest first so that "Barack Obama" wins over "Obama" at the same position.
    return SurfaceForms(tuple(sorted(forms, key=lambda f: (-len(f), f))))


def _shares_half_of(anchor_words: tuple[str, ...], joined_names: list[str]) -> bool:
    """Unspaced scripts: the segmenter may cut a name differently alone and inside a longer one
    (th "กรุงเทพฯ" vs "กรุงเทพมหานคร" are single, different words), so compare characters: the
    anchor names the entity when at least half of it (2+ characters) runs unbroken in a name."""
    anchor = "".join(anchor_words)
    need = max(2, (len(anchor) + 1) // 2)
    for name in joined_names:
        match = SequenceMatcher(None, anchor, name, autojunk=False).find_longest_match(0, len(anchor), 0, len(name))
        if match.size >= need:
            return True
    return False


def _mask_spaced(words: Sequence[str], forms: SurfaceForms) -> list[tuple[str, int]]:
    """Whole-word, longest-first replacement; returns (word, index of first source word)."""
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for form in forms.forms:
        by_first.setdefault(form[0], []).append(form)
    folded = _fold(words)
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(words):
        match = next(
            (f for f in by_first.get(folded[i], ()) if folded[i : i + len(f)] == f), None
        )
        if match:
            out.append((MASK, i))
            i += len(match)
        else:
            out.append((words[i], i))
            i += 1
    return out


def _mask_unspaced(words: Sequence[str], forms: SurfaceForms) -> list[tuple[str, int]]:
    """Character matching over the joined words; a word overlapped by a match is masked."""
    folded = _fold(words)
    starts, pos = [], 0
    for w in folded:
        starts.append(pos)
        pos += len(w)
    joined = "".join(folded)
    occurrence_of_char = [-1] * len(joined)
    occurrence = 0
    for form in forms.forms:
        needle = "".join(form)
        if not needle:
            continue
        for m in re.finditer(re.escape(needle), joined):
            if any(occurrence_of_char[c] >= 0 for c in range(m.start(), m.end())):
                continue  # already inside a longer form
            for c in range(m.start(), m.end()):
                occurrence_of_char[c] = occurrence
            occurrence += 1
    out: list[tuple[str, int]] = []
    last_occurrence = None
    for i, w in enumerate(words):
        hit = {occurrence_of_char[c] for c in range(starts[i], starts[i] + len(folded[i]))} - {-1}
        if not hit:
            out.append((w, i))
            last_occurrence = None
            continue
        first = min(hit)
        if last_occurrence is not None and first <= last_occurrence:
            last_occurrence = max(hit)  # same name continues over this word
            continue
        out.append((MASK, i))
        last_occurrence = max(hit)
    return out


def mask_query(
    words: Sequence[str], forms: SurfaceForms, query_words: int, joins_with_space: bool
) -> list[str]:
    """The first `query_words` source words with the entity masked.

    Callers pass a few more words than `query_words` so that a name that starts inside the
    window but ends after it is masked whole rather than cut into a leaking half.
    """
    masked = (_mask_spaced if joins_with_space else _mask_unspaced)(words, forms)
    return [w for w, source_index in masked if source_index < query_words]


def leaked_forms(query: Sequence[str], forms: SurfaceForms, joins_with_space: bool) -> list[str]:
    """Surface forms still present in a masked query, by plain string search (an independent check)."""
    if joins_with_space:
        text = " " + " ".join(_fold(query)) + " "
        return [s for s in forms.as_strings(True) if s and f" {s} " in text]
    text = "".join(_fold(query))
    return [s for s in forms.as_strings(False) if s and s in text]
