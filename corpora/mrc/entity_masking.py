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

Names compare up to case and, where the language allows (corpora/name_folding.py), up to accents:
"Aristotélēs" is masked in Aristotle's query, "Los Ángeles" in that of Los Angeles.

A form also matches where the language inflects it (corpora/wiki/inflections.py: "ঢাকার" for ঢাকা,
"της Κρήτης" for Κρήτη, "Ankara'da"), and where it is respelled ("Aristotélēs", "Afganistan"); a
derivation ("Angolan", "ελληνικός") names something else and is not masked.

A name is never masked *partly inside a longer link to something else*: in Chengdu's query the link
[[成都平原]] (Chengdu Plain) and in the Nile's the link [[النيل الأبيض]] (White Nile) would become
half a name, an invented word that still names the other entity. The job passes the lead's links as
word ranges (`other_names`); a link whose text is itself a surface form is masked. What happens to
a longer name holding the entity's is the caller's choice (`LONGER_NAME_CHOICES`): keep it whole,
mask it whole, or drop the sentence that holds it (`without_sentences`).
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from corpora.name_folding import fold_words
from corpora.titles import strip_qualifier
from corpora.wiki.inflections import is_respelling, name_inflection

MASK = "[MASK]"
LONGER_NAME_CHOICES = ("drop_sentence", "mask_whole", "keep")


@dataclass(frozen=True)
class SurfaceForms:
    """Every string that names the entity, as word tuples (folded: see fold)."""

    forms: tuple[tuple[str, ...], ...]
    strip_accents: bool = False
    lang: str = ""  # whose inflection of names applies (corpora/wiki/inflections.py); "" none

    def fold(self, words: Iterable[str]) -> tuple[str, ...]:
        return fold_words(words, self.strip_accents)

    def is_variant(self, word: str, name: str) -> bool:
        return is_name_variant(word, name, self.lang, self.strip_accents)

    def bases(self, word: str) -> frozenset:
        """Names (folded) of which `word` is an inflected form in the language."""
        inflection = name_inflection(self.lang, self.strip_accents) if self.lang else None
        return inflection.bases(word) if inflection is not None else frozenset()

    def names(self, words: Sequence[str]) -> bool:
        """Whether `words` (as written) are one of the forms, or its inflected or respelled form."""
        folded = self.fold(words)
        return folded in self.forms or any(
            len(f) == len(folded) and _matches_at(folded, 0, f, self) for f in self.forms)

    def as_strings(self, joins_with_space: bool) -> tuple[str, ...]:
        sep = " " if joins_with_space else ""
        return tuple(sep.join(form) for form in self.forms)


def collect_surface_forms(
    tokenizer,
    title: str,
    bold_names: Sequence[str],
    redirect_titles: Sequence[str],
    anchor_texts: Sequence[str],
    stop_words: frozenset[str],
    is_word_like,
    strip_accents: bool = False,
    lang: str = "",
) -> SurfaceForms:
    """Tokenise every candidate name once and keep the anchor texts that name the entity."""
    names = [title, strip_qualifier(title), *bold_names]
    for redirect in redirect_titles:
        names += [redirect, strip_qualifier(redirect)]
    names = [n for n in dict.fromkeys(n.strip() for n in names) if n]
    anchors = [a for a in dict.fromkeys(a.strip() for a in anchor_texts) if a]
    tokenised = tokenizer.tokenize_many(names + anchors)
    name_forms = [fold_words(words, strip_accents) for words in tokenised[: len(names)]]
    folded_stop_words = {fold_words((w,), strip_accents)[0] for w in stop_words} if strip_accents else stop_words
    content = {
        w for form in name_forms for w in form if w not in folded_stop_words and is_word_like(w)
    }
    forms = set(f for f in name_forms if f)
    joined_names = ["".join(f) for f in name_forms]
    for words in tokenised[len(names):]:
        folded = fold_words(words, strip_accents)
        if any(w in content for w in folded) or (
            not tokenizer.joins_with_space and _shares_half_of(folded, joined_names)
        ):
            forms.add(folded)
    # Longest first so that "Barack Obama" wins over "Obama" at the same position.
    return SurfaceForms(tuple(sorted(forms, key=lambda f: (-len(f), f))), strip_accents, lang)


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


def _inside_other_name(first: int, last: int, range_of: dict[int, tuple[int, int]]) -> bool:
    """Whether words first..last lie inside one link to another entity without being all of it."""
    span = range_of.get(first)
    return span is not None and span[0] <= first and last <= span[1] and span != (first, last)


