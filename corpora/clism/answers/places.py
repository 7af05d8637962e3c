"""A country's name or adjective, found by its spelling in the target language.

An English span that names a country ("the Netherlands", GPE) or its people's adjective ("Chilean",
"Dutch", NORP) has a known translation: the country's name in the target language as Unicode CLDR
writes it (Niederlande, 荷兰, هولندا, नीदरलैंड, オランダ), or the name of its language when that is the
English adjective (Dutch -> Niederländisch, 荷兰语). place_names.json holds them (built by
corpora/clism/answers/build_place_names.py from CLDR and countryinfo). A statistical aligner links such
names to a neighbour ("Netherlands" -> UN-Organ, "Chilean" -> Territorium, in a sentence holding
"Niederlanden" and "chilenisches"): where the target holds the name once, that is the answer; an
answer that runs past the name is cut to it.

A target word matches a name by its beginning, so that inflected forms count (Niederlanden,
chilenisches, Nordkoreas): the name less its last two letters, at least five letters of it (all of a
shorter name). zh, ja, ko and th write no spaces: there a word, or a few words run together, holds
the name (荷兰 in 荷兰人). Arabic attaches conjunctions, prepositions and the article: وهولندا,
بهولندا and الهولندية match هولندا and هولندي as the word less them.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from pathlib import Path

from corpora.words import is_word_like

PLACE_LABELS = frozenset({"GPE", "LOC", "NORP"})
_UNSPACED = frozenset({"zh", "ja", "ko", "th", "yue", "lo", "km", "my"})
_CLITIC_SCRIPTS = frozenset({"ar", "fa", "ur"})
# Arabic letters that attach to the next word: the conjunctions wa and fa, the prepositions bi, li,
# ka; then the article al (and lil, li + al). Longest first.
_ARABIC_PREFIXES = ("وال", "فال", "بال", "كال", "لل", "ال", "و", "ف", "ب", "ل", "ك")
_ARTICLES = frozenset({"the"})
_SHORTEST_STEM = 5


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    with open(Path(__file__).with_name("place_names.json"), encoding="utf-8") as f:
        return json.load(f)


def place_code(source_words: Sequence[str], label: str) -> str | None:
    """The CLDR territory code the English span names: a country (GPE, LOC) or its adjective or
    people (NORP: "Chilean", "Dutch", "Chileans")."""
    if label not in PLACE_LABELS:
        return None
    words = [w.lower() for w in source_words if is_word_like(w)]
    while words and words[0] in _ARTICLES:
        words = words[1:]
    key = " ".join(words)
    table = _table()
    if label == "NORP":
        return table["demonyms"].get(key) or table["demonyms"].get(key.removesuffix("s"))
    return table["places"].get(key)


def _without_clitics(word: str) -> list[str]:
    return [word] + [word[len(p):] for p in _ARABIC_PREFIXES if word.startswith(p) and len(word) - len(p) >= 3]


def _word_matches(word: str, name: str, lang: str) -> bool:
    word, name = word.lower(), name.lower()
    forms = [word]
    if lang in _CLITIC_SCRIPTS:
        forms = _without_clitics(word)
        name = name.removeprefix("ال") if len(name) > 4 else name
    stem = name[: max(len(name) - 2, min(len(name), _SHORTEST_STEM))]
    return any(f.startswith(stem) for f in forms)


def name_occurrences(target_words: Sequence[str], code: str, lang: str) -> list[tuple[int, int]]:
    """(start, end) of every place in target_words that writes the country `code` in `lang`."""
    names = _table()["names"].get(lang.split("-")[0], {}).get(code, ())
    found: set[tuple[int, int]] = set()
    for name in names:
        if lang in _UNSPACED:
            found.update(_unspaced_occurrences(target_words, name.replace(" ", "")))
            continue
        parts = name.split()
        n = len(parts)
        for k in range(len(target_words) - n + 1):
            if all(_word_matches(target_words[k + m], parts[m], lang) for m in range(n)):
                found.add((k, k + n - 1))
    # A match inside a longer one (Niederländisch inside nothing, 荷兰 inside 荷兰语) is the longer one's.
    return sorted(o for o in found if not any(p != o and p[0] <= o[0] and o[1] <= p[1] for p in found))


def _unspaced_occurrences(words: Sequence[str], name: str) -> list[tuple[int, int]]:
    out = []
    for k in range(len(words)):
        text = ""
        for m in range(k, min(len(words), k + 4)):
            text += words[m]
            if name in text:
                # A word that holds more than the name and a suffix (人, 语, 队) is another word
                # (西班牙政府, "the Spanish government").
                if name not in text[len(words[k]):] and len(text) <= len(name) + 1:
                    out.append((k, m))
                break
    return out


def place_answer(source_words: Sequence[str], span_start: int, span_end: int, label: str,
                 target_words: Sequence[str], lang: str, answer: tuple[int, int] | str,
                 alignment: Collection[tuple[int, int]] = ()) -> tuple[int, int] | str:
    """The answer to an English country or country adjective: the target's spelling of it that the
    aligned `answer` overlaps, cut to it but for the words beside it that `alignment` links to the
    span's words only (संयुक्त राज्य अमेरिका for "the United States", where CLDR writes संयुक्त
    राज्य; not Staatsrat of "Chinas Staatsrat", linked to "State Council" too); else, when the answer
    is elsewhere or there is none, the one such spelling in the target if the English names the
    country once. `answer` (the aligned (start, end), or why there is none) when the table knows
    nothing better."""
    code = place_code(source_words[span_start : span_end + 1], label)
    if code is None:
        return answer
    found = name_occurrences(target_words, code, lang)
    if label == "NORP" and (lang not in _UNSPACED or _people(source_words[span_start : span_end + 1])):
        # A people's adjective is not its country's bare name: "Mexicans" is not मैक्सिको of
        # "मैक्सिको के नागरिकों" ("citizens of Mexico"); a derived form is (मैक्सिकन, chilenisches).
        # zh and ja write the adjective as the name before a noun (土耳其 军队, 日本 の): there an
        # adjective may be the bare name, the people not ("Germans" is ドイツ 人, not ドイツ).
        found = [o for o in found if not _bare_name(target_words[o[0] : o[1] + 1], code, lang)]
    if not isinstance(answer, str):
        inside = [o for o in found if o[0] <= answer[1] and answer[0] <= o[1]]
        if len(inside) == 1:
            return _with_own_words(inside[0], answer, span_start, span_end, alignment, source_words, target_words)
        if inside:
            return answer
    if label != "NORP":
        # A country's answer elsewhere is its name, inflected at most by a letter (Niederlanden,
        # Chinas, لبوليفيا less its clitic), not an adjective beginning with it (الصينية, chinesische).
        found = [o for o in found if _inflected_name(target_words[o[0] : o[1] + 1], code, lang)]
    if len(found) != 1:
        return answer
    mentions = sum(1 for k in range(len(source_words)) if _same_mention(source_words, k, span_start, span_end))
    return found[0] if mentions == 1 else answer


def _with_own_words(match: tuple[int, int], answer: tuple[int, int], span_start: int, span_end: int,
                    alignment: Collection[tuple[int, int]], source_words: Sequence[str],
                    target_words: Sequence[str]) -> tuple[int, int]:
    def own(j: int) -> bool:
        sources = {i for i, t in alignment if t == j}
        if not sources or not all(span_start <= i <= span_end for i in sources):
            return False
        # In a script with letter case only the translation of the span's article ("The United
        # States" -> Die Vereinigten Staaten): "Zahl nordkoreanischer" ("number of North Korean"),
        # Zahl linked to "North" alone, would come back.
        return not any(ch.isupper() or ch.islower() for ch in target_words[j]) \
            or all(source_words[i].lower() in _ARTICLES for i in sources)

    start, end = match
    while start > answer[0] and own(start - 1):
        start -= 1
    while end < answer[1] and own(end + 1):
        end += 1
    return start, end


def _people(source_words: Sequence[str]) -> bool:
    """A plural demonym ("Mexicans", "Chileans"): the people, not the adjective."""
    words = [w.lower() for w in source_words if is_word_like(w) and w.lower() not in _ARTICLES]
    return bool(words) and " ".join(words) not in _table()["demonyms"]


def _bare_name(words: Sequence[str], code: str, lang: str) -> bool:
    """The words are the country's name itself (its first spelling: the language's name, الألمانية,
    is the adjective), less an Arabic clitic (وروسيا)."""
    names = _table()["names"].get(lang.split("-")[0], {}).get(code, ())
    text = (" " if lang not in _UNSPACED else "").join(words).lower()
    forms = _without_clitics(text) if lang in _CLITIC_SCRIPTS else [text]
    return bool(names) and names[0].lower() in forms


def _inflected_name(words: Sequence[str], code: str, lang: str) -> bool:
    if lang in _UNSPACED:
        return "".join(words) in _table()["names"].get(lang.split("-")[0], {}).get(code, ())  # 美国, not 美国队
    text = " ".join(words).lower()
    forms = _without_clitics(text) if lang in _CLITIC_SCRIPTS else [text]
    names = _table()["names"].get(lang.split("-")[0], {}).get(code, ())
    return any(len(f) <= len(n) + 1 for f in forms for n in names if _word_matches(f.split()[0], n.split()[0], lang))


def _same_mention(source_words: Sequence[str], k: int, span_start: int, span_end: int) -> bool:
    n = span_end - span_start + 1
    return [w.lower() for w in source_words[k : k + n]] == [w.lower() for w in source_words[span_start : span_end + 1]]
