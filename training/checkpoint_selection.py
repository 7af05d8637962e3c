"""`--select_by`: which checkpoint is the best one (training/run.py keeps it as best/)."""
from __future__ import annotations

import math


def lower_is_better(metric: str) -> bool:
    return metric.endswith("loss")


def is_better(value: float, best: float | None, metric: str) -> bool:
    if not math.isfinite(value):
        return False
    if best is None:
        return True
    return value < best if lower_is_better(metric) else value > best


class Selection:
    """`--select_by METRIC`: the best value seen so far and its step (kept in checkpoints, so that a
    resumed run compares against the same best)."""

    def __init__(self, metric: str, best: dict | None = None):
        self.metric = metric
        self.best = best if best and best.get("metric") == metric else None

    def rule(self) -> str:
        source = "downstream" if self.metric.startswith("downstream") else "held-out"
        return f"{'lowest' if lower_is_better(self.metric) else 'highest'} {source} {self.metric}"

    def consider(self, step: int, results: dict[str, float]) -> bool:
        """True when this step's value beats the best (strictly: the earliest of equal values stays)."""
        value = results.get(self.metric, float("nan"))
        if not is_better(value, self.best["value"] if self.best else None, self.metric):
            return False
        self.best = {"metric": self.metric, "value": float(value), "step": step}
        return True
