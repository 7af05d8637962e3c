"""What a training run is built from before its first step: the process's device and rank, the initial
model, AdamW, the learning-rate schedule and the precision. training.run, the fine-tuning loops and
benchmarks/train_throughput.py's bare loop all call these, so none can drift from the others."""
from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
import torch.distributed as dist

from training.config import TrainConfig
from training.new_parameters import NEW_PARAMETERS

if TYPE_CHECKING:
    from training.registry import ModelSpec


def setup_distributed(device_flag: str | None) -> tuple[int, int, torch.device]:
    """(rank, world size, device) from torchrun's environment; the process group is joined when world > 1."""
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


def autocast_for(device: torch.device):
    """bf16 autocast on CUDA; on the CPU, full precision."""
    return torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()


def fresh_model(spec: ModelSpec, cfg: TrainConfig, tokenizer) -> torch.nn.Module:
    """A new run's initial model: --init's backbone, else random weights of the config's shape, seeded
    by --seed (the same weights on every rank, and in benchmarks/train_throughput.py's bare loop)."""
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    return spec.build_pretrained(cfg, tokenizer, cfg.init) if cfg.init else spec.build_random(cfg, tokenizer)


def param_groups(model: torch.nn.Module, weight_decay: float, new_params_lr: float | None = None) -> list[dict]:
    """AdamW's groups: biases and LayerNorm weights are not decayed (RoBERTa/XLM-R practice); with
    `new_params_lr`, the parameters the model marks as new get that peak rate (the schedule scales it
    as the others'). Empty groups are left out; the order is fixed, so a checkpoint's state fits."""
    new = getattr(model, NEW_PARAMETERS, frozenset()) if new_params_lr is not None else frozenset()
    groups = {(is_new, decays): [] for is_new in (False, True) for decays in (True, False)}
    for name, param in model.named_parameters():
        groups[(name in new, param.ndim >= 2)].append(param)
    out = []
    for (is_new, decays), params in groups.items():
        if params:
            group = {"params": params, "weight_decay": weight_decay if decays else 0.0}
            if is_new:
                group["lr"] = new_params_lr
            out.append(group)
    return out


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig, device: torch.device) -> torch.optim.AdamW:
    # Fused on the CPU too, as in fine-tuning (training/finetune_loop.py): the foreach form holds
    # temporaries the size of all parameters, most of them a 250k-piece embedding at XLM-R's sizes.
    return torch.optim.AdamW(param_groups(model, cfg.weight_decay, cfg.new_params_lr), lr=cfg.lr,
                             betas=cfg.adam_betas, eps=cfg.adam_eps, fused=device.type in ("cuda", "cpu"))


def lr_lambda(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return factor


def lr_schedule(optimizer: torch.optim.Optimizer, cfg: TrainConfig, max_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up (--warmup_steps, else --warmup_ratio of the steps), then linear decay to 0."""
    warmup = cfg.warmup_steps if cfg.warmup_steps is not None else int(cfg.warmup_ratio * max_steps)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(warmup, max_steps))
