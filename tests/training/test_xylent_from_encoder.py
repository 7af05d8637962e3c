"""XY-LENT initialised from an XLM-R-style encoder (training/models/xylent_from_encoder.py): step 0's
discriminator encoder is the encoder (a tiny random one always; the converted multilingual-e5-small
on real NTREX text when /tmp/e5-small is there), the generator its first layers, and what cannot be
honoured is one line."""
from __future__ import annotations

import pytest

from conftest import SHARED_DATA
from xylent_setup import ENCODER_LANGS, e5_small, ntrex_lines, tiny_cfg, tiny_encoder_folder, torch

from training.models.xylent import sample_replacements
from training.models.xylent_from_encoder import from_encoder, unmapped
from training.recipes import xylent as recipe
from training.run_folder import RunFolderError


@pytest.fixture(scope="module")
def encoder_folder(tmp_path_factory):
    return tiny_encoder_folder(tmp_path_factory.mktemp("encoder"), SHARED_DATA)


def load(folder):
    from transformers import AutoModel, AutoTokenizer

    return AutoModel.from_pretrained(folder, add_pooling_layer=False).eval(), AutoTokenizer.from_pretrained(folder)


def real_batch(tokenizer, langs, start: int, per_lang: int, max_length: int = 128):
    lines = [line for lang in langs for line in ntrex_lines(SHARED_DATA, lang, start, start + per_lang)]
    return tokenizer(lines, padding=True, truncation=True, max_length=max_length, return_tensors="pt")


def largest_difference(encoder, ours, batch, layer: int | None = None) -> float:
    with torch.no_grad():
        out = encoder(**batch, output_hidden_states=layer is not None)
        want = out.last_hidden_state if layer is None else out.hidden_states[layer]
        got = ours(batch["input_ids"], batch["attention_mask"]).last_hidden_state
    real = batch["attention_mask"].bool()
    return (want - got)[real].abs().max().item()


def build(folder, tokenizer, **changes):
    cfg = tiny_cfg(dropout=0.1, generator_layers=1, **changes)
    return recipe.build_from_encoder(cfg, tokenizer, str(folder))


def test_step_zero_discriminator_is_the_encoder_and_the_generator_its_first_layers(encoder_folder):
    encoder, tokenizer = load(encoder_folder)
    model = build(encoder_folder, tokenizer).eval()
    batch = real_batch(tokenizer, ENCODER_LANGS, 500, 3)
    assert batch["attention_mask"].min() == 0  # padded rows: XLM-R's positions skip padding, ours do not
    assert largest_difference(encoder, model.discriminator.xylent, batch) < 1e-5
    assert largest_difference(encoder, model.generator.xylent, batch, layer=1) < 1e-5
    assert unmapped(encoder.state_dict(), encoder.config.num_hidden_layers) == []
    disc, gen = model.discriminator.xylent, model.generator.xylent
    assert gen.embeddings.word_embeddings is disc.embeddings.word_embeddings  # ELECTRA: one embedding matrix
    assert not disc.rel_pos.relative_attention_bias.weight.any() and not gen.rel_pos.relative_attention_bias.weight.any()
    c = model.config
    assert (c.hidden_size, c.num_hidden_layers, c.max_position_embeddings) == (32, 2, 128)  # the encoder's, not tiny's
    assert (c.vocab_size, c.token_count) == (len(tokenizer) + 3, len(tokenizer))
    assert c.mask_token_id == tokenizer.mask_token_id


def test_the_relative_bias_learns_from_the_first_step(encoder_folder):
    """Zero at the start, but not stuck there: the table gets a gradient through every gate."""
    _, tokenizer = load(encoder_folder)
    model = build(encoder_folder, tokenizer)
    batch = real_batch(tokenizer, ENCODER_LANGS[:2], 600, 2)
    loss, _ = model(batch["input_ids"], batch["attention_mask"])
    loss.backward()
    assert model.discriminator.xylent.rel_pos.relative_attention_bias.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("changes, says", [
    ({"generator_hidden_size": 64}, "--generator_hidden_size 64: a generator made of the encoder's layers has its width, 32"),
    ({"generator_layers": 3}, "--generator_layers 3: the generator is the encoder's first layers, so 1 to 2"),
    ({"max_seq_len": 256}, "--max_seq_len 256: the encoder has 128 positions"),
])
def test_shape_flags_the_encoder_cannot_honour_are_one_line(encoder_folder, changes, says):
    _, tokenizer = load(encoder_folder)
    cfg = tiny_cfg(**{"generator_layers": 1, **changes})
    with pytest.raises(RunFolderError) as error:
        recipe.build_from_encoder(cfg, tokenizer, str(encoder_folder))
    assert says in str(error.value) and "\n" not in str(error.value)


def test_samples_are_tokens_of_the_tokenizer_and_never_its_own_mask():
    logits = torch.zeros(3000, 12)
    logits[:, 9:] = 40.0  # the rows past the tokenizer (token_count 9) and its <mask> (8) are favoured
    logits[:, 8] = 40.0
    sampled = sample_replacements(logits, banned=(1, 8), token_count=9)
    assert sampled.max() < 8 and not (sampled == 1).any()
    assert set(sampled.tolist()) == {0, 2, 3, 4, 5, 6, 7}


def test_e5_small_step_zero_discriminator_on_real_text():
    """The converted multilingual-e5-small against transformers' XLMRobertaModel on NTREX lines in
    five scripts, padded together."""
    folder = e5_small()
    encoder, tokenizer = load(folder)
    model = from_encoder(str(folder), tokenizer, max_seq_len=512, dropout=0.1, generator_layers=4,
                         generator_hidden_size=None).eval()
    batch = real_batch(tokenizer, ("de", "el", "ru", "hi", "zh", "ar"), 1200, 2)
    assert batch["attention_mask"].min() == 0
    assert largest_difference(encoder, model.discriminator.xylent, batch) < 1e-4
    assert largest_difference(encoder, model.generator.xylent, batch, layer=4) < 1e-4
    assert model.config.token_count == len(tokenizer) == 250_002 and model.config.mask_token_id == 250_001
