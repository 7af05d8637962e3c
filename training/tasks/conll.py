"""NER in the MRC form (mPMR Table 6, NER): one MRC row per (sentence, entity type), query = the type's
label description, context = the sentence, answers = every entity of that type.

Files: CoNLL-2002/2003 style, one token a line, the token first and the BIO tag in the LAST column
(so both the 2-column WikiAnn/CoNLL-2002 files and the 4-column CoNLL-2003 ones read), blank lines
between sentences, `-DOCSTART-` lines skipped. IOB1 (an entity may open with I-) is read as well:
an I- tag that does not continue an entity of its type opens one. XTREME's WikiAnn files prefix every
token with its language ("en:Portugal"); a prefix shared by every token of a file is removed.

Decoding: every context cell of S with sigmoid(S) > threshold (0.5) is a candidate; candidates are
kept greedily by score, dropping any that overlaps a kept one, within one sentence and one type (two
types may claim the same words; the paper is silent and this is what one row per type gives).
Metric: entity-level micro precision/recall/F1, an entity right when its span and type both match
(conlleval's definition).
"""
from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

from training.tasks.words import split_words

# Label descriptions: mPMR Table 6 (CoNLL), words and punctuation as the paper spaces them.
LABEL_DESCRIPTIONS = {
    "ORG": '" ORG " . Organization entities are limited to named corporate , governmental , or other '
           "organizational entities .",
    "PER": '" PER " . Person entities are named persons or family .',
    "LOC": '" LOC " . Location entities are the name of politically or geographically defined locations '
           "such as cities , countries .",
    "MISC": '" MISC " . Examples of miscellaneous entities include events , nationalities , products and '
            "works of art .",
}


@dataclass
class Sentence:
    tokens: list[str]
    tags: list[str]
    entities: list[tuple[int, int, str]]  # (first token, last token, type), both inclusive


def bio_entities(tags: list[str]) -> list[tuple[int, int, str]]:
    """Entity spans of a BIO (or IOB1) tag sequence."""
    out, start, kind = [], None, None
    for k, tag in enumerate([*tags, "O"]):
        prefix, _, label = tag.partition("-")
        continues = prefix == "I" and kind == label
        if start is not None and not continues:
            out.append((start, k - 1, kind))
            start, kind = None, None
        if prefix == "B" or (prefix == "I" and not continues):
            start, kind = k, label
    return out


def read_conll(path: str | Path) -> list[Sentence]:
    sentences, tokens, tags = [], [], []
    try:
        raw = Path(path).read_bytes()
        lines = (gzip.decompress(raw) if str(path).endswith(".gz") else raw).decode("utf-8").splitlines()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found") from None
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as e:
        # A .gz under another name read as text said only "'utf-8' codec can't decode byte 0x8b".
        raise ValueError(f"{path}: not UTF-8 text ({e}); expected CoNLL, a token and a BIO tag a line "
                         "(.gz when the name ends in .gz)") from None

    def flush():
        if tokens:
            sentences.append(Sentence(list(tokens), list(tags), bio_entities(tags)))
            tokens.clear()
            tags.clear()

    for n, line in enumerate(lines, 1):
        cols = line.split()
        if not cols:
            flush()
            continue
        if cols[0] == "-DOCSTART-":
            flush()
            continue
        if len(cols) < 2:
            raise ValueError(f"{path}:{n}: one column ({line!r}); expected a token and a BIO tag")
        tag = cols[-1]
        if tag != "O" and (tag[:2] not in ("B-", "I-") or len(tag) < 3):
            raise ValueError(f"{path}:{n}: tag {tag!r} is not O, B-TYPE or I-TYPE")
        tokens.append(cols[0])
        tags.append(tag)
    flush()
    return _strip_language_prefix(sentences)


_LANG_PREFIX = re.compile(r"^[a-z]{2,3}(?:[-_][a-z]+)?:")


def _strip_language_prefix(sentences: list[Sentence]) -> list[Sentence]:
    # XTREME's WikiAnn (PAN-X) files write every token as "en:Portugal". Stripped only when every
    # token of the file carries the same prefix, so that real tokens such as "re:" are never touched.
    prefixes = {m.group(0) if (m := _LANG_PREFIX.match(t)) else None for s in sentences for t in s.tokens}
    if len(prefixes) != 1 or None in prefixes:
        return sentences
    cut = len(prefixes.pop())
    for s in sentences:
        s.tokens = [t[cut:] for t in s.tokens]
    return sentences


def entity_types(sentences: list[Sentence]) -> list[str]:
    """The types of the paper's CoNLL set first, then any other type found (sorted)."""
    found = {t for s in sentences for _, _, t in s.entities}
    return [t for t in LABEL_DESCRIPTIONS if t in found or not found] + sorted(found - set(LABEL_DESCRIPTIONS))


def query_words(entity_type: str) -> list[str]:
    # A type without a written description (WikiAnn has only PER/LOC/ORG) is queried by its name alone.
    description = LABEL_DESCRIPTIONS.get(entity_type, f'" {entity_type} " .')
    return [w for w, _, _ in split_words(description)]


def to_rows(sentences: list[Sentence], types: list[str]) -> list[dict]:
    """Rows in sentence-major order: row k is sentence k // len(types), type types[k % len(types)]."""
    queries = {t: query_words(t) for t in types}
    rows = []
    for s in sentences:
        for t in types:
            answers = [{"start": a, "end": b} for a, b, kind in s.entities if kind == t]
            rows.append({"query_words": queries[t], "context_words": s.tokens, "answers": answers,
                         "answerable": bool(answers)})
    return rows


def entity_f1(gold: list[list[tuple[int, int, str]]], predicted: list[list[tuple[int, int, str]]]) -> dict:
    """Entity-level micro scores in percent over sentences; an entity counts once per sentence."""
    tp = n_gold = n_pred = 0
    for g, p in zip(gold, predicted, strict=True):
        g, p = set(g), set(p)
        tp += len(g & p)
        n_gold += len(g)
        n_pred += len(p)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": 100 * precision, "recall": 100 * recall, "f1": 100 * f1,
            "gold": n_gold, "predicted": n_pred, "correct": tp}
