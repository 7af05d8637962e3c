"""Fine-tuning on real tasks, several seeds, mean ± sd: XQuAD (zero-shot cross-lingual), WikiANN, PAWS-X.

    python benchmarks/downstream.py xquad   --init /tmp/e5-small --output /tmp/downstream     # seeds 0 1 2
    python benchmarks/downstream.py wikiann --init /tmp/e5-small --output /tmp/downstream
    python benchmarks/downstream.py pawsx   --init /tmp/e5-small --output /tmp/downstream
    python benchmarks/downstream.py xquad   --init /tmp/e5-small runs/mpmr/final --labels e5 e5+mPMR ...   # an ablation
    python benchmarks/downstream.py xquad   --init /tmp/e5-small --qa_head standard ...   # start/end head baseline
    python benchmarks/downstream.py xquad   --init runs/clism/final --qa_head que --few_shot 64 256 ...   # few-shot

Each (init, seed) is one `python -m training.finetune` process (--jobs of them at a time) that trains
and then scores every evaluation file of the task (`--eval` with several files). With --qa_head
(xquad only) it is `training.finetune_clism --head standard|que` instead: the usual start/end
classifier, or CLISM's [QUE] head; with --few_shot N too, the CLISM paper's few-shot protocol (N English
training questions sampled with the run's seed, the same N for every --init and head; task folder
xquad_fewshotN). Its folder OUTPUT/TASK/LABEL/seedS keeps
metrics.json and the predictions; a run whose metrics.json exists is not run again, so an interrupted
benchmark resumes and a new --init adds a column (the table keeps the columns of earlier invocations
on the same folder that have every seed asked for). The fine-tuned weights (final/, 470 MB for
e5-small) are deleted unless --keep_models. The table (printed and written to
OUTPUT/TASK/results.md) holds each evaluation file's metric, mean ± sample sd over the seeds, and
the wall / CPU seconds per run.

The tasks, on ../shared/data/eval (issue 16), with a 2-core CPU's budgets (the mPMR paper's Table 5
values are for SQuAD-, CoNLL- and PAWS-X-sized training sets and a GPU; not swept here):

* xquad    XQuAD has no training split, so its 48 articles are split: the English questions of
           articles 0-35 (925) train, articles 36-47 (265 questions) are scored in all 12
           languages. F1 / EM. 1 epoch, batch 8, lr 1e-4, 384 subwords (doc stride 128).
           Few-shot (--few_shot N): N questions sampled from the training split, --few_shot_steps
           steps (default 50; the paper's 200 at batch 32 is 16x the windows), batch 8, lr 1e-4,
           256 subwords; --languages and --eval_articles can shrink the scoring, which dominates
           a few-shot run's cost on a CPU.
* wikiann  NER in MRC form (one query per entity type): train on the first 2,000 English training
           sentences, score the first 1,000 test sentences of en, de, fr, nl, pt. Entity F1.
           2 epochs, batch 16, lr 5e-5, 128 subwords.
* pawsx    German PAWS-X in MRC form (the [CLS] cell of a label-description query): train on the
           2,000 dev pairs (the human-translated training set is not distributed), score the 2,000
           test pairs. Accuracy. 2 epochs, batch 16, lr 5e-5, 192 subwords.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("XLU_SHARED_DATA", ROOT.parent / "shared" / "data"))
XQUAD_LANGUAGES = ["en", "ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]
WIKIANN_LANGUAGES = ["en", "de", "fr", "nl", "pt"]


def article_range(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def write_aside(path: Path, text: str) -> Path:
    """Write to a temporary name and rename: another benchmark run on the same folder may be reading the file."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_text(text, encoding="utf-8")
    part.replace(path)
    return path


