"""Extractive QA in the MRC form (mPMR Table 6, EQA): query = question, context = passage, answer = the
span (i, j) of S. SQuAD v1.1 JSON is read (MLQA and XQuAD ship the same format) and scored with the
official SQuAD v1.1 metric, reproduced here function for function (`evaluate-v1.1.py`).

Long contexts: a sliding window over the context words (HF `run_qa.py` practice; the paper is silent).
Each window holds as many whole words as fit beside the query; consecutive windows overlap by about
`doc_stride` subwords. A training window that does not contain the answer is an unanswerable MRC row
([CLS] cell 0, no answer cell), as in mPMR pre-training. At prediction the span with the highest logit
over all windows of a question wins (SQuAD 1.1 questions always have an answer, so the [CLS] cell is
not consulted).
"""
from __future__ import annotations

import gzip
import json
import re
import string
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from training.tasks.words import split_words


@dataclass
class SquadExample:
    id: str
    question: str
    context: str
    answers: list[dict] = field(default_factory=list)  # [{"text": str, "answer_start": int}]
    language: str = ""  # the context's, when the metric needs it (MLQA's: training/tasks/mlqa_metric.py)


def read_squad(path: str | Path) -> list[SquadExample]:
    """Every question of a SQuAD v1.1-format file ({"data": [{"paragraphs": [{"context", "qas"}]}]}), gzipped
    when its name ends in .gz (as XQuAD is distributed)."""
    try:
        raw = Path(path).read_bytes()
        data = json.loads(gzip.decompress(raw) if str(path).endswith(".gz") else raw)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError, gzip.BadGzipFile, EOFError) as e:
        raise ValueError(f"{path}: not JSON ({e}); expected a SQuAD v1.1-format file") from None
    except RecursionError:  # the parser recurses once per nesting level
        raise ValueError(f"{path}: JSON nested too deeply to read; expected a SQuAD v1.1-format file") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: no top-level 'data' list; expected a SQuAD v1.1-format file")
    examples = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for qa in paragraph["qas"]:
                answers = [{"text": a["text"], "answer_start": int(a["answer_start"])} for a in qa.get("answers", [])]
                examples.append(SquadExample(str(qa["id"]), qa["question"], context, answers))
    return examples


# ---- the official SQuAD v1.1 metric (evaluate-v1.1.py) ----

def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace."""
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def f1_score(prediction: str, ground_truth: str) -> float:
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn, prediction: str, ground_truths: list[str]) -> float:
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def squad_evaluate(examples: list[SquadExample], predictions: dict[str, str]) -> dict[str, float]:
    """{"exact_match", "f1"} in percent over every question; a question with no prediction scores 0
    (the official script prints a message and counts it wrong, as here)."""
    f1 = exact_match = total = 0
    for ex in examples:
        total += 1
        if ex.id not in predictions:
            print(f"Unanswered question {ex.id} will receive score 0.", file=sys.stderr)
            continue
        ground_truths = [a["text"] for a in ex.answers]
        exact_match += metric_max_over_ground_truths(exact_match_score, predictions[ex.id], ground_truths)
        f1 += metric_max_over_ground_truths(f1_score, predictions[ex.id], ground_truths)
    return {"exact_match": 100.0 * exact_match / max(total, 1), "f1": 100.0 * f1 / max(total, 1)}


# ---- word-level MRC rows ----

def context_words(context: str) -> list[tuple[str, int, int]]:
    return split_words(context)


def spaces_of(text: str, words: list[tuple[str, int, int]]) -> list[bool]:
    """Per word, whether whitespace follows it in `text` before the next word (the last word: at all)."""
    ends = [s for _, s, _ in words[1:]] + [len(text)]
    return [any(ch.isspace() for ch in text[e:nxt]) for (_, _, e), nxt in zip(words, ends)]


def answer_word_span(words: list[tuple[str, int, int]], answer: dict) -> tuple[int, int] | None:
    """(first, last) word index covering the answer's characters, or None if it covers no word
    (a gold answer made only of spaces, or offsets outside the context)."""
    start = answer["answer_start"]
    end = start + len(answer["text"])
    inside = [k for k, (_, s, e) in enumerate(words) if s < end and e > start]
    return (inside[0], inside[-1]) if inside else None


@dataclass
class Window:
    """One MRC row of a question: context words [first, last) of the question's context."""
    example: int  # index into the example list
    first: int
    last: int


def subword_counts(tokenizer, words: list[str]) -> list[int]:
    """Subwords of each word, as the collator will encode them (each word on its own)."""
    if not words:
        return []
    # A whole context is longer than the model's window on purpose (windows are cut from these
    # counts): verbose=False drops transformers' "will result in indexing errors" warning.
    ids = tokenizer([words], is_split_into_words=True, add_special_tokens=False, verbose=False)
    counts = [0] * len(words)
    for w in ids.word_ids(0):
        if w is not None:
            counts[w] += 1
    return counts


def windows(counts: list[int], room: int, doc_stride: int) -> list[tuple[int, int]]:
    """[first, last) word ranges: each holds whole words of at most `room` subwords (a single longer word
    is a window alone, cut by the collator), the next one starts about `doc_stride` subwords before the
    end of the previous one, and together they cover every word."""
    if not counts:
        return [(0, 0)]
    out, first = [], 0
    while True:
        used, last = 0, first
        while last < len(counts) and (last == first or used + counts[last] <= room):
            used += counts[last]
            last += 1
        out.append((first, last))
        if last >= len(counts):
            return out
        # Step back from `last` over about doc_stride subwords of overlap, but always move forward.
        back, nxt = 0, last
        while nxt - 1 > first and back + counts[nxt - 1] <= doc_stride:
            nxt -= 1
            back += counts[nxt]
        first = max(nxt, first + 1)


def to_rows(examples: list[SquadExample], tokenizer, max_query_tokens: int, max_seq_len: int, doc_stride: int,
            train: bool) -> tuple[list[dict], list[Window]]:
    """MRC rows for the collator and the window each came from. Training rows carry the gold answer
    spans that fall wholly inside their window; prediction rows carry none."""
    rows, spans = [], []
    for n, ex in enumerate(examples):
        words = context_words(ex.context)
        word_texts = [w for w, _, _ in words]
        spaces = spaces_of(ex.context, words)
        question = split_words(ex.question)
        query = [w for w, _, _ in question]
        query_spaces = spaces_of(ex.question, question)
        q_len = min(len(tokenizer(query, is_split_into_words=True, add_special_tokens=False)["input_ids"]) if query else 0,
                    max_query_tokens)
        room = max_seq_len - q_len - 4  # <s> query </s></s> context </s>, as MPMRCollator counts
        gold = [answer_word_span(words, a) for a in ex.answers] if train else []
        gold = sorted({g for g in gold if g is not None})
        for first, last in windows(subword_counts(tokenizer, word_texts), room, doc_stride):
            answers = [{"start": s - first, "end": e - first} for s, e in gold if first <= s and e < last]
            rows.append({"query_words": query, "query_spaces": query_spaces, "context_words": word_texts[first:last],
                         "context_spaces": spaces[first:last], "answers": answers, "answerable": bool(answers)})
            spans.append(Window(n, first, last))
    return rows, spans


def predict_text(example: SquadExample, first_word: int, last_word: int) -> str:
    """The original context text from the first word's start to the last word's end (spaces and all)."""
    words = context_words(example.context)
    return example.context[words[first_word][1]: words[last_word][2]]
