"""Train a model on a data job's Parquet: one loop for every model (docs/design.md §3; nanoGPT train.py).

    python -m training.run --model mpmr --data output/wiki_mrc --output runs/tiny --config tiny --max_steps 50
    python -m training.run --model mpmr --data /data/wiki_mrc --output runs/base --config base --init xlm-roberta-base
    torchrun --nproc_per_node 4 -m training.run --model mpmr --data ... --config base     # DDP

OUTPUT receives checkpoints/step-*.pt (resume with --resume), tokenizer/, metrics.jsonl,
tensorboard/, final/ (save_pretrained: safetensors, config, tokenizer) and, with held-out data
(--eval_data, or --data's test split), best/ by --select_by. An OUTPUT holding another run is refused
unless --resume or --overwrite.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from corpora.outputs.manifests import TRAINING_RUN, ManifestError
from corpora.schemas import SchemaMismatch
from training import atomic_files, checkpoint, data_fingerprint, eval_overlap, evaluation, init_folder, output_guard, run_folder
from training.checkpoint_selection import Selection
from training.config import TrainConfig
from training.data import DataError, make_loader
from training.downstream import Downstream, DownstreamError, metric_names, parse_downstream
from training.errors import EXIT_INTERRUPTED, Interrupted, NonFiniteError, OutputError
from training.evaluation import EvalDataError
from training.run_folder import RunFolderError
from training.registry import MODEL_NAMES, ModelSpec, get_spec
from training.remote_code import RemoteCodeRefused
from training.run_log import RunLog, truncate_metrics
from training.new_parameters import NEW_PARAMETERS, mark_new_parameters
from training.run_setup import fresh_model, lr_schedule, make_optimizer, setup_distributed
from training.training_loop import Position, TrainingLoop, last_checkpoint_step, saving

# Flags that override a field of the chosen config; None = keep the config's value.
OVERRIDES = {
    "init": (str, ("backbone: a from_pretrained name or local path, or 'random' for a random encoder of the "
                   "config's shape with a SentencePiece tokenizer trained on the data (default: the config's; "
                   "tiny: random)")),
    "max_steps": (int, "optimiser steps (mPMR base/large: the paper's 250K/100K; tiny: --epochs over the data)"),
    "epochs": (float, "epochs over the data when the config sets no --max_steps"),
    "batch_size": (int, "micro-batch rows per process"),
    "grad_accum": (int, "micro-batches per optimiser step (effective batch = batch_size x grad_accum x processes)"),
    "lr": (float, "peak learning rate (paper: 1e-5)"),
    "new_params_lr": (float, ("peak learning rate of the parameters --init did not supply (new heads, the XY-LENT "
                              "generator's MLM head and relative position tables); default: --lr")),
    "weight_decay": (float, "AdamW weight decay (not on biases and LayerNorm)"),
    "warmup_ratio": (float, "share of the steps spent warming up linearly (mPMR: 0.06); linear decay after"),
    "warmup_steps": (int, "warm-up steps; overrides --warmup_ratio when given (CLISM: 1500)"),
    "adam_eps": (float, "Adam epsilon"),
    "grad_clip": (float, "clip the global gradient norm to this (0: off)"),
    "dropout": (float, "dropout in the encoder and the extractor"),
    "max_seq_len": (int, "total subwords (paper: 512)"),
    "shuffle_buffer": (int, "rows in the shuffle buffer of each data slot"),
    "num_workers": (int, "DataLoader worker processes per rank"),
    "log_every": (int, "steps between metrics lines"),
    "save_every": (int, "steps between checkpoints (one is also written at the end)"),
    "keep_checkpoints": (int, "checkpoints kept in OUTPUT/checkpoints"),
    "seed": (int, "seed of the data order, initialisation and dropout (docs/design.md §6)"),
    "eval_every": (int, "steps between held-out evaluations (0: none); one also runs before the first step and at "
                        "the last (mpmr tiny: 50, otherwise 1000)"),
    "eval_batches": (int, "held-out batches per evaluation, split over the processes (mpmr tiny: 20, otherwise 50)"),
    "max_nonfinite_skips": (int, ("optimiser steps with a NaN/inf loss or gradient norm that are skipped (no update) "
                                  "before the run stops with an error (default 0: stop at the first)")),
    "no_word_spacing": (bool, ("ignore the rows' space flags and place spaces between words by the script rule, "
                               "as for data written before the flags (an ablation)")),
    "trust_remote_code": (bool, ("let --init run the Python code it ships (an auto_map in its config); off: such a "
                                 "model is refused. The project's own saved models never need it")),
}


# How each model's data job makes a test split, for the messages about missing held-out data (only
# wiki_mrc has one; clism_pairs and xy_corpus rows are held out with --eval_data).
TEST_SPLIT_HINT = {"mpmr": ", or make the data with a test split (wiki_mrc --test_entities N)"}


def build_parser(spec: ModelSpec | None = None) -> argparse.ArgumentParser:
    from corpora.cli_flags import CommandParser  # one-line errors naming the nearest flag

    p = CommandParser(
        prog="python -m training.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Model-specific flags are listed by `python -m training.run --model NAME --help`.")
    p.add_argument("--model", required=True, choices=MODEL_NAMES, help="which model to train")
    p.add_argument("--data", required=True, metavar="DIR",
                   help="the data job's --output (or its data/ folder) holding train-*.parquet shards")
    p.add_argument("--output", default="./output/train", metavar="DIR", help="run folder (default: ./output/train)")
    p.add_argument("--config", default="base", choices=sorted(spec.configs) if spec else None,
                   help="tiny (CPU, random), base, large")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in OUTPUT from its latest checkpoints/step-*.pt (same model and config; "
                        "fresh start if it has none)")
    p.add_argument("--overwrite", action="store_true",
                   help="clear the run OUTPUT holds (its checkpoints, metrics, final/, best/ ...; nothing else) and "
                        "start again. Without it, or --resume, an OUTPUT holding a run is refused")
    p.add_argument("--allow_data_change", action="store_true",
                   help="let --resume continue on data that differs from what the run started on (its files, "
                        "sizes or checksums, recorded in OUTPUT/data_fingerprint.json); without it such a resume is "
                        "refused")
    p.add_argument("--eval_data", metavar="DIR",
                   help="held-out data: a data job's --output (its test-* split, else its train-* shards). Default: "
                        "--data's test-* split when it has one (wiki_mrc --test_entities N); none: no evaluation")
    p.add_argument("--select_by", metavar="METRIC",
                   help="held-out metric that picks OUTPUT/best/ (optionally METRIC/LANG); higher is better, *loss "
                        "lower. Default: downstream_avg with --downstream, else mpmr top1_span_f1, clism que_em, "
                        "xylent disc_f1 (docs/training.md)")
    p.add_argument("--downstream", action="append", metavar="FINETUNE_FLAGS",
                   help="repeatable: training.finetune flags without --init/--output, e.g. \"--task squad --train "
                        "en.json --eval de.json --max_steps 300\"; at every held-out pass the model is fine-tuned "
                        "and scored on each (F1, or accuracy for pair), logged as eval/downstream/TASK and their "
                        "mean eval/downstream_avg, which then picks best/ (the mPMR paper's rule: the average of "
                        "XQuAD, CoNLL and PAWS-X). Costs a fine-tuning run per task per pass (training/downstream.py)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when there is one)")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.add_argument("--no_tensorboard", action="store_true", help="no TensorBoard events")
    flags = {**OVERRIDES, **(spec.extra_flags if spec else {})}
    for name, (kind, help_text) in flags.items():
        if kind is bool:  # an on/off switch: `--no_cacr`, nothing after it
            p.add_argument(f"--{name}", action="store_true", default=None, help=help_text)
        else:
            p.add_argument(f"--{name}", type=kind, default=None, help=help_text)
    return p


def parse_args(argv=None) -> argparse.Namespace:
    # Two passes: the model named by --model brings its own configs and flags.
    first = argparse.ArgumentParser(prog="python -m training.run", add_help=False)
    first.add_argument("--model", choices=MODEL_NAMES)
    known, _ = first.parse_known_args(argv)
    return build_parser(get_spec(known.model) if known.model else None).parse_args(argv)


def make_config(args: argparse.Namespace, spec: ModelSpec | None = None) -> TrainConfig:
    spec = spec or get_spec(args.model)
    flags = {**OVERRIDES, **spec.extra_flags}
    changes = {k: getattr(args, k) for k in flags if getattr(args, k, None) is not None}
    cfg = spec.configs[args.config].replace(**changes)
    # --init random / none: no backbone, the config's shape with random weights.
    return cfg.replace(init=None) if cfg.init in ("random", "none") else cfg


def check_lengths(spec: ModelSpec, cfg: TrainConfig) -> None:
    """--max_seq_len too small for what a row must hold: one line with the minimum, before any work."""
    minimum, why = spec.min_seq_len(cfg)
    if cfg.max_seq_len < minimum:
        raise RunFolderError(f"--max_seq_len {cfg.max_seq_len}: too small; the minimum is {minimum} ({why})")


def warn_of_eval_overlap(data: str, subfolders: tuple[str, ...], eval_files: list[list[Path]], where: str) -> None:
    for subfolder, files in zip(subfolders, eval_files):
        warning = eval_overlap.overlap_warning(eval_overlap.training_files(data, subfolder), files, where)
        if warning:
            print(warning, file=sys.stderr)


def train(args: argparse.Namespace, spec: ModelSpec | None = None) -> dict:
    """One training run. `spec`: a ModelSpec to use instead of the registered `--model`'s, e.g. the same
    recipe with a hook of its own (benchmarks/train_throughput.py steps a bare loop in `after_step`).

    Rank 0 holds the --output's lock for the whole run: a second writer is refused, naming this one.
    Ctrl-C raises Interrupted (the step reached, and the step --resume continues from)."""
    spec = spec or get_spec(args.model)
    cfg = make_config(args, spec)
    check_lengths(spec, cfg)
    if cfg.init:
        cfg = cfg.replace(init=init_folder.resolve(cfg.init, "training.run"))
    rank, world, device = setup_distributed(args.device)
    out = Path(args.output)
    held = None
    if rank == 0:
        output_guard.refuse_other_kind(out, TRAINING_RUN)
        if out.exists() and not out.is_dir():
            raise RunFolderError(f"--output {out}: a file, not a folder")
        held = output_guard.lock(out, output_guard.command_line("python -m training.run"))
    reached = {"step": 0}
    try:
        if rank == 0:
            output_guard.check_writable(out)
        return _train(args, spec, cfg, rank, world, device, reached)
    except KeyboardInterrupt:
        raise Interrupted(reached["step"], last_checkpoint_step(out / "checkpoints")) from None
    finally:
        if held is not None:
            held.release()


def _train(args: argparse.Namespace, spec: ModelSpec, cfg: TrainConfig, rank: int, world: int,
           device: torch.device, reached: dict) -> dict:
    is_main = rank == 0
    if args.no_progress:  # transformers' and the hub's own bars too (save_pretrained's "Writing model shards")
        from huggingface_hub.utils import disable_progress_bars
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
        disable_progress_bars()
    out = Path(args.output)
    plan = check_run(args, spec, cfg, out)
    if is_main and plan.eval_files is not None:
        warn_of_eval_overlap(args.data, getattr(evaluation.EVALUATORS[args.model], "subfolders", ("",)), *plan.eval_files)
    if world > 1:
        dist.barrier()
    if is_main:
        prepare_folder(args, out)
    if world > 1:
        dist.barrier()
    state = resume_state(args, out, is_main)
    if cfg.init and state is None:
        run_folder.check_init_available(cfg.init)
    tokenizer = run_tokenizer(args, spec, cfg, out, is_main, world)
    model, raw_model = build_model(spec, cfg, state, tokenizer, device, world)
    steps_per_epoch = max(1, math.ceil(plan.total_rows / (cfg.batch_size * cfg.grad_accum * world)))
    max_steps = cfg.max_steps or max(1, round(cfg.epochs * steps_per_epoch))
    if is_main and cfg.new_params_lr is not None and not getattr(raw_model, NEW_PARAMETERS, None):
        print(f"--new_params_lr: no parameter is new here (--init {cfg.init} supplied all of them, or none); "
              "all train at --lr", file=sys.stderr)
    optimizer = make_optimizer(raw_model, cfg, device)
    scheduler = lr_schedule(optimizer, cfg, max_steps)
    position = restore_position(state, optimizer, scheduler, out, rank, world, cfg.seed)
    held_out, downstream, selection = make_evaluation(args, spec, cfg, plan, state, tokenizer, out, rank, world, device)
    dataset = spec.make_dataset(cfg, args.data, tokenizer, rank, world, position.batches)
    spec.after_step(raw_model, dataset, position.step, max_steps)
    batch_iter = iter(make_loader(dataset, cfg.num_workers))
    log = RunLog(out, is_main, tensorboard=not args.no_tensorboard, progress=not args.no_progress,
                 total=max_steps, initial=position.step, desc=f"{args.model} {args.config}")
    if is_main:
        with saving(out / "train_config.json"):
            atomic_files.write_text(out / "train_config.json",
                                    json.dumps({**cfg.to_dict(), "max_steps": max_steps, "world_size": world}, indent=2))
    loop = TrainingLoop(model_name=args.model, spec=spec, cfg=cfg, out=out, model=model, raw_model=raw_model,
                        tokenizer=tokenizer, optimizer=optimizer, scheduler=scheduler, batch_iter=batch_iter,
                        dataset=dataset, max_steps=max_steps, position=position, rank=rank, world=world,
                        device=device, log=log, held_out=held_out, downstream=downstream, selection=selection,
                        reached=reached)
    del model, batch_iter  # the loop holds the only references: it frees the DDP wrapper at the end
    return loop.run()


# ---- the steps before the first optimiser step ----

@dataclass
class Plan:
    """What the read-only checks found: the data's rows, the held-out files, the selection rule."""
    total_rows: int
    eval_files: tuple | None
    downstream_tasks: list
    select_by: str


