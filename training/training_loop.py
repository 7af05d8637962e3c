"""The steps of training.run once everything is built: optimiser steps of accumulated micro-batches,
the non-finite guard, metrics lines, held-out passes that keep best/, checkpoints that resume exactly,
and final/. One object per run, each step a method; training/run.py builds what it is given."""
from __future__ import annotations

import contextlib
import gc
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist

from training import atomic_files, checkpoint, run_folder
from training.checkpoint_selection import Selection
from training.config import TrainConfig
from training.errors import NonFiniteError
from training.registry import ModelSpec
from training.run_log import LogWindow, RunLog
from training.new_parameters import NEW_PARAMETERS
from training.run_setup import autocast_for


def check_finite(what: str, step: int, **tensors) -> None:
    bad = checkpoint.nonfinite(tensors)
    if bad:
        raise NonFiniteError(f"step {step}: NaN or inf in {len(bad)} tensor(s) of the {what} (first: {bad[0]}); "
                             "not saved. Lower --lr (or --grad_clip) and resume from the last checkpoint")


def last_checkpoint_step(ckpt_dir: Path) -> int | None:
    steps = [int(p.stem.split("-")[1]) for p in checkpoint.checkpoint_paths(ckpt_dir) if p.stem.split("-")[1].isdigit()]
    return max(steps) if steps else None


def saving(path: Path, resume_from: int | None = None):
    """A full or read-only disk while writing `path` as one line naming it."""
    after = "" if resume_from is None else f"; free space, then --resume continues from step {resume_from}"
    return atomic_files.naming_disk_failures(path, after)


@dataclass
class Position:
    """Where the run is: optimiser steps taken, micro-batches drawn, non-finite steps skipped."""
    step: int = 0
    batches: int = 0
    skipped: int = 0
    losses: list[float] = field(default_factory=list)


