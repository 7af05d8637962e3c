"""A value's answer holds what it counts: the unit after a number in CJK dates and counts, and the
counted noun after a numeral.

Two ways a tokeniser and an aligner cut a value short (docs/clism_pairs.md, "Answers"):
  * zh, ja and ko write a date or a count as digits followed by a unit character that the tokeniser
    makes a word of its own: "10月1日" -> 10 | 月 | 1 | 日. An aligner links "October" to 10 月 and
    "1" to 1, and 日 ("day") stays out: "1 October" -> 10 月 1.
  * A count's noun follows the numeral ("48 hours" -> 48 घंटे, "15 years" -> 15 साल) and the aligner
    leaves it unlinked: the answer stops at the number. The English span holds the noun, so the
    answer holds its translation; a span of the number alone ("183") keeps its number alone.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from corpora.clism.answers.values import english_number_test
from corpora.words import is_word_like

# Units written after digits in zh, ja and ko dates and times, each its own word once tokenised:
# day, month, year, hour, minute, second, the zh day-of-month 号, ja's 時, ko 일 월 년 시 분 초. Not an
# age's 岁 歳 세: the English "32" of "Smith, 32," says no "years old".
_DATE_UNITS = frozenset("日 号 號 月 年 时 時 点 分 秒 일 월 년 시 분 초".split())
# The values whose unit is a word (a date's day, a count's noun); an amount's or a percentage's unit
# is a sign or its own word of the span ("72 per cent" -> 72%).
COUNTED_LABELS = frozenset({"DATE", "TIME", "QUANTITY", "CARDINAL"})
DATE_LABELS = frozenset({"DATE", "TIME"})  # a bare CARDINAL "5.6" is not "5.6 分" (points)
_UNIT_LANGS = frozenset({"zh", "ja", "ko", "yue"})


def _digits(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


_MONTHS = frozenset("january february march april may june july august september october november december "
                    "jan feb mar apr jun jul aug sep sept oct nov dec".split())


def with_date_units(label: str, lang: str, source: Sequence[str], target_words: Sequence[str], start: int, end: int
                    ) -> tuple[int, int]:
    """A zh, ja or ko value's answer with the unit after its last number and the number before a
    leading unit ("10 月 1" -> 10 月 1 日, "月 1 日" -> 10 月 1 日), when the English value holds a
    number or a month ("October" -> 10 月; not "all-day" -> 日). Dates and times only (DATE_LABELS)."""
    if label not in DATE_LABELS or lang not in _UNIT_LANGS or not any(_digits(w) or w.lower().rstrip(".") in _MONTHS for w in source):
        return start, end
    last = len(target_words) - 1
    while end < last and _digits(target_words[end]) and target_words[end + 1] in _DATE_UNITS:
        end += 1
        if end + 2 <= last and _digits(target_words[end + 1]) and target_words[end + 2] in _DATE_UNITS:
            end += 2  # 10 月 | 1 日: a date's next number and its unit
    if start > 0 and target_words[start] in _DATE_UNITS and _digits(target_words[start - 1]):
        start -= 1
    while start >= 2 and _digits(target_words[start]) and target_words[start - 1] in _DATE_UNITS \
            and _digits(target_words[start - 2]):
        start -= 2  # 10 月 | 1 日: the month before the day
    return start, end


def with_counted_noun(source_words: Sequence[str], span_start: int, span_end: int, target_words: Sequence[str],
                      end: int, alignment: Collection[tuple[int, int]], stop_words: Collection[str],
                      number_word: Callable[[str], bool]) -> int:
    """The answer's end, moved over the noun after its final number when the English span
    source_words[span_start..span_end] counts a noun ("48 hours", "five years") whose translation
    the answer lacks: the next target word is content (not a number, punctuation or a stop word)
    and the aligner linked it to nothing or only to the span's words."""
    english_number_word = english_number_test()
    source = source_words[span_start : span_end + 1]
    numbers = [k for k, w in enumerate(source) if _digits(w) or english_number_word(w.lower())]
    if not numbers or end + 1 >= len(target_words) or not _is_number(target_words[end], number_word):
        return end
    nouns = [k for k in range(numbers[-1] + 1, len(source))
             if is_word_like(source[k]) and not _digits(source[k]) and not english_number_word(source[k].lower())]
    if not nouns or "-" in source[numbers[-1] + 1 : nouns[0] + 1]:
        return end  # a bare number, or an adjective ("13 - year - old")
    noun = span_start + nouns[0]
    if any(i == noun and j <= end for i, j in alignment):
        return end  # the noun's translation is in the answer already (or before it)
    nxt = target_words[end + 1]
    if not is_word_like(nxt) or _is_number(nxt, number_word) or nxt.lower() in stop_words:
        return end
    if any(j == end + 1 and not span_start <= i <= span_end for i, j in alignment):
        return end  # the translation of another English word
    return end + 1


def _is_number(word: str, number_word: Callable[[str], bool]) -> bool:
    return _digits(word) or number_word(word.lower())
