"""One name said twice in a sentence, answered consistently.

An English sentence that names the same thing twice ("Trump ... Trump", "U.S. ... U.S.") has two
spans with the same words, and the translation usually writes the name twice too. The aligner links
each mention on its own: one to the right word and one to a neighbour ("Trump" -> Regierungsbeamten
and Trump), or both to the same word, and answers that share words are dropped as overlapping. When
one of the answers is a string the target holds exactly as many times as the English holds the
name, the mentions take those places in order (the first mention the first place): the words are
the same, and an aligner that put the first mention on the second place had put the other mention
elsewhere or on the same place.
"""
from __future__ import annotations

from collections.abc import Sequence

from corpora.clism.answers.spans import Answer, AnswerWords, project_answer


def consistent_repeats(source_words: Sequence[str], target_words: Sequence[str],
                       spans: Sequence[tuple[int, int, str]], answers: list[tuple[int, int] | None]) -> list:
    """`answers[k]` (start, end) or None for `spans[k]` (start, end, label), with the answers of
    repeated English spans made consistent as above. Returns the new list."""
    answers = list(answers)
    groups: dict[tuple, list[int]] = {}
    for k, (start, end, label) in enumerate(spans):
        groups.setdefault((label, tuple(w.lower() for w in source_words[start : end + 1])), []).append(k)
    for members in groups.values():
        if len(members) < 2:
            continue
        texts: dict[tuple[str, ...], int] = {}
        for k in members:
            if answers[k] is not None:
                text = tuple(target_words[answers[k][0] : answers[k][1] + 1])
                texts[text] = texts.get(text, 0) + 1
        others = [answers[k] for k in range(len(spans)) if k not in members and answers[k] is not None]
        if any(len(a) > len(b) and _occurrences(a, b) for a in texts for b in texts):
            continue  # one answer inside another ("المتحدة" of "الولايات المتحدة", "72 Prozent der Schüler"): which is right is not known
        for text in sorted(texts, key=lambda t: -texts[t]):
            # A place inside another name's answer is that name's ("Trump" in "Donald Trump").
            places = [p for p in _occurrences(target_words, text)
                      if not any(o[0] <= p[1] and p[0] <= o[1] for o in others)]
            if len(places) != len(members):
                continue
            for k, place in zip(members, places):
                answers[k] = place
            break
    return answers


def _occurrences(words: Sequence[str], text: Sequence[str]) -> list[tuple[int, int]]:
    n = len(text)
    places, k = [], 0
    while k + n <= len(words):
        if tuple(words[k : k + n]) == tuple(text):
            places.append((k, k + n - 1))
            k += n
        else:
            k += 1
    return places


def pair_answers(alignment, source_words: Sequence[str], target_words: Sequence[str], spans: Sequence, max_gap: int,
                 source_stop_words: frozenset[str], words: AnswerWords, target_tags: Sequence[str] = ()) -> list:
    """project_answer for every span of one pair ((start, end, label) each), then the answers of
    repeated names made consistent: one Answer or rejection reason per span, in order. An answer
    this step gives or moves counts as repaired."""
    results = [project_answer(alignment, source_words, target_words, s[0], s[1], s[2], max_gap, source_stop_words,
                              words, target_tags) for s in spans]
    if len(spans) < 2:
        return results
    given = [None if isinstance(r, str) else (r.start, r.end) for r in results]
    fixed = consistent_repeats(source_words, target_words, [tuple(s[:3]) for s in spans], given)
    return [r if f == g else Answer(f[0], f[1], True) for r, f, g in zip(results, fixed, given)]
