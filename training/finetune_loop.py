"""The fine-tuning loop of `training.finetune` (mPMR's MRC tasks) and `training.finetune_clism` (QA with
`[QUE]`): one loop, as pre-training has one (training/run.py), for rows that fit in memory.

AdamW (no decay on biases and LayerNorm), linear warm-up over `warmup_ratio` of the steps then linear
decay, a fresh seeded shuffle of the rows every epoch, gradient accumulation, gradient clipping, a stop
before any update with a non-finite loss or gradient norm (the weights would all become NaN), a progress
bar, the loss every `log_every` steps, and an evaluation every `eval_every` steps. What differs between
the commands is passed in: how rows become a batch (`collate`), how a batch becomes a loss (`loss`), and
what an evaluation is (`evaluate`).
"""
from __future__ import annotations

import math
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from training.errors import Interrupted, NonFiniteError
from training.run_setup import lr_lambda, param_groups


def total_steps(rows: int, batch_size: int, grad_accum: int, epochs: float, max_steps: int | None) -> int:
    """`max_steps` when given, else `epochs` passes over the rows (at least one step)."""
    if max_steps is not None:
        return max_steps
    steps_per_epoch = max(1, math.ceil(rows / (batch_size * grad_accum)))
    return max(1, round(epochs * steps_per_epoch))


def epoch_batches(rows: list[dict], batch_size: int, seed: int) -> Iterator[list[dict]]:
    """Endless chunks of rows: a fresh shuffle every epoch (200 steps of 32 over 64 examples, the CLISM
    few-shot protocol, is 100 epochs), the epoch's remainder a short chunk."""
    order_rng = random.Random(seed)
    while True:
        order = list(range(len(rows)))
        order_rng.shuffle(order)
        for k in range(0, len(order), batch_size):
            yield [rows[i] for i in order[k:k + batch_size]]


@dataclass
class Trained:
    steps: int
    seconds: float
    # {"step", "loss", "lr"} at the first and the last step and every log_every steps in between
    losses: list[dict] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # the collator's bookkeeping, summed
    steps_done: int = 0


def train(model: torch.nn.Module, rows: list[dict], collate: Callable[[list[dict]], dict],
          loss: Callable[[torch.nn.Module, dict], torch.Tensor], *, max_steps: int, batch_size: int, lr: float,
          weight_decay: float, warmup_ratio: float, grad_clip: float, seed: int, device: torch.device,
          grad_accum: int = 1, log_every: int = 10, progress: dict | None = None, print_losses: bool = False,
          eval_every: int = 0, evaluate: Callable[[int, Callable[[str], None]], None] | None = None) -> Trained:
    """`max_steps` optimiser steps of `grad_accum` micro-batches of `batch_size` rows.

    collate(rows) -> a batch of tensors with a "counts" dict; a batch with no rows (a collator that
    left every window out) is skipped, and a step made only of such batches takes no update.
    loss(model, batch on the device) -> the loss tensor (under the caller's autocast).
    progress: tqdm's keyword arguments (desc, leave), or None for no bar. print_losses: each logged
    loss also printed. evaluate(step, say) runs every eval_every steps before the last."""
    # Fused on the CPU too: foreach AdamW holds temporaries the size of all parameters, and XLM-R-style
    # models are mostly their 250k-word embedding (e5-small: 96M of 118M parameters). One training step
    # of e5-small at 8 x 384 peaked at 4.1 GB RSS with foreach, 3.3 GB fused.
    optimizer = torch.optim.AdamW(param_groups(model, weight_decay), lr=lr, fused=device.type in ("cuda", "cpu"))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(int(warmup_ratio * max_steps), max_steps))
    stream = epoch_batches(rows, batch_size, seed)
    result = Trained(steps=max_steps, seconds=0.0)
    bar = None
    if progress is not None:
        from tqdm import tqdm
        bar = tqdm(total=max_steps, dynamic_ncols=True, **progress)
    say = bar.write if bar else (lambda message: print(message, file=sys.stderr))
    start = time.perf_counter()
    try:
        _steps(model, stream, collate, loss, optimizer, scheduler, result, bar, say, max_steps=max_steps,
               grad_accum=grad_accum, grad_clip=grad_clip, device=device, log_every=log_every,
               print_losses=print_losses, eval_every=eval_every, evaluate=evaluate)
    except KeyboardInterrupt:
        raise Interrupted(result.steps_done, None) from None
    finally:
        if bar:
            bar.close()
    result.seconds = time.perf_counter() - start
    return result


