"""CLISM pre-training throughput: pairs/s of one optimiser step (forward of the joint input and, with
CACR, of the source alone; the three losses; backward; AdamW), and of the collator on its own.

    python benchmarks/clism_throughput.py                                    # tiny on CPU, bundled sample
    python benchmarks/clism_throughput.py --config base --vocab 250003 --batch_size 8 --steps 6
    python benchmarks/clism_throughput.py --config base --vocab 250003 --device cuda     # a lent GPU

Rows are the clism_pairs job's (the bundled sample is generated when --data is not given). Weights are
random in the config's shape (no hub); --vocab pads the embedding matrix and the tied LM decoder to a
real vocabulary size (XLM-R with [QUE]: 250003), which is what the AdamW step and the LM head cost.
Batches are collated once beforehand, so step timings hold no data loading; the collator is timed
apart. The median step time is reported (the CPU may be shared). Variants: full (Eq. 9), no_cacr (one pass), no_mlm, clism (CLISM alone).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

VARIANTS = {"full": {}, "no_cacr": {"no_cacr": True}, "no_mlm": {"no_mlm": True},
            "clism": {"no_cacr": True, "no_mlm": True}}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="a clism_pairs --output folder (default: the bundled sample, generated)")
    p.add_argument("--config", default="tiny", choices=["tiny", "base", "large"], help="model shape")
    p.add_argument("--batch_size", type=int, default=None, help="pairs per step (default: the config's; base 64)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per variant")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--vocab", type=int, default=None, help="embedding rows (default: the tiny tokenizer's)")
    p.add_argument("--variants", default="full,no_cacr,clism", help=f"comma-separated, from {','.join(VARIANTS)}")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when there is one)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = p.parse_args(argv)

    import pyarrow.parquet as pq
    import torch

    from training.data import list_shards
    from training.data.clism import add_que_token
    from training.models.clism import CLISMForPreTraining
    from training.recipes.clism import CONFIGS, SPEC, model_config
    from training.run_setup import autocast_for, param_groups
    from training.tokenizer import train_tiny_tokenizer

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            from pipelines import clism_pairs
            data = f"{tmp}/clism_pairs"
            clism_pairs.run(["--runner", "DirectRunner", "--output", data])
        rows = [r for f in list_shards(data) for r in pq.read_table(f).to_pylist()]
    tokenizer = add_que_token(train_tiny_tokenizer((w for r in rows for w in (r["src_words"], r["tgt_words"])), 2000))

    for name in args.variants.split(","):
        cfg = CONFIGS[args.config].replace(init=None, dropout=0.1 if args.config != "tiny" else 0.0, **VARIANTS[name])
        batch_size = args.batch_size or cfg.batch_size
        collate = SPEC.collator(cfg, tokenizer)
        need = batch_size * (args.steps + args.warmup)
        stream = [rows[k % len(rows)] for k in range(need)]
        start = time.perf_counter()
        batches = [collate(stream[k: k + batch_size]) for k in range(0, need, batch_size)]
        collate_pairs_per_s = need / (time.perf_counter() - start)
        for b in batches:
            b.pop("counts")

        torch.manual_seed(0)
        config = model_config(cfg, tokenizer)
        config.vocab_size = max(config.vocab_size, args.vocab or 0)
        model = CLISMForPreTraining(config).to(device)
        optimizer = torch.optim.AdamW(param_groups(model, cfg.weight_decay), lr=1e-5, fused=device.type == "cuda")
        autocast = autocast_for(device)
        times, tokens = [], []
        for k, batch in enumerate(batches):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            batch = {key: v.to(device, non_blocking=True) for key, v in batch.items()}
            with autocast:
                loss, _ = model(**batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if k >= args.warmup:
                times.append(time.perf_counter() - start)
                tokens.append(int(batch["attention_mask"].sum()))
        # The median step: other processes sharing the CPU make single steps slow at random, and the
        # median is what an uncontended run sustains; the mean is printed beside it.
        median = statistics.median(times)
        timed = batches[args.warmup:]
        print(json.dumps({
            "variant": name, "config": args.config, "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
            "threads": torch.get_num_threads(), "params_M": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
            "batch_size": batch_size, "steps": len(timed),
            "mean_joint_len": round(sum(tokens) / (len(tokens) * batch_size), 1),
            "pairs_per_s": round(batch_size / median, 2), "step_ms_median": round(1000 * median, 1),
            "pairs_per_s_mean": round(batch_size * len(times) / sum(times), 2),
            "joint_tokens_per_s": round(statistics.median(t / s for t, s in zip(tokens, times))),
            "collate_pairs_per_s": round(collate_pairs_per_s),
        }), flush=True)


if __name__ == "__main__":
    main()
