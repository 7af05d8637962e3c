"""What of an aligned target span is the answer to a CLISM query.

A span projected through word alignments runs from the leftmost to the rightmost target word linked
to the English span. Aligners attach function words and punctuation to the content word beside them
("Ronaldo" -> ο Ρονάλτο, "Thursday" -> am Donnerstag, "Harvard University" -> の ハーバード 大学 の,
"Rosa" -> “ 罗莎 ”) and miss the last piece of a name written with a middle dot ("Peter Martin" ->
彼得 · | 马丁), so the edges are repaired before the answer is kept, and an answer with nothing left
but such words is a misalignment, not an answer (the source side's informative-span rule, applied to
the target).
"""
from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import NamedTuple

from corpora.clism.aligners import project_span
from corpora.clism.answers.tags import repair_by_tags
from corpora.clism.answers.values import (counts_a_number, digits_left_outside, has_clause_comma, has_digit,
                                   number_word_test, split_at_clause_comma, whole_number)
from corpora.clism.answers.names import (ENGLISH_ARTICLES, PLACE_AND_ORGANISATION_LABELS, UNCAPITALISED_NAME_LANGS, bracketed_copy,
                                  extend_to_inflected_name, hold_place_to_capital, is_institution, sole_proper_name,
                                  the_copy_if_one, trim_lower_case_edges, without_trailing_copy)
from corpora.clism.answers.counted import COUNTED_LABELS, with_counted_noun, with_date_units
from corpora.clism.answers.places import place_answer
from corpora.clism.answers.sounds import first_sound_differs, in_sound_script
from corpora.words import is_word_like, stop_words

# spaCy's value labels: their translations are often words that stop lists hold ("today" -> heute,
# "last year" -> Jahr, "second" -> zweiter in spaCy's German list, "six" -> έξι in the Greek one), so
# a value loses, and is disqualified by, only short function words (AnswerWords.value_edge_words).
VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})

# Targets whose tokenisation cuts a transliterated name into syllables or letter names that their stop
# lists hold: بي بي سي (BBC) and سي إن إن (CNN) in Arabic, มิ เค ล สัน (Mickelson) in Thai, 威洛 比
# (Willoughby) in Chinese. Read on real NTREX pairs, about half the stop words trimmed at ar, th and zh
# answers' edges were such pieces, so these keep their stop words (punctuation is still trimmed).
# fa, ur (Arabic script), lo, km, my (tokenised into syllables as Thai is) and yue are here by analogy.
NAMES_SPELLED_WITH_STOP_WORDS = frozenset({"ar", "fa", "ur", "th", "lo", "km", "my", "zh", "yue"})

_ENGLISH_TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "sir", "lady", "lord", "prof", "professor"})
_TITLE_SUFFIXES = {"ja": frozenset({"氏", "さん", "様"})}
# Names written by their sound in another script (corpora/clism/answers/sounds.py); not NORP, whose
# translations are adjectives of the language ("Czechoslovaks" -> চেকোস্লোভাকদের, but "German" -> जर्मन).
_TRANSLITERATED_LABELS = frozenset({"PERSON", "GPE", "ORG", "LOC", "FAC"})
# A value's function words are trimmed only beside a number or a day or month name ("cei 100",
# "am Donnerstag", "din decembrie 2001"): elsewhere they are often part of it ("today" -> i dag,
# aujourd'hui; "secondly" -> för det andra).
_CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_NAME_DOTS = frozenset("·・･‧•")  # between the parts of a transliterated name in zh and ja


class AnswerWords(NamedTuple):
    """The target language's words the answer rules read."""

    stop_words: frozenset[str]  # spaCy's list, lower-cased; none for a code no table knows
    name_edge_words: frozenset[str]  # what a name's answer may lose at an edge
    value_edge_words: frozenset[str]  # what a value's may: stop words of 1-3 characters but numbers
    # German capitalises nouns, and spaCy's German list holds some ("Uhr", "Tag"): in "um 15:00 Uhr"
    # (3 p.m.) "um" is a function word, "Uhr" is not. A capitalised word that does not open a
    # sentence is kept.
    capitalises_nouns: bool = False
    number_word: Callable[[str], bool] = str.isdigit  # spaCy's like_num for the language ("fünf", "έξι")
    # Particles and endings that are never part of a name or a value, trimmed at an answer's edge
    # whatever the aligner linked them to (_PARTICLES); the leading ones too where the language
    # puts none before a name.
    trailing_particles: frozenset[str] = frozenset()
    leading_particles: frozenset[str] = frozenset()
    capitalises_names: bool = True  # a person's name is capitalised (answer_names.trim_lower_case_edges)
    # Written after a person's name where English has no title: ja "ロナウド 氏" for "Ronaldo" (50 of
    # 3,179 ja answers on real NTREX pairs, none of them with Mr or Ms in the English span).
    title_suffixes: frozenset[str] = frozenset()
    lang: str = ""  # the code the rules read tags by (corpora/clism/answers/tags.py)


