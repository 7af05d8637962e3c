"""MLQA's own EM/F1 (the `mlqa_evaluation_v1.py` normalisation), for MLQA files.

The mPMR paper's code (PMR's QA/mQA/train-QA.py) and XTREME score MLQA with it and XQuAD with SQuAD
v1.1 (training/tasks/squad.py). It differs from v1.1 in three ways, each worth up to tens of F1 points
on non-English answers (an answer with an article, de "die", es "el", vi "những", ar "ال"; a zh
answer with one character dropped): every Unicode punctuation mark is removed, not only ASCII's; each language's articles are;
and Chinese is cut into characters (runs of other text stay whitespace words), so a Chinese answer
earns partial credit as an English one does.

The answer's language is the context's: MLQA names its files `{dev,test}-context-XX-question-YY.json`.
"""
from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

# The languages MLQA has; the official script refuses others ("Unknown Language").
LANGUAGES = ("en", "es", "hi", "vi", "de", "ar", "zh")
_ARTICLES = {
    "en": re.compile(r"\b(a|an|the)\b"),
    "es": re.compile(r"\b(un|una|unos|unas|el|la|los|las)\b"),
    "vi": re.compile(r"\b(của|là|cái|chiếc|những)\b"),
    "de": re.compile(r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b"),
    "ar": re.compile(r"\sال^|ال"),  # the official pattern: in effect, every "ال" goes
}
_HAN = re.compile("[\u4e00-\u9fa5]")
_FILE_LANGUAGE = re.compile(r"context-([a-z]{2})-question-[a-z]{2}")


@lru_cache(maxsize=1)
def _punctuation() -> frozenset[str]:
    """Every character of a Unicode punctuation category, and ASCII's punctuation (which holds symbols
    such as "$" and "+" that Unicode files elsewhere)."""
    import string

    marks = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")}
    return frozenset(marks | set(string.punctuation))


def language_of_file(path: str | Path) -> str | None:
    """The context language in an MLQA file name ("test-context-de-question-en.json" -> "de")."""
    found = _FILE_LANGUAGE.search(Path(path).name)
    return found.group(1) if found else None


def _tokens(text: str, lang: str) -> list[str]:
    if lang != "zh":
        return text.split()
    tokens: list[str] = []
    run = ""
    for ch in text:
        if _HAN.match(ch) or ch in _punctuation():
            tokens.extend(run.split())
            run = ""
            tokens.append(ch)
        else:
            run += ch
    tokens.extend(run.split())
    return tokens


def normalize_answer(text: str, lang: str) -> str:
    """Lower case, punctuation removed, the language's articles removed, whitespace (zh: characters) tokens."""
    punctuation = _punctuation()
    text = "".join(ch for ch in text.lower() if ch not in punctuation)
    if lang in _ARTICLES:
        text = _ARTICLES[lang].sub(" ", text)
    return " ".join(t for t in _tokens(text, lang) if t.strip())


def f1_score(prediction: str, ground_truth: str, lang: str) -> float:
    predicted, gold = normalize_answer(prediction, lang).split(), normalize_answer(ground_truth, lang).split()
    same = sum((Counter(predicted) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str, lang: str) -> bool:
    return normalize_answer(prediction, lang) == normalize_answer(ground_truth, lang)


def mlqa_evaluate(examples, predictions: dict[str, str], lang: str) -> dict[str, float]:
    """{"exact_match", "f1"} in percent, max over each question's gold answers; unanswered scores 0."""
    if lang not in LANGUAGES:
        raise ValueError(f"MLQA's metric knows {', '.join(LANGUAGES)}; not {lang!r}")
    f1 = exact_match = 0.0
    for ex in examples:
        if ex.id not in predictions:
            print(f"Unanswered question {ex.id} will receive score 0.", file=sys.stderr)
            continue
        golds = [a["text"] for a in ex.answers]
        exact_match += max(exact_match_score(predictions[ex.id], g, lang) for g in golds)
        f1 += max(f1_score(predictions[ex.id], g, lang) for g in golds)
    total = max(len(examples), 1)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


# ---- choosing the metric per evaluation file (training.finetune, training.finetune_clism) ----

QA_METRICS = ("squad", "mlqa")


def read_eval_file(path: str | Path, qa_metric: str, eval_language: str | None):
    """A SQuAD-format file's questions, each given its answers' language when `qa_metric` is "mlqa"
    (from `eval_language`, else MLQA's file name); ValueError when that language is not known."""
    from training.tasks.squad import read_squad

    examples = read_squad(path)
    if qa_metric == "mlqa":
        language = eval_language or language_of_file(path)
        if language not in LANGUAGES:
            raise ValueError(f"--qa_metric mlqa: {path}: " + (
                f"MLQA's metric knows {', '.join(LANGUAGES)}, not {language!r}" if language else
                "no context language in the file name (MLQA's test-context-XX-question-YY.json); give --eval_language"))
        for ex in examples:
            ex.language = language
    return examples


def qa_evaluate(examples, predictions: dict[str, str], qa_metric: str) -> dict[str, float]:
    """EM/F1 by SQuAD v1.1's script or, for "mlqa", by MLQA's in the examples' language."""
    from training.tasks.squad import squad_evaluate

    if qa_metric == "mlqa" and examples:
        return mlqa_evaluate(examples, predictions, examples[0].language)
    return squad_evaluate(examples, predictions)
