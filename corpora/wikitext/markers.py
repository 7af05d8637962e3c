"""The marker characters the wikitext passes leave in the text, and the repair at a cut.

Markers are control characters that cannot occur in a dump (XML 1.0 forbids them; they are deleted
from the input anyway), so every pass of corpora/wikitext/parse.py can edit the text freely without
tracking offsets: an anchor's offsets are fixed only once the final text exists.
"""
from __future__ import annotations

import re
from typing import NamedTuple

# See the module docstring. \x03 stands for a space inside link text that must survive collapsing.
ANCHOR_OPEN, ANCHOR_INDEX_END, ANCHOR_CLOSE = "\x01", "\x1f", "\x02"
KEPT_SPACE, BOLD_OPEN, BOLD_CLOSE, NOWIKI_EDGE, HEADING = "\x03", "\x04", "\x05", "\x06", "\x07"
# Around the text of a link to a category page with no label of its own ("Категорія:Народились 1815"):
# tidy decides whether its line is navigation (corpora/wikitext/tidy.py).
CATEGORY_LINK = "\x08"
MARKER_CHARS = "\x01\x02\x03\x04\x05\x06\x07\x08\x1f"

# <nowiki> content: markup characters moved to Supplementary Private Use Area-A so no pass sees them,
# moved back at the very end (one character for one, so offsets are unaffected).
_NOWIKI_CHARS = "[]{}<>'|=*#:;_~-!"
NOWIKI_PROTECT = {ord(c): 0xF0000 + ord(c) for c in _NOWIKI_CHARS}
NOWIKI_RESTORE = {0xF0000 + ord(c): ord(c) for c in _NOWIKI_CHARS}

NOWIKI_PIPE = chr(0xF0000 + ord("|"))


class Anchor(NamedTuple):
    """A tuple, not a frozen dataclass: one is built per link of a dump and a frozen dataclass costs
    ~2x as much (0.59 against 0.28 µs); the job passes them on as the (start, end, target) it needs."""

    start: int  # char offset into ParsedPage.text, inclusive
    end: int  # exclusive; text[start:end] is exactly the visible link text
    target: str  # normalise_title(link target); never empty


def without_marker_characters(text: str) -> str:
    """Delete the control characters used as markers (and "\\r"). A dump cannot hold them (XML 1.0),
    so this is a few fast `in` tests."""
    for char in MARKER_CHARS + "\r":
        if char in text:
            text = text.replace(char, "")
    return text


def append_after_cut(pieces: list[str], piece: str) -> None:
    """Append the text that follows removed markup, repairing what the removal left behind: a doubled
    space ("a {{x}} b"), a space before punctuation ("a {{citation needed}}."), and parentheses
    emptied of their content ("Paris ({{IPA|..}}) is", "Paris ({{lang|fr|Paris}}, born ...").

    Done at the cuts rather than by regexes over the whole text, which would also touch text the
    author wrote that way and cost a full scan each."""
    if not piece:
        return
    prev = pieces[-1] if pieces else ""
    last = prev[-1:]
    if last not in REPAIRED_AFTER:
        pieces.append(piece)
        return
    if last == "'" and piece[0] == "'":
        # "''{{transl|ar|..}}''" is two italic toggles around a template; joined, the quotes would
        # read as one run of four (apostrophe + bold) and shift every bold run after it.
        piece = NOWIKI_EDGE + piece
    first = piece[0]
    if last == " ":
        if first == " ":
            piece = piece.lstrip(" ")
            first = piece[:1]
        if first in (",", ".", ")", ";") and piece[:2] != "..":
            prev = prev.rstrip(" ")
            last = prev[-1:]
    elif last == ";" and first in (",", ".", ")") and prev.endswith("&nbsp;"):  # "3500&nbsp;{{sc|bc}}."
        prev = prev[:-6].rstrip(" ")
        last = prev[-1:]
    if (last in _NOTATION_CLOSERS and first == _NOTATION_CLOSERS[last] and prev[-2:-1] in _NOTATION_BEFORE
            and piece[1:2] in _NOTATION_AFTER):
        # "(pronuncia /{{IPA|bolˈtsano}}/, ...)": the notation's slashes or brackets held only the
        # template; they go, and so does the label before them (up to the bracket or ";").
        prev, piece = _without_label_words(prev[:-1]), piece[1:]
        last, first = prev[-1:], piece[:1]
        if last == " " and first in (",", ";", ")"):
            prev = prev.rstrip(" ")
            last = prev[-1:]
    if last in _LABEL_COLONS and (first in (")", ";") or first == "," and prev.endswith(("(IPA:", "; IPA:"))):
        # Not before "," in general: "(Pashto/Dari: {{nq|افغانستان}}, Afġānistān)" keeps its label,
        # which the transliteration after the comma answers; "IPA:" names only the template's notation.
        prev = _without_empty_label(prev)
        last = prev[-1:]
    if last == "(":
        if first in (" ", ",", ";"):
            piece = piece.lstrip(" ,;")
            first = piece[:1]
        if first == ")":
            prev = prev[:-1].rstrip(" ")
            piece = piece[1:]
    pieces[-1] = prev
    pieces.append(piece)


