"""Sentence-pair classification in the MRC form (mPMR Table 6, PAWS-X; XNLI likewise).

Classification rows (the paper's template): one row per (pair, label),
    query   = the label's description, e.g. "Entailment . The hypothesis is a sentence with a similar
              meaning as the premise ."
    context = "Hypothesis : <sentence 2> Premise : <sentence 1>"
The [CLS] cell (0, 0) of S is trained to 1 for the right label's row and 0 for the others; the
prediction is the label whose row has the highest [CLS] logit. There is no span supervision: the loss
covers the [CLS] cells only, so that fine-tuning does not train every context cell towards 0 and erase
the extraction capability the rationales rest on (a choice; the paper does not say).

Rationale (paper §4, "Explainable Sentence-pair Classification"): the template "[CLS] label Sen-1 [SEP]
Sen-2 [SEP]"; the pair is passed twice, each sentence in turn being Sen-2, and the context span with
the highest score is extracted from each. `rationale_rows` builds those two rows for a predicted label.
With `--pair_template rationale` the classifier is also trained on that template (the paper's
explainable variant, which costs it 0.4 accuracy on XNLI).

TSV files, with a header line; the columns used are found by name:
    sentence1, sentence2, label          (PAWS-X; XNLI dev/test have gold_label instead of label)
    premise, hypothesis | hypo, label    (XNLI as XTREME ships it; the MultiNLI-MT train files)
A file without a header line whose rows are premise, hypothesis, label (XNLI as the Hugging Face
dataset exports it, e.g. ../shared/data/eval/xnli-de) is read as such when its first row's third
field is a label. Other columns are ignored, except `id` (kept) and `language` (with `--eval_language`). Labels: PAWS-X 0/1 (1 = paraphrase), XNLI
entailment/neutral/contradiction ("contradictory", in the XNLI train files, is contradiction).
"""
from __future__ import annotations

import csv
import gzip
import itertools
from dataclasses import dataclass
from pathlib import Path

from training.tasks.words import split_words