def xquad_files(args, folder: Path) -> tuple[Path, list[Path], list[str]]:
    """The English training split and one evaluation file per language, as SQuAD v1.1 JSON."""
    xquad = args.eval_data / "xquad"
    train_articles, eval_articles = article_range(args.train_articles), article_range(args.eval_articles)

    def cut(language: str, articles: range, name: str) -> Path:
        source = xquad / f"xquad.{language}.json.gz"
        if not source.exists():
            sys.exit(f"downstream: {source}: not found (set XLU_SHARED_DATA or pass --eval_data)")
        data = json.loads(gzip.decompress(source.read_bytes()))
        if max(articles) >= len(data["data"]):
            sys.exit(f"downstream: {source} has {len(data['data'])} articles, not {max(articles) + 1}")
        return write_aside(folder / name, json.dumps({"version": data.get("version", "1.1"),
                                                       "data": [data["data"][k] for k in articles]}, ensure_ascii=False))

    train = cut("en", train_articles, f"train.en.{args.train_articles}.json")
    evals = [cut(lang, eval_articles, f"xquad.{lang}.json") for lang in args.languages]
    flags = ["--epochs", "1", "--batch_size", "8", "--lr", "1e-4", "--max_seq_len", "384"]
    if args.few_shot:
        flags = ["--few_shot", str(args.few_shot), "--seeds", "1", "--max_steps", str(args.few_shot_steps),
                 "--batch_size", "8", "--lr", "1e-4", "--max_seq_len", "256"]
    return train, evals, flags


def wikiann_files(args, folder: Path) -> tuple[Path, list[Path], list[str]]:
    def head(source: Path, sentences: int, name: str) -> Path:
        if not source.exists():
            sys.exit(f"downstream: {source}: not found (set XLU_SHARED_DATA or pass --eval_data)")
        blocks = source.read_text(encoding="utf-8").split("\n\n")
        return write_aside(folder / name, "\n\n".join(b for b in blocks[:sentences] if b.strip()) + "\n\n")

    wikiann = args.eval_data / "wikiann"
    train = head(wikiann / "en" / "train", args.train_sentences, f"wikiann.en.train{args.train_sentences}")
    evals = [head(wikiann / lang / "test", args.eval_sentences, f"wikiann.{lang}.test{args.eval_sentences}")
             for lang in WIKIANN_LANGUAGES]
    flags = ["--epochs", "2", "--batch_size", "16", "--lr", "5e-5", "--max_seq_len", "128"]
    return train, evals, flags


def pawsx_files(args, folder: Path) -> tuple[Path, list[Path], list[str]]:
    pawsx = args.eval_data / "pawsx-de"
    for path in (pawsx / "dev.tsv", pawsx / "test.tsv"):
        if not path.exists():
            sys.exit(f"downstream: {path}: not found (set XLU_SHARED_DATA or pass --eval_data)")
    flags = ["--epochs", "2", "--batch_size", "16", "--lr", "5e-5", "--max_seq_len", "192"]
    return pawsx / "dev.tsv", [pawsx / "test.tsv"], flags


TASKS = {  # name: (training.finetune --task, files and flags, metrics in the table)
    "xquad": ("squad", xquad_files, ["f1", "exact_match"]),
    "wikiann": ("ner", wikiann_files, ["f1"]),
    "pawsx": ("pair", pawsx_files, ["accuracy"]),
}


def finetune_command(args, task: str, init: str, seed: int, train: Path, evals: list[Path], flags: list[str],
                     out: Path) -> list[str]:
    common = ["--init", init, "--train", str(train), "--eval", *map(str, evals), "--output", str(out),
              "--seed", str(seed), *flags, "--device", args.device, "--no_progress", "--log_every", "20"]
    if args.qa_head != "mrc":
        # training.finetune_clism's defaults are the CLISM paper's (warm-up 10%, no weight decay): set
        # to training.finetune's, so that only the head differs between the columns.
        return [sys.executable, "-m", "training.finetune_clism", "--head", args.qa_head, *common,
                "--warmup_ratio", "0.06", "--weight_decay", "0.01", *args.extra]
    return [sys.executable, "-m", "training.finetune", "--task", task, *common, *args.extra]


def read_result(out: Path) -> dict:
    """A run's metrics.json, with training.finetune_clism's layout (runs[0], by_eval) read as
    training.finetune's (metrics, metrics_by_eval)."""
    result = json.loads((out / "metrics.json").read_text())
    if "metrics" not in result and "runs" in result:
        run = result["runs"][0]
        result["metrics"] = {"f1": run["f1"], "exact_match": run["exact_match"]}
        result["metrics_by_eval"] = run.get("by_eval") or {Path(result["args"]["eval"][0]).stem: result["metrics"]}
    return result


