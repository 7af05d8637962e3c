"""Part-of-speech tags of a sentence's words, where the word tokeniser is a morphological analyser.

Japanese (Sudachi) and Korean (MeCab-ko) words are morphemes, and the analyser that cut them also
knows what they are: the CLISM answer rules (corpora/answer_tags.py) read it to tell a name from the
verb or ending the aligner ran into ("Clark" -> 述べ, "Hill" -> 보도 했). The tags come from the same
analyser, dictionary and split mode as corpora/words.py, run again on the sentence; they are used
only when its morphemes are exactly the sentence's words, else there are none.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence

from corpora.words import SUDACHI_MAX_CHARS, SUDACHI_MODE, clean_tokens, text_chunks

TAGGED_LANGS = frozenset({"ja", "ko"})


def tag_words(lang: str, text: str, words: Sequence[str]) -> tuple[str, ...]:
    """One tag per word of `words` (get_tokenizer(lang).tokenize(text)): Sudachi's part of speech
    (名詞, 動詞, 助詞, …) for ja, MeCab-ko's (NNP, JKS, VV+EP, …) for ko; () for another language or
    when the analyser's morphemes are not these words."""
    if lang not in TAGGED_LANGS or not words:
        return ()
    tags: list[str] = []
    pieces: list[str] = []
    for surface, tag in _tagger(lang)(text):
        for piece in clean_tokens([surface]):
            pieces.append(piece)
            tags.append(tag)
    return tuple(tags) if pieces == list(words) else ()


@functools.lru_cache(maxsize=None)
def _tagger(lang: str) -> Callable[[str], list[tuple[str, str]]]:
    return _sudachi_tagger() if lang == "ja" else _mecab_tagger()


def _sudachi_tagger() -> Callable[[str], list[tuple[str, str]]]:
    from sudachipy import Dictionary, SplitMode

    dictionary = Dictionary()
    mode = getattr(SplitMode, SUDACHI_MODE)
    local = threading.local()  # a Sudachi tokenizer shared between threads raises "already in use"

    def tag(text: str) -> list[tuple[str, str]]:
        tokenizer = getattr(local, "tokenizer", None)
        if tokenizer is None:
            tokenizer = local.tokenizer = dictionary.tokenizer(mode=mode)
        return [(m.surface(), m.part_of_speech()[0]) for chunk in text_chunks(text, SUDACHI_MAX_CHARS)
                for m in tokenizer.tokenize(chunk)]

    return tag


def _mecab_tagger() -> Callable[[str], list[tuple[str, str]]]:
    from mecab import MeCab

    tagger = MeCab()

    def tag(text: str) -> list[tuple[str, str]]:
        return [(m.surface, m.feature.pos) for m in tagger.parse(text)]

    return tag