def check_run(args: argparse.Namespace, spec: ModelSpec, cfg: TrainConfig, out: Path) -> Plan:
    """Read-only checks on every rank, before rank 0 writes anything: runs never mix, the data is for
    this model and readable, the held-out data and the selection rule make sense."""
    run_folder.check_output(out, args.model, args.config, cfg.to_dict(), args.resume, args.overwrite)
    run_folder.check_data_is_for(args.model, args.data)
    total_rows = spec.check_data(cfg, args.data)
    subfolders = getattr(evaluation.EVALUATORS[args.model], "subfolders", ("",))
    eval_files = evaluation.find_eval_files(args.data, args.eval_data, subfolders) if cfg.eval_every > 0 else None
    if eval_files is not None and args.eval_data:
        spec.check_eval_data(cfg, args.data, args.eval_data)
    downstream_tasks = parse_downstream(args.downstream)
    if downstream_tasks and cfg.eval_every <= 0:
        raise DownstreamError("--downstream: runs at every held-out pass, and --eval_every is 0; give --eval_every N")
    select_by = args.select_by or ("downstream_avg" if downstream_tasks else evaluation.EVALUATORS[args.model].default_select)
    evaluation.check_select_by(args.model, select_by, metric_names(downstream_tasks))
    if args.select_by and eval_files is None and select_by not in metric_names(downstream_tasks):
        raise EvalDataError(f"--select_by {args.select_by}: no held-out data ({'--eval_every 0' if cfg.eval_every <= 0 else f'no test-*.parquet in --data {args.data}'}); "
                            f"pass --eval_data DIR{TEST_SPLIT_HINT.get(args.model, '')}")
    return Plan(total_rows, eval_files, downstream_tasks, select_by)


