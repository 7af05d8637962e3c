"""The space flags of a masked query (corpora/spacing.py): a kept word keeps its own, a `[MASK]` takes
the flag of the last word it hides, so "the [MASK], a city" and "[MASK]은" read as the lead did."""
from __future__ import annotations

from collections.abc import Sequence

from corpora.mrc.entity_masking import MASK


def masked_query_spaces(
    query: Sequence[str], words: Sequence[str], spaces: Sequence[bool], sources: Sequence[int]
) -> tuple[bool, ...]:
    """Flags for `query`, the first words of the masked `words` (whose flags are `spaces`); `sources`
    gives the first source word of every masked word (entity_masking.masked_sources), so a `[MASK]`
    hides the words up to the next one's source. When the two disagree (a query that is not a prefix
    of the masked words), each kept word is placed by its text instead."""
    if _consistent(query, words, sources):
        ends = [*(s - 1 for s in sources[1:]), len(words) - 1]
        return tuple(spaces[ends[k]] for k in range(len(query)))
    return _placed_by_text(query, words, spaces)


def _consistent(query: Sequence[str], words: Sequence[str], sources: Sequence[int]) -> bool:
    if len(sources) < len(query) or any(b <= a for a, b in zip(sources, sources[1:])):
        return False
    if sources and not 0 <= sources[0] <= sources[-1] < len(words):
        return False
    return all(q == MASK or q == words[s] for q, s in zip(query, sources))


def _placed_by_text(query: Sequence[str], words: Sequence[str], spaces: Sequence[bool]) -> tuple[bool, ...]:
    """Each kept word at the next source word equal to it; a `[MASK]` ends before the next kept word's."""
    positions: list[int | None] = []
    cursor = 0
    for q in query:
        if q == MASK:
            positions.append(None)
            cursor += 1
            continue
        at = next((i for i in range(cursor, len(words)) if words[i] == q), None)
        positions.append(at)
        cursor = (at if at is not None else cursor) + 1
    flags = []
    for k, at in enumerate(positions):
        if at is None:
            later = next((p for p in positions[k + 1:] if p is not None), None)
            end = (later - 1) if later is not None else len(words) - 1
            flags.append(bool(spaces[end]) if 0 <= end < len(spaces) else True)
        else:
            flags.append(bool(spaces[at]))
    return tuple(flags)
