"""A name's answer read by the parts of speech of its words (ja, ko, zh: corpora/word_tags.py).

On real NTREX pairs (fast_align) the aligner runs a name into the verb beside it, or links it to a
verb or an ending alone, and those words are neither stop words nor particles (counts and how many
were wrong: docs/clism_pairs.md, "Answers"):
  * ja: "Baton Rouge" -> バトン ・ ルージュ で 育ち ("grew up in"), "Jaguar Land Rover" -> 懸念 を
    示し, "Clark" -> 述べ ("said"): a verb or an auxiliary at an edge, or no noun at all;
  * ko: "Italy" -> 싸운다 ("fights"), "Hill" -> 보도 했 ("reported"), "the White House" -> 은 백악관:
    no noun, a verb's ending (EP, EF), or a leading particle (Paris -> 파리, which MeCab tags a verb,
    is the rare right answer lost);
  * zh: "Australia" -> 挽救 ("saved"), "Reuters" -> 路透社 未能 ("failed to"): only verbs and
    adverbs (always wrong), or a trailing verb (mostly right without it).
A leading adjective stays (少なく とも 50 is right): only verbs and auxiliaries are cut, and the
particles their cut leaves at the edge with them.
"""
from __future__ import annotations

from collections.abc import Sequence

# Sudachi's first part-of-speech level.
_JA_VERBS = frozenset({"動詞", "助動詞"})
_JA_PARTICLES = frozenset({"助詞", "補助記号"})
_JA_NOUNS = frozenset({"名詞", "代名詞", "記号"})

# MeCab-ko (Sejong tags; a merged morpheme reads "VV+EP"): nouns, numerals, pronouns, foreign words,
# numbers, Chinese characters and roots; verb endings (pre-final EP, final EF).
_KO_NOUN_PREFIXES = ("NN", "NR", "NP", "SL", "SN", "SH", "XR")
_KO_VERB_ENDINGS = frozenset({"EP", "EF"})


def repair_by_tags(lang: str, words: Sequence[str], tags: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    """(start, end) of a name's answer with its verbs cut off (ja) or its leading particle (ko); None
    when what is left is no name: no noun (ja, ko) or a verb's ending inside (ko)."""
    if lang == "ja":
        return _repair_ja(words, tags, start, end)
    if lang == "ko":
        return _repair_ko(tags, start, end)
    if lang == "zh":
        return _repair_zh(words, tags, start, end)
    return start, end


def _repair_ja(words: Sequence[str], tags: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    end = _past_verbs(tags, end, start, -1)
    start = _past_verbs(tags, start, end, 1)
    if not any(tags[k] in _JA_NOUNS or _katakana(words[k]) for k in range(start, end + 1)):
        return None
    return start, end


def _past_verbs(tags: Sequence[str], edge: int, other: int, step: int) -> int:
    """The edge moved inward (`step`) past verbs and auxiliaries, and the particles their cut leaves."""
    cut = False
    while edge != other and (tags[edge] in _JA_VERBS or cut and tags[edge] in _JA_PARTICLES):
        cut = cut or tags[edge] in _JA_VERBS
        edge += step
    return edge


def _katakana(word: str) -> bool:
    """A word all in katakana is a transliterated name, whatever Sudachi makes of it ("Den" -> デン,
    tagged an adverb)."""
    return all("\u30a0" <= ch <= "\u30ff" for ch in word)


def _repair_ko(tags: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    while start < end and tags[start].startswith("J"):
        start += 1
    morphemes = [part for k in range(start, end + 1) for part in tags[k].split("+")]
    if not any(part.startswith(_KO_NOUN_PREFIXES) for part in morphemes):
        return None
    if any(part in _KO_VERB_ENDINGS for part in morphemes):
        return None
    return start, end


# jieba's dictionary tags (ICTCLAS): verbs, adverbs; particles (了 ul, 的 uj, 地 uv …).
_ZH_VERBS = frozenset({"v", "vd", "vi"})
_ZH_NOT_NAMES = _ZH_VERBS | {"d"}


def _repair_zh(words: Sequence[str], tags: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    """A name's answer of verbs and adverbs only is no name ("Australia" -> 挽救, "saved"); a trailing
    verb of two or more characters goes, with the particles after it ("Reuters" -> 路透社 ~~未能~~,
    "the Supreme Court" -> 最高法院 ~~提名~~). A leading verb stays (超过 500: "more than 500").
    Words outside jieba's dictionary have no tag, and are taken as names (推特, 脱欧)."""
    if all(tags[k] in _ZH_NOT_NAMES for k in range(start, end + 1)):
        return None
    while end > start and (tags[end].startswith("u") or tags[end] in _ZH_VERBS and len(words[end]) >= 2):
        end -= 1
    return start, end
