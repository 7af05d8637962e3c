"""Which words of a text are followed by a space: spaCy's `Token.whitespace_`, for every tokeniser.

The word tokenisers (corpora/words.py) return surface substrings of the text, in order, and drop only
what lies between words: whitespace and invisible direction controls (Sacremoses also ASCII control
characters). So each word is found again in the text by a forward search that starts where the
previous word ended (nothing between two words can be the first character of a word), and the word is
followed by a space when the characters between it and the next word hold any whitespace. This is
what spaCy's `whitespace_` says for its own tokens, computed the same way for PyThaiNLP, Sudachi,
MeCab, jieba and Sacremoses, which keep no such flag.

`join_words` gives the running text back: each word, then one space where its flag says so. It equals
`normalise_spacing(text)` of the span the words came from: direction controls (and ASCII controls)
removed, every run of whitespace one space, none at either end. That is the rows' whole contract for
spacing: a newline, a tab or a no-break space between two words all come back as one space.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

# What the tokenisers drop besides whitespace (corpora/words.py: clean_tokens and Sacremoses).
_DIRECTION_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_DROPPED_RE = re.compile(f"[{_DIRECTION_CONTROLS}\x00-\x08\x0e-\x1b\x7f]")
_WHITESPACE_RE = re.compile(r"\s+")


def locate_words(text: str, words: Sequence[str], start: int = 0) -> list[int] | None:
    """The char offset of each word in `text`, searching from `start`; None when a word is not there
    in order with only whitespace and dropped characters before it (a tokeniser that rewrote or dropped
    text), so that the caller can say the spacing is unknown."""
    offsets, position = [], start
    for word in words:
        at = text.find(word, position)
        if at < 0 or not word or not _separates(text[position:at]):
            return None
        offsets.append(at)
        position = at + len(word)
    return offsets


def _separates(gap: str) -> bool:
    return not gap or gap.isspace() or not _DROPPED_RE.sub("", gap).strip()


def spaces_at(text: str, words: Sequence[str], offsets: Sequence[int]) -> list[bool]:
    """For each located word, whether whitespace comes after it before the next word; the last word
    looks at what follows it up to the next visible character (or the end of the text)."""
    spaces = []
    for k, (word, at) in enumerate(zip(words, offsets)):
        end = at + len(word)
        if k + 1 < len(offsets):
            gap = text[end:offsets[k + 1]]
        else:
            stop = end
            while stop < len(text) and (text[stop].isspace() or _DROPPED_RE.match(text[stop])):
                stop += 1
            gap = text[end:stop]
        spaces.append(any(ch.isspace() for ch in gap))
    return spaces


def word_spaces(text: str, words: Sequence[str], start: int = 0) -> list[bool] | None:
    """The space flags of words tokenised from `text[start:]`; None if they cannot be placed."""
    offsets = locate_words(text, words, start)
    return None if offsets is None else spaces_at(text, words, offsets)


def join_words(words: Sequence[str], spaces: Sequence[bool]) -> str:
    """The running text of the words: one space after each word whose flag is set (none after the last)."""
    if not words:
        return ""
    parts = []
    for word, space in zip(words[:-1], spaces):
        parts.append(word)
        if space:
            parts.append(" ")
    parts.append(words[-1])
    return "".join(parts)


def normalise_spacing(text: str) -> str:
    """The text as words and flags can give it back: dropped characters removed, whitespace runs one space."""
    return _WHITESPACE_RE.sub(" ", _DROPPED_RE.sub("", text)).strip()

