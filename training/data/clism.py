"""CLISM data: clism_pairs rows (word level) -> the joint input, its [QUE] questions, MLM targets and
the CACR source pass (subword level). CLISM paper §3.1–3.3; docs/design.md §2 (the masked source is made
here, at training time, so that one Parquet serves several masking choices).

Joint input (XLM-R pair encoding, the paper's `[CLS] ŝˢ [SEP] sᵗ [SEP]`):

    <s> masked-source </s></s> target </s>

* masked source: the source subwords with every selected span replaced by ONE `[QUE]` token;
* target: the unmasked target subwords; the answer of each `[QUE]` is the aligned target word span,
  mapped to the first subword of its first word and the last subword of its last word.

Lengths (paper §4.2: "total max input sequence length 256, the max length of each sentence 128"):
each side keeps at most `max_sentence_tokens` subwords and the whole sequence, specials included, at
most `max_seq_len`; the target gives way when both sides are full.

A span is dropped, and counted, never mislabelled: one whose answer the target truncation cuts (even
partly) keeps its source words unmasked (a `[QUE]` without an answer would be an unlabelled question),
and one whose `[QUE]` the source truncation cuts off is gone with it.

MLM (§3.3, footnote 4; BERT's recipe): round(15%) of the eligible tokens, at least one, are predicted;
80% of them become <mask>, 10% a random ordinary token, 10% stay. Never eligible: special tokens,
`[QUE]`, and the answer tokens of the questions (masking them would hide the labels).

Randomness (span choice, MLM) comes from a generator seeded by (seed, pair id) only (docs/design.md §6), so
a row is masked the same way whatever the worker, rank, batch or resume. This is static masking, as in
BERT; the paper's run (15K steps x 64 = 0.96M pairs, about one pass over its 1M pairs) sees each pair
about once, so dynamic masking would change nothing there.
"""
from __future__ import annotations

from collections import Counter

from transformers import PreTrainedTokenizerBase

from corpora.seeding import keyed_rng
from training.data import long_tensor, span_mask, subword_span
from training.data.word_pieces import WordPieces

QUE_TOKEN = "[QUE]"
IGNORE = -100  # cross_entropy's ignore_index: padding questions and unmasked MLM positions


