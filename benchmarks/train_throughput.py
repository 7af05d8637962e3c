"""Training throughput: tokens/s of the real loop (`training.run`), and on a GPU the model FLOPs
utilisation (MFU) against the device's bf16 peak.

    python benchmarks/train_throughput.py                                  # tiny on CPU, bundled sample
    python benchmarks/train_throughput.py --config base --init random --steps 50 --data OUT/wiki_mrc
    python benchmarks/train_throughput.py --model clism                    # CLISM tiny, bundled pairs

The data are the rows of the model's data job (--model mpmr: wiki_mrc, clism: clism_pairs; the job's
bundled sample is generated when --data is not given). tokens/s counts real (non-padding) subwords of
every micro-batch over the steps after --warmup (Σ tokens ÷ Σ seconds); `tokens_per_s` and
`bare_loop_tokens_per_s` are each the best round's, picked apart (their ratio is not the overhead:
read `loop_overhead`). MFU (mPMR only: CLISM runs its encoder on
three views of a pair, a FLOP count of its own): FLOPs per token as nanoGPT's estimate_mfu, 6·N (N =
non-embedding parameters, forward and backward) + 12·L·d·T (attention scores and values, T = the mean
sequence length) + 6·d·T (the extractor's FFN(H)·Hᵀ over all token pairs).

The loop's own overhead (data streaming from Parquet, collation, logging, checkpoints, NaN checks) is
measured against a bare PyTorch loop stepping in the same process, interleaved with it step by step:
after each step of `training.run` (its `after_step` hook), the bare loop takes the same step: the run's
own initial weights (built from the same seed and its saved tokenizer), the same batch, collated
beforehand and held in memory, the same AdamW, schedule and gradient clipping, and nothing else, with
its own random streams (swapped in and out, so neither loop's dropout sees the other's draws). Both
see the same batch at each step (the same seeded stream; checked) and compute the same losses
(`same_losses`: every step's loss within 1e-4, so the two do the same arithmetic and only the loop
around it differs). A project step's time is its logged time minus the hook's.

Why interleaved: the development VM's speed drifts by a third within tens of seconds (the bare loop
alone measured 19k to 34k tokens/s in one hour). Loops run one after the other saw different machines:
the bare loop against itself, run back to back, read −15% to +2% round by round. Steps 0.1 s apart see
the same machine. `loop_overhead` is Σ project step seconds ÷ Σ bare step seconds − 1 over the
measured steps of a round, the median over --repeat rounds: periodic costs are in (the default --steps
120 holds the tiny config's checkpoint at step 100; its time falls in step 101).
`loop_overhead_per_step` is the median of the paired per-step differences, pooled over every round,
over the bare loop's median step: blind to costs paid once in many steps. `aa_overhead` and
`aa_overhead_per_step` are the same figures for two bare loops interleaved in the same way (an A/A
run, in the same process after each round): the resolution of the two figures on this machine at
this moment. `data_wait_share` is
measured directly inside the project's loop (metrics.jsonl's `data_s`, the time spent waiting for
each batch, over the steps' time; the median over rounds), the part of the overhead that grows with
the data. `every_round` lists, per round: project tokens/s, bare tokens/s, the round's overhead, the
round's A/A. A round that another job on the same cores slowed down can still read far off (−1% to
+21% seen beside a test run) where its A/A may not: read the medians. Held-out evaluation is off
(`--eval_every 0`): it is work of its own on other batches, not the loop's overhead. DataLoader
workers (`--num_workers` > 0, the base and large configs' default) would also collate while the bare
loop steps, which flatters the project's loop: a warning says so.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Dense bf16 peaks (no sparsity), FLOP/s.
PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L4": 121e12, "A10": 125e12}


class Step(NamedTuple):
    tokens: int
    rows: int
    seconds: float
    loss: float
    data_seconds: float = 0.0  # waiting for the batch (the project's loop; the bare one has it in memory)


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


def run_argv(data: str, out: Path, args) -> list[str]:
    extra = ["--init", args.init] if args.init else []
    extra += ["--batch_size", str(args.batch_size)] if args.batch_size else []
    extra += ["--num_workers", str(args.num_workers)] if args.num_workers is not None else []
    extra += ["--dropout", str(args.dropout)] if args.dropout is not None else []
    return ["--model", args.model, "--data", data, "--output", str(out), "--config", args.config,
            "--max_steps", str(args.steps), "--log_every", "1", "--grad_accum", "1", "--eval_every", "0",
            "--no_progress", "--no_tensorboard", *extra]


@contextlib.contextmanager
def own_rng(state: dict | None):
    """The block runs on `state`'s random streams (torch's, CUDA's, Python's; None: whatever they are),
    and the caller's are back afterwards."""
    from training.checkpoint import rng_state, set_rng_state
    callers = rng_state()
    if state is not None:
        set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(callers)


