"""Words -> their subword ids, each distinct word tokenised once and remembered.

The collators get rows already split into words and need each word's subwords (to map word-level
answers to subword positions). A fast tokenizer given pre-split words (`is_split_into_words=True`)
normalises, pre-tokenises and tokenises every word on its own: in `tokenizers`, the encoding of a
pre-tokenized input is the concatenation of one independent encoding per word, the word's index
only labelling `word_ids()`. A word's subwords therefore never depend on its neighbours, and can be
cached: the output is the same ids as one batched call over whole rows (tests/test_word_pieces.py
checks this on real text in 12 languages, with the XLM-R SentencePiece tokenizer and a trained one).

Why: tokenising every row afresh was most of a batch's collation (4 of 6-8 ms for 8 mPMR rows at the
tiny config; the loop waited ~11% of its time for batches on CPU), while the words of a corpus follow
Zipf's law: after a few batches almost every word has been seen.

Words of scripts written without spaces (Chinese, Japanese, Thai, ...). A pre-split word is a word
after a space to an XLM-R-style (Metaspace) tokenizer, which puts "▁" before it: "東京 都 に" became
▁ 東京 ▁ 都 ▁ に, a lone "▁" before almost every word: on real XQuAD paragraphs a third to a half
more subwords (th, zh) than the text as XLM-R read it in pre-training (▁東京都 に...), where "▁"
marks a real space and never sits between two Japanese characters. Encoded as below, within a few
per cent of it. So a word that follows its neighbour with no space in the text it came from
(where either side of the boundary is in such a script: the data jobs' words do not keep the
spaces, and this is how those scripts are written) is encoded as a continuation, without the "▁".
Its pieces are still its own (the same for every occurrence), so the cache holds; only the first word
of a sentence and words after a space get the prefix, as in the running text. A tokenizer that is not
Metaspace-based (e.g. WordPiece) is left as it was.

Rows that carry their spacing (schema v2: a flag per word, whether a space follows it in the text;
corpora/spacing.py) say exactly which words follow their neighbour without a space, in every script:
the Korean particle after its noun ("서울" "에"), the comma after "Paris", a Latin name inside Chinese
text, the spaces Thai writes between phrases. The script rule above is for rows without flags (v1
data, task files split here).
"""
from __future__ import annotations

import json
import re
from typing import NamedTuple

from transformers import PreTrainedTokenizerBase

from training.tasks.words import NO_SPACE_RANGES

# Distinct words kept: at ~210 bytes a word (a 10-letter word of 2 pieces, measured) ~55 MB per
# collator, i.e. per DataLoader worker. When full, only the words of the batch at hand are kept (the
# ids are the same either way: the cache changes speed, never output).
DEFAULT_MAX_WORDS = 1 << 18

# Scripts written without spaces between words (the task splitter's table), and the punctuation and
# fullwidth forms written with them: CJK symbols and punctuation ("、", "。"), fullwidth forms ("（").
_UNSPACED_RE = re.compile("[%s]" % "".join(
    f"{chr(lo)}-{chr(hi)}" for lo, hi in (*NO_SPACE_RANGES, (0x3000, 0x303F), (0xFF00, 0xFFEF))))


def glued_flags(words: list[str]) -> list[bool] | None:
    """For each word, whether it follows the previous one without a space in running text; None when
    no word is in a script written without spaces (then every word follows a space)."""
    if not _UNSPACED_RE.search("".join(words)):  # one scan in C: most rows are in spaced scripts
        return None
    flags = [False] * len(words)
    for k in range(1, len(words)):
        prev, word = words[k - 1], words[k]
        if prev and word and (_UNSPACED_RE.match(word) or _UNSPACED_RE.match(prev[-1])):
            flags[k] = True
    return flags


def glued_from_spaces(spaces) -> list[bool]:
    """Glued flags from space flags: a word is glued when the one before it has no space after it."""
    return [False, *(not space for space in spaces[:-1])] if len(spaces) else []


def sentence_glue(words: list[str], spaces=None) -> list[bool] | None:
    """The glued flags of one sentence: from its space flags when it has one per word, else the script
    rule (glued_flags); None when no word is glued."""
    if spaces is not None and len(spaces) == len(words):
        glued = glued_from_spaces(spaces)
        return glued if any(glued) else None
    return glued_flags(words)


class SpacedWords(NamedTuple):
    """A sentence's words with their space flags (one per word, or None: the script rule)."""

    words: list[str]
    spaces: list[bool] | None


