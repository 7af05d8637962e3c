"""XY-LENT throughput: tokens/s of the combined ELECTRA step (generator MLM + sampling + discriminator
RTD, backward, clipping, AdamW), and on a GPU the model FLOPs utilisation (MFU) against the device's
bf16 peak.

    python benchmarks/xylent_throughput.py                                   # tiny on CPU, bundled sample
    python benchmarks/xylent_throughput.py --config base --steps 40          # on a GPU: base, 500K vocabulary
    python benchmarks/xylent_throughput.py --config base --data OUT/xy_corpus --batch_size 64

Batches come from the real stream (training/data/xylent.py: MRTD and TRTD alternating, TRTD bucketed
by length); without --data the bundled sample is run through pipelines.vocap and pipelines.xy_corpus
first. tokens/s counts real (non-padding) tokens, over the steps after --warmup, per task and both
together. FLOPs per token: training/models/xylent.py `flops_per_token` (nanoGPT's 6N + 12·L·d·T for
G and D, T the batch's padded length, plus G's output layer on the masked share of tokens);
MFU = FLOPs done / elapsed / peak.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Dense bf16 peaks (no sparsity), FLOP/s; H100 = SXM.
PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L4": 121e12, "A10": 125e12}
PAPER_VOCAB = 500_000  # XY-LENT Appendix A: "a vocabulary size of 500K"


def device_peak(device) -> tuple[str, float | None]:
    import torch
    if device.type != "cuda":
        return "cpu", None
    name = torch.cuda.get_device_name(device)
    return name, next((peak for key, peak in PEAK_BF16.items() if key in name), None)


def sample_data(tmp: str) -> str:
    from pipelines import vocap, xy_corpus
    vocap.run(["--output", f"{tmp}/vocap"])
    xy_corpus.run(["--vocab", f"{tmp}/vocap/spm.model", "--output", f"{tmp}/xy"])
    return f"{tmp}/xy"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="an xy_corpus --output folder (default: the bundled sample, generated)")
    p.add_argument("--config", default="tiny", help="tiny, base, large (training/recipes/xylent.py)")
    p.add_argument("--steps", type=int, default=30, help="optimiser steps measured after --warmup (one batch each)")
    p.add_argument("--warmup", type=int, default=6, help="steps run first and left out")
    p.add_argument("--batch_size", type=int, default=None, help="MRTD rows per batch (default: the config's)")
    p.add_argument("--vocab_size", type=int, default=None,
                   help="model vocabulary (default: the data's for tiny, the paper's 500K for base/large)")
    p.add_argument("--device", default=None, help="cpu, cuda (default: cuda when there is one)")
    p.add_argument("--compile", action="store_true", help="torch.compile the generator and discriminator encoders")
    args = p.parse_args(argv)

    import torch

    from training.models.xylent import XYLentForPreTraining, flops_per_token
    from training.recipes import xylent as recipe
    from training.run_setup import autocast_for

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cfg = recipe.CONFIGS[args.config]
    if args.batch_size:
        cfg = cfg.replace(batch_size=args.batch_size)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or sample_data(tmp)
        tokenizer = recipe.make_tokenizer(cfg.replace(init=None), data)
        config = recipe.model_config(cfg, tokenizer)
        config.vocab_size = args.vocab_size or (len(tokenizer) if args.config == "tiny" else PAPER_VOCAB)
        model = XYLentForPreTraining(config).to(device)
        stream = iter(recipe.make_dataset(cfg, data, tokenizer, 0, 1, 0))
        batches = []
        for _ in range(args.warmup + args.steps):
            batch = next(stream)
            batch.pop("counts")
            batches.append({k: v.to(device) for k, v in batch.items()})
    if args.compile:
        model.discriminator.xylent = torch.compile(model.discriminator.xylent, dynamic=True)
        model.generator.xylent = torch.compile(model.generator.xylent, dynamic=True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=cfg.adam_betas, eps=cfg.adam_eps,
                                  fused=device.type == "cuda")
    autocast = autocast_for(device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    per_task = {"mrtd": [0, 0.0, 0.0], "trtd": [0, 0.0, 0.0]}  # tokens, seconds, FLOPs
    gen_losses, disc_losses = [], []
    for n, batch in enumerate(batches):
        sync()
        start = time.perf_counter()
        with autocast:
            loss, logs = model(**batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip or float("inf"))
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync()
        elapsed = time.perf_counter() - start
        gen_losses.append(float(logs["gen_loss"]))
        disc_losses.append(float(logs["disc_loss"]))
        if n < args.warmup:
            continue
        task = "trtd" if int(batch["pair_index"][0]) >= 0 else "mrtd"
        b, t = batch["input_ids"].shape
        per_task[task][0] += int(batch["attention_mask"].sum())
        per_task[task][1] += elapsed
        # FLOPs are spent on padded positions too: count them at the batch's padded length
        per_task[task][2] += flops_per_token(config, t) * b * t

    name, peak = device_peak(device)
    tokens = sum(v[0] for v in per_task.values())
    seconds = sum(v[1] for v in per_task.values())
    flops = sum(v[2] for v in per_task.values())
    result = {"config": args.config, "device": name, "vocab_size": config.vocab_size,
              "params_discriminator": sum(p.numel() for p in model.discriminator.parameters()),
              "params_generator": sum(p.numel() for p in model.generator.parameters()),
              "steps_measured": args.steps, "tokens_per_s": round(tokens / seconds),
              **{f"{k}_tokens_per_s": round(v[0] / v[1]) for k, v in per_task.items() if v[1]},
              "gen_loss_first_last": [round(gen_losses[0], 3), round(gen_losses[-1], 3)],
              "disc_loss_first_last": [round(disc_losses[0], 3), round(disc_losses[-1], 3)]}
    if peak:
        result["mfu"] = round(flops / seconds / peak, 4)
        result.update({f"{k}_mfu": round(v[2] / v[1] / peak, 4) for k, v in per_task.items() if v[1]})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