def add_que_token(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """Add `[QUE]` as a special token (idempotent): never split, never produced by plain text splitting."""
    if QUE_TOKEN not in tokenizer.get_vocab():
        tokenizer.add_special_tokens({"additional_special_tokens": [QUE_TOKEN]})
    return tokenizer


def with_que_embedding(model, tokenizer):
    """Grow the embeddings (and the tied LM decoder) to the tokenizer that holds [QUE]. transformers
    initialises the new row around the mean of the old ones, so [QUE] starts as an average token."""
    if model.get_input_embeddings().weight.shape[0] < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
    model.config.que_token_id = tokenizer.convert_tokens_to_ids(QUE_TOKEN)
    return model


class CLISMCollator:
    def __init__(self, tokenizer: PreTrainedTokenizerBase, max_sentence_tokens: int = 128, max_seq_len: int = 256,
                 spans_per_pair: int = 0, span_labels: str | list[str] | None = None,
                 mlm_probability: float = 0.15, mlm: bool = True, cacr: bool = True, seed: int = 0,
                 use_spacing: bool = True):
        if QUE_TOKEN not in tokenizer.get_vocab():
            raise ValueError(f"tokenizer has no {QUE_TOKEN} token; prepare it with add_que_token()")
        if max_seq_len < 6:
            raise ValueError(f"max_seq_len={max_seq_len} leaves no room for the two sentences")
        self.tokenizer = tokenizer
        self.max_sentence_tokens = max_sentence_tokens
        self.max_seq_len = max_seq_len
        self.spans_per_pair = spans_per_pair
        if isinstance(span_labels, str):
            span_labels = [x.strip() for x in span_labels.split(",") if x.strip()]
        self.span_labels = set(span_labels) if span_labels else None
        self.mlm_probability = mlm_probability
        self.mlm = mlm
        self.cacr = cacr
        self.seed = seed
        self.que = tokenizer.convert_tokens_to_ids(QUE_TOKEN)
        self.cls, self.sep, self.pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
        self.mask, self.unk = tokenizer.mask_token_id, tokenizer.unk_token_id
        self.special_ids = frozenset(tokenizer.all_special_ids) | {self.que}
        self.pieces = WordPieces(tokenizer)
        self.use_spacing = use_spacing  # the rows' src_spaces/tgt_spaces shape the subwords (word_pieces.py)
        # Random replacements (the 10%) are ordinary tokens only: a random [QUE] would be a question
        # without an answer, a random </s> would move the sentence boundary.
        self.ordinary_ids = [i for i in range(len(tokenizer)) if i not in self.special_ids]

    # ---- subwords per word ----

    def _words_to_subwords(self, sentences: list[list[str]], counts: Counter, spaces: list | None = None
                           ) -> list[list[tuple[int, ...]]]:
        """For each sentence, the subword ids of each word (training/data/word_pieces.py)."""
        out = []
        for per_word in self.pieces(sentences, spaces if self.use_spacing else None):
            for w, pieces in enumerate(per_word):
                if not self.special_ids.isdisjoint(pieces):
                    # A word that is literally "[QUE]" or "</s>" in the text: an added special token
                    # would be matched inside it, and would pose as a question or a boundary.
                    counts["tokens/special_in_text"] += sum(t in self.special_ids for t in pieces)
                    per_word[w] = tuple(self.unk if t in self.special_ids else t for t in pieces)
            out.append(per_word)
        return out

    # ---- one row ----

    def _select_spans(self, row: dict, counts: Counter) -> list[dict]:
        spans = list(row["spans"] or [])
        if self.span_labels is not None:
            kept = [s for s in spans if s["label"] in self.span_labels]
            counts["spans/label_filtered"] += len(spans) - len(kept)
            spans = kept
        if self.spans_per_pair and len(spans) > self.spans_per_pair:
            chosen = sorted(keyed_rng(self.seed, row["id"], "spans").sample(range(len(spans)), self.spans_per_pair))
            counts["spans/not_selected"] += len(spans) - self.spans_per_pair
            spans = [spans[k] for k in chosen]
        return sorted(spans, key=lambda s: s["src_start"])

    def _row(self, row: dict, src_sub: list[list[int]], tgt_sub: list[list[int]], counts: Counter) -> dict:
        n_src_words = len(row["src_words"])
        src_flat = [t for w in src_sub for t in w]
        src_len = min(len(src_flat), self.max_sentence_tokens)  # upper bound; [QUE]s only shorten it

        # Target first: its room decides which answers survive, and so which spans are masked at all.
        tgt_flat, tgt_first, tgt_last = [], {}, {}
        for w, ids in enumerate(tgt_sub):
            if ids:
                tgt_first[w] = len(tgt_flat)
                tgt_flat.extend(ids)
                tgt_last[w] = len(tgt_flat) - 1
        spans = self._select_spans(row, counts)
        # The masked source is at most as long as the plain one, so an answer inside this room is inside
        # the final one (recomputed below with the masked length): conservative, never mislabelled.
        tgt_room = min(self.max_sentence_tokens, self.max_seq_len - 4 - src_len)
        questions = []  # (span, answer start, answer end) in target subword positions
        for s in spans:
            if not (0 <= s["src_start"] <= s["src_end"] < n_src_words and 0 <= s["tgt_start"] <= s["tgt_end"] < len(tgt_sub)):
                counts["spans/out_of_range"] += 1
                continue
            answer = subword_span(tgt_first, tgt_last, s["tgt_start"], s["tgt_end"])
            if answer is None:
                counts["spans/no_subwords"] += 1
                continue
            a_start, a_end = answer
            if a_end >= tgt_room:
                counts["spans/cut_by_truncation"] += 1
                continue
            questions.append((s, a_start, a_end))

        # Masked source: each question's source span becomes one [QUE]; overlapping spans (never in
        # the job's output, checked there) would be merged into the first.
        masked, que_at, w = [], [], 0
        starts = {s["src_start"]: (s, a, b) for s, a, b in questions}
        kept_questions = []
        while w < n_src_words:
            if w in starts:
                s, a, b = starts[w]
                que_at.append(len(masked))
                kept_questions.append((a, b))
                masked.append(self.que)
                w = s["src_end"] + 1
            else:
                masked.extend(src_sub[w])
                w += 1
        # A span starting inside an earlier one (the job never writes these) was skipped over above.
        counts["spans/overlapping"] += len(questions) - len(que_at)
        if len(masked) > self.max_sentence_tokens:
            counts["rows/source_truncated"] += 1
            masked = masked[: self.max_sentence_tokens]
        lost = sum(1 for p in que_at if p >= len(masked))
        counts["spans/cut_by_truncation"] += lost
        kept_questions = [q for p, q in zip(que_at, kept_questions) if p < len(masked)]
        que_at = [p for p in que_at if p < len(masked)]

        tgt_room = min(self.max_sentence_tokens, self.max_seq_len - 4 - len(masked))
        if len(tgt_flat) > tgt_room:
            counts["rows/target_truncated"] += 1
        target = tgt_flat[:tgt_room]

        t0 = len(masked) + 3  # <s> masked-source </s></s>
        ids = [self.cls, *masked, self.sep, self.sep, *target, self.sep]
        answers = [(t0 + a, t0 + b) for a, b in kept_questions]
        counts["spans/questions"] += len(answers)
        if not answers:
            counts["rows/no_question"] += 1

        labels = [IGNORE] * len(ids)
        if self.mlm:
            ids, labels = self._mlm(row["id"], ids, answers, counts)
        source_alone = [self.cls, *src_flat[: self.max_sentence_tokens], self.sep] if self.cacr else None
        return {"ids": ids, "labels": labels, "que": [1 + p for p in que_at], "answers": answers,
                "source": (1, 1 + len(masked)), "target": (t0, t0 + len(target)), "source_alone": source_alone}

    def _mlm(self, pair_id: str, ids: list[int], answers: list[tuple[int, int]], counts: Counter):
        answer_positions = {k for a, b in answers for k in range(a, b + 1)}
        eligible = [k for k, t in enumerate(ids) if t not in self.special_ids and k not in answer_positions]
        labels = [IGNORE] * len(ids)
        if not eligible:
            return ids, labels
        rng = keyed_rng(self.seed, pair_id, "mlm")
        n = max(1, round(self.mlm_probability * len(eligible)))
        ids = list(ids)
        for k in sorted(rng.sample(eligible, n)):
            labels[k] = ids[k]
            roll = rng.random()
            if roll < 0.8:
                ids[k] = self.mask
            elif roll < 0.9:
                ids[k] = rng.choice(self.ordinary_ids)
            # else: kept as it is, still predicted
        counts["tokens/mlm_predicted"] += n
        return ids, labels

    # ---- the batch ----

    def __call__(self, rows: list[dict]) -> dict:
        counts: Counter = Counter()
        src = self._words_to_subwords([r["src_words"] for r in rows], counts, [r.get("src_spaces") for r in rows])
        tgt = self._words_to_subwords([r["tgt_words"] for r in rows], counts, [r.get("tgt_spaces") for r in rows])
        made = [self._row(r, s, t, counts) for r, s, t in zip(rows, src, tgt)]
        counts["rows"] += len(rows)
        T = max(len(m["ids"]) for m in made)
        Q = max(1, max(len(m["que"]) for m in made))  # at least one slot: the CLISM head always runs
        # Padded as lists, then one tensor each (training/data/__init__.py: long_tensor): a tensor, or an
        # element assignment, per row and question cost more than the whole batch's padding.
        input_ids = long_tensor([m["ids"] + [self.pad] * (T - len(m["ids"])) for m in made])
        attention_mask = span_mask([(0, len(m["ids"])) for m in made], T).long()
        mlm_labels = long_tensor([m["labels"] + [IGNORE] * (T - len(m["labels"])) for m in made])
        source_mask = span_mask([m["source"] for m in made], T)
        target_mask = span_mask([m["target"] for m in made], T)
        que_positions = long_tensor([m["que"] + [0] * (Q - len(m["que"])) for m in made])
        answer_start = long_tensor([[a for a, _ in m["answers"]] + [IGNORE] * (Q - len(m["answers"])) for m in made])
        answer_end = long_tensor([[e for _, e in m["answers"]] + [IGNORE] * (Q - len(m["answers"])) for m in made])
        batch = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            # Ĥˢ and Hᵗ of Eq. 5: the masked-source and target subwords of the joint input (no specials).
            "source_mask": source_mask,
            "target_mask": target_mask,
            # Every [QUE] of the batch, padded per example; padding slots have answer -100.
            "que_positions": que_positions,
            "answer_start": answer_start,
            "answer_end": answer_end,
            "mlm_labels": mlm_labels,
            # Bookkeeping; returned with the batch because a DataLoader worker's counters never reach
            # the training process.
            "counts": dict(counts),
        }
        if self.cacr:
            # The original source alone, `<s> sˢ </s>`: the second pass that gives rˢ (§3.2).
            S = max(len(m["source_alone"]) for m in made)
            source_input_ids = long_tensor([m["source_alone"] + [self.pad] * (S - len(m["source_alone"])) for m in made])
            source_attention_mask = span_mask([(0, len(m["source_alone"])) for m in made], S).long()
            source_alone_mask = span_mask([(1, len(m["source_alone"]) - 1) for m in made], S)
            batch.update(source_input_ids=source_input_ids, source_attention_mask=source_attention_mask,
                         source_alone_mask=source_alone_mask)
        return batch
