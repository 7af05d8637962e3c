"""Tokenizers: the backbone's own (`from_pretrained`), or for `--config tiny` a SentencePiece unigram
model trained on the fly from the data's words, laid out like XLM-R's (<s>=0 <pad>=1 </s>=2 <unk>=3).
"""
from __future__ import annotations

import io
import sys
from collections.abc import Iterable

from transformers import AutoTokenizer, PreTrainedTokenizerBase, XLMRobertaTokenizer

from training.data.word_pieces import SpacedWords, running_text

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
MIN_MULTI_CHAR_PIECES = 256  # beyond one piece per character, when the data forces a larger vocabulary


MAX_LINE_BYTES = 4000  # below SentencePiece's max_sentence_length (4,192 bytes)


def pieces_of(line: str, limit: int = MAX_LINE_BYTES) -> list[str]:
    """`line` cut at spaces (inside a word only when a word alone is longer) into pieces of at most
    `limit` UTF-8 bytes."""
    if len(line.encode("utf-8")) <= limit:
        return [line]
    pieces, current, size = [], [], 0
    for word in line.split(" "):
        length = len(word.encode("utf-8"))
        if length > limit:  # text without spaces: cut between characters
            if current:
                pieces.append(" ".join(current))
                current, size = [], 0
            chunk, chunk_size = [], 0
            for char in word:
                width = len(char.encode("utf-8"))
                if chunk_size + width > limit:
                    pieces.append("".join(chunk))
                    chunk, chunk_size = [], 0
                chunk.append(char)
                chunk_size += width
            current, size = (["".join(chunk)], chunk_size) if chunk else ([], 0)
            continue
        if current and size + 1 + length > limit:
            pieces.append(" ".join(current))
            current, size = [], 0
        size += length + (1 if current else 0)
        current.append(word)
    if current:
        pieces.append(" ".join(current))
    return [piece for piece in pieces if piece]


def train_tiny_tokenizer(sentences: Iterable[list[str] | SpacedWords], vocab_size: int) -> PreTrainedTokenizerBase:
    """`sentences`: word lists, or SpacedWords where the rows carry their spacing (the running text is
    then exactly the source's)."""
    import sentencepiece as spm

    # SentencePiece is asked only once there is text: given none it fails with its own
    # `!sentences_.empty()`, which says nothing about the data.
    # Words glued in the running text (scripts without spaces) are glued here too: the collators encode
    # them without "▁" (training/data/word_pieces.py), so those are the pieces the model must have.
    # SentencePiece skips every line longer than its max_sentence_length (4,192 bytes) and then has
    # nothing: long rows (whole paragraphs) are cut into pieces below that size instead.
    lines = [piece for s in sentences
             for piece in pieces_of(running_text(*s) if isinstance(s, SpacedWords) else running_text(s or []))]
    if not any(lines):
        from training.data import DataError

        raise DataError("--data: the shards hold no words to train the tiny tokenizer on; check the data job's output")
    # Every character is kept (character_coverage 1.0), so the vocabulary must hold them all: Japanese
    # or Chinese text alone has thousands, more than the tiny config's 2,000 pieces, and SentencePiece
    # would stop with "Vocabulary size is smaller than required_chars". Room is made instead.
    characters = len(set().union(*map(set, lines)) - {" "})
    needed = characters + len(SPECIALS) + MIN_MULTI_CHAR_PIECES
    if vocab_size < needed:
        print(f"tiny tokenizer: the data has {characters:,} distinct characters; vocabulary {vocab_size:,} -> "
              f"{needed:,} pieces so that every character keeps a piece", file=sys.stderr)
        vocab_size = needed
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        bos_id=0, pad_id=1, eos_id=2, unk_id=3,
        user_defined_symbols=["<mask>"],
        character_coverage=1.0,  # the data is many scripts; keep every character
        # No NFKC: the pieces are then exactly the input characters. With it, the pieces hold normalised
        # forms (Thai "ำ" -> "ํา") that the vocab-built tokenizer, which has no charsmap, never produces.
        normalization_rule_name="identity",
        hard_vocab_limit=False,  # a small sample may not support vocab_size pieces
        num_threads=1,  # one thread: the same data gives the same model
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    # transformers 5's XLMRobertaTokenizer(vocab_file=...) silently ignores the file and builds a
    # 5-token vocabulary; passing the pieces themselves is what works, and is checked here.
    tokenizer = XLMRobertaTokenizer(vocab=pieces)
    if len(tokenizer) != len(pieces) or tokenizer.convert_ids_to_tokens(list(range(5))) != SPECIALS:
        raise RuntimeError(f"tiny tokenizer: built {len(tokenizer)} tokens from {len(pieces)} SentencePiece pieces")
    return tokenizer


def load_tokenizer(name_or_path: str, trust_remote_code: bool = False) -> PreTrainedTokenizerBase:
    from training.remote_code import from_pretrained

    return from_pretrained(AutoTokenizer, name_or_path, trust_remote_code, "--init")
