"""The flags of `training.finetune`, one parser for every fine-tuning: the mPMR tasks and, with --head,
CLISM's extractive-QA heads and their few-shot protocol (`training.finetune_clism` is the same parser
with `--task squad --head que` preset)."""
from __future__ import annotations

import argparse

from corpora.cli_flags import CommandParser
from training.tasks import mlqa_metric

# mPMR Table 5 (fine-tuning hyper-parameters): XQuAD/MLQA, CoNLL and PAWS-X columns.
TASK_DEFAULTS = {
    "squad": {"max_query_tokens": 64, "max_seq_len": 384, "batch_size": 8, "lr": 3e-5, "epochs": 3.0},
    "ner": {"max_query_tokens": 32, "max_seq_len": 192, "batch_size": 16, "lr": 1e-5, "epochs": 10.0},
    "pair": {"max_query_tokens": 64, "max_seq_len": 192, "batch_size": 16, "lr": 5e-5, "epochs": 10.0},
}
MPMR_DEFAULTS = {"warmup_ratio": 0.06, "weight_decay": 0.01}
# CLISM paper Appendix C (xMRC): batch 32, lr 3e-5, 384 subwords, 5 epochs, Adam (no decay), 10% warm-up.
QA_HEAD_DEFAULTS = {"max_query_tokens": 64, "max_seq_len": 384, "batch_size": 32, "lr": 3e-5, "epochs": 5.0,
                    "warmup_ratio": 0.1, "weight_decay": 0.0, "eval_batch_size": 64}
HEADS = ("que", "standard")  # the extractive-QA heads of a CLISM model (training/finetune_clism.py)
TASKS = ("ner", "pair", "squad")


def sizes(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated example counts, e.g. 64,128,256") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive example counts")
    return values



