"""mPMR data: MRC rows (word level) -> encoder inputs and WAE targets (subword level).

Input layout (XLM-R pair encoding): `<s> query </s></s> context </s>`, the query cut to
`max_query_tokens` subwords and the context to what is left of `max_seq_len`. Answer spans are word
offsets (both inclusive) into context_words; a span is mapped to the first subword of its first word
and the last subword of its last word. A span cut by truncation is dropped and counted; an answerable
row that loses every span is trained as unanswerable (the visible context holds no answer), and counted;
an answerable row with no spans at all (a sentence-pair label query) stays answerable.

The query's anonymised entity, the word `[MASK]` in the Parquet rows (corpora/mrc/entity_masking.py),
becomes the tokenizer's own mask token here, one id per occurrence: the XLM-R tokenizer would split
the literal string into ordinary pieces ("[", "MASK", "]"), and the reference implementation feeds
`tokenizer.mask_token`. The Parquet keeps the readable word so that the data
does not depend on a tokenizer.
"""
from __future__ import annotations

from collections import Counter

import torch
from transformers import PreTrainedTokenizerBase

from corpora.mrc.entity_masking import MASK
from training.data import long_tensor, span_mask, subword_span
from training.data.word_pieces import WordPieces


class MPMRCollator:
    def __init__(self, tokenizer: PreTrainedTokenizerBase, max_query_tokens: int = 128, max_seq_len: int = 512,
                 use_spacing: bool = True):
        if max_query_tokens + 4 >= max_seq_len:
            raise ValueError(f"max_query_tokens={max_query_tokens} leaves no room for context in max_seq_len={max_seq_len}")
        self.tokenizer = tokenizer
        self.max_query_tokens = max_query_tokens
        self.max_seq_len = max_seq_len
        self.cls, self.sep, self.pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
        self.mask = tokenizer.mask_token_id
        if self.mask is None:
            raise ValueError(f"{type(tokenizer).__name__} has no mask token: mPMR queries need one for the entity")
        self.pieces = WordPieces(tokenizer)
        # Rows' space flags (query_spaces, context_spaces) shape the subwords; off, or in rows without
        # them, a script rule stands in (training/data/word_pieces.py).
        self.use_spacing = use_spacing

    def _spaces(self, rows: list[dict], column: str) -> list | None:
        return [r.get(column) for r in rows] if self.use_spacing else None

    def _query_ids(self, rows: list[dict]) -> list[list[int]]:
        """Query subwords, each `[MASK]` word replaced by the single mask token id."""
        queries = [r["query_words"] for r in rows]
        return [[t for word, pieces in zip(words, per_word) for t in ((self.mask,) if word == MASK else pieces)]
                for words, per_word in zip(queries, self.pieces(queries, self._spaces(rows, "query_spaces")))]

    def __call__(self, rows: list[dict]) -> dict:
        queries = self._query_ids(rows)
        contexts = self.pieces.flat([r["context_words"] for r in rows], self._spaces(rows, "context_spaces"))
        sequences, spans, answerable, word_index = [], [], [], []
        counts: Counter = Counter()
        for b, (row, q_ids, (c_ids, c_words)) in enumerate(zip(rows, queries, contexts)):
            q_ids = q_ids[: self.max_query_tokens]
            room = self.max_seq_len - len(q_ids) - 4
            # The first word the truncation cuts into (even partly); spans ending before it survive.
            cut_word = c_words[room] if len(c_ids) > room else len(row["context_words"])
            if len(c_ids) > room:
                counts["rows/context_truncated"] += 1
            c_ids, c_words = c_ids[:room], c_words[:room]
            offset = len(q_ids) + 3  # <s> query </s></s>
            ids = [self.cls, *q_ids, self.sep, self.sep, *c_ids, self.sep]
            first: dict[int, int] = {}
            last: dict[int, int] = {}
            for k, w in enumerate(c_words):
                first.setdefault(w, offset + k)
                last[w] = offset + k
            kept = 0
            for a in row["answers"]:
                if a["end"] >= cut_word:
                    counts["spans/cut_by_truncation"] += 1
                    continue
                span = subword_span(first, last, a["start"], a["end"])
                if span is None:
                    counts["spans/no_subwords"] += 1
                    continue
                spans.append((b, *span))
                kept += 1
            counts["spans/kept"] += kept
            # Only a row whose spans were all lost becomes unanswerable; an answerable row that never had
            # spans (sentence-pair classification: the [CLS] cell is the label) keeps its flag.
            lost = bool(row["answers"]) and not kept
            if row["answerable"] and lost:
                counts["rows/answerable_lost_to_truncation"] += 1
            answerable.append(bool(row["answerable"]) and not lost)
            sequences.append(ids)
            word_index.append([-1] * offset + c_words + [-1])
        counts["rows"] += len(rows)
        length = max(len(s) for s in sequences)
        input_ids = long_tensor([ids + [self.pad] * (length - len(ids)) for ids in sequences])
        attention_mask = span_mask([(0, len(ids)) for ids in sequences], length).long()
        context_word = long_tensor([words + [-1] * (length - len(words)) for words in word_index])
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            # Context subwords: the only cells (besides [CLS]) the extractor is trained and decoded on.
            "context_mask": context_word >= 0,
            # For decoding spans back to words: the context word of each subword, -1 elsewhere.
            "context_word": context_word,
            "answerable": torch.tensor(answerable, dtype=torch.float),
            # (batch, start, end) subword positions of every answer cell, all inclusive.
            "answer_spans": torch.tensor(spans, dtype=torch.long).reshape(-1, 3),
            # Truncation and span bookkeeping; returned with the batch because a DataLoader worker's
            # own counters never reach the training process.
            "counts": dict(counts),
        }
