"""Fine-tune a CLISM model for extractive QA the paper's way, with `[QUE]` (CLISM paper §3.4, Eq. 10),
or the standard way without it, in full-data or the paper's few-shot protocol (Appendix C, Table 9).

    # the paper's few-shot protocol: 64...1024 examples, 5 samples (seeds) each, 200 steps each
    python -m training.finetune_clism --init runs/clism/final --train squad/train-v1.1.json \\
        --eval mlqa/dev-context-de-question-de.json --output runs/fewshot --few_shot 64,128,256,512,1024
    # the same with both heads, for the comparison; several --eval files are each scored (and averaged)
    python -m training.finetune_clism ... --few_shot 64,128,256,512,1024 --head que standard
    # full data (paper Appendix C: batch 32, lr 3e-5, 384 subwords, 5 epochs)
    python -m training.finetune_clism --init runs/clism/final --train ... --eval ... --output runs/full
    # the bundled sample (XQuAD: 135 English questions to train, 37 German ones to score) -> ./output/finetune_clism
    python -m training.finetune_clism --init runs/clism/final --few_shot 64,128 --head que standard

Heads (`--head`):
* que (paper): `<s> Q [QUE] </s></s> P </s>`; the answer's start and end are read off the `[QUE]`
  representation through the pre-trained W_s and W_e, softmax over the passage, exactly as CLISM
  pre-training asks each [QUE] for its aligned target span (Eq. 1–4).
* standard: `<s> Q </s></s> P </s>` and a fresh per-token start/end classifier (XLMRobertaForQuestionAnswering's
  head), the usual xMRC fine-tune.
--init is a saved CLISM model (training.run's final/) or any XLM-R checkpoint; the latter gets a new
[QUE] row (que head) and fresh W_s, W_e. The standard head also takes any other encoder AutoModel
loads (an XY-LENT run's final/; training/tasks/start_end_reader.py); the [QUE] head refuses one.

Data: SQuAD v1.1-format JSON (SQuAD, MLQA, XQuAD), read and scored by training/tasks/squad.py (the one
reader and the official metric, shared with training.finetune). Contexts longer than the window are
cut into overlapping word windows (squad.to_rows). Training windows that do not hold the answer are
left out (counted): the [QUE] head, like its pre-training, has no "no answer" position. At prediction
the best span (start ≤ end, at most --max_answer_tokens subwords, score start + end logit) over all
windows of a question wins.

Few-shot: for each size n and seed s, n examples are sampled from --train with random.Random(s), a
fresh model is loaded from --init, trained --max_steps steps (paper: 200) and scored on --eval; the
command prints the mean and the spread (sample standard deviation, min, max) of F1 and EM over the
seeds. OUTPUT receives metrics.json (every run and the summary) and, in full-data mode, the model
(OUTPUT/<head>/final/, save_pretrained) and predictions.
--eval may name several files (XQuAD's languages): each is scored, F1/EM are their mean, `by_eval`
in metrics.json (and a per-file table in the few-shot printout) holds each, and predictions go to
OUTPUT/<head>/predictions/<file label>.json.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import Counter
from pathlib import Path

import torch
from torch import nn
from transformers import AutoConfig, AutoTokenizer, XLMRobertaConfig

from corpora.outputs.manifests import FINETUNE_RUN, ManifestError
from training import atomic_files, finetune_loop, init_folder, output_guard
from training.data.clism import QUE_TOKEN, add_que_token, with_que_embedding
from training.data.word_pieces import WordPieces
from training.models.clism import CLISMForQuestionAnswering
from training.remote_code import from_pretrained
from training.finetune_flags import HEADS, QA_HEAD_DEFAULTS, qa_head_parser
from training.errors import EXIT_INTERRUPTED, Interrupted, NonFiniteError, OutputError
from training.run_setup import autocast_for
from training.tasks import mlqa_metric, squad
from training.tasks.bundled import sample_paths
from training.tasks.reader import clamp_max_seq_len, load_weights, quiet_transformers_progress
from training.tasks.start_end_reader import StartEndReader



# ---- model and tokenizer ----

XLMR_TYPES = ("xlm-roberta", "roberta")


def load_model(init: str, head: str, trust_remote_code: bool = False) -> tuple[nn.Module, object]:
    # The model classes are concrete (no Auto class, so no code from the folder); the tokenizer is not.
    tokenizer = from_pretrained(AutoTokenizer, init, trust_remote_code)
    if not tokenizer.is_fast:
        raise ValueError(f"--init {init}: tokenizer {type(tokenizer).__name__} is not a fast tokenizer "
                         "(subword-to-word mapping needs word_ids())")
    if head == "standard" and model_type_of(init) not in XLMR_TYPES:
        return StartEndReader.from_pretrained(init, trust_remote_code), tokenizer
    config = XLMRobertaConfig.from_pretrained(init)
    config.qa_head = head
    # Expected, so not reported: the pre-training MLM head (and W_s, W_e for the standard head) left
    # unused; the head a plain XLM-R lacks (W_s, W_e, or the standard head's qa_outputs) starting fresh.
    unused = ("lm_head.",) if head == "que" else ("lm_head.", "w_s.", "w_e.")
    fresh = ("w_s.", "w_e.") if head == "que" else ("qa_outputs.",)
    model = load_weights(CLISMForQuestionAnswering, init, unused=unused, new=fresh, config=config)
    if head == "que":
        model = with_que_embedding(model, add_que_token(tokenizer))
    return model, tokenizer


def model_type_of(init: str) -> str | None:
    from transformers import PretrainedConfig

    return PretrainedConfig.get_config_dict(init)[0].get("model_type")


def check_xlmr_init(init: str, heads, trust_remote_code: bool = False) -> None:
    """The [QUE] head sits on an XLM-R encoder (CLISMForQuestionAnswering.roberta): another
    architecture's weights, an XY-LENT discriminator's say, would all be left random, with only a
    warning. The standard head takes any AutoModel encoder (StartEndReader)."""
    from training.remote_code import check_remote_code

    check_remote_code(init, trust_remote_code)  # a folder shipping code is refused as such first
    model_type = model_type_of(init)
    if "que" in heads and model_type not in XLMR_TYPES:
        raise ValueError(f"--init {init}: a {model_type!r} model; the [QUE] head fine-tunes XLM-R encoders "
                         "(a CLISM run's final/ or any XLM-R); fine-tune it with --head standard, or `python -m "
                         "training.finetune --task squad --init ...` (any AutoModel encoder)")


# ---- rows -> tensors ----

class QACollator:
    """MRC rows (squad.to_rows: query_words, context_words of one window, answers as window word spans)
    -> `<s> Q [QUE] </s></s> P </s>` (que) or `<s> Q </s></s> P </s>` (standard), with the passage mask,
    the passage word of each subword and, for training, the first answer's start and end subwords."""

    def __init__(self, tokenizer, head: str, max_query_tokens: int = 64, max_seq_len: int = 384, use_spacing: bool = True):
        self.tokenizer = tokenizer
        self.head = head
        self.max_query_tokens = max_query_tokens
        self.max_seq_len = max_seq_len
        self.que = tokenizer.convert_tokens_to_ids(QUE_TOKEN) if head == "que" else None
        self.cls, self.sep, self.pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
        self.pieces = WordPieces(tokenizer)
        self.use_spacing = use_spacing  # the rows' query_spaces/context_spaces shape the subwords (word_pieces.py)

    def __call__(self, rows: list[dict], train: bool = False) -> dict:
        counts: Counter = Counter()
        made = []
        q_spaces, p_spaces = ([[r.get(c) for r in rows] for c in ("query_spaces", "context_spaces")]
                              if self.use_spacing else (None, None))
        for row, (q_ids, _), (p_ids, p_words) in zip(rows, self.pieces.flat([r["query_words"] for r in rows], q_spaces),
                                                     self.pieces.flat([r["context_words"] for r in rows], p_spaces)):
            q_ids = q_ids[: self.max_query_tokens]
            question = [*q_ids, self.que] if self.head == "que" else q_ids
            offset = len(question) + 3  # <s> Q [QUE] </s></s>
            room = self.max_seq_len - offset - 1
            # The first word the truncation cuts into (even partly); answers ending before it survive.
            cut_word = p_words[room] if len(p_ids) > room else len(row["context_words"])
            if len(p_ids) > room:
                counts["windows/passage_truncated"] += 1
            p_ids, p_words = p_ids[:room], [w if w is not None else -1 for w in p_words[:room]]
            ids = [self.cls, *question, self.sep, self.sep, *p_ids, self.sep]
            start = end = -100
            if train:
                first, last = {}, {}
                for k, w in enumerate(p_words):
                    if w >= 0:
                        first.setdefault(w, offset + k)
                        last[w] = offset + k
                a = row["answers"][0]
                inside = [w for w in range(a["start"], a["end"] + 1) if w in first]
                if not inside or a["end"] >= cut_word:
                    counts["windows/answer_cut"] += 1  # left out, never mislabelled
                    continue
                start, end = first[inside[0]], last[inside[-1]]
            made.append((ids, offset, p_words, len(question), start, end))
        counts["windows"] += len(made)
        B, T = len(made), max((len(m[0]) for m in made), default=1)
        batch = {
            "input_ids": torch.full((B, T), self.pad, dtype=torch.long),
            "attention_mask": torch.zeros((B, T), dtype=torch.long),
            "passage_mask": torch.zeros((B, T), dtype=torch.bool),
            "context_word": torch.full((B, T), -1, dtype=torch.long),
            "que_position": torch.zeros(B, dtype=torch.long),
        }
        if train:
            batch["answer_start"] = torch.tensor([m[4] for m in made], dtype=torch.long)
            batch["answer_end"] = torch.tensor([m[5] for m in made], dtype=torch.long)
        for b, (ids, offset, p_words, q_len, _, _) in enumerate(made):
            batch["input_ids"][b, : len(ids)] = torch.tensor(ids)
            batch["attention_mask"][b, : len(ids)] = 1
            batch["passage_mask"][b, offset: offset + len(p_words)] = True
            batch["context_word"][b, offset: offset + len(p_words)] = torch.tensor(p_words, dtype=torch.long)
            batch["que_position"][b] = q_len  # <s> at 0, so [QUE] (the last question token) sits at q_len
        batch["counts"] = dict(counts)
        return batch


