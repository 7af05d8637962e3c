"""Raw text -> words with character offsets, for task files that come as plain text (SQuAD contexts,
sentence pairs). CoNLL files are already words.

The mPMR pre-training data is word-tokenised per language (corpora/words.py, spaCy and friends); the
training package never imports those backends (it reads only Parquet, docs/design.md §3), and SQuAD-format
files do not say their language. So the split here is script-aware but language-free:

* letters, digits and combining marks of space-separated scripts run together into one word
  (Devanagari or Arabic vowel signs stay inside their word: Python's `\\w` would cut at them);
* every punctuation or symbol character is a word of its own (so "Steelers," -> "Steelers" ","), as in
  BERT's basic tokenizer, which is what makes SQuAD answers fall on word boundaries;
* every character of a script written without spaces (CJK ideographs, kana, Thai, Lao, Khmer,
  Myanmar) is a word of its own, with its combining marks: answers in such text may start anywhere.

Every word is a substring of the text at its offsets: `text[start:end] == word`.
"""
from __future__ import annotations

import unicodedata

# Scripts written without spaces between words (ranges of code points; training/data/word_pieces.py
# reads them too).
NO_SPACE_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
)


def _no_space_script(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in NO_SPACE_RANGES)


def _kind(ch: str) -> str:
    """'space', 'mark' (joins the previous word), 'single' (a word alone) or 'run'."""
    if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs"):
        return "space"
    cat = unicodedata.category(ch)
    if cat[0] == "M":
        return "mark"
    if cat[0] in "PS" or _no_space_script(ch):
        return "single"
    return "run"


def split_words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every word of `text`, end exclusive, in order."""
    spans: list[list[int]] = []  # [start, end] of each word
    current = None  # kind of the word being built: "run", "single" or None after a space
    for k, ch in enumerate(text):
        kind = _kind(ch)
        if kind == "space":
            current = None
        elif kind == "mark" and current is not None:
            spans[-1][1] = k + 1  # a combining mark belongs to the character before it
        elif kind == "run" and current == "run":
            spans[-1][1] = k + 1
        else:  # a new word; a stray mark after a space is a word alone
            spans.append([k, k + 1])
            current = "run" if kind == "run" else "single"
    return [(text[s:e], s, e) for s, e in spans]
