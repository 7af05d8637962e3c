"""Does each side of a parallel file read as the language it is declared as?

Files given in the wrong order (`--pairs de=de.txt,en.txt`), or the wrong file (`ja=en.txt,zh.txt`),
gave a full dataset without an error: English NER ran on German ("PERSON 'Jahr'", 3.87 spans a pair
instead of ~2.5), and every answer was in the wrong language. The check reads the first lines of each
side and counts the share of its words that are function words (stop words) of the declared
language. On the first 100 lines of NTREX-128 (24 languages):

  * English text: 47% English function words (words split at spaces, edge punctuation stripped);
    the 23 other languages at most 9% (pt) under English's list, so a side under 20% is not
    English, and a target side over it is;
  * each target under its own list: 6% (te, whose list is short) to 54% (es); every other language
    written in another script 0%, so a target side under 2% is not the declared language.

Languages written in the same script with shared function words (es and pt: 30% of Portuguese words
are on the Spanish list) are not told apart; the check is for sides swapped or a file mistaken for
another, not for language identification.
"""
from __future__ import annotations

from collections.abc import Sequence

from corpora.words import get_tokenizer, stop_words

SAMPLE_LINES = 100
# Fewer words say nothing: "Angela Merkel visited Paris ." has no function word at all.
MIN_WORDS = 100
ENGLISH_MIN_SHARE = 0.20
_EDGE_PUNCTUATION = ".,;:!?\"'()[]{}«»“”‘’"
DECLARED_MIN_SHARE = 0.02


def function_word_share(texts: Sequence[str], lang: str, pretokenized: bool = False) -> float | None:
    """The share of the alphabetic words of `texts` on `lang`'s stop list; None when the language has
    no stop list or tokeniser here, or the texts have under MIN_WORDS words (nothing to say)."""
    try:
        stops = stop_words(lang)
        # English words are what spaces and punctuation delimit: no tokeniser to build for a check
        # (spaCy's English one was half its cost); other languages need theirs (ja, zh, th).
        if pretokenized or lang == "en":
            split = (lambda batch: [[w.strip(_EDGE_PUNCTUATION) for w in t.split()] for t in batch])
        else:
            split = get_tokenizer(lang).tokenize_many
    except ValueError:
        return None
    if not stops:
        return None
    words = [w.lower() for ws in split(list(texts)) for w in ws if any(c.isalpha() for c in w)]
    return sum(w in stops for w in words) / len(words) if len(words) >= MIN_WORDS else None


def language_mismatch(english: Sequence[str], target: Sequence[str], tgt_lang: str,
                      pretokenized: bool = False) -> str | None:
    """What is wrong with the sides' languages and what to do, in words a user can act on; None when
    nothing is."""
    english_share = function_word_share(english, "en", pretokenized)
    target_as_english = function_word_share(target, "en", pretokenized)
    if english_share is None or target_as_english is None:
        return None
    if english_share < ENGLISH_MIN_SHARE:
        if target_as_english >= ENGLISH_MIN_SHARE:
            return (f"the {tgt_lang} side reads as English ({target_as_english:.0%} English function words) and the "
                    f"English side does not ({english_share:.0%}): the sides are swapped; give English first "
                    f"({tgt_lang}=EN_FILE,{tgt_lang.upper()}_FILE, or {tgt_lang}-en=... when English is second)")
        return (f"the English side does not read as English ({english_share:.0%} of its words are English function "
                "words; English text has about 47%): English goes first, or second with X-en=...")
    if tgt_lang.split("-")[0] != "en" and target_as_english >= ENGLISH_MIN_SHARE:
        return (f"the {tgt_lang} side reads as English too ({target_as_english:.0%} English function words; other "
                f"languages have at most 9%): give the {tgt_lang} text as the other side")
    own = function_word_share(target, tgt_lang, pretokenized)
    if own is not None and own < DECLARED_MIN_SHARE:
        return (f"the {tgt_lang} side does not read as {tgt_lang} ({own:.1%} of its words are {tgt_lang} function "
                "words; text in that language has 6-54%): declare the language it is in")
    return None


# A side reads as the other side's language by this much more than as its own: the sides are swapped.
SWAPPED_MARGIN = 0.05


def bitext_side_mismatch(x_texts: Sequence[str], y_texts: Sequence[str], x_lang: str, y_lang: str) -> str | None:
    """The same check for X-Y bitext (xy_corpus), where neither side need be English: each side under
    both languages' lists. `--bitext ja-en=en.txt,ja.txt` ran to the end with 1,997 English sentences
    labelled ja (NTREX)."""
    xx, xy = function_word_share(x_texts, x_lang), function_word_share(x_texts, y_lang)
    yy, yx = function_word_share(y_texts, y_lang), function_word_share(y_texts, x_lang)
    if None not in (xx, xy, yy, yx) and xy > xx + SWAPPED_MARGIN and yx > yy + SWAPPED_MARGIN:
        return (f"the {x_lang} side reads as {y_lang} and the {y_lang} side as {x_lang} ({xy:.0%} and {yx:.0%} of "
                f"their words are the other language's function words, {xx:.0%} and {yy:.0%} their own): the sides "
                f"are swapped; give the {x_lang} file first, or name the pair {y_lang}-{x_lang}")
    for lang, texts, own in ((x_lang, x_texts, xx), (y_lang, y_texts, yy)):
        as_english = function_word_share(texts, "en") if lang.split("-")[0] != "en" else None
        if as_english is not None and as_english >= ENGLISH_MIN_SHARE:
            return (f"the {lang} side reads as English ({as_english:.0%} English function words; other languages "
                    f"have at most 9%): give the {lang} text, or declare the side en")
        if own is not None and own < DECLARED_MIN_SHARE:
            return (f"the {lang} side does not read as {lang} ({own:.1%} of its words are {lang} function words; "
                    "text in a language has 6-54% under its own list): declare the language it is in")
    return None