def run_all(args, commands: dict[Path, list[str]]) -> None:
    """Run the commands, --jobs at a time, each on --threads torch threads; record each one's wall
    and CPU seconds (its own rusage, so concurrent runs are not mixed up) in its metrics.json."""
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    pending = [(out, command) for out, command in commands.items() if not (out / "metrics.json").exists()]
    for out in commands:
        if (out / "metrics.json").exists():
            print(f"downstream: {out} done before, kept", file=sys.stderr)
    running: dict[int, tuple[Path, list[str], float, object]] = {}
    while pending or running:
        while pending and len(running) < args.jobs:
            out, command = pending.pop(0)
            out.mkdir(parents=True, exist_ok=True)
            print("$ " + " ".join(command), file=sys.stderr, flush=True)
            log = open(out / "log.txt", "w")  # noqa: SIM115  closed when the run ends
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            running[process.pid] = (out, command, time.perf_counter(), log)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        out, command, start, log = running.pop(pid)
        log.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"downstream: a run failed (exit {os.waitstatus_to_exitcode(status)}); see {out / 'log.txt'}")
        result = read_result(out)
        result["benchmark"] = {"command": command, "threads": args.threads, "concurrent_runs": args.jobs,
                               "wall_seconds": time.perf_counter() - start,
                               "cpu_seconds": usage.ru_utime + usage.ru_stime}
        (out / "metrics.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
        print(f"downstream: {out} done in {result['benchmark']['wall_seconds']:.0f} s: {result['metrics']}",
              file=sys.stderr, flush=True)
        if not args.keep_models:
            shutil.rmtree(out / "final", ignore_errors=True)
            shutil.rmtree(out / args.qa_head / "final", ignore_errors=True)  # training.finetune_clism's


def mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.1f} ± {sd:.1f}"


def table(results: dict[str, list[dict]], metrics: list[str]) -> str:
    """One row per evaluation file (and their mean when several), one column per init."""
    names = list(results[next(iter(results))][0]["metrics_by_eval"])
    rows = names + (["mean"] if len(names) > 1 else [])
    header = " / ".join(metrics)
    lines = ["| eval | " + " | ".join(f"{label} {header}" for label in results) + " |",
             "|---|" + "---:|" * len(results)]
    for name in rows:
        cells = []
        for runs in results.values():
            pick = (lambda r: r["metrics"]) if name == "mean" else (lambda r: r["metrics_by_eval"][name])
            cells.append(" / ".join(mean_sd([pick(r)[m] for r in runs]) for m in metrics))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| seeds; wall / CPU s per run | " + " | ".join(
        f"{len(runs)}; {statistics.fmean(r['benchmark']['wall_seconds'] for r in runs):.0f} / "
        f"{statistics.fmean(r['benchmark']['cpu_seconds'] for r in runs):.0f}"
        if all("benchmark" in r for r in runs) else f"{len(runs)}; –" for runs in results.values()) + " |")
    return "\n".join(lines)