PUNCTUATION_RULES_ONLY = AnswerWords(frozenset(), frozenset(), frozenset())


# Every reason project_answer gives for a span without an answer (stats `project/<reason>`).
REJECTION_REASONS = ("unaligned", "scattered", "target_only_stop_words", "number_without_digit", "comma_inside_name",
                     "comma_inside_value", "english_copy_in_brackets", "name_without_capital", "name_without_noun",
                     "name_sound_differs")


class Answer(NamedTuple):
    start: int  # inclusive target word offsets
    end: int
    repaired: bool  # the edges moved (counted `project/edges_trimmed`)


def project_answer(alignment: Collection[tuple[int, int]], source_words: Sequence[str], target_words: Sequence[str],
                   span_start: int, span_end: int, label: str, max_gap: int, source_stop_words: frozenset[str],
                   words: AnswerWords, target_tags: Sequence[str] = ()) -> Answer | str:
    """The answer to the English span source_words[span_start..span_end] (inclusive): its projection
    through `alignment` ((source, target) pairs), edges repaired; or why there is none, one of
    REJECTION_REASONS. `target_tags`, one part of speech per target word (corpora/word_tags.py), or
    none. clism_pairs' project step and benchmarks/alignment.py."""
    projected = project_span(alignment, span_start, span_end, max_gap)
    placed = place_answer(source_words, span_start, span_end, label, target_words, words.lang, projected, alignment)
    if isinstance(placed, str):
        return placed
    aligned, projected = projected, placed
    source = source_words[span_start : span_end + 1]
    links = [(i - span_start, j) for i, j in alignment if span_start <= i <= span_end]
    start, end = projected
    if label in VALUE_LABELS and start > 0 and digits_left_outside(source, target_words, start, end):
        start -= 1
    if label in VALUE_LABELS:
        start, end = whole_number(source, target_words, start, end)
    start, end = trim_answer_edges(source, target_words, start, end, links, label, source_stop_words, words)
    if label in COUNTED_LABELS:
        start, end = with_date_units(label, words.lang, source, target_words, start, end)
        end = with_counted_noun(source_words, span_start, span_end, target_words, end, alignment, words.stop_words,
                                words.number_word)
    if label not in VALUE_LABELS:
        start, end = the_copy_if_one(source, target_words, start, end)
        if bracketed_copy(source, target_words, start, end):
            return "english_copy_in_brackets"
        end = without_trailing_copy(source, target_words, start, end)
        start, end = extend_to_inflected_name(source, target_words, start, end)
        institution = is_institution(source_words, span_start, span_end, label)
        if words.capitalises_names and (label == "PERSON" or words.capitalises_nouns and label in PLACE_AND_ORGANISATION_LABELS):
            trimmed = trim_lower_case_edges(source, target_words, start, end)
            if trimmed is None:
                return "name_without_capital"
            start, end = trimmed
        elif words.capitalises_names and label in PLACE_AND_ORGANISATION_LABELS:
            trimmed = hold_place_to_capital(source, target_words, start, end, institution, words.lang)
            if trimmed is None:
                return "name_without_capital"
            start, end = trimmed
        if target_tags:
            repaired = repair_by_tags(words.lang, target_words, target_tags, start, end)
            if repaired is None:
                return "name_without_noun"
            start, end = repaired
        if label in _TRANSLITERATED_LABELS and in_sound_script(target_words[start]):
            name = sole_proper_name(source)
            if name and not institution and first_sound_differs(name, target_words[start]):
                return "name_sound_differs"
        if label == "PERSON" and end > start and target_words[end] in words.title_suffixes \
                and not any(w.lower().rstrip(".") in _ENGLISH_TITLES for w in source):
            end -= 1
    answer = target_words[start : end + 1]
    if uninformative_answer(source, answer, label, words):
        return "target_only_stop_words"
    if counts_a_number(source, label, words.number_word) and not has_digit(answer) \
            and not any(words.number_word(w.lower()) for w in answer):
        return "number_without_digit"
    if label not in VALUE_LABELS and has_clause_comma(answer) and not has_clause_comma(source):
        return "comma_inside_name"
    if label in VALUE_LABELS and not has_clause_comma(source):
        cut = split_at_clause_comma(answer, start)
        if cut is None:
            return "comma_inside_value"
        start, end = cut
    return Answer(start, end, (start, end) != aligned)


