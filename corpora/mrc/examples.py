"""Contexts, answers and unanswerable pairing of the mPMR data (paper §2.2 and Appendix A.1).

Context with a stochastic answer position: the paper takes ξ words before the anchor and C − ξ
after, ξ ~ U[0, C]. We count the anchor's own words inside the C, so ξ is drawn from
U[0, C − len(anchor)] and the anchor is always whole. At an article edge, when fewer than ξ words
precede the anchor (or too few follow it), the window slides inward and keeps C words in all, so
every context has min(C, words available) words; near the edges the anchor position is therefore
nearer the edge than ξ said, which we accept rather than pad or drop the mention.

Only the words near a selected mention are ever tokenised: the tokeniser (spaCy, ~0.5 MB/s) is
ten times slower than the wikitext parser, and a dump has hundreds of times more text than the
contexts taken from it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from corpora.name_folding import fold_words
from corpora.spacing import locate_words, spaces_at

# First guess of characters per word, spaces included: the real excerpts' contexts average 2.6 (ja),
# 4.2 (vi), 5.6 (en) and 6.2 (el, at most 7.4). The window doubles when it yields too few words, so
# this only affects speed: a larger guess tokenises text that is thrown away (12 cost ~1/3 more).
_CHARS_PER_WORD = 8


@dataclass(frozen=True)
class Context:
    context_id: str
    entity: str
    mention_page: int
    words: tuple[str, ...]
    anchor_words: tuple[str, ...]
    answers: tuple[tuple[int, int], ...]  # inclusive word spans equal to anchor_words or another name, up to case
    spaces: tuple[bool, ...] = ()  # per word, whether whitespace follows it in the article (corpora/spacing.py)


def find_spans(
    words: Sequence[str], target: Sequence[str], joins_with_space: bool = True, bases=None, strip_accents: bool = False
) -> list[tuple[int, int]]:
    """Every span of `words` equal to `target` up to case (the paper's "all text spans identical":
    "Agriculture" opening a sentence is the anchor "agriculture"), and with `bases` (a word -> the
    names it inflects, corpora/wiki/inflections.py; words folded with `strip_accents`), every span
    whose words are the target's inflected ("ভারতের" of ভারত). Where words join without spaces
    (zh, ja, th) the segmenter may cut the same characters differently in context, so spans are
    compared by their characters: any run of whole words spelling the target is a span."""
    goal = fold_words(target, strip_accents and bases is not None)
    if not goal:
        return []
    folded = fold_words(words, strip_accents and bases is not None)
    if joins_with_space:
        n, first = len(goal), goal[0]
        if bases is not None:
            # The first word tested alone first: most positions fail there, without a slice and a
            # generator each.
            rest = goal[1:]
            return [(i, i + n - 1) for i, word in enumerate(folded[: max(0, len(folded) - n + 1)])
                    if (word == first or first in bases(word))
                    and all(w == g or g in bases(w) for w, g in zip(folded[i + 1 : i + n], rest))]
        return [(i, i + n - 1) for i in range(len(folded) - n + 1) if folded[i] == first and folded[i : i + n] == goal]
    goal_text = "".join(goal)
    spans = []
    for i in range(len(folded)):
        if not goal_text.startswith(folded[i]) or not folded[i]:
            continue
        text = ""
        for j in range(i, len(folded)):
            text += folded[j]
            if len(text) >= len(goal_text):
                if text == goal_text:
                    spans.append((i, j))
                break
    return spans


def answer_spans(
    words: Sequence[str], names: Sequence[Sequence[str]], joins_with_space: bool, bases=None, strip_accents: bool = False
) -> tuple[tuple[int, int], ...]:
    """Spans equal to any of `names` (the anchor text first, then the entity's title forms), or with
    `bases`, inflected forms of them (find_spans), without overlaps: where two names overlap, the
    earlier-starting, then longer, span wins."""
    candidates = sorted(
        {span for name in names for span in find_spans(words, name, joins_with_space, bases, strip_accents)},
        key=lambda span: (span[0], -span[1]),
    )
    spans, last_end = [], -1
    for start, end in candidates:
        if start > last_end:
            spans.append((start, end))
            last_end = end
    return tuple(spans)


# A word with its char offset in the article (-1: the tokeniser rewrote it, so it cannot be placed).
# The window is tokenised in pieces; the offsets let each word's spacing come from the article itself,
# at the joins between pieces too.
Located = tuple[str, int]


def _located(tokenizer, text: str, start: int, end: int) -> list[Located]:
    words = tokenizer.tokenize(text[start:end])
    offsets = locate_words(text, words, start)
    return list(zip(words, offsets if offsets is not None else [-1] * len(words)))


def _words_before(tokenizer, text: str, end: int, need: int) -> list[Located]:
    """At least `need` whole words ending at char `end`, or all words if the text starts first."""
    if need <= 0:
        return []
    width = max(64, need * _CHARS_PER_WORD)
    while True:
        start = max(0, end - width)
        words = _located(tokenizer, text, start, end)
        if start > 0 and words:
            words = words[1:]  # the cut may have split the first word
        if len(words) >= need or start == 0:
            return words
        width *= 2


def _words_after(tokenizer, text: str, start: int, need: int) -> list[Located]:
    if need <= 0:
        return []
    width = max(64, need * _CHARS_PER_WORD)
    while True:
        end = min(len(text), start + width)
        words = _located(tokenizer, text, start, end)
        if end < len(text) and words:
            words = words[:-1]
        if len(words) >= need or end == len(text):
            return words
        width *= 2


def window_spaces(text: str, located: list[Located], joins_with_space: bool) -> tuple[bool, ...]:
    """The space flags of a run of consecutive words of `text`; where a word could not be placed, the
    language's rule (a space after every word where words are written with spaces) for all of them."""
    words, offsets = [w for w, _ in located], [at for _, at in located]
    if any(at < 0 for at in offsets):
        return (joins_with_space,) * len(words)
    return tuple(spaces_at(text, words, offsets))


def build_context(
    tokenizer,
    text: str,
    anchor_start: int,
    anchor_end: int,
    context_words: int,
    rng,
    context_id: str,
    entity: str,
    mention_page: int,
    title_words: Sequence[Sequence[str]] = (),
    bases=None,
    strip_accents: bool = False,
) -> Context | None:
    """A C-word context around one mention; None when the anchor alone is longer than C.

    Answers are every span equal to the anchor text up to case, and every span equal to another name
    of the entity (`title_words`: its title with and without a "(qualifier)", the texts of its other
    links on the page): where the link said "the city", a later "Paris" in the context is a mention
    of the same entity too. With `bases` (where the language inflects names, corpora/wiki/inflections.py;
    words folded with `strip_accents`), their inflected forms are answers too (find_spans)."""
    glued = _glued_words(tokenizer, text, anchor_start, anchor_end) if tokenizer.joins_with_space else None
    if glued is None:
        glued = _GluedWords(anchor_start, [], _located(tokenizer, text, anchor_start, anchor_end), [], anchor_end)
    anchor_words = [w for w, _ in glued.anchor]
    if not anchor_words or len(anchor_words) > context_words:
        return None
    room = context_words - len(anchor_words)
    xi = rng.randint(0, room)

    def words_before(need: int) -> list[Located]:
        return _words_before(tokenizer, text, glued.start, need - len(glued.before)) + glued.before

    def words_after(need: int) -> list[Located]:
        return glued.after + _words_after(tokenizer, text, glued.end, need - len(glued.after))

    # Only the words the window takes are tokenised (ξ before, C − ξ after), not C on each side:
    # the tokeniser is most of this function's cost. At an article edge the window slides inward
    # so that it still holds C words: fewer than ξ before (the start) asks for more after, and
    # fewer than C − ξ after (the end) asks for more before.
    before = words_before(xi)
    n_before = min(xi, len(before))
    after = words_after(room - n_before)
    n_after = min(room - n_before, len(after))
    if len(before) < room - n_after and len(before) >= xi:  # the end came first; the start may not have
        before = words_before(room - n_after)
    n_before = min(len(before), room - n_after)
    window = before[len(before) - n_before :] + glued.anchor + after[:n_after]
    words = tuple(w for w, _ in window)
    answers = answer_spans(words, [anchor_words, *title_words], tokenizer.joins_with_space, bases, strip_accents)
    spaces = window_spaces(text, window, tokenizer.joins_with_space)
    return Context(context_id, entity, mention_page, words, tuple(anchor_words), answers, spaces)


# A run of characters glued to an anchor longer than this is not one word ("[[A]][[B]]" chains,
# unspaced text in a spaced language): the anchor is then tokenised on its own, as elsewhere.
_MAX_GLUED_CHARS = 40


class _GluedWords(NamedTuple):
    start: int  # char offset where the words glued before the anchor begin
    before: list[Located]
    anchor: list[Located]
    after: list[Located]
    end: int  # char offset where the words glued after the anchor end


def _glued_words(tokenizer, text: str, anchor_start: int, anchor_end: int) -> _GluedWords | None:
    """The anchor tokenised together with what is written against it, as plain text is tokenised:
    French and Italian elide an article onto a link ("l'[[Allemagne]]", "all'[[agricoltura]]"), and
    links sit inside "Perl/[[PHP]]/Python" or "Bose–[[Einstein]]". Tokenised apart, "l'" is cut from
    what follows it and spaCy splits it into "l" and "'" ("de l ' Allemagne"). None when nothing is
    glued, or when the words do not break where the anchor starts and ends."""
    start, floor = anchor_start, max(0, anchor_start - _MAX_GLUED_CHARS)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    end, ceiling = anchor_end, min(len(text), anchor_end + _MAX_GLUED_CHARS)
    while end < ceiling and not text[end].isspace():
        end += 1
    if (start, end) == (anchor_start, anchor_end):
        return None
    run_too_long_before = start == floor and start > 0 and not text[start - 1].isspace()
    run_too_long_after = end == ceiling and end < len(text) and not text[end].isspace()
    if run_too_long_before or run_too_long_after:
        return None
    words = tokenizer.tokenize(text[start:end])
    breaks, position, offsets = {}, start, []  # char offset where a word starts -> its index
    for k, word in enumerate(words):
        at = text.find(word, position, end)
        if at < 0:  # a word the tokeniser rewrote: its offsets are unknown
            return None
        breaks[at] = k
        offsets.append(at)
        position = at + len(word)
    first = breaks.get(anchor_start)
    last = breaks.get(anchor_end, len(words)) if anchor_end < end else len(words)
    if first is None or (anchor_end < end and anchor_end not in breaks) or first >= last:
        return None
    located = list(zip(words, offsets))
    return _GluedWords(start, located[:first], located[first:last], located[last:], end)


def lead_words(tokenizer, text: str, need: int) -> list[str]:
    """The first `need` words (or all) of an article, tokenising only as much text as needed."""
    return [w for w, _ in lead_located(tokenizer, text, need)]


def lead_located(tokenizer, text: str, need: int) -> list[Located]:
    """lead_words with each word's char offset (-1 where a word could not be placed)."""
    return _words_after(tokenizer, text, 0, need)[:need]


def contains_any(
    words: Sequence[str], forms: Sequence[Sequence[str]], joins_with_space: bool, strip_accents: bool = False,
    bases=None,
) -> bool:
    """Whether a context holds any of the given word sequences (folded as the forms were: case, and
    accents where `strip_accents`; whole words, or characters where words join without spaces), or
    with `bases` (corpora/wiki/inflections.py), an inflected form of one."""
    folded = fold_words(words, strip_accents)
    if joins_with_space:
        text = " " + " ".join(folded) + " "
        if any(f" {' '.join(f)} " in text for f in forms if f):
            return True
        if bases is not None:
            by_first = {}
            for f in forms:
                if f:
                    by_first.setdefault(f[0], []).append(f)
            for i, word in enumerate(folded):
                for base in bases(word):
                    for f in by_first.get(base, ()):
                        if all(w == g or g in bases(w) for w, g in zip(folded[i : i + len(f)], f)) and i + len(f) <= len(folded):
                            return True
        return False
    text = "".join(folded)
    return any("".join(f) in text for f in forms if f)


def pick_unanswerable(
    entity: str,
    definition_page: int,
    forbidden: Sequence[Sequence[str]],
    candidates: Sequence[Context],
    count: int,
    order_key,
    joins_with_space: bool,
    strip_accents: bool = False,
    bases=None,
) -> list[Context]:
    """Up to `count` contexts of other entities that cannot answer this entity's query.

    A candidate is refused when it comes from the entity's own article, or holds one of its
    surface forms or anchor texts (`forbidden`, case-folded word tuples): such a context
    would make the "unanswerable" label wrong. The order is a seeded hash, not input order.
    """
    chosen: list[Context] = []
    for ctx in sorted(candidates, key=lambda c: order_key(c.context_id)):
        if len(chosen) == count:
            break
        if ctx.entity == entity or ctx.mention_page == definition_page:
            continue
        if contains_any(ctx.words, forbidden, joins_with_space, strip_accents, bases):
            continue
        chosen.append(ctx)
    return chosen