def _ranges_by_word(other_names: Sequence[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    return {i: (a, b) for a, b in other_names for i in range(a, b + 1)}


def is_name_variant(word: str, name: str, lang: str, strip_accents: bool = True) -> bool:
    """Whether the folded `word` names what the folded `name` does: an inflected form of it in the
    language (corpora/wiki/inflections.py) or a respelling. In a language without a table, a close
    form by letters (`is_inflected_variant`)."""
    inflection = name_inflection(lang, strip_accents) if lang else None
    if inflection is None:
        return is_inflected_variant(word, name)
    return inflection.is_inflection(word, name) or is_respelling(word, name)


def is_inflected_variant(word: str, name: str) -> bool:
    """For a language without an inflection table: `word` is `name` with another ending or
    spelling, both folded: up to 3 letters added, 2 dropped, or a close spelling. Names under 5
    letters never vary."""
    if len(name) < 5 or len(word) < 4 or word[:3] != name[:3] or word == name:
        return False
    if word.startswith(name):
        return len(word) - len(name) <= 3  # a case or number ending, an adjective suffix
    if name.startswith(word):
        return len(name) - len(word) <= 2  # an ending dropped
    return is_respelling(word, name)  # a transliteration


def _ordinal_of(word: str, number: str) -> bool:
    """Whether `word` is `number` with an ordinal ending: el "15η" in "Η 15η Μαρτίου" (the day page
    "15 Μαρτίου", whose lead has no bold name: 80 of the 1,580 real el day-page rows kept it),
    "15th", "1er", "15º"."""
    ending = word[len(number):]
    return word.startswith(number) and 0 < len(ending) <= 3 and not any(ch.isdigit() for ch in ending)


def _leading_digits(word: str) -> str:
    end = 0
    while end < len(word) and word[end].isdigit():
        end += 1
    return word[:end]


def _matches_at(folded: Sequence[str], i: int, form: tuple[str, ...], forms: SurfaceForms) -> bool:
    """The form at word i, each word equal or a variant (an inflected form, a respelling), or in a
    form of several words, a number with an ordinal ending ("15η Μαρτίου")."""
    if i + len(form) > len(folded):
        return False
    return all(w == f or forms.is_variant(w, f) or len(form) > 1 and f.isdigit() and _ordinal_of(w, f)
               for w, f in zip(folded[i : i + len(form)], form))


def _mask_spaced(
    words: Sequence[str], forms: SurfaceForms, other_names: Sequence[tuple[int, int]] = ()
) -> tuple[list[tuple[str, int]], set[tuple[int, int]]]:
    """Whole-word, longest-first replacement; returns (word, index of first source word) and the
    other names' ranges that hold a form, left whole.

    Exact forms first; then, where no exact form starts, a form whose words may carry another
    ending ("της Κρήτης" in Crete's query). A variant never reaches into a link to another entity,
    not even a one-word link ("Indiana" in India's query)."""
    by_first: dict[str, list[tuple[str, ...]]] = {}
    by_prefix: dict[str, list[tuple[str, ...]]] = {}
    by_number: dict[str, list[tuple[str, ...]]] = {}
    for form in forms.forms:
        by_first.setdefault(form[0], []).append(form)
        if len(form[0]) >= 5:
            by_prefix.setdefault(form[0][:3], []).append(form)
        elif form[0].isdigit() and len(form) > 1:
            # "15η Μαρτίου", "१ जानेवारीचे"; not a number alone: a link [[10 Ιανουαρίου|10]] makes
            # "10" a form, and "η 10η ημέρα" (the 10th day) is not the date; nor is "1990s" or uk
            # "2000-х" (the decade) the year.
            by_number.setdefault(form[0], []).append(form)
    folded = forms.fold(words)
    range_of = _ranges_by_word(other_names)
    out: list[tuple[str, int]] = []
    held: set[tuple[int, int]] = set()
    i = 0
    while i < len(words):
        match = next(
            (f for f in by_first.get(folded[i], ()) if folded[i : i + len(f)] == f), None
        )
        if match is None:
            variants = [f for base in sorted(forms.bases(folded[i])) for f in by_first.get(base, ())]
            variants += by_prefix.get(folded[i][:3], ())
            if not variants and by_number and folded[i][:1].isdigit():
                variants = by_number.get(_leading_digits(folded[i]), ())
            match = next((f for f in variants if _matches_at(folded, i, f, forms)), None)
            if match and any(k in range_of for k in range(i, i + len(match))):
                if _inside_other_name(i, i + len(match) - 1, range_of):
                    held.add(range_of[i])
                match = None
        if match and range_of and _inside_other_name(i, i + len(match) - 1, range_of):
            held.add(range_of[i])
            match = None
        if match:
            out.append((MASK, i))
            i += len(match)
        else:
            out.append((words[i], i))
            i += 1
    return out, held


def _mask_unspaced(
    words: Sequence[str], forms: SurfaceForms, other_names: Sequence[tuple[int, int]] = ()
) -> tuple[list[tuple[str, int]], set[tuple[int, int]]]:
    """Character matching over the joined words; a word overlapped by a match is masked."""
    folded = forms.fold(words)
    range_of = _ranges_by_word(other_names)
    word_of_char = [i for i, w in enumerate(folded) for _ in w]
    starts, pos = [], 0
    for w in folded:
        starts.append(pos)
        pos += len(w)
    joined = "".join(folded)
    occurrence_of_char = [-1] * len(joined)
    occurrence = 0
    held: set[tuple[int, int]] = set()
    for form in forms.forms:
        needle = "".join(form)
        if not needle:
            continue
        for m in re.finditer(re.escape(needle), joined):
            if any(occurrence_of_char[c] >= 0 for c in range(m.start(), m.end())):
                continue  # already inside a longer form
            if range_of and _inside_other_name(word_of_char[m.start()], word_of_char[m.end() - 1], range_of):
                held.add(range_of[word_of_char[m.start()]])
                continue
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
    return out, held


class MaskedQuery(NamedTuple):
    words: list[str]
    leaks: list[str]  # surface forms still in the query outside the other names kept whole
    longer_names: tuple[tuple[int, int], ...]  # other names (word ranges) in the query that hold a form
    # For each query word, the last source word it stands for: a `[MASK]` takes that word's spacing
    # (corpora/spacing.py), so "[MASK], a city" and "[MASK]은" read as the lead did.
    last_sources: tuple[int, ...] = ()


def mask_lead(
    words: Sequence[str],
    forms: SurfaceForms,
    query_words: int,
    joins_with_space: bool,
    other_names: Sequence[tuple[int, int]] = (),
    longer_names: str = "keep",
) -> MaskedQuery:
    """The masked query of the first `query_words` words (callers pass a few more words, so that a name
    that starts inside the window but ends after it is masked whole rather than cut into a leaking
    half). A longer name of another entity holding one of the entity's forms is kept whole ("keep")
    or masked whole ("mask_whole"); "drop_sentence" is the caller's (`without_sentences`), and here
    is "keep"."""
    masked, held = (_mask_spaced if joins_with_space else _mask_unspaced)(words, forms, other_names)
    held = tuple(sorted(r for r in held if r[0] < query_words))
    if longer_names == "mask_whole" and held:
        start_of = {i: a for a, b in held for i in range(a, b + 1)}
        masked = [(MASK, source) if source in start_of else (w, source) for w, source in masked
                  if source not in start_of or source == start_of[source]]
        other_names = [r for r in other_names if r not in held]
    kept = [(w, source) for w, source in masked if source < query_words]
    inside = _ranges_by_word(other_names)
    # Words of another entity's link are blanked for the leak check: they were kept on purpose.
    checked = [w if w == MASK or source not in inside else "\x00" for w, source in kept]
    last_sources = tuple(masked[k + 1][1] - 1 if k + 1 < len(masked) else len(words) - 1 for k in range(len(kept)))
    return MaskedQuery([w for w, _ in kept], leaked_forms(checked, forms, joins_with_space), held, last_sources)


def leaked_forms(query: Sequence[str], forms: SurfaceForms, joins_with_space: bool) -> list[str]:
    """Surface forms still present in a masked query, by plain string search (an independent check),
    and where words are spaced, forms inflected or respelled ("ঢাকার" for ঢাকা)."""
    if joins_with_space:
        folded = forms.fold(query)
        text = " " + " ".join(folded) + " "
        found = [s for s in forms.as_strings(True) if s and f" {s} " in text]
        if not found:
            found = [" ".join(folded[i : i + len(f)]) for i in range(len(folded)) if folded[i] not in (MASK.casefold(), "\x00")
                     for f in forms.forms if _matches_at(folded, i, f, forms)][:1]
        return found
    text = "".join(forms.fold(query))
    return [s for s in forms.as_strings(False) if s and s in text]