_LABEL_CHARS = 80  # "[[Alfabeto fonetico internazionale|IPA]]:" is 42
# What ends a label: the colon, and the Armenian comma that Armenian writes there ("(IPA
# արտասանությամբ՝ {{IPA|…}})" on hywiki's country pages).
_LABEL_COLONS = frozenset(":\u055d")


def _without_label(prev: str, is_label, entity_semicolon_opens: bool) -> str:
    """`prev` without what follows its last "(" or ";" (within _LABEL_CHARS) when `is_label` says that
    is a label; unchanged otherwise."""
    tail = prev[-_LABEL_CHARS:]
    opening = max(tail.rfind("("), tail.rfind(";"))
    if opening < 0 or not entity_semicolon_opens and tail[opening] == ";" and _ENTITY_END_RE.search(tail, 0, opening):
        return prev  # "(Ben &amp; Jerry: ...)": that ";" ends an entity, it opens no label
    if not is_label(tail[opening + 1 :]):
        return prev
    return prev[: len(prev) - len(tail) + opening + 1]


def _without_empty_label(prev: str) -> str:
    """"(IPA: {{IPA|..}})", "(pronuncia: {{IPA|..}}; Stoccolma ...)", "(en allemand : {{lang|de|..}})":
    the template was the label's value, so the label goes with it (from the bracket or the ";" that
    opens it) rather than leave "Catania (IPA:) è". A label is a few words, links allowed."""
    return _without_label(prev, _is_colon_label, entity_semicolon_opens=False)


def _is_colon_label(text: str) -> bool:
    label = text[:-1]  # without its ":"
    return (bool(label.strip()) and label.count(" ") <= 5 and not any(c in label for c in "()\n{}.")
            and label.count("[[") == label.count("]]"))


_ENTITY_END_RE = re.compile(r"&#?\w+$")
_NOTATION_CLOSERS = {"/": "/", "[": "]"}
# A notation stands apart: " /{{IPA|…}}/," is one, "золот/<math>∅</math>/ий" (slashes inside a word) is not.
_NOTATION_BEFORE = frozenset({" ", "(", ":", ""})
_NOTATION_AFTER = frozenset({" ", ",", ";", ")", ".", ""})
# The last characters before a cut that append_after_cut may repair (its branches' conditions on
# `last`, and the apostrophe); after any other it only appends.
REPAIRED_AFTER = frozenset(" ;('") | frozenset(_NOTATION_CLOSERS) | _LABEL_COLONS


def _without_label_words(prev: str) -> str:
    """"(pronuncia " or "(Aussprache: " before an emptied notation: a label of up to three words
    right after a bracket or ";" goes; anything longer is the sentence's own text and stays."""
    return _without_label(prev, _is_word_label, entity_semicolon_opens=True)


def _is_word_label(label: str) -> bool:
    return len(label.split()) <= 3 and not any(c in label for c in "()\n{}[]|.,") and not any(c.isdigit() for c in label)
