"""The tiny config's on-the-fly SentencePiece model on real text whose scripts have more characters than
the tiny vocabulary has pieces (NTREX-128 Chinese and Japanese, 500 lines each: ~2,200 distinct characters against
2,000 pieces). SentencePiece alone stops with "Vocabulary size is smaller than required_chars"; the
tokenizer makes room so that every character keeps a piece."""
from __future__ import annotations

import pytest

pytest.importorskip("sentencepiece")
pytest.importorskip("transformers")

from conftest import SHARED_DATA
from training.tokenizer import SPECIALS, train_tiny_tokenizer

NTREX = SHARED_DATA / "parallel" / "ntrex128"


@pytest.mark.skipif(not NTREX.is_dir(), reason="needs ../shared/data (XLU_SHARED_DATA)")
def test_tiny_tokenizer_keeps_every_character_of_cjk_text(capsys):
    lines = [line.strip() for name in ("zh.txt", "ja.txt")
             for line in (NTREX / name).read_text(encoding="utf-8").splitlines()[:500] if line.strip()]
    characters = set("".join(lines)) - {" "}
    assert len(characters) > 2000  # the premise: more characters than the tiny vocabulary
    tokenizer = train_tiny_tokenizer(([line] for line in lines), 2000)
    assert "distinct characters" in capsys.readouterr().err  # the user is told the vocabulary grew
    assert len(tokenizer) >= len(characters) + len(SPECIALS)
    assert tokenizer.convert_ids_to_tokens(list(range(5))) == SPECIALS
    unk = tokenizer.unk_token_id
    for line in lines[:200]:  # no character of the training text is unknown
        assert unk not in tokenizer(line, add_special_tokens=False)["input_ids"], line