def _steps(model, stream, collate, loss, optimizer, scheduler, result: Trained, bar, say, *, max_steps: int,
           grad_accum: int, grad_clip: float, device: torch.device, log_every: int, print_losses: bool,
           eval_every: int, evaluate) -> None:
    for step in range(1, max_steps + 1):
        model.train()
        step_loss, took = 0.0, 0
        for _ in range(grad_accum):
            batch = collate(next(stream))
            result.counts.update(batch.pop("counts"))
            if batch["input_ids"].shape[0] == 0:
                continue
            batch = {k: v.to(device) for k, v in batch.items()}
            micro_loss = loss(model, batch)
            (micro_loss / grad_accum).backward()
            step_loss += micro_loss.item() / grad_accum
            took += 1
        if not took:
            result.steps_done = step
            if bar:
                bar.update(1)
            continue
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip or float("inf")))
        if not (math.isfinite(step_loss) and math.isfinite(grad_norm)):
            raise NonFiniteError(f"step {step}: non-finite loss {step_loss} / gradient norm {grad_norm}; stopped "
                                 "before the update, no final/ written. Lower --lr")
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if step % log_every == 0 or step in (1, max_steps):
            result.losses.append({"step": step, "loss": step_loss, "lr": scheduler.get_last_lr()[0]})
            if print_losses:
                say(f"step {step}/{max_steps} loss {step_loss:.4f}")
        if evaluate is not None and eval_every and step % eval_every == 0 and step < max_steps:
            evaluate(step, say)
        result.steps_done = step
        if bar:
            bar.update(1)


# ---- several evaluation files ----

def eval_labels(paths: list[str]) -> list[str]:
    """A short, unique name per evaluation file: xquad.de.json.gz -> xquad.de."""
    names = []
    for path in paths:
        name = Path(path).name.removesuffix(".gz")
        name = name.rsplit(".", 1)[0] if "." in name else name
        names.append(name if name not in names else f"{name}#{len(names)}")
    return names


def mean_metrics(by_eval: dict[str, dict]) -> dict:
    """Each numeric metric averaged over the evaluation files (XQuAD's cross-lingual average)."""
    keys = [k for k, v in next(iter(by_eval.values())).items() if isinstance(v, (int, float))]
    return {k: sum(m[k] for m in by_eval.values()) / len(by_eval) for k in keys}


# XQuAD has 12 languages, but the mPMR paper's average is over 11 (its appendix and Table 7: no
# Romanian, which was added to XQuAD later), as in PMR's code and XTREME's task list.
PAPER_XQUAD_LEFT_OUT = "xquad.ro"


def paper_xquad_mean(by_eval: dict[str, dict]) -> dict | None:
    """The mean over the XQuAD files without Romanian, when Romanian is among several of them; else None."""
    xquad = {label: m for label, m in by_eval.items() if label.startswith("xquad.")}
    if PAPER_XQUAD_LEFT_OUT not in xquad or len(xquad) < 3:
        return None
    return mean_metrics({label: m for label, m in xquad.items() if label != PAPER_XQUAD_LEFT_OUT})


def evaluate_all(eval_sets: dict[str, list], score) -> tuple[dict, dict, dict]:
    """(metrics, metrics per file, predictions per file) of `score(examples) -> (metrics, predictions)`
    on each set; metrics is the one set's, or the mean over several."""
    by_eval, predictions = {}, {}
    for label, examples in eval_sets.items():
        by_eval[label], predictions[label] = score(examples)
    metrics = next(iter(by_eval.values())) if len(by_eval) == 1 else mean_metrics(by_eval)
    return metrics, by_eval, predictions


def shortest_first(rows: list[dict]) -> list[int]:
    """Row indices by word count (query + context): batches taken in this order pad to about their rows'
    own length (XQuAD windows run from ~50 to 384 subwords; in input order much of the work was padding)."""
    return sorted(range(len(rows)), key=lambda k: len(rows[k]["query_words"]) + len(rows[k]["context_words"]))
