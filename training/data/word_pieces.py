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
"""
from __future__ import annotations

from transformers import PreTrainedTokenizerBase

# Distinct words kept: at ~210 bytes a word (a 10-letter word of 2 pieces, measured) ~55 MB per
# collator, i.e. per DataLoader worker. When full, only the words of the batch at hand are kept (the
# ids are the same either way: the cache changes speed, never output).
DEFAULT_MAX_WORDS = 1 << 18


class WordPieces:
    def __init__(self, tokenizer: PreTrainedTokenizerBase, max_words: int = DEFAULT_MAX_WORDS):
        if not tokenizer.is_fast:
            raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: mapping subwords to words "
                             "needs one (load it with use_fast=True)")
        self.tokenizer = tokenizer
        self.max_words = max_words
        self._known: dict[str, tuple[int, ...]] = {}

    def __call__(self, sentences: list[list[str]]) -> list[list[tuple[int, ...]]]:
        """For each sentence, the subword ids of each of its words (no special tokens)."""
        known = self._known
        new = list(dict.fromkeys(w for words in sentences for w in words if w not in known))
        if new:
            if len(known) + len(new) > self.max_words:
                in_use = {w: known[w] for words in sentences for w in words if w in known}
                known.clear()
                known.update(in_use)
            known.update(zip(new, self._tokenise(new)))
        return [[known[w] for w in words] for words in sentences]

    def flat(self, sentences: list[list[str]]) -> list[tuple[list[int], list[int]]]:
        """For each sentence, its subword ids and the word index of each (as `word_ids()` gives)."""
        return [([t for pieces in per_word for t in pieces], [w for w, pieces in enumerate(per_word) for _ in pieces])
                for per_word in self(sentences)]

    def _tokenise(self, words: list[str]) -> list[tuple[int, ...]]:
        # All new words as one pre-split sequence: one encoding, cut back into words by word_ids().
        # verbose=False: that sequence may be longer than the model's maximum length, which is no
        # concern here (nothing is truncated) and would otherwise be warned about.
        enc = self.tokenizer([words], is_split_into_words=True, add_special_tokens=False, verbose=False)
        pieces: list[list[int]] = [[] for _ in words]
        for token, w in zip(enc["input_ids"][0], enc.word_ids(0)):
            if w is not None:
                pieces[w].append(token)
        return [tuple(p) for p in pieces]
