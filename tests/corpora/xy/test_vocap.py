"""corpora/xy/vocap.py: ALP by hand, the concave hull, the allocation and the merged model."""
from __future__ import annotations

import itertools
import math
import pathlib

import pytest
import sentencepiece as spm

from corpora.xy import vocab_exports
from corpora.xy import vocap

MONO = pathlib.Path(vocap.__file__).parents[1] / "samples" / "mono"


def sample(lang: str) -> list[str]:
    return [line for line in (MONO / f"{lang}.txt").read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def curves():
    """Grid curves of three languages with different scripts, on the bundled sample."""
    out, train = {}, {}
    for lang in ("en", "hi", "th"):
        train[lang], heldout = vocap.split_heldout(sample(lang), 0.1, 0, lang)
        out[lang] = vocap.alp_curve(train[lang], heldout, [100, 200, 300, 400], seed=0)
    return out, train


def test_alp_by_hand():
    # counts on the training segmentation: a=2, b=1, c=0; add-one over 3 pieces: N + |V| = 3 + 3 = 6
    train = [["a", "b"], ["a"]]
    heldout = [["a", "b", "c"], ["a"]]
    expected = ((math.log(3 / 6) + math.log(2 / 6) + math.log(1 / 6)) + math.log(3 / 6)) / 2
    assert vocap.alp_of_segmentations(train, heldout, ["a", "b", "c"]) == pytest.approx(expected)


def test_alp_rises_with_vocabulary_size(curves):
    by_lang, _ = curves
    for lang, curve in by_lang.items():
        assert len(curve) >= 2, lang
        assert curve[-1].alp > curve[0].alp, lang


def test_upper_hull_is_concave_and_increasing():
    points = [(100, -10.0), (200, -9.5), (300, -6.0), (400, -5.9), (500, -6.5), (600, -5.0)]
    hull = vocap.upper_hull(points)
    assert hull[0] == (100, -10.0) and hull[-1] == (600, -5.0)
    slopes = [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(hull)]
    assert all(s > 0 for s in slopes)
    assert slopes == sorted(slopes, reverse=True)
    assert (200, -9.5) not in hull and (500, -6.5) not in hull


def test_training_is_deterministic():
    text = sample("hi")
    assert vocap.train_unigram(text, 300, seed=0) == vocap.train_unigram(text, 300, seed=0)


def test_size_below_the_characters_is_skipped():
    assert vocap.train_unigram(sample("zh"), 50) is None


@pytest.mark.parametrize("total", [400, 700, 900])
def test_allocation_union_is_exactly_the_target(curves, total):
    by_lang, _ = curves
    weights = {"en": 0.5, "hi": 0.3, "th": 0.2}
    allocation = vocap.allocate(by_lang, weights, total)
    assert len(allocation.union) == len(set(allocation.union)) == total - len(vocap.SPECIALS)
    assert set(allocation.union) == set().union(*map(set, allocation.pieces.values()))
    assert all(allocation.sizes[lang] == len(allocation.pieces[lang]) for lang in by_lang)


def test_allocation_follows_the_weights(curves):
    by_lang, _ = curves
    heavy_en = vocap.allocate(by_lang, {"en": 10.0, "hi": 0.1, "th": 0.1}, 700)
    heavy_hi = vocap.allocate(by_lang, {"en": 0.1, "hi": 10.0, "th": 0.1}, 700)
    assert heavy_en.sizes["en"] > heavy_hi.sizes["en"]
    assert heavy_hi.sizes["hi"] > heavy_en.sizes["hi"]


def test_allocation_capped_by_the_grid(curves):
    by_lang, _ = curves
    allocation = vocap.allocate(by_lang, {"en": 1.0, "hi": 1.0, "th": 1.0}, 100_000)
    assert len(allocation.union) < allocation.target  # every piece of every largest model, no more
    assert all(allocation.grid_sizes[lang] == by_lang[lang][-1].size for lang in by_lang)


def test_merged_model_holds_every_allocated_piece(curves):
    by_lang, train = curves
    weights = {"en": 0.5, "hi": 0.3, "th": 0.2}
    allocation = vocap.allocate(by_lang, weights, 700)
    mixed = vocap.mixed_sample(train, weights, 500, seed=0)
    initial = {p: -5.0 for p in allocation.union}
    merged = vocap.merge_models(by_lang["en"][0].model, allocation.union, initial, mixed, passes=2)
    sp = spm.SentencePieceProcessor(model_proto=merged)
    assert sp.get_piece_size() == 700
    assert [sp.id_to_piece(i) for i in range(5)] == list(vocap.SPECIALS)
    assert (sp.bos_id(), sp.pad_id(), sp.eos_id(), sp.unk_id()) == (0, 1, 2, 3)
    assert sp.piece_to_id("<mask>") == vocap.MASK_ID
    pieces = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    for lang, allocated in allocation.pieces.items():
        assert set(allocated) <= pieces, lang
    # re-estimated: the scores are log-probabilities from the mixed sample, not the initial -5
    assert len({sp.get_score(i) for i in range(5, 700)}) > 10
    assert merged == vocap.merge_models(by_lang["en"][0].model, allocation.union, initial, mixed, passes=2)


def test_mixed_sample_follows_the_weights():
    pools = {"a": [f"a{i}" for i in range(100)], "b": [f"b{i}" for i in range(5)]}
    mixed = vocap.mixed_sample(pools, {"a": 1.0, "b": 1.0}, 60, seed=3)
    assert sum(s.startswith("b") for s in mixed) == 30  # b repeats its 5 sentences to reach its share
    assert mixed == vocap.mixed_sample({"b": pools["b"], "a": pools["a"]}, {"a": 1.0, "b": 1.0}, 60, seed=3)


def test_parse_grid():
    assert vocap.parse_grid("100:500:100") == [100, 200, 300, 400, 500]
    assert vocap.parse_grid("300,100") == [100, 300]
    with pytest.raises(ValueError, match="--grid"):
        vocap.parse_grid("100:50:10")


def test_hugging_face_tokenizer_has_the_same_pieces_and_ids(curves):
    pytest.importorskip("transformers")
    by_lang, train = curves
    weights = {"en": 0.5, "hi": 0.3, "th": 0.2}
    allocation = vocap.allocate(by_lang, weights, 700)
    merged = vocap.merge_models(by_lang["en"][0].model, allocation.union, {}, vocap.mixed_sample(train, weights, 300, 0), 1)
    sp = spm.SentencePieceProcessor(model_proto=merged)
    tok = vocab_exports.hf_tokenizer(merged)
    # transformers 5's XLMRobertaTokenizer(vocab_file=...) silently builds a 5-token vocabulary: check size and pieces
    assert len(tok) == sp.get_piece_size() == 700
    assert tok.convert_ids_to_tokens(list(range(700))) == [sp.id_to_piece(i) for i in range(700)]
    assert (tok.bos_token_id, tok.pad_token_id, tok.eos_token_id, tok.unk_token_id, tok.mask_token_id) == (0, 1, 2, 3, 4)
    lines = [s for lang in train for s in train[lang][:20]]
    same = sum(tok(s, add_special_tokens=False)["input_ids"] == sp.encode(s) for s in lines)
    assert same >= 0.95 * len(lines)
    assert tok("abc")["input_ids"][0] == 0 and tok("abc")["input_ids"][-1] == 2