def prepare_folder(args: argparse.Namespace, out: Path) -> None:
    """Rank 0: the data's fingerprint checked against the run's (--resume), --overwrite, an earlier
    run's unfinished temporaries removed, the folder marked and the fingerprint recorded."""
    inputs = {"data": data_fingerprint.fingerprint(args.data)}
    if args.eval_data:
        inputs["eval_data"] = data_fingerprint.fingerprint(args.eval_data)
    changed = data_fingerprint.changes(out, inputs) if args.resume else []
    if changed and not args.allow_data_change:
        raise RunFolderError(f"--resume: the data differs from what the run in {out} started on "
                             f"({'; '.join(changed)}); resume on the same data, or pass --allow_data_change")
    if changed:
        print(f"--allow_data_change: continuing on changed data ({'; '.join(changed)})", file=sys.stderr)
    if args.overwrite:
        removed = run_folder.clear_run(out)
        if removed:
            print(f"--overwrite: removed {', '.join(removed)} from {out}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    left = atomic_files.clear_temporaries(out)
    if left:
        print(f"{out}: removed {len(left)} unfinished file(s) of an earlier run ({', '.join(left[:3])})", file=sys.stderr)
    run_folder.mark(out, args.model, args.config, args.resume)
    data_fingerprint.record(out, inputs)


def resume_state(args: argparse.Namespace, out: Path, is_main: bool) -> dict | None:
    """--resume: the newest good checkpoint (None: start fresh); the metrics of later steps dropped."""
    if not args.resume:
        return None
    ckpt_dir = out / "checkpoints"
    state = checkpoint.load_latest(ckpt_dir, is_main)
    if state is not None and state["model_name"] != args.model:
        raise checkpoint.CheckpointError(f"{ckpt_dir}: a --model {state['model_name']} checkpoint, not {args.model}")
    if state is None and is_main:
        print(f"--resume: no checkpoint in {ckpt_dir}; starting fresh", file=sys.stderr)
    if is_main:
        truncate_metrics(out / "metrics.jsonl", state["step"] if state else -1)  # fresh: step 0 logged again
    return state


def run_tokenizer(args: argparse.Namespace, spec: ModelSpec, cfg: TrainConfig, out: Path, is_main: bool, world: int):
    """The tokenizer is kept in OUTPUT/tokenizer so that a resumed run never retrains or downloads it,
    and every run, fresh or resumed, on every rank, uses that saved copy: the very same tokenizer."""
    tok_dir = out / "tokenizer"
    if not (tok_dir / "tokenizer_config.json").exists():
        if is_main:
            tokenizer = spec.prepare_tokenizer(spec.make_tokenizer(cfg, args.data))
            # In one rename: a reader (another rank, a resumed run) never finds half a tokenizer.
            with atomic_files.replacing_folder(tok_dir) as tmp, saving(tok_dir):
                tokenizer.save_pretrained(tmp)
        if world > 1:
            dist.barrier()
    return run_folder.load_run_tokenizer(tok_dir, cfg.trust_remote_code)


def build_model(spec: ModelSpec, cfg: TrainConfig, state: dict | None, tokenizer, device: torch.device, world: int):
    """(the model to step, wrapped in DDP with several processes; the model itself)."""
    if state is not None:
        # The random streams the weights were built with do not matter: the checkpoint's own are
        # restored later, before any draw that shapes training.
        model = spec.from_config(state["model_config"])
        model.load_state_dict(state["model"])
        mark_new_parameters(model, state.get("new_parameters", ()))
    else:
        model = fresh_model(spec, cfg, tokenizer)
    model.to(device)
    if world > 1:
        return torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None), model
    return model, model