def running_text(words: list[str], spaces=None) -> str:
    """The words as running text: a space before each word but those glued to the one before (exactly
    the source text's spacing when `spaces` gives a flag per word)."""
    glued = sentence_glue(words, spaces)
    if glued is None:
        return " ".join(words)
    return "".join(w if k == 0 or glued[k] else " " + w for k, w in enumerate(words))


def _continuation_tokenizer(tokenizer: PreTrainedTokenizerBase):
    """The tokenizer's backend with its Metaspace pre-tokenizer adding no "▁"; None if it has none."""
    from tokenizers import Tokenizer

    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    found = []

    def without_prefix(node):
        if isinstance(node, dict):
            if node.get("type") == "Metaspace":
                node["prepend_scheme"] = "never"
                if "add_prefix_space" in node:  # tokenizers < 0.14 spelt it so
                    node["add_prefix_space"] = False
                found.append(node)
            for child in node.get("pretokenizers", []):
                without_prefix(child)

    without_prefix(spec.get("pre_tokenizer"))
    normalizer = json.dumps(spec.get("normalizer"))
    if not found or '"Prepend"' in normalizer:  # a "▁" added by the normalizer: not ours to remove
        return None
    return Tokenizer.from_str(json.dumps(spec))


# A glued word's cache key: the word behind a NUL, which no word of XML-sourced or text-file rows holds
# (XML 1.0 forbids it), so one dict and one bound serve both encodings.
_GLUED = "\x00"


class WordPieces:
    def __init__(self, tokenizer: PreTrainedTokenizerBase, max_words: int = DEFAULT_MAX_WORDS):
        if not tokenizer.is_fast:
            raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: mapping subwords to words "
                             "needs one (load it with use_fast=True)")
        self.tokenizer = tokenizer
        self.max_words = max_words
        self._known: dict[str, tuple[int, ...]] = {}
        self._continuation = _continuation_tokenizer(tokenizer)

    def __call__(self, sentences: list[list[str]], spaces: list | None = None) -> list[list[tuple[int, ...]]]:
        """For each sentence, the subword ids of each of its words (no special tokens); `spaces`, one list
        of flags (or None) per sentence, says which words a space follows in the text."""
        known = self._known
        spaces = spaces if spaces is not None else [None] * len(sentences)
        keyed = [self._keys(words, flags) for words, flags in zip(sentences, spaces)]
        new = list(dict.fromkeys(key for keys in keyed for key in keys if key not in known))
        if new:
            if len(known) + len(new) > self.max_words:
                in_use = {key: known[key] for keys in keyed for key in keys if key in known}
                known.clear()
                known.update(in_use)
            spaced = [key for key in new if not key.startswith(_GLUED)]
            glued = [key for key in new if key.startswith(_GLUED)]
            if spaced:
                known.update(zip(spaced, self._tokenise(spaced)))
            if glued:
                known.update(zip(glued, self._tokenise_glued([key[1:] for key in glued])))
        return [[known[key] for key in keys] for keys in keyed]

    def _keys(self, words: list[str], spaces=None) -> list[str]:
        """Cache keys: the words themselves, and for words glued to the one before, the word behind _GLUED."""
        glued = sentence_glue(words, spaces) if self._continuation is not None else None
        if glued is None:
            return words
        return [_GLUED + word if flag else word for word, flag in zip(words, glued)]

    def flat(self, sentences: list[list[str]], spaces: list | None = None) -> list[tuple[list[int], list[int]]]:
        """For each sentence, its subword ids and the word index of each (as `word_ids()` gives)."""
        return [([t for pieces in per_word for t in pieces], [w for w, pieces in enumerate(per_word) for _ in pieces])
                for per_word in self(sentences, spaces)]

    def _tokenise(self, words: list[str]) -> list[tuple[int, ...]]:
        # All new words as one pre-split sequence: one encoding, cut back into words by word_ids().
        # verbose=False: that sequence may be longer than the model's maximum length, which is no
        # concern here (nothing is truncated) and would otherwise be warned about.
        enc = self.tokenizer([words], is_split_into_words=True, add_special_tokens=False, verbose=False)
        return _by_word(enc["input_ids"][0], enc.word_ids(0), len(words))

    def _tokenise_glued(self, words: list[str]) -> list[tuple[int, ...]]:
        enc = self._continuation.encode(words, is_pretokenized=True, add_special_tokens=False)
        return _by_word(enc.ids, enc.word_ids, len(words))


def _by_word(ids, word_ids, n: int) -> list[tuple[int, ...]]:
    pieces: list[list[int]] = [[] for _ in range(n)]
    for token, w in zip(ids, word_ids):
        if w is not None:
            pieces[w].append(token)
    return [tuple(p) for p in pieces]
