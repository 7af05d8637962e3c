"""Fine-tune and evaluate a machine reader in the MRC formulation (mPMR paper Table 6; docs/design.md §4).

    python -m training.finetune --task squad --init runs/base/final --train train-v1.1.json \\
        --eval xquad.de.json --output runs/xquad-de
    python -m training.finetune --task ner --init runs/base/final --train en.train.conll --eval de.test.conll --output runs/conll
    python -m training.finetune --task pair --init runs/base/final --train pawsx.en.train.tsv --eval pawsx.de.test.tsv --output runs/pawsx
    python -m training.finetune --task squad --init runs/tiny/final     # the bundled sample, -> ./output/finetune_squad
    python -m training.finetune --task squad --head que standard --few_shot 64,128 --init runs/clism/final

Without --train / --eval a task runs on its bundled sample (training/tasks/samples/, cut from XQuAD,
WikiANN and PAWS-X; sources and licences in its README), as the data jobs do.
--init is a saved MPMRForWAE (its pre-trained extractor is kept), a saved MRCReader, or any encoder
`transformers.AutoModel` loads (a fresh extractor is put on it); the tokenizer comes from the same path.
With --head que (and/or standard), squad is fine-tuned with a CLISM model's extractive-QA heads, in full
data or the CLISM paper's few-shot protocol (--few_shot; training/finetune_clism.py, which is also this
command with those presets: `python -m training.finetune_clism`).
Every task is MRC rows -> MPMRCollator -> span matrix S -> WAE loss, as in pre-training; the tasks
differ in how rows are made and how S is read (training/tasks/). Task defaults are the paper's
Table 5 values (XQuAD/MLQA, CoNLL, PAWS-X columns).

OUTPUT receives metrics.json (final and periodic evaluations, training losses, timings), the
predictions (predictions.json for squad, the official format; predictions.jsonl otherwise) and final/
(save_pretrained + tokenizer + finetune_config.json), which --init accepts again.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from corpora.outputs.manifests import FINETUNE_RUN, ManifestError
from training import atomic_files, finetune_clism, finetune_flags, finetune_loop, init_folder, output_guard
from training.finetune_flags import MPMR_DEFAULTS, TASK_DEFAULTS
from training.data.mpmr import MPMRCollator
from training.models.mpmr import wae_loss
from training.errors import EXIT_INTERRUPTED, Interrupted, NonFiniteError, OutputError
from training.run_folder import RunFolderError, check_init_available
from training.run_setup import autocast_for
from training.tasks import conll, mlqa_metric, pair_cls, squad
from training.tasks.bundled import sample_paths
from training.tasks.reader import clamp_max_seq_len, load_reader, load_tokenizer, quiet_transformers_progress
from training.tasks.spans import greedy_non_overlapping, word_spans

# ---- forward passes over MRC rows ----

def row_logits(model, collator: MPMRCollator, rows: list[dict], batch_size: int, device: torch.device,
               autocast) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
    """(row index, S logits [L, L], context word of each subword [L]) for every row, L its own length.
    Rows go through the model shortest first (finetune_loop.shortest_first)."""
    model.eval()
    order = finetune_loop.shortest_first(rows)
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            chunk = order[start:start + batch_size]
            batch = collator([rows[k] for k in chunk])
            with autocast:
                logits = model.span_logits(batch["input_ids"].to(device), batch["attention_mask"].to(device))
            logits = logits.float().cpu()
            for b, length in enumerate(batch["attention_mask"].sum(1).tolist()):
                yield chunk[b], logits[b, :length, :length], batch["context_word"][b, :length]


# ---- tasks: examples -> training rows; examples -> metrics and prediction records ----

class SquadTask:
    span_loss = True
    predictions_file = "predictions.json"

    def __init__(self, args):
        self.args = args

    def read(self, path, for_eval: bool = False):
        if for_eval:
            return mlqa_metric.read_eval_file(path, self.args.qa_metric, self.args.eval_language)
        return squad.read_squad(path)

    def train_rows(self, examples, tokenizer):
        a = self.args
        return squad.to_rows(examples, tokenizer, a.max_query_tokens, a.max_seq_len, a.doc_stride, train=True)[0]

    def evaluate(self, examples, tokenizer, forward):
        a = self.args
        rows, wins = squad.to_rows(examples, tokenizer, a.max_query_tokens, a.max_seq_len, a.doc_stride, train=False)
        best: dict[int, tuple[float, int, int]] = {}
        for k, logits, context_word in forward(rows):
            found = word_spans(logits, context_word, top_k=1, max_tokens=a.max_answer_tokens or None)
            if found and (wins[k].example not in best or found[0][2] > best[wins[k].example][0]):
                s, e, score = found[0]
                best[wins[k].example] = (score, wins[k].first + s, wins[k].first + e)
        predictions = {ex.id: squad.predict_text(ex, *best[n][1:]) if n in best else ""
                       for n, ex in enumerate(examples)}
        return mlqa_metric.qa_evaluate(examples, predictions, a.qa_metric), predictions


class NerTask:
    span_loss = True
    predictions_file = "predictions.jsonl"

    def __init__(self, args):
        self.args = args
        self.types: list[str] | None = None  # fixed by the training file

    def read(self, path, for_eval: bool = False):
        return conll.read_conll(path)

    def train_rows(self, sentences, tokenizer):
        self.types = conll.entity_types(sentences)
        return conll.to_rows(sentences, self.types)

    def evaluate(self, sentences, tokenizer, forward):
        types = self.types or conll.entity_types(sentences)
        min_logit = math.log(self.args.threshold / (1 - self.args.threshold))  # sigmoid(x) > t  <=>  x > logit(t)
        predicted: list[list] = [[] for _ in sentences]
        for k, logits, context_word in forward(conll.to_rows(sentences, types)):
            kind = types[k % len(types)]
            for s, e, _ in greedy_non_overlapping(word_spans(logits, context_word, min_logit=min_logit)):
                predicted[k // len(types)].append((s, e, kind))
        metrics = conll.entity_f1([s.entities for s in sentences], predicted)
        records = [{"tokens": s.tokens, "gold": [list(x) for x in s.entities], "predicted": sorted(map(list, p))}
                   for s, p in zip(sentences, predicted)]
        return metrics, records


class PairTask:
    span_loss = False  # the [CLS] cells only: see training/tasks/pair_cls.py
    predictions_file = "predictions.jsonl"

    def __init__(self, args):
        self.args = args
        self.labels: dict[str, str] | None = None

    def read(self, path, for_eval: bool = False):
        return pair_cls.read_pairs(path, self.args.eval_language if for_eval else None)

    def train_rows(self, examples, tokenizer):
        self.labels = pair_cls.label_set(examples)
        return pair_cls.to_rows(examples, self.labels, self.args.pair_template)

    def evaluate(self, examples, tokenizer, forward):
        labels = self.labels or pair_cls.label_set(examples)
        values = list(labels)
        rows = pair_cls.to_rows(examples, labels, self.args.pair_template)
        cls = torch.full((len(examples), len(values)), float("-inf"))
        top: dict[int, list] = {}
        for k, logits, context_word in forward(rows):
            n, v = divmod(k, len(values))
            cls[n, v] = logits[0, 0]
            top[k] = word_spans(logits, context_word, top_k=self.args.rationale_spans)
        choice = cls.argmax(1).tolist()
        predicted = [values[c] for c in choice]
        records = []
        for n, ex in enumerate(examples):
            k = n * len(values) + choice[n]
            if self.args.pair_template == "rationale":
                rationale = self.two_pass_rationale(ex, labels[predicted[n]], forward)
            else:
                words = rows[k]["context_words"]
                rationale = [{"text": " ".join(words[s:e + 1]), "prob": torch.sigmoid(torch.tensor(p)).item()}
                             for s, e, p in top[k]]
            records.append({"id": ex.id, "label": ex.label, "predicted": predicted[n],
                            "cls_logits": dict(zip(values, cls[n].tolist())), "rationale": rationale})
        for r in records[: self.args.show_rationales]:
            spans = " | ".join(f"{x['text']} ({x['prob']:.2f})" for x in r["rationale"])
            print(f"[{r['id']}] gold {r['label']} predicted {r['predicted']}; rationale: {spans}")
        return pair_cls.accuracy(examples, predicted), records

    def two_pass_rationale(self, ex, label_key, forward) -> list[dict]:
        # The paper's two passes: each sentence in turn is the context; the best span of each.
        out = []
        for (k, logits, context_word), sentence in zip(forward(pair_cls.rationale_rows(ex, label_key)),
                                                      (ex.sentence2, ex.sentence1)):
            found = word_spans(logits, context_word, top_k=1)
            if found:
                s, e, p = found[0]
                out.append({"text": pair_cls.span_text(sentence, s, e), "prob": torch.sigmoid(torch.tensor(p)).item()})
        return out


TASKS = {"squad": SquadTask, "ner": NerTask, "pair": PairTask}


# ---- command line ----

def build_parser() -> argparse.ArgumentParser:
    return finetune_flags.build_parser(__doc__)


def resolve(args: argparse.Namespace) -> argparse.Namespace:
    for key, value in {**TASK_DEFAULTS[args.task], **MPMR_DEFAULTS}.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.eval_batch_size = args.eval_batch_size or 2 * args.batch_size
    args.output = args.output or f"./output/finetune_{args.task}"
    sample_train, sample_eval = sample_paths(args.task)
    for flag, sample in (("train", sample_train), ("eval", [sample_eval])):
        if getattr(args, flag) is None:
            setattr(args, flag, sample)
            print(f"training.finetune: --{flag} {sample} (bundled sample)", file=sys.stderr)
    if isinstance(args.eval, str):  # finetune(Namespace(eval="file")) from Python
        args.eval = [args.eval]
    if args.max_steps is not None and args.max_steps < 0:
        raise ValueError(f"--max_steps {args.max_steps}: must be >= 0")
    if args.init:
        try:
            args.init = init_folder.resolve(args.init, "training.finetune")
            check_init_available(args.init, hint="give a saved model's folder, or run once with the network to fill "
                                                 "the cache (HF_HOME)")
        except RunFolderError as error:
            raise ValueError(str(error)) from None
    return args


def write_predictions(path: Path, predictions) -> None:
    if isinstance(predictions, dict):
        text = json.dumps(predictions, indent=2, ensure_ascii=False)
    else:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in predictions)
    with atomic_files.naming_disk_failures(path):
        atomic_files.write_text(path, text)


def finetune(args: argparse.Namespace) -> dict:
    """One fine-tuning run into --output, which it holds locked (a second writer is refused, naming it)."""
    args = resolve(args)
    with output_guard.guarded(Path(args.output), FINETUNE_RUN, "python -m training.finetune"):
        return _finetune(args)


def _finetune(args: argparse.Namespace) -> dict:
    out = Path(args.output)
    torch.manual_seed(args.seed)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    autocast = autocast_for(device)

    task = TASKS[args.task](args)
    train_examples = task.read(args.train)[: args.max_train_examples]
    eval_sets = {label: task.read(path, for_eval=True)[: args.max_eval_examples]
                 for label, path in zip(finetune_loop.eval_labels(args.eval), args.eval)}
    if not train_examples:
        raise ValueError(f"--train {args.train}: no examples")
    quiet_transformers_progress()
    model = load_reader(args.init, args.extractor_hidden_size, args.trust_remote_code).to(device)
    tokenizer = load_tokenizer(args.init, args.trust_remote_code)
    args.max_seq_len = clamp_max_seq_len(args.max_seq_len, model.config, "training.finetune")
    collator = MPMRCollator(tokenizer, args.max_query_tokens, args.max_seq_len, use_spacing=not args.no_word_spacing)
    rows = task.train_rows(train_examples, tokenizer)

    def forward(eval_rows):
        return row_logits(model, collator, eval_rows, args.eval_batch_size, device, autocast)

    def loss(model, batch):
        # pair: the [CLS] cells only (training/tasks/pair_cls.py), so no context cell is a target
        context_mask = batch["context_mask"] if task.span_loss else torch.zeros_like(batch["context_mask"])
        with autocast:
            logits = model.span_logits(batch["input_ids"], batch["attention_mask"])
        return wae_loss(logits, context_mask, batch["answerable"], batch["answer_spans"])

    evals = []

    def evaluate(step, say):
        metrics, by_eval, _ = finetune_loop.evaluate_all(eval_sets, lambda ex: task.evaluate(ex, tokenizer, forward))
        evals.append({"step": step, **metrics, **({"by_eval": by_eval} if len(by_eval) > 1 else {})})
        say(f"step {step} eval {metrics}")

    max_steps = finetune_loop.total_steps(len(rows), args.batch_size, args.grad_accum, args.epochs, args.max_steps)
    trained = finetune_loop.train(
        model, rows, collator, loss, max_steps=max_steps, batch_size=args.batch_size, lr=args.lr,
        weight_decay=args.weight_decay, warmup_ratio=args.warmup_ratio, grad_clip=args.grad_clip, seed=args.seed,
        device=device, grad_accum=args.grad_accum, log_every=args.log_every,
        progress=None if args.no_progress else {"desc": f"finetune {args.task}"}, print_losses=True,
        eval_every=args.eval_every, evaluate=evaluate)

    start = time.perf_counter()
    metrics, by_eval, predictions = finetune_loop.evaluate_all(eval_sets, lambda ex: task.evaluate(ex, tokenizer, forward))
    eval_seconds = time.perf_counter() - start
    evals.append({"step": max_steps, **metrics, **({"by_eval": by_eval} if len(by_eval) > 1 else {})})
    paper_mean = finetune_loop.paper_xquad_mean(by_eval)
    result = {
        "task": args.task, "init": args.init, "train": args.train, "eval": args.eval,
        "train_examples": len(train_examples), "train_rows": len(rows),
        "eval_examples": sum(map(len, eval_sets.values())),
        "steps": max_steps, "train_seconds": trained.seconds, "eval_seconds": eval_seconds,
        "metrics": metrics, "metrics_by_eval": by_eval, "evaluations": evals, "losses": trained.losses,
        "collator_counts": dict(trained.counts), "args": vars(args),
        **({"metrics_without_ro": paper_mean} if paper_mean else {}),
    }
    if len(predictions) == 1:
        predictions_path = out / task.predictions_file
        write_predictions(predictions_path, next(iter(predictions.values())))
    else:  # one file per evaluation set, named by its label
        predictions_path = out / "predictions"
        predictions_path.mkdir(exist_ok=True)
        suffix = Path(task.predictions_file).suffix
        for label, records in predictions.items():
            write_predictions(predictions_path / f"{label}{suffix}", records)
    sample_eval = str(sample_paths(args.task)[1])
    for (label, m), path in zip(by_eval.items(), args.eval):
        # Scores on the few bundled questions read like real results unless they say what they are.
        note = " (the bundled sample, a smoke test: pass --eval for a real score)" if str(path) == sample_eval else ""
        print(f"{args.task} {label}{note}: {json.dumps(m)}")
    if len(by_eval) > 1:
        print(f"{args.task} mean of {len(by_eval)}: {json.dumps(metrics)}")
    if paper_mean:
        print(f"{args.task} mean of {len(by_eval) - 1} without xquad.ro (the mPMR paper's XQuAD average, its Table 7): "
              f"{json.dumps(paper_mean)}")
    if max_steps:
        final = out / "final"
        with atomic_files.replacing_folder(final) as tmp, atomic_files.naming_disk_failures(final):
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            (tmp / "finetune_config.json").write_text(json.dumps(vars(args), indent=2))
        print(f"  fine-tuned model: {final}   (--init accepts it)")
    # Last: a folder with metrics.json holds a finished run's model and predictions.
    with atomic_files.naming_disk_failures(out / "metrics.json"):
        atomic_files.write_text(out / "metrics.json", json.dumps(result, indent=2, ensure_ascii=False))
    print(f"  metrics:          {out / 'metrics.json'}\n  predictions:      {predictions_path}")
    return result


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    if args.head:  # CLISM's extractive-QA heads, full data or few-shot
        if args.task != "squad":
            build_parser().error(f"--head {' '.join(args.head)}: extractive QA heads, for --task squad only")
        finetune_clism.run_heads(args, "training.finetune")
        return
    if args.few_shot:
        build_parser().error("--few_shot: the protocol of the QA heads; give --head que (and/or standard)")
    try:
        finetune(args)
    except Interrupted as stop:
        print(stop.line("training.finetune", resumable=False), file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        print("training.finetune: interrupted: rerun the same command to start again", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except (FileNotFoundError, ValueError, NonFiniteError, OutputError, ManifestError, atomic_files.DiskFailure) as e:
        sys.exit(f"training.finetune: {e}")


if __name__ == "__main__":
    main()
