"""Train a model on a data job's Parquet: one loop for every model (DESIGN.md §3; nanoGPT train.py).

    python -m training.run --model mpmr --data output/wiki_mrc --output runs/tiny --config tiny --max_steps 50
    python -m training.run --model mpmr --data /data/wiki_mrc --output runs/base --config base --init xlm-roberta-base
    torchrun --nproc_per_node 4 -m training.run --model mpmr --data ... --config base     # DDP

OUTPUT receives checkpoints/step-*.pt (resume with --resume), tokenizer/, metrics.jsonl,
tensorboard/ and final/ (save_pretrained: safetensors, config, tokenizer).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from transformers import XLMRobertaConfig

from corpora.schemas import SchemaMismatch
from training import checkpoint
from training.collate_mpmr import MPMRCollator
from training.config import CONFIGS, TrainConfig
from training.data import ParquetBatches, check_shards, list_shards, make_loader
from training.models import mpmr
from training.tokenizer import load_tokenizer, train_tiny_tokenizer

TINY_TOKENIZER_ROWS = 20_000  # rows whose words train the on-the-fly SentencePiece model


@dataclass
class ModelSpec:
    """What differs between models: how to build one and its collator (the loop is shared)."""
    build_random: Callable  # (cfg, tokenizer) -> model
    build_pretrained: Callable  # (cfg, name_or_path) -> model
    from_config: Callable  # (config dict) -> model, for resuming without the hub
    collator: Callable  # (cfg, tokenizer) -> collate function
    columns: list[str]


MODELS = {
    "mpmr": ModelSpec(
        build_random=lambda cfg, tok: mpmr.MPMRForWAE(mpmr.build_config(
            tok, cfg.hidden_size, cfg.num_layers, cfg.num_heads, cfg.intermediate_size, cfg.max_seq_len,
            cfg.extractor_hidden_size, cfg.dropout)),
        build_pretrained=lambda cfg, name: mpmr.from_pretrained_encoder(name, cfg.extractor_hidden_size, cfg.dropout),
        from_config=lambda d: mpmr.MPMRForWAE(XLMRobertaConfig.from_dict(d)),
        collator=lambda cfg, tok: MPMRCollator(tok, cfg.max_query_tokens, cfg.max_seq_len),
        columns=["query_words", "context_words", "answers", "answerable"],
    ),
}

# Flags that override a field of the chosen config; None = keep the config's value.
OVERRIDES = {
    "init": (str, ("backbone: a from_pretrained name or local path, or 'random' for a random encoder of the "
                   "config's shape with a SentencePiece tokenizer trained on the data (default: the config's; "
                   "tiny: random)")),
    "max_steps": (int, "optimiser steps (default: --epochs over the data)"),
    "epochs": (float, "epochs over the data when --max_steps is not given (paper: 3)"),
    "batch_size": (int, "micro-batch rows per process"),
    "grad_accum": (int, "micro-batches per optimiser step (effective batch = batch_size x grad_accum x processes)"),
    "lr": (float, "peak learning rate (paper: 1e-5)"),
    "weight_decay": (float, "AdamW weight decay (not on biases and LayerNorm)"),
    "warmup_ratio": (float, "share of the steps spent warming up linearly (paper: 0.06); linear decay after"),
    "grad_clip": (float, "clip the global gradient norm to this (0: off)"),
    "dropout": (float, "dropout in the encoder and the extractor"),
    "max_query_tokens": (int, "query subwords kept (paper: 128)"),
    "max_seq_len": (int, "total subwords (paper: 512)"),
    "shuffle_buffer": (int, "rows in the shuffle buffer of each data slot"),
    "num_workers": (int, "DataLoader worker processes per rank"),
    "log_every": (int, "steps between metrics lines"),
    "save_every": (int, "steps between checkpoints (one is also written at the end)"),
    "keep_checkpoints": (int, "checkpoints kept in OUTPUT/checkpoints"),
    "seed": (int, "seed of the data order, initialisation and dropout (DESIGN.md §6)"),
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m training.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, choices=sorted(MODELS), help="which model to train")
    p.add_argument("--data", required=True, metavar="DIR",
                   help="the data job's --output (or its data/ folder) holding train-*.parquet shards")
    p.add_argument("--output", default="./output/train", metavar="DIR", help="run folder (default: ./output/train)")
    p.add_argument("--config", default="base", choices=sorted(CONFIGS), help="tiny (CPU, random), base, large")
    p.add_argument("--resume", action="store_true",
                   help="continue from the latest OUTPUT/checkpoints/step-*.pt (fresh start if none)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when there is one)")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.add_argument("--no_tensorboard", action="store_true", help="no TensorBoard events")
    for name, (kind, help_text) in OVERRIDES.items():
        p.add_argument(f"--{name}", type=kind, default=None, help=help_text)
    return p


def parse_args(argv=None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def make_config(args: argparse.Namespace) -> TrainConfig:
    changes = {k: getattr(args, k) for k in OVERRIDES if getattr(args, k) is not None}
    return CONFIGS[args.config].replace(**changes)


def lr_lambda(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return factor


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        # Biases and LayerNorm weights are not decayed (RoBERTa/XLM-R practice).
        (no_decay if param.ndim < 2 else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def tiny_tokenizer_words(files, limit: int):
    import pyarrow.parquet as pq
    seen = 0
    for f in files:
        table = pq.read_table(f, columns=["query_words", "context_words"])
        for row in table.to_pylist():
            yield row["query_words"]
            yield row["context_words"]
            seen += 1
            if seen >= limit:
                return


def setup_distributed(device_flag: str | None) -> tuple[int, int, torch.device]:
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    if device_flag:
        device = torch.device(device_flag)
    elif torch.cuda.is_available():
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    else:
        device = torch.device("cpu")
    if world > 1:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    return rank, world, device


def train(args: argparse.Namespace) -> dict:
    cfg = make_config(args)
    if cfg.init in ("random", "none"):
        cfg = cfg.replace(init=None)
    spec = MODELS[args.model]
    rank, world, device = setup_distributed(args.device)
    is_main = rank == 0
    out = Path(args.output)
    ckpt_dir = out / "checkpoints"

    files = list_shards(args.data)
    total_rows = check_shards(files)

    state = None
    if args.resume:
        found = checkpoint.checkpoint_paths(ckpt_dir)
        if found:
            state = checkpoint.load(found[-1])
            if state["model_name"] != args.model:
                raise checkpoint.CheckpointError(f"{found[-1]}: a --model {state['model_name']} checkpoint, not {args.model}")
            if is_main:
                print(f"resuming from {found[-1]} (step {state['step']})", file=sys.stderr)
        elif is_main:
            print(f"--resume: no checkpoint in {ckpt_dir}; starting fresh", file=sys.stderr)

    # The tokenizer is kept in OUTPUT/tokenizer so that a resumed run never retrains or downloads it,
    # and every run, fresh or resumed, on every rank, uses that saved copy: the very same tokenizer.
    tok_dir = out / "tokenizer"
    if not (tok_dir / "tokenizer_config.json").exists():
        if is_main:
            tokenizer = (load_tokenizer(cfg.init) if cfg.init
                         else train_tiny_tokenizer(tiny_tokenizer_words(files, TINY_TOKENIZER_ROWS), cfg.vocab_size))
            tokenizer.save_pretrained(tok_dir)
        if world > 1:
            dist.barrier()
    tokenizer = load_tokenizer(str(tok_dir))

    torch.manual_seed(cfg.seed)  # the same initial weights on every rank
    random.seed(cfg.seed)
    if state is not None:
        model = spec.from_config(state["model_config"])
        model.load_state_dict(state["model"])
    elif cfg.init:
        model = spec.build_pretrained(cfg, cfg.init)
    else:
        model = spec.build_random(cfg, tokenizer)
    model.to(device)
    raw_model = model
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    steps_per_epoch = max(1, math.ceil(total_rows / (cfg.batch_size * cfg.grad_accum * world)))
    max_steps = cfg.max_steps or max(1, round(cfg.epochs * steps_per_epoch))
    optimizer = torch.optim.AdamW(param_groups(raw_model, cfg.weight_decay), lr=cfg.lr, betas=cfg.adam_betas,
                                  fused=device.type == "cuda")
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(int(cfg.warmup_ratio * max_steps), max_steps))
    step, batches = 0, 0
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, batches = state["step"], state["batches"]
        if state["world_size"] != world:
            # The data split and the per-rank RNG depend on the number of processes.
            raise checkpoint.CheckpointError(
                f"{ckpt_dir}: written by {state['world_size']} processes, resumed with {world}; resume with the same number")
        checkpoint.set_rng_state(state["rng"][rank])
    else:
        torch.manual_seed(cfg.seed + rank)  # dropout differs across ranks, as their data does

    dataset = ParquetBatches(files, cfg.batch_size, spec.collator(cfg, tokenizer), seed=cfg.seed, rank=rank,
                             world_size=world, shuffle_buffer=cfg.shuffle_buffer, start_batch=batches,
                             columns=spec.columns)
    batch_iter = iter(make_loader(dataset, cfg.num_workers))

    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext())
    writer = None
    if is_main and not args.no_tensorboard:
        try:
            from torch.utils.tensorboard import SummaryWriter
            writer = SummaryWriter(str(out / "tensorboard"))
        except ImportError:  # tensorboard is optional: metrics.jsonl carries the same numbers
            pass
    progress = None
    if is_main and not args.no_progress:
        from tqdm import tqdm
        progress = tqdm(total=max_steps, initial=step, desc=f"{args.model} {args.config}", dynamic_ncols=True)
    metrics_file = open(out / "metrics.jsonl", "a") if is_main else None  # noqa: SIM115  closed at the end
    if is_main:
        (out / "train_config.json").write_text(json.dumps({**cfg.to_dict(), "max_steps": max_steps, "world_size": world}, indent=2))

    losses: list[float] = []
    window_tokens, window_start, counts = 0, time.perf_counter(), Counter()
    while step < max_steps:
        model.train()
        step_loss = torch.zeros((), device=device)
        for micro in range(cfg.grad_accum):
            batch = next(batch_iter)
            batches += 1
            counts.update(batch.pop("counts"))
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            window_tokens += int(batch["attention_mask"].sum())
            # Gradients are all-reduced only on the last micro-batch of a step (nanoGPT's trick).
            sync = world == 1 or micro == cfg.grad_accum - 1
            with (contextlib.nullcontext() if sync else model.no_sync()), autocast:
                loss, _ = model(**batch)
            (loss / cfg.grad_accum).backward()
            step_loss += loss.detach() / cfg.grad_accum
        grad_norm = torch.nn.utils.clip_grad_norm_(raw_model.parameters(), cfg.grad_clip or float("inf"))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        if world > 1:
            dist.all_reduce(step_loss, op=dist.ReduceOp.AVG)
        loss_value = float(step_loss)
        losses.append(loss_value)

        if is_main and (step % cfg.log_every == 0 or step == max_steps):
            elapsed = time.perf_counter() - window_start
            record = {"step": step, "loss": loss_value, "lr": scheduler.get_last_lr()[0],
                      "grad_norm": float(grad_norm), "tokens": window_tokens * world,
                      "tokens_per_s": window_tokens * world / max(elapsed, 1e-9),
                      "batches": batches, **{k: v for k, v in sorted(counts.items())}}
            metrics_file.write(json.dumps(record) + "\n")
            metrics_file.flush()
            if writer:
                for key in ("loss", "lr", "grad_norm", "tokens_per_s"):
                    writer.add_scalar(f"train/{key}", record[key], step)
            window_tokens, window_start, counts = 0, time.perf_counter(), Counter()
        if progress:
            progress.update(1)
            progress.set_postfix(loss=f"{loss_value:.4f}")
        if step % cfg.save_every == 0 or step == max_steps:
            # Every rank's RNG (their dropout differs), gathered so that each resumes its own.
            rngs = [checkpoint.rng_state()]
            if world > 1:
                rngs = [None] * world
                dist.all_gather_object(rngs, checkpoint.rng_state())
            if is_main:
                checkpoint.save(
                    ckpt_dir / f"step-{step:08d}.pt",
                    model=raw_model.state_dict(), optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(),
                    model_name=args.model, step=step, batches=batches, rng=rngs, world_size=world, max_steps=max_steps,
                    model_config=raw_model.config.to_dict(), train_config=json.loads(json.dumps(cfg.to_dict())),
                )
                checkpoint.prune(ckpt_dir, cfg.keep_checkpoints)

    if progress:
        progress.close()
    if is_main:
        final = out / "final"
        raw_model.save_pretrained(final)  # safetensors by default
        tokenizer.save_pretrained(final)
        (final / "train_config.json").write_text((out / "train_config.json").read_text())
        metrics_file.close()
    if writer:
        writer.close()
    if world > 1:
        dist.destroy_process_group()
    return {"step": step, "losses": losses, "max_steps": max_steps}


def main(argv=None) -> None:
    args = parse_args(argv)
    Path(args.output).mkdir(parents=True, exist_ok=True)
    try:
        train(args)
    except (checkpoint.CheckpointError, SchemaMismatch, FileNotFoundError) as e:
        sys.exit(f"training.run: {e}")


if __name__ == "__main__":
    main()
