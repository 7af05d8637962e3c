"""Part-of-speech tags of a sentence's words, where the word tokeniser knows them.

The CLISM answer rules (corpora/clism/answers/tags.py) read them to tell a name from the verb or ending the
aligner ran into ("Clark" -> 述べ, "Hill" -> 보도 했, "Reuters" -> 路透社 未能):
  * ja and ko words are morphemes, and the analyser that cut them knows what they are: the same
    Sudachi and MeCab-ko as corpora/words.py run again on the sentence, and their tags are used only
    when its morphemes are exactly the sentence's words;
  * zh words are jieba's, and the dictionary they were cut with gives most of them a part of speech.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from corpora.words import SUDACHI_MAX_CHARS, SUDACHI_MODE, PerThread, clean_tokens, text_chunks

TAGGED_LANGS = frozenset({"ja", "ko", "zh"})


def tag_words(lang: str, text: str, words: Sequence[str]) -> tuple[str, ...]:
    """One tag per word of `words` (get_tokenizer(lang).tokenize(text)): Sudachi's part of speech
    (名詞, 動詞, 助詞, …) for ja, MeCab-ko's (NNP, JKS, VV+EP, …) for ko, jieba's (n, v, ul, …; "" for a
    word outside its dictionary) for zh; () for another language or when the analyser's morphemes are
    not these words."""
    if lang not in TAGGED_LANGS or not words:
        return ()
    if lang == "zh":
        # jieba's words are looked up in the dictionary they were cut with, whose entries carry a
        # part of speech (挽救 v, 路透社 n, 了 ul); a word it made up (a name, 推特) has none: "".
        # jieba.posseg would cut the sentence again, differently in 29% of NTREX sentences, at 1.5 ms each.
        tag_of = _jieba_tags()
        return tuple(tag_of.get(word, "") for word in words)
    tags: list[str] = []
    pieces: list[str] = []
    for surface, tag in _tagger(lang)(text):
        for piece in clean_tokens([surface]):
            pieces.append(piece)
            tags.append(tag)
    return tuple(tags) if pieces == list(words) else ()


@functools.lru_cache(maxsize=1)
def _jieba_tags() -> dict[str, str]:
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg.dt.word_tag_tab


@functools.lru_cache(maxsize=None)
def _tagger(lang: str) -> Callable[[str], list[tuple[str, str]]]:
    return _sudachi_tagger() if lang == "ja" else _mecab_tagger()


def _sudachi_tagger() -> Callable[[str], list[tuple[str, str]]]:
    from sudachipy import Dictionary, SplitMode

    dictionary = Dictionary()
    mode = getattr(SplitMode, SUDACHI_MODE)
    per_thread = PerThread(lambda: dictionary.tokenizer(mode=mode))  # as corpora/words.py: one per thread

    def tag(text: str) -> list[tuple[str, str]]:
        tokenizer = per_thread.get()
        return [(m.surface(), m.part_of_speech()[0]) for chunk in text_chunks(text, SUDACHI_MAX_CHARS)
                for m in tokenizer.tokenize(chunk)]

    return tag


def _mecab_tagger() -> Callable[[str], list[tuple[str, str]]]:
    from mecab import MeCab

    tagger = MeCab()

    def tag(text: str) -> list[tuple[str, str]]:
        return [(m.surface, m.feature.pos) for m in tagger.parse(text)]

    return tag
