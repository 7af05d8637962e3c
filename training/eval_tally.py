"""The held-out pass's tallies (training/evaluation.py): sums and counts that every rank adds up
before any division, so that the metrics are those of one process on all the batches; and the
metrics computed from them."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import torch.distributed as dist

OVERALL = "all"


@dataclass
class Tally:
    sums: Counter = field(default_factory=Counter)  # (group, name) -> sum
    scores: list = field(default_factory=list)  # (group, score, label) for the AUC

    def add(self, group: str, **values: float) -> None:
        for g in (OVERALL, group):
            for name, value in values.items():
                self.sums[(g, name)] += float(value)

    def score(self, group: str, score: float, label: bool) -> None:
        self.scores.append((group, float(score), bool(label)))

    def merge(self, other: Tally) -> None:
        self.sums.update(other.sums)
        self.scores.extend(other.scores)

    def groups(self) -> list[str]:
        return [OVERALL, *sorted({g for g, _ in self.sums} - {OVERALL})]


def gather(tally: Tally, world: int) -> Tally:
    """Every rank's tally added up (all ranks get the sum)."""
    if world == 1:
        return tally
    parts: list = [None] * world
    dist.all_gather_object(parts, (dict(tally.sums), tally.scores))
    total = Tally()
    for sums, scores in parts:
        total.merge(Tally(Counter(sums), scores))
    return total


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def roc_auc(scores: list[float], labels: list[bool]) -> float:
    """P(score of a positive > score of a negative), ties counted half (Mann–Whitney U); NaN without
    both classes."""
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
    order = sorted(range(len(scores)), key=lambda k: scores[k])
    rank_sum, k = 0.0, 0
    while k < len(order):  # average ranks over ties
        end = k
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[k]]:
            end += 1
        average = (k + end) / 2 + 1
        rank_sum += sum(average for m in range(k, end + 1) if labels[order[m]])
        k = end + 1
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def f1_from_counts(true_positive: float, predicted: float, actual: float) -> float:
    """F1 = 2TP / (predicted + actual): the harmonic mean of precision and recall where both are
    defined, and 0 where nothing is predicted but something was to be found (precision is then 0/0,
    and a harmonic mean through it would be NaN: an untrained discriminator that flags nothing scored
    NaN, so no pass was ever better, and best/ was never written). NaN only with nothing on either side."""
    return 2 * true_positive / (predicted + actual) if predicted + actual else float("nan")


def word_span_f1(predicted: tuple[int, int] | None, gold: tuple[int, int]) -> float:
    """F1 of the word positions two spans (inclusive offsets) share: SQuAD's formula, but on positions
    and without its normalisation (a predicted article or comma counts against the span), so it
    ranks checkpoints on held-out pre-training rows and is not an XQuAD score."""
    if predicted is None:
        return 0.0
    overlap = min(predicted[1], gold[1]) - max(predicted[0], gold[0]) + 1
    if overlap <= 0:
        return 0.0
    precision = overlap / (predicted[1] - predicted[0] + 1)
    recall = overlap / (gold[1] - gold[0] + 1)
    return 2 * precision * recall / (precision + recall)