class BareLoop:
    """A bare PyTorch loop doing what `training.run` does in OUT: the same initial weights (built as the
    run built them, from the same seed and its saved tokenizer), the same batches, optimiser, schedule
    and clipping. Its random streams are its own (`own_rng`), so that it can step between another
    loop's steps without either changing the other's dropout."""

    def __init__(self, data: str, out: Path, args):
        import itertools

        import torch

        from training import run, run_setup
        from training.checkpoint import rng_state
        from training.registry import get_spec
        from training.tokenizer import load_tokenizer

        spec = get_spec(args.model)
        with own_rng(None):
            cfg = run.make_config(run.parse_args(run_argv(data, out, args)), spec)
            tokenizer = load_tokenizer(str(out / "tokenizer"))
            self.model = run_setup.fresh_model(spec, cfg, tokenizer)
            # Where training.run puts it (one process: cuda:0 when there is a GPU), with its bf16 autocast.
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            self.model.to(device).train()
            self.autocast = run_setup.autocast_for(device)
            stream = spec.make_dataset(cfg, data, tokenizer, 0, 1, 0)  # as training.run's, on one process
            batches = list(itertools.islice(iter(stream), args.steps))
            self.rows = [b.pop("counts")["rows"] for b in batches]
            self.batches = [{k: v.to(device) for k, v in b.items()} for b in batches]
            self.optimizer = run_setup.make_optimizer(self.model, cfg, device)
            self.scheduler = run_setup.lr_schedule(self.optimizer, cfg, args.steps)
            self.grad_clip = cfg.grad_clip or float("inf")
            torch.manual_seed(cfg.seed)  # dropout, as training.run's rank 0
            self.rng = rng_state()

    def step(self, index: int) -> Step:
        """Step `index` (0-based) on its batch, timed on its own."""
        import time

        import torch
        from training.checkpoint import rng_state

        with own_rng(self.rng):
            batch, started = self.batches[index], time.perf_counter()
            with self.autocast:
                loss, _ = self.model(**batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
            tokens, loss_value = int(batch["attention_mask"].sum()), float(loss.detach())
            seconds = time.perf_counter() - started
            self.rng = rng_state()
        return Step(tokens, self.rows[index], seconds, loss_value)


def interleaved_round(data: str, out: Path, args, with_bare: bool = True) -> tuple[list[Step], list[Step]]:
    """One `training.run` with a bare loop stepping in its `after_step` hook: each of its steps, then
    the bare loop's step on the same batch (with_bare=False: the run alone). The project's steps come
    from metrics.jsonl (logged every step: a step's time runs from the end of the previous step's
    logging to the end of its own), less the hook's time."""
    import copy
    import time

    import torch

    from training import run
    from training.registry import get_spec

    spec = get_spec(args.model)
    bare: list[Step] = []
    hook_seconds: dict[int, float] = defaultdict(float)
    loops: list[BareLoop] = []

    def after_step(model, dataset, step: int, max_steps: int) -> None:
        spec.after_step(model, dataset, step, max_steps)
        if torch.cuda.is_available():
            # The run's optimiser step may still be queued on the GPU (its loop syncs before it): finish
            # it here, in the run's time, not in the bare loop's step or the hook's time taken out.
            torch.cuda.synchronize()
        started = time.perf_counter()
        if not loops:  # before the first step: the run's tokenizer is saved by now
            loops.append(BareLoop(data, out, args))
        else:
            bare.append(loops[0].step(step - 1))
        hook_seconds[step] = time.perf_counter() - started

    shutil.rmtree(out, ignore_errors=True)
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the result's one JSON line
        timed = copy.copy(spec)
        timed.after_step = after_step  # the recipe with this one step of its own
        run.main(run_argv(data, out, args), timed if with_bare else spec)
    records = [r for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "tokens_per_s" in r]
    project = [Step(r["tokens"], r["rows"], r["tokens"] / r["tokens_per_s"] - hook_seconds[r["step"]], r["loss"],
                    r["data_s"]) for r in records]
    return project, bare


def aa_round(data: str, out: Path, args) -> tuple[list[Step], list[Step]]:
    """Two bare loops interleaved step by step, as in `interleaved_round` (OUT holds a run's tokenizer)."""
    first, second = BareLoop(data, out, args), BareLoop(data, out, args)
    pairs = [(first.step(i), second.step(i)) for i in range(len(first.batches))]
    return [a for a, _ in pairs], [b for _, b in pairs]


def workers(args) -> int:
    """The DataLoader workers the run will use: --num_workers, else the config's."""
    from training.registry import get_spec
    if args.num_workers is not None:
        return args.num_workers
    preset = get_spec(args.model).configs.get(args.config)  # an unknown --config is training.run's to refuse
    return preset.num_workers if preset else 0


def tokens_per_s(steps: list[Step]) -> float:
    # Σ tokens / Σ seconds, not a mean of per-step rates, so that slow steps weigh what they cost.
    return sum(s.tokens for s in steps) / sum(s.seconds for s in steps)


def check_same_work(project: list[Step], bare: list[Step]) -> bool:
    """The same batches (else stop: the comparison means nothing), and whether the same losses (the
    same computation: equal up to float reassociation; a difference is reported, not fatal)."""
    if [s.tokens for s in project] != [s.tokens for s in bare]:
        raise SystemExit("train_throughput: the project's and the bare loop's batches differ; "
                         "the comparison needs the same stream")
    return all(abs(p.loss - b.loss) <= 1e-4 * max(1.0, abs(p.loss)) for p, b in zip(project, bare))


def overhead(measured: list[Step], reference: list[Step]) -> float:
    return sum(s.seconds for s in measured) / sum(s.seconds for s in reference) - 1


def per_step_overhead(measured: list[list[Step]], reference: list[list[Step]]) -> float:
    """The median over every step of every round of (measured − reference) seconds for the same batch,
    over the reference's median step: robust to bursts of noise, blind to a cost paid once in many steps."""
    differences = [m.seconds - r.seconds for ms, rs in zip(measured, reference) for m, r in zip(ms, rs)]
    return statistics.median(differences) / statistics.median(r.seconds for rs in reference for r in rs)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=("mpmr", "clism"), default="mpmr",
                   help="the recipe to run (not xylent: with DRO its data stream takes feedback from its losses, "
                        "so a bare loop cannot hold its batches beforehand)")
    p.add_argument("--data", help="the model's data job's --output folder (default: its bundled sample, generated)")
    p.add_argument("--config", default="tiny", help="tiny, base, large")
    p.add_argument("--init", default=None, help="passed to training.run (e.g. 'random' for base without the hub)")
    p.add_argument("--steps", type=int, default=120,
                   help="steps per run (the default holds the tiny config's checkpoint at step 100)")
    p.add_argument("--warmup", type=int, default=10, help="first steps left out of the average")
    p.add_argument("--batch_size", type=int, default=None)
    p.add_argument("--num_workers", type=int, default=None, help="training.run --num_workers (default: the config's)")
    p.add_argument("--dropout", type=float, default=None, help="training.run --dropout (default: the config's)")
    p.add_argument("--bare", action="store_true", help="also time the bare PyTorch loop (always on for tiny)")
    p.add_argument("--repeat", type=int, default=5, help="rounds; the overheads are medians over them")
    args = p.parse_args(argv)
    if args.steps <= args.warmup:
        p.error(f"--steps {args.steps} leaves no step to measure after --warmup {args.warmup}: "
                f"give --steps above {args.warmup} or a smaller --warmup")
    with_bare = args.config == "tiny" or args.bare
    if with_bare and workers(args) > 0:
        print(f"train_throughput: with {workers(args)} DataLoader worker(s) the workers also collate while the "
              "bare loop steps, so loop_overhead flatters the project's loop (--num_workers 0 to compare)",
              file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            import importlib
            job = {"mpmr": "wiki_mrc", "clism": "clism_pairs"}[args.model]
            data = f"{tmp}/{job}"
            with contextlib.redirect_stdout(sys.stderr):
                importlib.import_module(f"pipelines.{job}").run(["--runner", "DirectRunner", "--output", data])
        out = Path(tmp) / "run"
        project, bare, aa = [], [], []
        for _ in range(max(1, args.repeat)):
            project_steps, bare_steps = interleaved_round(data, out, args, with_bare)
            project.append(project_steps)
            if with_bare:
                bare.append(bare_steps)
                aa.append(aa_round(data, out, args))
        measured = [steps[args.warmup:] for steps in project]
        best = max(map(tokens_per_s, measured))
        mean_len = sum(s.tokens for s in measured[0]) / sum(s.rows for s in measured[0])
        name, peak = device_peak()
        result = {"model": args.model, "config": args.config, "device": name, "tokens_per_s": round(best),
                  "mean_seq_len": round(mean_len, 1), "steps_measured": len(measured[0]), "rounds": len(project)}
        if peak and args.model == "mpmr":
            result["mfu"] = round(best * flops_per_token(out / "final", mean_len) / peak, 4)
        if with_bare:
            result["same_losses"] = all(check_same_work(p, b) for p, b in zip(project, bare))
            bare_measured = [steps[args.warmup:] for steps in bare]
            aa_first = [a[args.warmup:] for a, _ in aa]
            aa_second = [b[args.warmup:] for _, b in aa]
            rounds = [overhead(p, b) for p, b in zip(measured, bare_measured)]
            aa_rounds = [overhead(b, a) for a, b in zip(aa_first, aa_second)]
            result["bare_loop_tokens_per_s"] = round(max(map(tokens_per_s, bare_measured)))
            result["loop_overhead"] = round(statistics.median(rounds), 3)
            result["loop_overhead_per_step"] = round(per_step_overhead(measured, bare_measured), 3)
            result["aa_overhead"] = round(statistics.median(aa_rounds), 3)
            result["aa_overhead_per_step"] = round(per_step_overhead(aa_second, aa_first), 3)
            result["data_wait_share"] = round(statistics.median(
                sum(s.data_seconds for s in steps) / sum(s.seconds for s in steps) for steps in measured), 4)
            result["every_round"] = [[round(tokens_per_s(p)), round(tokens_per_s(b)), round(r, 3), round(a, 3)]
                                     for p, b, r, a in zip(measured, bare_measured, rounds, aa_rounds)]
        print(json.dumps(result))


if __name__ == "__main__":
    main()
