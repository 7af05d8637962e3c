"""Training throughput: tokens/s of the real loop (`training.run`), and on a GPU the model FLOPs
utilisation (MFU) against the device's bf16 peak.

    python benchmarks/train_throughput.py                                  # tiny on CPU, bundled sample
    python benchmarks/train_throughput.py --config base --init random --steps 50 --data OUT/wiki_mrc

The data are the wiki_mrc job's rows (the bundled sample is generated when --data is not given).
tokens/s counts real (non-padding) subwords of every micro-batch, averaged over the steps after
--warmup. FLOPs per token, as nanoGPT's estimate_mfu: 6·N (N = non-embedding parameters, forward and
backward) + 12·L·d·T (attention scores and values, T = the mean sequence length) + 6·d·T (the
extractor's FFN(H)·Hᵀ over all token pairs).

The loop's own overhead (data streaming from Parquet, collation, logging, checkpoints, NaN checks) is
measured against a bare PyTorch loop in the same run: the same model (the run's final weights), the
same batches collated beforehand and held in memory, the same AdamW, schedule and gradient clipping,
and nothing else. `loop_overhead` = bare tokens/s over the project's − 1, the best of --repeat
alternated rounds of each.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Dense bf16 peaks (no sparsity), FLOP/s.
PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L4": 121e12, "A10": 125e12}


def device_peak() -> tuple[str, float | None]:
    import torch
    if not torch.cuda.is_available():
        return "cpu", None
    name = torch.cuda.get_device_name()
    return name, next((peak for key, peak in PEAK_BF16.items() if key in name), None)


def flops_per_token(final: Path, mean_len: float) -> float:
    from safetensors import safe_open
    config = json.loads((final / "config.json").read_text())
    with safe_open(final / "model.safetensors", "pt") as f:
        n = sum(_numel(f.get_slice(k).get_shape()) for k in f.keys() if "embeddings" not in k)
    d, layers = config["hidden_size"], config["num_hidden_layers"]
    return 6 * n + 12 * layers * d * mean_len + 6 * d * mean_len


def _numel(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def bare_loop_tokens_per_s(final: Path, data: str, config: str, steps: int, warmup: int, batch_size: int | None) -> float:
    """Tokens/s of a bare PyTorch loop on the run's model and config (module docstring)."""
    import itertools
    import time

    import torch
    from transformers import AutoTokenizer

    from training import run
    from training.data import ParquetBatches, list_shards
    from training.models.mpmr import MPMRForWAE
    from training.recipes.mpmr import SPEC

    cfg = SPEC.configs[config].replace(**({"batch_size": batch_size} if batch_size else {}))
    tokenizer = AutoTokenizer.from_pretrained(final)
    model = MPMRForWAE.from_pretrained(final)
    model.train()
    collate = SPEC.collator(cfg, tokenizer)
    stream = ParquetBatches(list_shards(data), cfg.batch_size, collate, cfg.seed, columns=SPEC.columns,
                            shuffle_buffer=cfg.shuffle_buffer)
    batches = list(itertools.islice(iter(stream), steps))
    for b in batches:
        b.pop("counts")
    optimizer = torch.optim.AdamW(run.param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=cfg.adam_betas,
                                  eps=cfg.adam_eps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, run.lr_lambda(0, steps))
    torch.manual_seed(cfg.seed)
    tokens, started = 0, None
    for n, batch in enumerate(batches):
        if n == warmup:
            tokens, started = 0, time.perf_counter()
        loss, _ = model(**batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip or float("inf"))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        tokens += int(batch["attention_mask"].sum())
    return tokens / (time.perf_counter() - started)


def project_loop_tokens_per_s(data: str, out: Path, args) -> tuple[float, float]:
    """Tokens/s of `training.run` after --warmup steps, and the mean subwords per row."""
    from training import run

    shutil.rmtree(out, ignore_errors=True)
    extra = ["--init", args.init] if args.init else []
    extra += ["--batch_size", str(args.batch_size)] if args.batch_size else []
    extra += ["--num_workers", str(args.num_workers)] if args.num_workers is not None else []
    run.main(["--model", "mpmr", "--data", data, "--output", str(out), "--config", args.config,
              "--max_steps", str(args.steps), "--log_every", "1", "--grad_accum", "1",
              "--no_progress", "--no_tensorboard", *extra])
    records = [r for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "tokens_per_s" in r]
    records = records[args.warmup:]
    # Σ tokens / Σ seconds, not a mean of per-step rates, so that slow steps weigh what they cost.
    tokens_per_s = sum(r["tokens"] for r in records) / sum(r["tokens"] / r["tokens_per_s"] for r in records)
    mean_len = sum(r["tokens"] / r["rows"] for r in records) / len(records)
    return tokens_per_s, mean_len


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="a wiki_mrc --output folder (default: the bundled sample, generated)")
    p.add_argument("--config", default="tiny", help="tiny, base, large")
    p.add_argument("--init", default=None, help="passed to training.run (e.g. 'random' for base without the hub)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="first steps left out of the average")
    p.add_argument("--batch_size", type=int, default=None)
    p.add_argument("--num_workers", type=int, default=None, help="training.run --num_workers (default: the config's)")
    p.add_argument("--bare", action="store_true", help="also time the bare PyTorch loop (always on for tiny)")
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds of (project loop, bare loop), alternated; the best of each is compared (a "
                        "shared machine's noise only ever slows a run down: one round each varied by -6%% "
                        "to +49%% in overhead on the development VM)")
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            from pipelines import wiki_mrc
            data = f"{tmp}/wiki_mrc"
            wiki_mrc.run(["--runner", "DirectRunner", "--output", data])
        out = Path(tmp) / "run"
        with_bare = args.config == "tiny" or args.bare
        project, bare = [], []
        for _ in range(max(1, args.repeat)):
            tokens_per_s, mean_len = project_loop_tokens_per_s(data, out, args)
            project.append(tokens_per_s)
            if with_bare:
                bare.append(bare_loop_tokens_per_s(out / "final", data, args.config, args.steps, args.warmup,
                                                   args.batch_size))
        name, peak = device_peak()
        result = {"config": args.config, "device": name, "tokens_per_s": round(max(project)),
                  "mean_seq_len": round(mean_len, 1), "steps_measured": args.steps - args.warmup,
                  "rounds": len(project)}
        if peak:
            result["mfu"] = round(max(project) * flops_per_token(out / "final", mean_len) / peak, 4)
        if with_bare:
            result["bare_loop_tokens_per_s"] = round(max(bare))
            result["loop_overhead"] = round(max(bare) / max(project) - 1, 3)
            result["every_round"] = [[round(a), round(b)] for a, b in zip(project, bare)]
        print(json.dumps(result))


if __name__ == "__main__":
    main()