class TrainingLoop:
    def __init__(self, *, model_name: str, spec: ModelSpec, cfg: TrainConfig, out: Path, model, raw_model,
                 tokenizer, optimizer, scheduler, batch_iter, dataset, max_steps: int, position: Position,
                 rank: int, world: int, device: torch.device, log: RunLog, held_out=None, downstream=None,
                 selection: Selection | None = None, reached: dict | None = None):
        self.model_name, self.spec, self.cfg, self.out = model_name, spec, cfg, out
        self.model, self.raw_model, self.tokenizer = model, raw_model, tokenizer
        self.optimizer, self.scheduler = optimizer, scheduler
        self.batch_iter, self.dataset, self.max_steps = batch_iter, dataset, max_steps
        self.at = position
        self.rank, self.world, self.device = rank, world, device
        self.is_main = rank == 0
        self.log, self.held_out, self.downstream, self.selection = log, held_out, downstream, selection
        self.reached = reached if reached is not None else {}
        self.ckpt_dir = out / "checkpoints"
        self.autocast = autocast_for(device)
        self.window = LogWindow()

    # ---- the run ----

    def run(self) -> dict:
        if self.selection is not None and self.at.step == 0:
            # The untrained model: the baseline every later pass is read against.
            evaluated = self.evaluate_and_select(0)
            self.log.write({"step": 0, **evaluated}, evaluated)
        while self.at.step < self.max_steps:
            loss_value, grad_norm = self.optimizer_step()
            self.at.losses.append(loss_value)
            self.window.steps += 1
            step = self.at.step
            evaluated = {}
            if self.selection is not None and (step % self.cfg.eval_every == 0 or step == self.max_steps):
                evaluated = self.evaluate_and_select(step)
            if self.is_main and (step % self.cfg.log_every == 0 or step == self.max_steps or evaluated):
                self.write_metrics(loss_value, grad_norm, evaluated)
            self.log.advance(loss_value)
            if step % self.cfg.save_every == 0 or step == self.max_steps:
                self.save_checkpoint()
        self.log.close_progress()
        if self.is_main:
            self.save_final()
        self.log.close()
        if self.world > 1:
            self.leave_process_group()
        return {"step": self.at.step, "losses": self.at.losses, "max_steps": self.max_steps}

    def optimizer_step(self) -> tuple[float, float]:
        """One optimiser step of `grad_accum` micro-batches; (loss, gradient norm). A non-finite one is
        skipped (no update) or stops the run, by --max_nonfinite_skips."""
        cfg, window = self.cfg, self.window
        self.model.train()
        step_loss = torch.zeros((), device=self.device)
        for micro in range(cfg.grad_accum):
            waited = time.perf_counter()
            batch = next(self.batch_iter)
            window.data_s += time.perf_counter() - waited
            self.at.batches += 1
            window.counts.update(batch.pop("counts"))
            batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
            window.tokens += int(batch["attention_mask"].sum())
            # Gradients are all-reduced only on the last micro-batch of a step (nanoGPT's trick).
            sync = self.world == 1 or micro == cfg.grad_accum - 1
            with (contextlib.nullcontext() if sync else self.model.no_sync()), self.autocast:
                loss, logs = self.model(**batch)
            (loss / cfg.grad_accum).backward()
            step_loss += loss.detach() / cfg.grad_accum
            for key, value in logs.items():
                window.terms[key] += float(value) / cfg.grad_accum
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.raw_model.parameters(), cfg.grad_clip or float("inf")))
        # Before the update, so that every rank sees the same loss and takes the same decision (the
        # gradient norm is the same everywhere already: gradients are all-reduced).
        if self.world > 1:
            dist.all_reduce(step_loss, op=dist.ReduceOp.AVG)
        loss_value = float(step_loss)
        if math.isfinite(loss_value) and math.isfinite(grad_norm):
            self.optimizer.step()
        else:
            self.skip_nonfinite(loss_value, grad_norm)
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.at.step += 1
        self.reached["step"] = self.at.step
        self.spec.after_step(self.raw_model, self.dataset, self.at.step, self.max_steps)
        return loss_value, grad_norm

    def skip_nonfinite(self, loss_value: float, grad_norm: float) -> None:
        # A NaN/inf gradient would make every weight NaN at once: the update is skipped, or the run
        # stops, with the weights of the last good step (which the last checkpoint holds).
        at, cfg = self.at, self.cfg
        at.skipped += 1
        lr = self.scheduler.get_last_lr()[0]
        problem = f"step {at.step + 1}: non-finite loss {loss_value} / gradient norm {grad_norm} (lr {lr:.3g})"
        if at.skipped > cfg.max_nonfinite_skips:
            self.log.write({"step": at.step + 1, "loss": loss_value, "lr": lr, "grad_norm": grad_norm,
                            "batches": at.batches, "nonfinite_skips": at.skipped, "stopped": True}, {})
            self.log.close()
            last = checkpoint.checkpoint_paths(self.ckpt_dir)
            raise NonFiniteError(
                f"{problem}; stopped after {at.skipped} such step{'s' if at.skipped > 1 else ''} "
                f"(--max_nonfinite_skips {cfg.max_nonfinite_skips}); no final/ written, last checkpoint: "
                f"{last[-1] if last else 'none'}. Lower --lr, or allow skips with --max_nonfinite_skips N")
        self.log.say(f"training.run: {problem}; update skipped ({at.skipped} of {cfg.max_nonfinite_skips} tolerated)")

    # ---- what the run leaves ----

    def write_metrics(self, loss_value: float, grad_norm: float, evaluated: dict) -> None:
        terms = self.window.mean_terms()
        record = {"step": self.at.step, "loss": loss_value, "lr": self.scheduler.get_last_lr()[0],
                  "grad_norm": grad_norm, **self.window.rates(self.world), **terms, "batches": self.at.batches,
                  **dict(sorted(self.window.counts.items())), **evaluated}
        if self.at.skipped:
            record["nonfinite_skips"] = self.at.skipped
        trained = ("loss", "lr", "grad_norm", "tokens_per_s", "data_s", *terms)
        self.log.write(record, {**{f"train/{key}": record[key] for key in trained}, **evaluated})
        self.window.reset()

    def save_checkpoint(self) -> None:
        raw, step = self.raw_model, self.at.step
        # On every rank (the weights are the same on all), so that all stop together.
        check_finite("checkpoint", step, model=dict(raw.named_parameters()), optimizer=self.optimizer.state_dict())
        # Every rank's RNG (their dropout differs), gathered so that each resumes its own.
        rngs = [checkpoint.rng_state()]
        if self.world > 1:
            rngs = [None] * self.world
            dist.all_gather_object(rngs, checkpoint.rng_state())
        if not self.is_main:
            return
        path = self.ckpt_dir / f"step-{step:08d}.pt"
        with saving(path, resume_from=last_checkpoint_step(self.ckpt_dir)):
            checkpoint.save(
                path,
                model=raw.state_dict(), optimizer=self.optimizer.state_dict(), scheduler=self.scheduler.state_dict(),
                model_name=self.model_name, step=step, batches=self.at.batches, rng=rngs, world_size=self.world,
                max_steps=self.max_steps, nonfinite_skips=self.at.skipped,
                parameters=[name for name, _ in raw.named_parameters()], model_config=raw.config.to_dict(),
                new_parameters=sorted(getattr(raw, NEW_PARAMETERS, ())),
                train_config=json.loads(json.dumps(self.cfg.to_dict())),
                best=self.selection.best if self.selection else None,
            )
        checkpoint.prune(self.ckpt_dir, self.cfg.keep_checkpoints)

    def save_final(self) -> None:
        check_finite("final model", self.at.step, model=dict(self.raw_model.named_parameters()))
        final = self.out / "final"
        with atomic_files.replacing_folder(final) as tmp, saving(final):
            self.spec.save_final(self.raw_model, self.tokenizer, tmp)
            (tmp / "train_config.json").write_text((self.out / "train_config.json").read_text())
        selection = self.selection
        print("\n".join(run_folder.result_lines(self.out, self.model_name, self.at.step,
                                                selection.best if selection else None, self.log.writer is not None,
                                                selection.metric if selection else None)))

    # ---- held-out passes ----

    def evaluate_and_select(self, at_step: int) -> dict:
        """One held-out pass on every rank; rank 0 prints it, keeps best/ by the selection rule. The
        metrics, with their eval/ prefix, for the step's metrics line."""
        started = time.perf_counter()
        results, rows = self.held_out.run(self.raw_model) if self.held_out is not None else ({}, 0)
        if self.downstream is not None:
            if self.is_main:
                results.update(self.downstream.run(
                    lambda folder: self.spec.save_final(self.raw_model, self.tokenizer, folder), at_step))
            if self.world > 1:
                dist.barrier()  # the other ranks wait for rank 0's fine-tuning runs
        record = {f"eval/{k}": v for k, v in results.items()}
        record["eval/rows"], record["eval/seconds"] = rows, round(time.perf_counter() - started, 3)
        if self.is_main:
            # The untrained model (step 0) is the baseline, never the selected one: random span cells above
            # the threshold give it a span F1 that the first steps (learning "no span anywhere") lose.
            improved = at_step > 0 and self.selection.consider(at_step, results)
            if improved:
                self.save_best()
            overall = " ".join(f"{k} {v:.4f}" for k, v in results.items() if "/" not in k)
            best_note = f"  (best {self.selection.metric} so far: saved to {self.out / 'best'})" if improved else ""
            self.log.say(f"step {at_step}: held-out ({rows} rows): {overall}{best_note}")
        return record

    def save_best(self) -> None:
        # Written beside and then renamed over the old best/, so that a kill never leaves half a model.
        best = self.out / "best"
        with atomic_files.replacing_folder(best) as tmp, saving(best):
            self.spec.save_final(self.raw_model, self.tokenizer, tmp)
            (tmp / "train_config.json").write_text((self.out / "train_config.json").read_text())
            (tmp / "selection.json").write_text(
                json.dumps({**self.selection.best, "rule": self.selection.rule()}, indent=2) + "\n")

    def leave_process_group(self) -> None:
        # Free the DDP wrapper first, on every rank, after all ranks are done with collectives. Left to
        # the end of the run, its Reducer (which holds the process group) was freed with the GIL held
        # while a gloo thread still needed the GIL to release the last all_gather_object: the rank then
        # never exited (seen under torchrun, 1 run in 6).
        dist.barrier()
        del self.model, self.batch_iter
        gc.collect()
        dist.destroy_process_group()
