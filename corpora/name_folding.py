"""Comparing names the way a reader does: up to case, and up to accents where that is safe.

"Aristotélēs" and "Aristoteles", "Los Ángeles" and "Los Angeles" name the same thing; a query that
masks one and leaves the other leaks the answer. Folding is NFKD, then only the combining marks of
the *Combining Diacritical Marks* block (U+0300–U+036F: the accents of Latin, Greek and Cyrillic
letters) are dropped, then casefold. Marks of other scripts are never dropped: a Devanagari,
Bengali, Thai or Arabic vowel sign is a letter of the word, not an accent on it.

Languages whose accents tell words apart (Vietnamese tones and vowel qualities: "ma", "má", "mà",
"mả", "mã", "mạ" are six words) are folded up to case only; the per-language flag is
`WikiLanguage.fold_diacritics` (corpora/wiki/languages.py).
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

_COMBINING_ACCENTS = {code: None for code in range(0x0300, 0x0370)}


@lru_cache(maxsize=1 << 16)
def fold_word(word: str, strip_accents: bool) -> str:
    """One word folded: casefold, and accents of Latin/Greek/Cyrillic letters dropped if asked."""
    if strip_accents and not word.isascii():
        stripped = unicodedata.normalize("NFKD", word).translate(_COMBINING_ACCENTS)
        # Recompose what is left (Hangul, Indic conjuncts decomposed by NFKD stay comparable).
        word = unicodedata.normalize("NFC", stripped)
    return word.casefold()


def fold_words(words, strip_accents: bool) -> tuple[str, ...]:
    return tuple(fold_word(w, strip_accents) for w in words)