def drop_overlapping(answers: list[tuple]) -> tuple[list[tuple], int]:
    """(item, start, end) answers of one pair -> those whose target words no other answer shares, and
    how many went. Two English names answered by the same target words ("U.S." and "South Carolina"
    -> サウスカロライナ) are at least one wrong, and which one is not known: on the four gold sets,
    16 of 40 answers that overlap another were exact (fast_align and eflomal), the others 56-83%
    per set."""
    if len(answers) < 2:
        return answers, 0
    kept = [a for k, a in enumerate(answers)
            if not any(j != k and b[1] <= a[2] and a[1] <= b[2] for j, b in enumerate(answers))]
    return kept, len(answers) - len(kept)


@functools.lru_cache(maxsize=None)
def answer_words(lang: str) -> AnswerWords:
    """Short stop words are articles, prepositions and particles (am, τη, το, の, いる); longer ones
    and number words (έξι, elf) can be a value's translation, so they stay."""
    try:
        stops = stop_words(lang)
    except ValueError:  # --pretokenized accepts any code: punctuation rules only
        return PUNCTUATION_RULES_ONLY
    is_number = number_word_test(lang)
    base = lang.split("-")[0]
    particles = _PARTICLES.get(base, frozenset())
    extra = dict(trailing_particles=particles, leading_particles=frozenset() if base in _SURNAMES_AMONG_PARTICLES else particles,
                 capitalises_names=base not in UNCAPITALISED_NAME_LANGS, number_word=is_number,
                 title_suffixes=_TITLE_SUFFIXES.get(base, frozenset()), lang=base)
    stops |= particles
    if base in NAMES_SPELLED_WITH_STOP_WORDS:
        return AnswerWords(stops, frozenset(), frozenset(), **extra)
    value_edge_words = frozenset(w for w in stops if len(w) <= 3 and not is_number(w))
    return AnswerWords(stops, stops, value_edge_words, base in _CAPITALISED_NOUN_LANGS, **extra)


# Separate words of the tokenisers here (MeCab for ko, Sudachi for ja, jieba for zh: each glues such
# a character to a word it belongs to). Read on real NTREX answers: ko 100 answers (3.0%) were a
# particle or an ending alone ("Australia" -> 을, "Moon Jae-in" -> 의) and 247 (7.4%) had one at an
# edge ("리빙스턴 은"): spaCy's Korean list (58 words) holds none of them; ja 93 (2.9%) and zh 85
# (2.5%) kept one at an edge ("ビクトリア 十字 勲章 を", "对 格雷厄姆", "的 34% 的"), which the
# alignment test below kept because the aligner had linked them to the name (12 of 12 zh sampled
# were wrong). Korean particles follow a word, and some syllables are also surnames that MeCab
# splits off a name (이, 서, 고, 도 …): there only the end is trimmed, and the common surnames are
# not in the list.
_PARTICLES = {
    "ko": frozenset("을 를 는 의 에 에서 에게 께서 와 과 으로 로 이나 라는 이라는 에는 에서는 으로는 로는 에도 까지 부터 "
                    "처럼 보다 한테 다 며 으며 면 였다 했다 이다 입니다 습니다 은".split()),
    "ja": frozenset("を に は が で へ も の と から まで より や た て だ という として について によって による".split()),
    "zh": frozenset("的 了 在 并 对 被 将 和 与 把 从 于 及 等 是 也 都 就 而 向 给 让".split()),
}
_SURNAMES_AMONG_PARTICLES = frozenset({"ko"})


_CAPITALISED_NOUN_LANGS = frozenset({"de", "lb", "bar", "nds", "als", "pfl", "ksh"})
_SENTENCE_OPENERS = frozenset('.!?:…"„“«»')


def _starts_sentence(words: Sequence[str], k: int) -> bool:
    """The first word, or one after a full stop, a colon or a quote ("… Montagmorgen . Am Montagabend")."""
    return k == 0 or words[k - 1][-1:] in _SENTENCE_OPENERS


# Unicode files these under punctuation (Po), but in an answer they are content: "35 %", "AT&T", "24/7".
_SYMBOLS_IN_PO = frozenset("%‰‱٪﹪％#＃&＆@＠*＊/／\\§¶†‡′″‴")


def is_punctuation(word: str) -> bool:
    """Unicode punctuation ("“", "、", ",", "・") but for the signs that are content in an answer."""
    return all(unicodedata.category(ch).startswith("P") and ch not in _SYMBOLS_IN_PO for ch in word)