def restore_position(state: dict | None, optimizer, scheduler, out: Path, rank: int, world: int, seed: int) -> Position:
    """The checkpoint's optimiser, schedule, position and this rank's RNG; a fresh run's seeded RNG."""
    if state is None:
        torch.manual_seed(seed + rank)  # dropout differs across ranks, as their data does
        return Position()
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    if state["world_size"] != world:
        # The data split and the per-rank RNG depend on the number of processes.
        raise checkpoint.CheckpointError(f"{out / 'checkpoints'}: written by {state['world_size']} processes, resumed "
                                         f"with {world}; resume with the same number")
    checkpoint.set_rng_state(state["rng"][rank])
    return Position(step=state["step"], batches=state["batches"], skipped=state.get("nonfinite_skips", 0))


def make_evaluation(args: argparse.Namespace, spec: ModelSpec, cfg: TrainConfig, plan: Plan, state: dict | None,
                    tokenizer, out: Path, rank: int, world: int, device: torch.device):
    """(held-out passes, downstream fine-tuning, the best/ selection), each None when not asked for."""
    is_main = rank == 0
    held_out, selection = None, None
    downstream = Downstream(plan.downstream_tasks, out / "downstream", args.device) if plan.downstream_tasks else None
    if plan.eval_files is not None or downstream is not None:
        selection = Selection(plan.select_by, state.get("best") if state else None)
    if plan.eval_files is not None:
        held_out = evaluation.HeldOut(args.model, spec, cfg, tokenizer, *plan.eval_files, rank, world, device)
        if is_main:
            print(f"held-out evaluation: {held_out.total_rows} rows in {held_out.total_batches} batches of "
                  f"{held_out.description}, every {cfg.eval_every} steps; {out / 'best'} by {plan.select_by}",
                  file=sys.stderr)
    if downstream is not None and is_main:
        print(f"downstream evaluation every {cfg.eval_every} steps: {', '.join(t.label for t in downstream.tasks)} "
              f"(training.finetune runs under {out / 'downstream'}); {out / 'best'} by {plan.select_by}", file=sys.stderr)
    if plan.eval_files is None and is_main and cfg.eval_every > 0:
        print(f"no held-out evaluation: --data {args.data} has no test-*.parquet split; pass --eval_data DIR"
              f"{TEST_SPLIT_HINT.get(args.model, '')}", file=sys.stderr)
    return held_out, downstream, selection


def main(argv=None, spec: ModelSpec | None = None) -> None:
    args = parse_args(argv)
    try:
        train(args, spec)
    except Interrupted as stop:
        if os.environ.get("RANK", "0") == "0":  # one line, not one per process
            print(stop.line("training.run"), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except (checkpoint.CheckpointError, SchemaMismatch, FileNotFoundError, RemoteCodeRefused, NonFiniteError,
            RunFolderError, EvalDataError, DownstreamError, OutputError, ManifestError, atomic_files.DiskFailure) as e:
        sys.exit(f"training.run: {e}")
    except DataError as e:
        # From a DataLoader worker the message is the worker's whole traceback; its last line is ours.
        text = str(e).strip().splitlines()[-1] if str(e).strip() else ""
        sys.exit(f"training.run: {text.removeprefix(type(e).__module__ + '.' + type(e).__name__ + ': ')}")


if __name__ == "__main__":
    main()
