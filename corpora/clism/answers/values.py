"""What of a value's answer (a date, an amount, a count) is kept: the number rules of CLISM answers.

corpora/clism/answers/spans.py applies them; the cases come from real NTREX pairs (fast_align), read by hand.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from corpora.words import is_word_like


# Values counted in numbers, which a translation writes with a digit or a number word. Not ORDINAL:
# spaCy's like_num knows few ordinal words (not второе, toisen, الثانية), nor DATE ("the fifties").
_COUNT_LABELS = frozenset({"CARDINAL", "MONEY", "PERCENT", "QUANTITY"})


def counts_a_number(source: Sequence[str], label: str, number_word: Callable[[str], bool]) -> bool:
    """A span with a digit, or a count written in English words ("Fourteen", "almost zero") where the
    target language's number words are known (spaCy's like_num; without it "kumi" would be lost).
    Such counts were answered by words beside them on real NTREX pairs: "Fourteen" -> По сообщениям,
    "almost zero" -> माध्यम (22 of 23 wrong)."""
    if has_digit(source):
        return True
    return label in _COUNT_LABELS and number_word is not str.isdigit \
        and any(_english_number_word(w.lower()) for w in source)


@functools.lru_cache(maxsize=1)
def english_number_test() -> Callable[[str], bool]:
    """spaCy's English like_num ("five", "Fourteen" lower-cased)."""
    return number_word_test("en")


def _english_number_word(word: str) -> bool:
    return is_word_like(word) and english_number_test()(word)


def split_at_clause_comma(answer: Sequence[str], start: int) -> tuple[int, int] | None:
    """A value's answer, as (start, end) in the indices of which answer[0] is `start`, cut at the
    commas standing between two of its words, not between two digits ("1 , 127" as a tokeniser may
    write 1,127): such an answer ran into the next clause ("40 per cent" -> 学生 中 ， 40%; 42 of 44
    read on real NTREX pairs were wrong), and the one side that holds a digit is the value: "1996 ,
    προκαλώντας" -> 1996, "prima metà del 2019 , secondo" -> prima metà del 2019 (most such answers are
    right so cut). The whole answer when it has no such comma; None when no side,
    or more than one, holds a digit ("this week" -> これ は 、 今週)."""
    cuts = _clause_commas(answer)
    if not cuts:
        return start, start + len(answer) - 1
    parts = [(lo, hi) for lo, hi in zip([0] + [k + 1 for k in cuts], [k - 1 for k in cuts] + [len(answer) - 1]) if lo <= hi]
    with_digit = [(lo, hi) for lo, hi in parts if has_digit(answer[lo : hi + 1])]
    if len(with_digit) != 1:
        return None
    lo, hi = with_digit[0]
    return start + lo, start + hi


def _clause_commas(answer: Sequence[str]) -> list[int]:
    return [k for k in range(1, len(answer) - 1)
            if answer[k] and all(ch in _CLAUSE_COMMAS for ch in answer[k])
            and not (answer[k - 1][-1:].isdigit() and answer[k + 1][:1].isdigit())]


_DECIMAL_MARKS = frozenset({".", ","})


def whole_number(source: Sequence[str], target_words: Sequence[str], start: int, end: int) -> tuple[int, int]:
    """A number the target's tokeniser cut at its decimal or thousands mark ("7 . 5", "1 , 127")
    answered by one piece ("7.5" -> 5, "1,127" -> 127, "100,000" -> 000: ko 13, zh 4 on real NTREX
    pairs): the pieces beside it join while the digits stay the English number's."""
    english = "".join(ch for w in source for ch in w if ch.isdigit())
    if len(english) < 2:
        return start, end

    def digits(lo: int, hi: int) -> str:
        return "".join(ch for k in range(lo, hi + 1) for ch in target_words[k] if ch.isdigit())

    while start >= 2 and target_words[start - 1] in _DECIMAL_MARKS and target_words[start - 2][-1:].isdigit() \
            and target_words[start][:1].isdigit() and digits(start - 2, end) in english:
        start -= 2
    while end + 2 < len(target_words) and target_words[end + 1] in _DECIMAL_MARKS and target_words[end][-1:].isdigit() \
            and target_words[end + 2][:1].isdigit() and digits(start, end + 2) in english:
        end += 2
    return start, end


# Numerals of the scripts that write numbers without digits: a translation may give 375,000 as
# 37.5万 or 三十七万五千.
_NUMERAL_CHARS = frozenset("〇零一二三四五六七八九十百千万萬亿億兆两兩")
_CLAUSE_COMMAS = frozenset({",", "،", "，", "、", "﹐", "､"})


def digits_left_outside(source: Sequence[str], target_words: Sequence[str], start: int, end: int) -> bool:
    """A number's answer without a digit whose digits are the word just before it: the aligner linked
    only the magnitude ("2.52 million" -> 万 of "252 万", 만 of "326 만 명", млн of "5,69 млн"; jieba
    writes 20,000 as "2 | 万名"; on NTREX zh 8 of 413 number spans, ko 8 of 401, ru 3)."""
    english = "".join(ch for w in source for ch in w if ch.isdigit())
    if not english or any(ch.isdigit() for k in range(start, end + 1) for ch in target_words[k]):
        return False
    digits = target_words[start - 1].replace(",", "").replace(".", "")
    # The same leading digits, at another magnitude (20,000 = "2 万", 11 billion = "110 亿"): not a
    # number beside it ("44th" -> 周 after "8").
    return digits.isdigit() and (english.startswith(digits) or digits.startswith(english))


def has_digit(words: Sequence[str]) -> bool:
    return any(ch.isdigit() or ch in _NUMERAL_CHARS for word in words for ch in word)


def has_clause_comma(words: Sequence[str]) -> bool:
    return any(ch in _CLAUSE_COMMAS for word in words for ch in word)


# Number words spaCy's lists lack: Greek's teens in their neuter and spoken forms ("Δεκαοκτώ πολιτείες",
# a real NTREX answer to "Eighteen", was rejected as a number without one).
_MORE_NUMBER_WORDS = {
    "el": frozenset("δεκατρία δεκατέσσερα δεκατέσσερις δεκαπέντε δεκαέξι δεκάξι δεκαεπτά δεκαεφτά δεκαοκτώ "
                    "δεκαοχτώ δεκαεννέα δεκαεννιά".split()),
}


def number_word_test(lang: str) -> Callable[[str], bool]:
    """spaCy's like_num for the language (it knows "elf", "έξι"), or digits only."""
    try:
        from spacy.attrs import LIKE_NUM
        from spacy.util import get_lang_class

        like_num = get_lang_class(lang).Defaults.lex_attr_getters.get(LIKE_NUM) or str.isdigit
    except Exception:  # noqa: BLE001 - a language spaCy lacks (sw): digits only
        return str.isdigit
    more = _MORE_NUMBER_WORDS.get(lang)
    if more is None:
        return like_num
    return lambda word: word in more or like_num(word)