def uninformative_answer(source_words: Sequence[str], target_words: Sequence[str], label: str,
                         words: AnswerWords) -> bool:
    """A name aligned to a particle, an article or a comma alone ("Ukip" -> の, "Madrid" -> από,
    "Bolivia" -> "،"; 5.4% of en-ja spans on real NTREX pairs), a value to one-character stop words
    or short function words ("February" -> の, "all night" -> το). A name copied as it is ("Die
    Zeit" in German, whose stop list holds both words) is an answer."""
    if [w.lower() for w in source_words] == [w.lower() for w in target_words]:
        return False
    if label in VALUE_LABELS:
        content = [w.lower() for w in target_words if is_word_like(w)]
        if len(content) == 1 and content[0] in words.value_edge_words:
            return True  # one article or preposition ("all night" -> το); "today" -> i dag is two words
        return all(len(w) == 1 and w in words.stop_words for w in content)
    return all(not is_word_like(w) or w.lower() in words.stop_words for w in target_words)


# Brackets and quotes by what closes them ("„" is closed by "“" in German; "»" by "«" there too).
_CLOSER_OF = {"(": ")", "[": "]", "{": "}", "（": "）", "［": "］", "【": "】", "《": "》", "〈": "〉", "「": "」",
              "『": "』", "“": "”", "„": "“", "‘": "’", "«": "»", "»": "«", "‹": "›"}
_SELF_CLOSING = frozenset('"\'＂')


def _partner_index(words: Sequence[str], position: int) -> int | None:
    """Index of the word holding the partner of the bracket or quote in words[position], or None
    when it has none in `words` ("“ 退欧 ” 意味着 “": the first “ pairs with ”, the last with nothing)."""
    stack: list[tuple[str, int]] = []  # (the mark that would close it, index of the opening word)
    partner: dict[int, int] = {}
    for k, word in enumerate(words):
        quotes_count = is_punctuation(word)  # "'" inside a word ("'s", aujourd'hui) is an apostrophe
        for ch in word:
            if stack and ch == stack[-1][0] and (quotes_count or ch not in _SELF_CLOSING):
                opened = stack.pop()[1]
                partner[opened], partner[k] = k, opened
            elif ch in _CLOSER_OF:
                stack.append((_CLOSER_OF[ch], k))
            elif ch in _SELF_CLOSING and quotes_count:
                stack.append((ch, k))
    return partner.get(position)


def trim_answer_edges(source_words: Sequence[str], target_words: Sequence[str], start: int, end: int,
                      links: Iterable[tuple[int, int]], label: str, source_stop_words: frozenset[str],
                      words: AnswerWords) -> tuple[int, int]:
    """(start, end), inclusive, with the answer's edges repaired. `links` are the alignment's (source
    index relative to the span's first word, target index) pairs of the span's words.

    - A name of several English words ends at a middle dot of zh or ja only when the dot ends the
      sentence's name too: otherwise the next piece joins ("Peter Martin" -> 彼得 · 马丁, not 彼得 ·),
      first on the side whose English word is missing (_join_dotted_name).
    - A bracket just outside that pairs with one inside joins ("ยุโรป ( EU" -> "ยุโรป ( EU )").
    - Punctuation is dropped ("“ 罗莎 ”" -> 罗莎, "Manatee ," -> Manatee), but not a bracket or quote
      whose partner is inside the answer ("สหภาพ ยุโรป (European Union )" keeps both brackets).
    - A target stop word (a short function word for values: AnswerWords) is dropped when it is not
      copied from the source, the English span's own edge word is content ("the U.N. Security
      Council" -> dem UN-Sicherheitsrat keeps its article, as the source does; "May" and "Will" in a
      name are content), and what it is aligned to is translated by the rest of the answer or is
      only English function words. So "Ronaldo" -> ο Ρονάλτο loses ο, "The Boston Globe" -> ボストン
      グローブ は loses は, "Thursday" -> am Donnerstag loses am, but "Berners-Lee" -> بيرنرز لي keeps
      لي, Lee's only translation, and "tonight" -> heute Abend keeps heute (five letters).
    At least one word is always left."""
    is_value = label in VALUE_LABELS
    edge_words = words.name_edge_words
    if is_value:
        beside_number = any(ch.isdigit() for k in range(start, end + 1) for ch in target_words[k])
        calendar = any(w.lower().rstrip(".") in _CALENDAR_WORDS for w in source_words)
        edge_words = words.value_edge_words if beside_number or calendar else frozenset()
    links = list(links)
    if not is_value:
        start, end = _join_dotted_name(source_words, target_words, start, end, links)
    start, end = _close_brackets(target_words, start, end)
    sources_of: dict[int, set[int]] = {}  # filled on the first stop word at an edge

    def stray_punctuation(t: int, lo: int, hi: int) -> bool:
        if not is_punctuation(target_words[t]):
            return False
        partner = _partner_index(target_words[lo : hi + 1], t - lo)
        return partner is None or partner in (0, hi - lo)  # unpaired, or the pair encloses the answer

    def extra_stop_word(t: int, lo: int, hi: int) -> bool:
        word = target_words[t].lower()
        if word not in edge_words or word in (w.lower() for w in source_words):
            return False
        if words.capitalises_nouns and target_words[t][:1].isupper() and not _starts_sentence(target_words, t):
            return False
        if not sources_of:
            for i, j in links:
                sources_of.setdefault(j, set()).add(i)
        aligned = sources_of.get(t, set())
        others = {i for k in range(lo, hi + 1) if k != t for i in sources_of.get(k, ())}
        return aligned <= others or all(source_words[i].lower() in source_stop_words for i in aligned)

    def particle(t: int, particles: frozenset[str]) -> bool:
        return target_words[t] in particles and target_words[t].lower() not in (w.lower() for w in source_words)

    def is_content(word: str) -> bool:
        if not is_word_like(word):
            return False
        lowered = word.lower()
        return lowered not in source_stop_words or (not is_value and word[0].isupper() and lowered not in ENGLISH_ARTICLES)

    first_is_content, last_is_content = is_content(source_words[0]), is_content(source_words[-1])
    while start < end and (stray_punctuation(start, start, end) or particle(start, words.leading_particles)
                           or first_is_content and extra_stop_word(start, start, end)):
        start += 1
    while end > start and (stray_punctuation(end, start, end) or particle(end, words.trailing_particles)
                           or last_is_content and extra_stop_word(end, start, end)):
        end -= 1
    return start, end


