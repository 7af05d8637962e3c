"""What of an aligned target span is the answer to a CLISM query.

A span projected through word alignments runs from the leftmost to the rightmost target word linked
to the English span. Aligners attach function words and punctuation to the content word beside them
("Thursday" -> am Donnerstag, "Ronaldo" -> ο Ρονάλτο, "Harvard University" -> の ハーバード 大学 の,
"Rosa" -> “ 罗莎 ”), so the edges are trimmed before the answer is kept, and an answer with nothing
left but such words is a misalignment, not an answer (the source side's informative-span rule,
applied to the target).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from corpora.words import is_word_like

# spaCy's value labels: their translations are often words that stop lists hold ("today" -> heute,
# "last year" -> Jahr, "second" -> zweiter in spaCy's German list; "this year" -> ปี นี้), so for these
# only punctuation is trimmed, and only punctuation and one-character stop words (the particles の, は,
# に, た of ja, 的, 了 of zh: "February" -> の) disqualify an answer.
VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})


# Targets whose tokenisation cuts a transliterated name into syllables or letter names that their stop
# lists hold: بي بي سي (BBC) and سي إن إن (CNN) in Arabic, มิ เค ล สัน (Mickelson) in Thai, 威洛 比
# (Willoughby) in Chinese. Read on real NTREX pairs, about half the stop words trimmed at ar, th and zh
# answers' edges were such pieces, so these keep their stop words (punctuation is still trimmed).
# fa, ur (Arabic script), lo, km, my (tokenised into syllables as Thai is) and yue are here by analogy.
NAMES_SPELLED_WITH_STOP_WORDS = frozenset({"ar", "fa", "ur", "th", "lo", "km", "my", "zh", "yue"})


def edge_stop_words(lang: str, stop_words: frozenset[str]) -> frozenset[str]:
    """The stop words trim_answer_edges may drop from a name's answer in `lang`."""
    return frozenset() if lang.split("-")[0] in NAMES_SPELLED_WITH_STOP_WORDS else stop_words


# Unicode files these under punctuation (Po), but in an answer they are content: "35 %", "AT&T", "24/7".
_SYMBOLS_IN_PO = frozenset("%‰‱٪﹪％#＃&＆@＠*＊/／\\§¶†‡′″‴")


def is_punctuation(word: str) -> bool:
    """Unicode punctuation ("“", "、", ",", "・") but for the signs that are content in an answer."""
    return all(unicodedata.category(ch).startswith("P") and ch not in _SYMBOLS_IN_PO for ch in word)


def uninformative_answer(source_words: Sequence[str], target_words: Sequence[str], label: str,
                         target_stop_words: frozenset[str]) -> bool:
    """A name aligned to a particle, an article or a comma alone ("Ukip" -> の, "Madrid" -> από,
    "Bolivia" -> "،"; 5.4% of en-ja spans on real NTREX pairs). A name copied as it is ("Die Zeit" in
    German, whose stop list holds both words) is an answer."""
    if [w.lower() for w in source_words] == [w.lower() for w in target_words]:
        return False
    if label in VALUE_LABELS:
        return all(not is_word_like(w) or (len(w) == 1 and w.lower() in target_stop_words) for w in target_words)
    return all(not is_word_like(w) or w.lower() in target_stop_words for w in target_words)


# Brackets and quotes, each with the marks that close or open it ("“" closes „ in German, opens ” elsewhere).
_PAIRS = ("()", "[]", "{}", "（）", "［］", "【】", "《》", "〈〉", "「」", "『』", "“”", "„“", "‘’", "«»", "»«", "‹›",
          '""', "''", "＂＂")
_PARTNERS: dict[str, set[str]] = {}
for _open, _close in _PAIRS:
    _PARTNERS.setdefault(_open, set()).add(_close)
    _PARTNERS.setdefault(_close, set()).add(_open)


def trim_answer_edges(source_words: Sequence[str], target_words: Sequence[str], start: int, end: int,
                      links: Iterable[tuple[int, int]], label: str, source_stop_words: frozenset[str],
                      target_stop_words: frozenset[str]) -> tuple[int, int]:
    """(start, end), inclusive, with the edge words that do not belong to the answer dropped.

    `links` are the alignment's (source index within the span, target index) pairs;
    `target_stop_words` those of edge_stop_words. Dropped:
    - punctuation ("“ 罗莎 ”" -> 罗莎, "Manatee ," -> Manatee), but not a bracket or quote whose
      partner stays inside the answer ("สหภาพ ยุโรป (European Union )" keeps both brackets);
    - for names, a target stop word not copied from the source, when the English span's own edge
      word is content ("the U.N. Security Council" -> dem UN-Sicherheitsrat keeps its article, as the
      source does) and every source word it is aligned to has another target word in the answer.
      So "Ronaldo" -> ο Ρονάλτο loses ο, but "Berners-Lee" -> بيرنرز لي keeps لي, Lee's only
      translation (a transliterated syllable that Arabic's stop list happens to hold).
    Values keep their stop words ("tonight" -> heute Abend, "this year" -> ปี นี้). At least one word
    is always left.

    On the hand-aligned gold sets with the default aligner (benchmarks/alignment.py), exact matches
    of the answer against the gold links' projection: see docs/clism_pairs.md."""
    trim_names = label not in VALUE_LABELS and bool(target_stop_words)
    sources_of: dict[int, set[int]] = {}  # filled on the first stop word at an edge

    def stray_punctuation(t: int, lo: int, hi: int) -> bool:
        word = target_words[t]
        if not is_punctuation(word):
            return False
        partners = set().union(*(_PARTNERS.get(ch, ()) for ch in word))
        inside = (target_words[k] for k in range(lo + 1, hi))  # strictly between the two edges
        return not partners or not any(ch in partners for w in inside for ch in w)

    def extra_stop_word(t: int, lo: int, hi: int) -> bool:
        word = target_words[t].lower()
        if not trim_names or word not in target_stop_words or word in (w.lower() for w in source_words):
            return False
        if not sources_of:
            for i, j in links:
                sources_of.setdefault(j, set()).add(i)
        others = {i for k in range(lo, hi + 1) if k != t for i in sources_of.get(k, ())}
        return sources_of.get(t, set()) <= others

    def is_content(word: str) -> bool:
        return is_word_like(word) and word.lower() not in source_stop_words

    first_is_content, last_is_content = is_content(source_words[0]), is_content(source_words[-1])
    while start < end and (stray_punctuation(start, start, end) or first_is_content and extra_stop_word(start, start, end)):
        start += 1
    while end > start and (stray_punctuation(end, start, end) or last_is_content and extra_stop_word(end, start, end)):
        end -= 1
    return start, end