def build_parser(description: str | None = None) -> argparse.ArgumentParser:
    p = CommandParser(prog="python -m training.finetune", description=description,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", required=True, choices=TASKS,
                   help="squad: SQuAD v1.1-format JSON (SQuAD, MLQA, XQuAD), F1/EM; ner: CoNLL BIO, entity F1; "
                        "pair: XNLI/PAWS-X TSV, accuracy")
    p.add_argument("--init", required=True, metavar="PATH",
                   help="a saved MPMRForWAE or MRCReader folder, or any AutoModel name/path (fresh extractor); "
                        "the tokenizer is loaded from the same path")
    p.add_argument("--trust_remote_code", action="store_true",
                   help="let --init run the Python code it ships (an auto_map in its config); off: such a model is "
                        "refused. The project's own saved models never need it")
    p.add_argument("--train", metavar="FILE", help="training file in the task's format (default: the task's bundled "
                   "sample: XQuAD en articles 1-4, WikiANN en, PAWS-X de dev)")
    p.add_argument("--eval", metavar="FILE", nargs="+",
                   help="evaluation file(s) in the task's format, e.g. XQuAD in 12 languages (.json or .json.gz); "
                        "with several, metrics.json holds each file's metrics and their mean (default: the task's "
                        "bundled sample: XQuAD de articles 47-48, WikiANN de test, PAWS-X de test)")
    p.add_argument("--output", metavar="DIR", help="run folder: metrics.json, predictions, final/ "
                   "(default: ./output/finetune_TASK)")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.add_argument("--max_steps", type=int, default=None,
                   help="optimiser steps (default: --epochs over the rows); 0: no training, only evaluate --init "
                        "(no final/ written)")
    p.add_argument("--epochs", type=float, default=None, help="epochs when --max_steps is not given "
                   "(default, paper Table 5: squad 3, ner 10, pair 10)")
    p.add_argument("--lr", type=float, default=None, help="peak learning rate (default: squad 3e-5, ner 1e-5, pair 5e-5)")
    p.add_argument("--batch_size", type=int, default=None,
                   help="MRC rows per micro-batch (a row is a window, a (sentence, type) or a (pair, label); "
                        "default: squad 8, ner 16, pair 16)")
    p.add_argument("--grad_accum", type=int, default=1, help="micro-batches per optimiser step")
    p.add_argument("--max_seq_len", type=int, default=None, help="subwords per row (default: squad 384, ner/pair 192)")
    p.add_argument("--max_query_tokens", type=int, default=None, help="query subwords kept (default: squad/pair 64, ner 32)")
    p.add_argument("--doc_stride", type=int, default=128, help="squad: subwords of overlap between context windows")
    p.add_argument("--max_answer_tokens", type=int, default=30,
                   help="squad: longest answer considered, in subwords (HF run_qa's 30; 0: no limit)")
    p.add_argument("--threshold", type=float, default=0.5, help="ner: keep spans with sigmoid(S) above this")
    p.add_argument("--pair_template", choices=["description", "rationale"], default="description",
                   help="pair: description = label description query (paper Table 6); rationale = 'label Sen-1' "
                        "query and Sen-2 context, rationales by the paper's two passes")
    p.add_argument("--eval_language", default=None, metavar="LANG",
                   help="pair: evaluate only the rows whose 'language' column is LANG (XNLI dev/test hold 15 languages); "
                        "squad with --qa_metric mlqa: the answers' language, when the file name does not say it")
    p.add_argument("--qa_metric", choices=mlqa_metric.QA_METRICS, default="squad",
                   help="squad: EM/F1 of SQuAD v1.1's script (XQuAD, SQuAD; what the mPMR paper uses for them); "
                        "mlqa: MLQA's own script (Unicode punctuation, each language's articles, zh by characters; "
                        "the language from MLQA's file names, test-context-XX-question-YY.json)")
    p.add_argument("--rationale_spans", type=int, default=3, help="pair: spans reported per prediction (description template)")
    p.add_argument("--show_rationales", type=int, default=5, help="pair: predictions printed with their rationale")
    p.add_argument("--warmup_ratio", type=float, default=None,
                   help="share of steps warming up linearly, then linear decay (default 0.06; --head que/standard 0.1)")
    p.add_argument("--weight_decay", type=float, default=None,
                   help="AdamW weight decay, not on biases and LayerNorm (default 0.01; --head que/standard 0)")
    p.add_argument("--head", nargs="+", choices=HEADS, default=None,
                   help="squad with a CLISM model: que = the paper's [QUE] head (Eq. 10); standard = no [QUE], a fresh "
                        "start/end classifier; both for the comparison (training/finetune_clism.py). Default: the "
                        "mPMR span extractor")
    p.add_argument("--few_shot", type=sizes, default=None, metavar="N,N,...",
                   help="with --head: the few-shot protocol over these training-set sizes (paper: 64,128,256,512,"
                        "1024); without it, one full-data run per head")
    p.add_argument("--seeds", type=int, default=5, help="--few_shot: samples (and seeds) per size (paper: 5)")
    p.add_argument("--no_word_spacing", action="store_true",
                   help="place spaces between words by the script rule instead of the text's own spacing (an ablation)")
    p.add_argument("--grad_clip", type=float, default=1.0, help="clip the global gradient norm to this (0: off)")
    p.add_argument("--extractor_hidden_size", type=int, default=1024,
                   help="FFN width of a fresh extractor (an --init without one); PMR reference: 1024")
    p.add_argument("--max_train_examples", type=int, default=None, help="use only the first N training examples")
    p.add_argument("--max_eval_examples", type=int, default=None, help="evaluate only the first N examples")
    p.add_argument("--eval_every", type=int, default=0, help="also evaluate every N steps (0: only at the end)")
    p.add_argument("--eval_batch_size", type=int, default=None, help="rows per evaluation batch (default: 2 x --batch_size)")
    p.add_argument("--log_every", type=int, default=10, help="steps between training-loss records")
    p.add_argument("--seed", type=int, default=0, help="seed of the row order, the fresh extractor and dropout "
                   "(--few_shot: the first of --seeds seeds)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when there is one)")
    return p


def qa_head_parser(description: str | None = None) -> argparse.ArgumentParser:
    """`python -m training.finetune_clism`: training.finetune's parser with --task squad, --head que and the
    CLISM paper's defaults preset (the flags are the same)."""
    p = build_parser(description)
    p.prog = "python -m training.finetune_clism"
    for action in p._actions:
        if action.dest == "task":
            action.required = False
    p.set_defaults(task="squad", head=["que"], output="./output/finetune_clism", **QA_HEAD_DEFAULTS)
    return p
