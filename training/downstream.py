"""Checkpoint selection by downstream scores: the mPMR paper's rule.

The paper picks its pre-training checkpoint by the average of its XQuAD, CoNLL and PAWS-X scores
(mPMR Appendix A.1: "We use the average scores of XQuAD, CoNLL, and PAWS-X to select the best mPMR
checkpoint"). `training.run --downstream "FLAGS"` (repeatable) does that: at every held-out pass the
current model is saved, each FLAGS is run as `python -m training.finetune FLAGS --init <that model>
--output RUN/downstream/step-N/LABEL`, and its score (F1 for squad and ner, accuracy for pair) is
logged as `eval/downstream/LABEL`, their mean as `eval/downstream_avg`, which `--select_by` then
defaults to. Each fine-tuning run is its own process, so that it cannot touch the pre-training run's
random state (exact resume) or its memory.

It costs a fine-tuning run per task per pass: give each FLAGS a budget (`--max_steps`,
`--max_train_examples`, `--max_eval_examples`) and space the passes with `--eval_every`. In a
multi-process run rank 0 fine-tunes while the others wait at a barrier: keep a pass under the
process group's timeout (PyTorch's default: 10 minutes for NCCL).
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

AVERAGE = "downstream_avg"
PREFIX = "downstream/"
SCORES = ("f1", "accuracy")  # the first a task's metrics hold is its score
FORBIDDEN = ("--init", "--output")  # set by the run for every pass


class DownstreamError(ValueError):
    pass


@dataclass(frozen=True)
class DownstreamTask:
    label: str  # e.g. "squad", "ner", "squad#2" for a second squad task
    flags: list[str]  # training.finetune's flags, without --init and --output


def parse_downstream(values: list[str] | None) -> list[DownstreamTask]:
    """The --downstream values, checked by training.finetune's own parser before training starts."""
    from training.finetune import build_parser

    tasks: list[DownstreamTask] = []
    for value in values or []:
        flags = shlex.split(value)
        for flag in flags:
            if flag.split("=")[0] in FORBIDDEN:
                raise DownstreamError(f"--downstream {value!r}: drop {flag.split('=')[0]}; the run sets it for every pass")
        try:
            parsed = build_parser().parse_args([*flags, "--init", "checked-by-training.run"])
        except SystemExit:
            raise DownstreamError(f"--downstream {value!r}: not valid training.finetune flags "
                                  "(the line above says why); see python -m training.finetune --help") from None
        earlier = sum(t.label.split("#")[0] == parsed.task for t in tasks)
        tasks.append(DownstreamTask(f"{parsed.task}#{earlier + 1}" if earlier else parsed.task, flags))
    return tasks


def metric_names(tasks: list[DownstreamTask]) -> list[str]:
    return [AVERAGE, *(PREFIX + t.label for t in tasks)] if tasks else []


def score(metrics: dict) -> float:
    for name in SCORES:
        if name in metrics:
            return float(metrics[name])
    raise DownstreamError(f"downstream metrics {sorted(metrics)} hold none of {', '.join(SCORES)}")


class Downstream:
    def __init__(self, tasks: list[DownstreamTask], folder: Path, device: str | None):
        self.tasks = tasks
        self.folder = folder
        self.device = device

    def run(self, save_model, step: int) -> dict[str, float]:
        """Save the model with `save_model(folder)`, fine-tune and score it on every task, delete it.
        Returns downstream/LABEL for each task and downstream_avg."""
        step_dir = self.folder / f"step-{step:08d}"
        model_dir = step_dir / "model"
        if model_dir.exists():
            shutil.rmtree(model_dir)
        save_model(model_dir)
        results: dict[str, float] = {}
        try:
            for task in self.tasks:
                out = step_dir / task.label.replace("#", "_")
                command = [sys.executable, "-m", "training.finetune", *task.flags, "--init", str(model_dir),
                           "--output", str(out), "--no_progress", *(["--device", self.device] if self.device else [])]
                out.mkdir(parents=True, exist_ok=True)
                with open(out / "log.txt", "w") as log:
                    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
                if done.returncode != 0:
                    raise DownstreamError(f"step {step}: downstream {task.label} failed (exit {done.returncode}); "
                                          f"see {out / 'log.txt'}")
                metrics = json.loads((out / "metrics.json").read_text())["metrics"]
                results[PREFIX + task.label] = score(metrics)
                shutil.rmtree(out / "final", ignore_errors=True)  # a fine-tuned copy per pass would fill the disk
        finally:
            shutil.rmtree(model_dir, ignore_errors=True)
        results[AVERAGE] = sum(results.values()) / len(results)
        return results