def best_span(start: torch.Tensor, end: torch.Tensor, context_word: torch.Tensor, max_answer_tokens: int):
    """(score, first word, last word) of the best passage span i <= j < i + max_answer_tokens."""
    t = start.shape[0]
    scores = start[:, None] + end[None, :]
    band = torch.ones(t, t, dtype=torch.bool).triu() & ~torch.ones(t, t, dtype=torch.bool).triu(max_answer_tokens)
    ok = band & (context_word >= 0)[:, None] & (context_word >= 0)[None, :]
    if not ok.any():
        return None
    flat = scores.masked_fill(~ok, float("-inf")).flatten()
    k = int(flat.argmax())
    return float(flat[k]), int(context_word[k // t]), int(context_word[k % t])


# ---- one fine-tuning run ----

def train_rows(examples, tokenizer, args, head: str, counts: Counter) -> list[dict]:
    room_len = args.max_seq_len - (1 if head == "que" else 0)  # squad.to_rows does not know about [QUE]
    rows, _ = squad.to_rows(examples, tokenizer, args.max_query_tokens, room_len, args.doc_stride, train=True)
    kept = [r for r in rows if r["answers"]]
    counts["windows/without_answer_left_out"] += len(rows) - len(kept)
    return kept


def evaluate(model, collator: QACollator, examples, tokenizer, args, head: str, device, autocast):
    room_len = args.max_seq_len - (1 if head == "que" else 0)
    rows, wins = squad.to_rows(examples, tokenizer, args.max_query_tokens, room_len, args.doc_stride, train=False)
    # Windows go through the model shortest first; the best span per question is then chosen in window
    # order, so ties resolve as they would in input order.
    order = finetune_loop.shortest_first(rows)
    found: list = [None] * len(rows)
    model.eval()
    with torch.no_grad():
        for s in range(0, len(rows), args.eval_batch_size):
            chunk = order[s: s + args.eval_batch_size]
            batch = collator([rows[k] for k in chunk])
            with autocast:
                start, end = model.span_logits(batch["input_ids"].to(device), batch["attention_mask"].to(device),
                                               batch["passage_mask"].to(device), batch["que_position"].to(device))
            start, end = start.float().cpu(), end.float().cpu()
            for b, k in enumerate(chunk):
                found[k] = best_span(start[b], end[b], batch["context_word"][b], args.max_answer_tokens)
    best: dict[int, tuple[float, int, int]] = {}
    for w, span in zip(wins, found):
        if span and (w.example not in best or span[0] > best[w.example][0]):
            best[w.example] = (span[0], w.first + span[1], w.first + span[2])
    predictions = {ex.id: squad.predict_text(ex, *best[n][1:]) if n in best else "" for n, ex in enumerate(examples)}
    return mlqa_metric.qa_evaluate(examples, predictions, args.qa_metric), predictions


def finetune_once(args, head: str, train_examples, eval_sets: dict[str, list], seed: int, max_steps: int | None,
                  save_to: Path | None = None) -> dict:
    """Train once and score every evaluation set; f1/exact_match are the one set's, or their mean over
    several (by_eval holds each), as training.finetune reports them."""
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    autocast = autocast_for(device)
    torch.manual_seed(seed)  # the fresh head (standard, or W_s/W_e on a plain XLM-R) and dropout
    model, tokenizer = load_model(args.init, head, args.trust_remote_code)
    model.to(device)
    collator = QACollator(tokenizer, head, args.max_query_tokens, args.max_seq_len, use_spacing=not args.no_word_spacing)
    counts: Counter = Counter()
    rows = train_rows(train_examples, tokenizer, args, head, counts)
    if not rows:
        raise ValueError(f"--train {args.train}: no training window holds its answer")

    def loss(model, batch):
        with autocast:
            return model(**batch)[0]

    max_steps = finetune_loop.total_steps(len(rows), args.batch_size, 1, args.epochs, max_steps or None)
    trained = finetune_loop.train(
        model, rows, lambda chunk: collator(chunk, train=True), loss, max_steps=max_steps,
        batch_size=args.batch_size, lr=args.lr, weight_decay=args.weight_decay, warmup_ratio=args.warmup_ratio,
        grad_clip=args.grad_clip, seed=seed, device=device, log_every=args.log_every,
        progress=None if args.no_progress else {"desc": f"{head} n={len(train_examples)} seed={seed}", "leave": False})
    counts.update(trained.counts)
    metrics, by_eval, predictions = finetune_loop.evaluate_all(
        eval_sets, lambda examples: evaluate(model, collator, examples, tokenizer, args, head, device, autocast))
    if save_to is not None:
        with atomic_files.replacing_folder(save_to / "final") as tmp, atomic_files.naming_disk_failures(save_to / "final"):
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        files = ({save_to / "predictions.json": next(iter(predictions.values()))} if len(predictions) == 1 else
                 {save_to / "predictions" / f"{label}.json": answers for label, answers in predictions.items()})
        for path, answers in files.items():  # one file per evaluation set, named by its label, when several
            with atomic_files.naming_disk_failures(path):
                atomic_files.write_text(path, json.dumps(answers, indent=2, ensure_ascii=False))
    return {"head": head, "seed": seed, "train_examples": len(train_examples), "train_windows": len(rows),
            "steps": max_steps, "train_seconds": trained.seconds, **metrics,
            **({"by_eval": by_eval} if len(by_eval) > 1 else {}),
            "losses": [{"step": r["step"], "loss": r["loss"]} for r in trained.losses], "counts": dict(counts)}


# ---- protocols ----

def spread(values: list[float]) -> dict:
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def few_shot(args, train_examples, eval_sets: dict[str, list]) -> dict:
    runs, summary = [], []
    for n in args.few_shot:
        if n > len(train_examples):
            raise ValueError(f"--few_shot {n}: --train {args.train} has only {len(train_examples)} examples")
        for head in args.head:
            results = []
            for seed in range(args.seed, args.seed + args.seeds):
                # The sample depends on (n, seed) only, so both heads see the same examples.
                sample = random.Random(seed).sample(train_examples, n)
                r = finetune_once(args, head, sample, eval_sets, seed, args.max_steps or 200)
                results.append(r)
                print(f"few-shot {head} n={n} seed={seed}: F1 {r['f1']:.2f} EM {r['exact_match']:.2f} "
                      f"({r['train_seconds']:.1f}s)", file=sys.stderr)
            runs.extend(results)
            entry = {"head": head, "examples": n, "seeds": len(results),
                     "f1": spread([r["f1"] for r in results]),
                     "exact_match": spread([r["exact_match"] for r in results])}
            if len(eval_sets) > 1:
                entry["by_eval"] = {label: {"f1": spread([r["by_eval"][label]["f1"] for r in results]),
                                            "exact_match": spread([r["by_eval"][label]["exact_match"] for r in results])}
                                    for label in eval_sets}
            summary.append(entry)
    if len(eval_sets) > 1:
        print(format_by_eval(summary))
    print(format_summary(summary))
    return {"runs": runs, "summary": summary}


def format_by_eval(summary: list[dict]) -> str:
    """Mean F1 per evaluation set (rows) for each (head, examples) (columns)."""
    labels = list(summary[0]["by_eval"])
    columns = [f"{s['head']} n={s['examples']}" for s in summary]
    lines = [f"{'F1':<12}" + "".join(f"{c:>16}" for c in columns)]
    for label in labels:
        lines.append(f"{label:<12}" + "".join(f"{s['by_eval'][label]['f1']['mean']:>16.2f}" for s in summary))
    return "\n".join(lines)


def format_summary(summary: list[dict]) -> str:
    lines = [f"{'head':<9} {'examples':>8} {'seeds':>5}   {'F1 mean ± sd [min, max]':<28} {'EM mean ± sd [min, max]':<28}"]
    for s in summary:
        f, e = s["f1"], s["exact_match"]
        lines.append(f"{s['head']:<9} {s['examples']:>8} {s['seeds']:>5}   "
                     f"{f['mean']:6.2f} ± {f['std']:5.2f} [{f['min']:.1f}, {f['max']:.1f}]".ljust(56)
                     + f"{e['mean']:6.2f} ± {e['std']:5.2f} [{e['min']:.1f}, {e['max']:.1f}]")
    return "\n".join(lines)


def full_data(args, train_examples, eval_sets: dict[str, list], out: Path) -> dict:
    runs = []
    for head in args.head:
        r = finetune_once(args, head, train_examples, eval_sets, args.seed, args.max_steps, save_to=out / head)
        runs.append(r)
        for label, m in r.get("by_eval", {}).items():
            print(f"{head} {label}: F1 {m['f1']:.2f} EM {m['exact_match']:.2f}")
        mean = f" (mean of {len(eval_sets)})" if len(eval_sets) > 1 else ""
        print(f"{head}: F1 {r['f1']:.2f} EM {r['exact_match']:.2f}{mean} ({r['steps']} steps, {r['train_seconds']:.1f}s)")
    return {"runs": runs}


# ---- command line ----

def build_parser() -> argparse.ArgumentParser:
    return qa_head_parser(__doc__)


def main(argv=None) -> dict:
    return run_heads(build_parser().parse_args(argv), "training.finetune_clism")


def run_heads(args: argparse.Namespace, command: str) -> dict:
    """The QA heads' runs, from `training.finetune --head ...` or this module's own command."""
    if args.task != "squad":
        sys.exit(f"{command}: --head {' '.join(args.head)}: extractive QA heads, for --task squad only")
    for key, value in QA_HEAD_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.output = args.output or "./output/finetune_clism"
    out = Path(args.output)
    try:
        args.init = init_folder.resolve(args.init, command)
        with output_guard.guarded(out, FINETUNE_RUN, f"python -m {command}"):
            return run_command(args, out, command)
    except Interrupted as stop:
        print(stop.line(command, resumable=False), file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{command}: interrupted: rerun the same command to start again", file=sys.stderr)
    except (ValueError, OutputError, ManifestError, atomic_files.DiskFailure) as e:
        sys.exit(f"{command}: {e}")
    sys.exit(EXIT_INTERRUPTED)


def run_command(args: argparse.Namespace, out: Path, command: str) -> dict:
    for flag, sample in zip(("train", "eval"), sample_paths("squad")):
        if getattr(args, flag) is None:
            setattr(args, flag, sample)
            print(f"{command}: --{flag} {sample} (bundled sample)", file=sys.stderr)
    if isinstance(args.eval, str):
        args.eval = [args.eval]
    quiet_transformers_progress()
    try:
        check_xlmr_init(args.init, args.head, args.trust_remote_code)
        # Once, not per run: every run of a few-shot sweep loads the same --init.
        args.max_seq_len = clamp_max_seq_len(args.max_seq_len, from_pretrained(AutoConfig, args.init,
                                                                                args.trust_remote_code), command)
        train_examples = squad.read_squad(args.train)
        eval_sets = {label: mlqa_metric.read_eval_file(path, args.qa_metric, args.eval_language)[: args.max_eval_examples]
                     for label, path in zip(finetune_loop.eval_labels(args.eval), args.eval)}
        if not train_examples:
            raise ValueError(f"--train {args.train}: no examples")
        if args.few_shot:
            result = few_shot(args, train_examples, eval_sets)
        else:
            result = full_data(args, train_examples[: args.max_train_examples], eval_sets, out)
    except (FileNotFoundError, ValueError, NonFiniteError) as e:
        sys.exit(f"{command}: {e}")
    except OSError as e:  # transformers' way of saying "no such folder, and not on the hub (or offline)"
        sys.exit(f"{command}: --init {args.init}: not a model folder nor a cached hub name "
                 f"({str(e).strip().splitlines()[0][:160]})")
    result = {"args": vars(args), **result}
    with atomic_files.naming_disk_failures(out / "metrics.json"):
        atomic_files.write_text(out / "metrics.json", json.dumps(result, indent=2, ensure_ascii=False))
    saved = [f"  metrics: {out / 'metrics.json'}"]
    if not args.few_shot:
        saved += [f"  {head} model: {out / head / 'final'}" for head in args.head]
    print("\n".join(saved))
    return result


if __name__ == "__main__":
    main()