def few_shot_table(by_size: dict[int, dict[str, list[dict]]], metrics: list[str]) -> str:
    """One row per training-set size, one column per init: the mean over the evaluation files, mean ± sd
    over the seeds."""
    labels = list(dict.fromkeys(label for results in by_size.values() for label in results))
    header = " / ".join(metrics)
    lines = ["| questions | " + " | ".join(f"{label} {header}" for label in labels) + " |",
             "|---:|" + "---:|" * len(labels)]
    for n, results in by_size.items():
        cells = [" / ".join(mean_sd([r["metrics"][m] for r in results[label]]) for m in metrics)
                 if label in results else "–" for label in labels]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--init", nargs="+", required=True, help="models to fine-tune (an e5 folder, a pre-trained run's final/ ...)")
    p.add_argument("--labels", nargs="+", help="a column name per --init (default: the folder names)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--output", required=True, help="benchmark folder: OUTPUT/TASK/{data,LABEL/seedS,results.md}")
    p.add_argument("--eval_data", type=Path, default=SHARED / "eval", help="../shared/data/eval or a copy")
    p.add_argument("--train_articles", default="0-35", help="xquad: English training articles")
    p.add_argument("--eval_articles", default="36-47", help="xquad: articles scored in every language")
    p.add_argument("--train_sentences", type=int, default=2000, help="wikiann: English training sentences")
    p.add_argument("--eval_sentences", type=int, default=1000, help="wikiann: test sentences per language")
    p.add_argument("--device", default="cpu")
    p.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    p.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 1) // 2),
                   help="torch threads per run (default: half the cores). On a machine shared with other work, "
                        "1 thread per run: torch's threads spin-wait for each other when the cores are "
                        "oversubscribed (measured here: 2 threads used 2-3x the CPU of 1 per step under load)")
    p.add_argument("--keep_models", action="store_true", help="keep each run's final/ (470 MB for e5-small)")
    p.add_argument("--qa_head", choices=["mrc", "standard", "que"], default="mrc",
                   help="xquad: mrc = the mPMR formulation (training.finetune, span matrix); standard = a start/end "
                        "classifier, que = CLISM's [QUE] head (both training.finetune_clism, same budget); the "
                        "column is then LABEL+standard / LABEL+que")
    p.add_argument("--few_shot", type=int, nargs="+", default=None, metavar="N",
                   help="xquad with --qa_head standard|que: train on N sampled English questions (CLISM paper's "
                        "few-shot protocol, one sample per seed); task folder xquad_fewshotN; with several N, "
                        "OUTPUT/xquad_fewshot.md also gets one table of the mean over the languages per N")
    p.add_argument("--few_shot_steps", type=int, default=50, help="optimiser steps of a few-shot run (default 50)")
    p.add_argument("--languages", nargs="+", default=XQUAD_LANGUAGES, choices=XQUAD_LANGUAGES,
                   help="xquad: languages scored (default all 12)")
    p.epilog = "Flags after a lone -- go to every fine-tuning run and override the budget's."
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    args.extra = argv[cut + 1:]
    if args.qa_head != "mrc" and args.task != "xquad":
        sys.exit(f"downstream: --qa_head {args.qa_head} is for xquad only")
    if args.few_shot is not None and (args.task != "xquad" or args.qa_head == "mrc"):
        sys.exit("downstream: --few_shot needs xquad with --qa_head standard or que")
    suffix = "" if args.qa_head == "mrc" else f"+{args.qa_head}"
    labels = args.labels or [Path(init).name + suffix for init in args.init]
    if len(labels) != len(args.init) or len(set(labels)) != len(labels):
        sys.exit("downstream: give one distinct --labels name per --init")
    task, files, metrics = TASKS[args.task]
    folders, commands = {}, {}
    for n in args.few_shot or [None]:
        out = Path(args.output) / (f"{args.task}_fewshot{n}" if n else args.task)
        (out / "data").mkdir(parents=True, exist_ok=True)
        train, evals, flags = files(argparse.Namespace(**{**vars(args), "few_shot": n}), out / "data")
        folders[n] = out
        commands.update({out / label / f"seed{seed}": finetune_command(args, task, init, seed, train, evals, flags,
                                                                      out / label / f"seed{seed}")
                         for label, init in zip(labels, args.init) for seed in args.seeds})
    run_all(args, commands)
    by_size = {}
    for n, out in folders.items():
        # Columns other invocations left in this task folder (another --init or --qa_head) stay in the table
        # when they have every seed asked for.
        earlier = sorted(d.name for d in out.iterdir() if d.is_dir() and d.name != "data" and d.name not in labels
                         and all((d / f"seed{seed}" / "metrics.json").exists() for seed in args.seeds))
        results = {label: [read_result(out / label / f"seed{seed}") for seed in args.seeds]
                   for label in labels + earlier}
        by_size[n] = results
        text = table(results, metrics)
        (out / "results.md").write_text(text + "\n")
        print(f"\n{out}:\n{text}" if len(folders) > 1 else text)
    if len(folders) > 1:
        text = few_shot_table(by_size, metrics)
        (Path(args.output) / f"{args.task}_fewshot.md").write_text(text + "\n")
        print(f"\nmean over {', '.join(args.languages)}:\n{text}")


if __name__ == "__main__":
    main()
