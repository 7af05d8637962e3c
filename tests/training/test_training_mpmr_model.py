"""mPMR model: the WAE loss against a hand-computed value, the valid-cell mask, and save/reload."""
from __future__ import annotations

import math
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from transformers import XLMRobertaConfig

from training.models.mpmr import MPMRForWAE, SpanExtractor, best_spans, valid_cells, wae_loss


def test_valid_cells_are_cls_and_context_spans_i_le_j():
    context_mask = torch.tensor([[0, 0, 1, 1, 0]], dtype=torch.bool)
    valid = valid_cells(context_mask)[0]
    assert sorted(map(tuple, valid.nonzero().tolist())) == [(0, 0), (2, 2), (2, 3), (3, 3)]


def test_wae_loss_equals_the_hand_computed_value():
    # Two examples, T = 4. Example 0: answerable, context at 2..3, answer span (2, 3).
    # Example 1: unanswerable, context at 1..2. Invalid cells hold 100 and must not count.
    logits = torch.full((2, 4, 4), 100.0)
    logits[0, 0, 0], logits[0, 2, 2], logits[0, 2, 3], logits[0, 3, 3] = 2.0, -1.0, 0.5, 3.0
    logits[1, 0, 0], logits[1, 1, 1], logits[1, 1, 2], logits[1, 2, 2] = -2.0, 0.0, 1.0, -3.0
    context_mask = torch.tensor([[0, 0, 1, 1], [0, 1, 1, 0]], dtype=torch.bool)
    answerable = torch.tensor([1.0, 0.0])
    answer_spans = torch.tensor([[0, 2, 3]])

    def bce(x, y):  # -[y log σ(x) + (1-y) log(1-σ(x))]
        p = 1 / (1 + math.exp(-x))
        return -(y * math.log(p) + (1 - y) * math.log(1 - p))

    cells = [(2.0, 1), (-1.0, 0), (0.5, 1), (3.0, 0), (-2.0, 0), (0.0, 0), (1.0, 0), (-3.0, 0)]
    expected = sum(bce(x, y) for x, y in cells) / 8  # normalised by the 8 valid cells of the batch
    # By hand: log(1+e^-2) + log(1+e^-1) + log(1+e^-0.5) + log(1+e^3) + log(1+e^-2) + log 2 + log(1+e)
    # + log(1+e^-3) = .126928 + .313262 + .474077 + 3.048587 + .126928 + .693147 + 1.313262 + .048587
    # = 6.144778, / 8 = 0.768097.
    assert expected == pytest.approx(0.768097, abs=1e-6)
    assert wae_loss(logits, context_mask, answerable, answer_spans).item() == pytest.approx(expected, rel=1e-6)
    # No answers at all (an all-unanswerable batch) is a valid input.
    assert torch.isfinite(wae_loss(logits, context_mask, torch.zeros(2), torch.zeros((0, 3), dtype=torch.long)))


def test_extractor_is_ffn_of_h_dot_h():
    torch.manual_seed(0)
    ext = SpanExtractor(8, 16, dropout=0.0)
    h = torch.randn(2, 5, 8)
    s = ext(h)
    assert s.shape == (2, 5, 5)
    ffn = ext.ffn
    assert [type(m).__name__ for m in ffn] == ["Linear", "GELU", "Dropout", "Linear"]
    assert torch.allclose(s[1, 3, 4], ffn(h[1, 3]) @ h[1, 4], atol=1e-5)


def tiny_model() -> MPMRForWAE:
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=66, pad_token_id=1,
                              extractor_hidden_size=48, extractor_dropout=0.1)
    return MPMRForWAE(config)


def test_save_pretrained_reload_gives_identical_logits(tmp_path):
    model = tiny_model().eval()
    input_ids = torch.randint(5, 50, (2, 12))
    input_ids[1, 9:] = 1
    attention_mask = (input_ids != 1).long()
    with torch.no_grad():
        before = model(input_ids, attention_mask)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    again = MPMRForWAE.from_pretrained(tmp_path).eval()
    assert again.config.extractor_hidden_size == 48
    with torch.no_grad():
        assert torch.equal(again(input_ids, attention_mask), before)


def test_best_spans_decodes_the_argmax_context_cell():
    logits = torch.zeros(1, 6, 6)
    logits[0, 0, 0] = 5.0
    logits[0, 4, 2] = 9.0  # i > j: never a span
    logits[0, 1, 1] = 9.0  # query token: never a span
    logits[0, 3, 4] = 4.0
    spans, scores, cls = best_spans(logits, torch.tensor([[0, 0, 1, 1, 1, 0]], dtype=torch.bool))
    assert spans.tolist() == [[3, 4]] and scores.item() == 4.0 and cls.item() == 5.0


def test_init_from_an_xlmr_checkpoint_loads_the_encoder(tmp_path):
    # What `--init xlm-roberta-base` does, on a local random XLM-R masked-LM checkpoint (no hub).
    from transformers import XLMRobertaForMaskedLM

    from training.registry import get_spec
    from training.recipes.mpmr import CONFIGS

    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=66, pad_token_id=1)
    XLMRobertaForMaskedLM(config).save_pretrained(tmp_path)
    lm = XLMRobertaForMaskedLM.from_pretrained(tmp_path)
    model = get_spec("mpmr").build_pretrained(CONFIGS["tiny"].replace(extractor_hidden_size=40), None, str(tmp_path))
    assert model.config.extractor_hidden_size == 40
    assert model.extractor.ffn[0].out_features == 40
    for name, tensor in lm.roberta.state_dict().items():
        if "pooler" not in name:
            assert torch.equal(model.roberta.state_dict()[name], tensor), name