def _join_dotted_name(source_words: Sequence[str], target_words: Sequence[str], start: int, end: int,
                      links: list[tuple[int, int]]) -> tuple[int, int]:
    """Extend the answer over "· piece" while it has fewer pieces than the English name has words:
    only an answer that already holds a word (not a lone dot), and first on the side whose English
    word has no translation in the answer yet ("Roy Keane" -> ロイ ・ キーン, not キーン 氏 、 グスタボ).
    Blocking a piece that other English names are aligned to was tried and left: the statistical
    aligner links the right piece to other names as often as the wrong one (real NTREX ja and zh)."""
    if not any(is_word_like(target_words[k]) and target_words[k] not in _NAME_DOTS for k in range(start, end + 1)):
        return start, end
    covered = {i for i, j in links if start <= j <= end and is_word_like(target_words[j]) and target_words[j] not in _NAME_DOTS}
    content = [i for i, w in enumerate(source_words) if is_word_like(w)]
    wanted = len(content)
    left_first = bool(content) and content[0] not in covered and content[-1] in covered
    pieces = 1 + sum(1 for k in range(start + 1, end) if target_words[k] in _NAME_DOTS)
    last = len(target_words) - 1

    def free_piece(k: int) -> bool:
        return 0 <= k <= last and is_word_like(target_words[k]) and target_words[k] not in _NAME_DOTS

    def extend_right() -> bool:
        nonlocal end
        if target_words[end] in _NAME_DOTS and free_piece(end + 1):
            end += 1
        elif end + 2 <= last and target_words[end + 1] in _NAME_DOTS and free_piece(end + 2):
            end += 2
        else:
            return False
        return True

    def extend_left() -> bool:
        nonlocal start
        if target_words[start] in _NAME_DOTS and free_piece(start - 1):
            start -= 1
        elif start >= 2 and target_words[start - 1] in _NAME_DOTS and free_piece(start - 2):
            start -= 2
        else:
            return False
        return True

    sides = (extend_left, extend_right) if left_first else (extend_right, extend_left)
    while pieces < wanted and (sides[0]() or sides[1]()):
        pieces += 1
    return start, end


def _close_brackets(target_words: Sequence[str], start: int, end: int) -> tuple[int, int]:
    """Take in the bracket just outside the answer that closes (or opens) one inside it: the aligner
    leaves the bracket unaligned ("สหภาพ ยุโรป ( EU" -> "สหภาพ ยุโรป ( EU )")."""
    if end + 1 < len(target_words) and is_punctuation(target_words[end + 1]) \
            and _partner_index(target_words[start : end + 2], end + 1 - start) is not None:
        end += 1
    if start > 0 and is_punctuation(target_words[start - 1]) \
            and _partner_index(target_words[start - 1 : end + 1], 0) is not None:
        start -= 1
    return start, end