# The paper's two descriptions (Table 6) and ours for neutral, in the same style.
DESCRIPTIONS = {
    "contradiction": "Contradiction . The hypothesis is a sentence with a contradictory meaning to the premise .",
    "entailment": "Entailment . The hypothesis is a sentence with a similar meaning as the premise .",
    "neutral": "Neutral . The hypothesis is a sentence whose meaning neither follows from nor contradicts the premise .",
}
# PAWS-X in the paper's words: a paraphrase (1) is entailment, a non-paraphrase (0) contradiction.
LABEL_SETS = {
    "paws-x": {"0": "contradiction", "1": "entailment"},
    "xnli": {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"},
}
_ALIASES = {"contradictory": "contradiction"}
_KNOWN_LABELS = {value for labels in LABEL_SETS.values() for value in labels} | set(_ALIASES)
_COLUMNS = [("sentence1", "sentence2"), ("premise", "hypothesis"), ("premise", "hypo")]


@dataclass
class PairExample:
    id: str
    sentence1: str  # premise
    sentence2: str  # hypothesis
    label: str


def read_pairs(path: str | Path, language: str | None = None) -> list[PairExample]:
    """Every pair of a TSV file; with `language`, only the rows whose `language` column holds it (the
    XNLI dev/test files hold all 15 languages in one file)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        handle = opener(path, "rt", encoding="utf-8", newline="")  # noqa: SIM115  closed below
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found") from None
    try:
        with handle:
            return _read_pair_rows(handle, path, language)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as e:
        raise ValueError(f"{path}: not UTF-8 text ({e}); expected a TSV of premise, hypothesis, label "
                         "(.gz when the name ends in .gz)") from None


def _read_pair_rows(handle, path, language: str | None) -> list[PairExample]:
    # QUOTE_NONE: the sentences contain unbalanced quotes, and the files are plain tab-separated.
    reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
    first = next(reader, [])
    header = [h.strip().lower() for h in first]
    names = next(((a, b) for a, b in _COLUMNS if a in header and b in header), None)
    label = next((c for c in ("label", "gold_label") if c in header), None)
    headerless = (names is None or label is None) and len(header) == 3 and header[2] in _KNOWN_LABELS
    if headerless:
        header = ["premise", "hypothesis", "label"]
        reader = itertools.chain([first], reader)
    elif names is None or label is None:
        raise ValueError(f"{path}: header {header} lacks sentence1/sentence2/label or premise/hypothesis/label "
                         "columns; give the file a header line (e.g. premise<TAB>hypothesis<TAB>label)")
    c1, c2, cl = (0, 1, 2) if headerless else (header.index(names[0]), header.index(names[1]), header.index(label))
    cid = header.index("id") if "id" in header else None
    if language is not None and "language" not in header:
        raise ValueError(f"{path}: no 'language' column to select {language!r} from")
    clang = header.index("language") if language is not None else None
    examples = []
    for n, cols in enumerate(reader, 1 if headerless else 2):
        if not any(c.strip() for c in cols):
            continue
        if len(cols) <= max(c1, c2, cl):
            raise ValueError(f"{path}:{n}: {len(cols)} columns, the header has {len(header)}")
        if clang is not None and cols[clang].strip() != language:
            continue
        value = cols[cl].strip().lower()
        examples.append(PairExample(cols[cid] if cid is not None else str(n if headerless else n - 1), cols[c1], cols[c2],
                                    _ALIASES.get(value, value)))
    return examples


def label_set(examples: list[PairExample]) -> dict[str, str]:
    """The data's label values -> description keys: PAWS-X or XNLI, whichever holds every label."""
    found = {ex.label for ex in examples}
    for name, labels in LABEL_SETS.items():
        if found <= set(labels):
            return labels
    raise ValueError(f"labels {sorted(found)} are neither PAWS-X (0/1) nor XNLI (entailment/neutral/contradiction)")


def _words(text: str) -> list[str]:
    return [w for w, _, _ in split_words(text)]


def context_words(ex: PairExample) -> list[str]:
    return ["Hypothesis", ":", *_words(ex.sentence2), "Premise", ":", *_words(ex.sentence1)]


def to_rows(examples: list[PairExample], labels: dict[str, str], template: str = "description") -> list[dict]:
    """Rows in example-major order: row k is example k // len(labels), label list(labels)[k % len(labels)].
    No row has answer spans; the right label's row is `answerable` (its [CLS] cell is 1)."""
    rows = []
    for ex in examples:
        if ex.label not in labels:
            raise ValueError(f"example {ex.id}: label {ex.label!r} not among {sorted(labels)}")
        for value, key in labels.items():
            if template == "description":
                query, context = _words(DESCRIPTIONS[key]), context_words(ex)
            else:  # the rationale template: "[CLS] label Sen-1 [SEP] Sen-2 [SEP]"
                query, context = [key.capitalize(), *_words(ex.sentence1)], _words(ex.sentence2)
            rows.append({"query_words": query, "context_words": context, "answers": [],
                         "answerable": ex.label == value})
    return rows


def rationale_rows(ex: PairExample, label_key: str) -> list[dict]:
    """The two passes of the rationale template: sentence 2 as the context, then sentence 1."""
    label = label_key.capitalize()
    return [
        {"query_words": [label, *_words(ex.sentence1)], "context_words": _words(ex.sentence2), "answers": [],
         "answerable": True},
        {"query_words": [label, *_words(ex.sentence2)], "context_words": _words(ex.sentence1), "answers": [],
         "answerable": True},
    ]


def accuracy(examples: list[PairExample], predicted: list[str]) -> dict:
    right = sum(ex.label == p for ex, p in zip(examples, predicted, strict=True))
    return {"accuracy": 100.0 * right / max(len(examples), 1), "correct": right, "total": len(examples)}


def span_text(sentence: str, first_word: int, last_word: int) -> str:
    """The sentence's own text from the first word's start to the last word's end."""
    words = split_words(sentence)
    return sentence[words[first_word][1]: words[last_word][2]]
