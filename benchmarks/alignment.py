"""Alignment quality against hand-made gold alignments: AER, precision, recall, span projection.

    python benchmarks/alignment.py --pairs ../shared/data/alignment-gold/enfr.src-tgt \
        --gold ../shared/data/alignment-gold/enfr.gold [--aligner fast_align|eflomal|simalign] [--extra_text FILE ...]
    python benchmarks/alignment.py --pairs .../roen.src-tgt --gold .../roen.gold --english second
    python benchmarks/alignment.py --pairs .../enfr.src-tgt --gold .../enfr.gold --aligner simalign \
        --aligner_model runs/e5 --aligner_layers 4 6 8 10 12 --aligner_methods argmax itermax   # layer choice

Files as in ../shared/data/alignment-gold: `src ||| tgt` tokenised by spaces, and gold links `i-j`
(sure) or `ipj` (possible), 1-based. AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|) with S ⊆ P (Och & Ney
2003); precision = |A∩P| / |A|, recall = |A∩S| / |S|.

Span projection, the number clism_pairs depends on: spaCy NER on the English side, the informative
spans of the job, each projected through the aligner's links (min..max, --max_gap, then the job's
answer rules of corpora/clism/answers/spans.py: edges trimmed, answers of only stop words rejected) and
through the gold sure links (min..max, no gap limit). exact = exact matches / spans the gold links project (a
span the aligner rejects counts as a miss); exact_of_emitted = exact matches / spans the job would
emit, i.e. the precision of the spans in the output.

The statistical aligner learns from the gold sentences plus --extra_text (more parallel text in the
same format and column order); only the gold sentences are scored. The last line printed is
`AER=0.xxx precision=0.xxx recall=0.xxx`.

simalign with --aligner_layers/--aligner_methods scores every (layer, method) from one encoder pass
per batch and prints one `layer=L method=M AER=...` line each (no span projection, no timing: choose
on one set, then time the chosen setting alone). --threads sets torch's intra-op threads, so that
pairs/s is comparable between machines and runs (1 = one core).
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora.clism.aligners import (  # noqa: E402
    SIMALIGN_METHODS,
    SYMMETRISATIONS,
    EflomalAligner,
    FastAlignAligner,
    project_span,
)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: eflomal samples in a child process, whose
    time process_time() alone would leave out."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def read_pairs(path: str) -> list[tuple[list[str], list[str]]]:
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            src, sep, tgt = line.rstrip("\n").partition("|||")
            if not sep:
                sys.exit(f"{path}:{number}: expected `source ||| target`")
            pairs.append((src.split(), tgt.split()))
    return pairs


def read_gold(path: str) -> list[tuple[set, set]]:
    """Per line: (sure links, possible links), 0-based, possible including sure."""
    gold = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            sure, possible = set(), set()
            for token in line.split():
                kind = "p" if "p" in token else "-"
                i, j = token.split(kind)
                link = (int(i) - 1, int(j) - 1)
                possible.add(link)
                if kind == "-":
                    sure.add(link)
            gold.append((sure, possible))
    return gold


def score(predicted, gold) -> dict[str, float]:
    a = sum(len(p) for p in predicted)
    s = sum(len(g[0]) for g in gold)
    a_s = sum(len(p & g[0]) for p, g in zip(predicted, gold))
    a_p = sum(len(p & g[1]) for p, g in zip(predicted, gold))
    return {"aer": 1 - (a_s + a_p) / (a + s), "precision": a_p / a if a else 0.0, "recall": a_s / s}


def span_projection(pairs, predicted, gold, english: str, max_gap: int, spacy_model: str,
                    target_lang: str | None) -> dict[str, float]:
    from spacy.tokens import Doc

    from corpora.clism.answers.spans import PUNCTUATION_RULES_ONLY, answer_words, drop_overlapping, project_answer
    from corpora.clism.ner_spans import informative_spans, load_ner_pipeline
    from corpora.words import stop_words

    nlp = load_ner_pipeline(spacy_model)
    en_stop = stop_words("en")
    target_answer_words = answer_words(target_lang) if target_lang else PUNCTUATION_RULES_ONLY
    flip = english == "second"
    english_words = [(t if flip else s) for s, t in pairs]
    docs = nlp.pipe([Doc(nlp.vocab, words=w) for w in english_words], batch_size=256)
    spans = exact = rejected = 0
    target_side = [(s if flip else t) for s, t in pairs]
    for words, target_words, doc, links, (sure, _) in zip(english_words, target_side, docs, predicted, gold):
        if flip:  # make English the source of both alignments
            links = {(j, i) for i, j in links}
            sure = {(j, i) for i, j in sure}
        kept, _ = informative_spans(words, [(e.start, e.end, e.label_) for e in doc.ents], en_stop)
        answers = []  # clism_pairs' project step: each span, then answers that share target words go
        for span in kept:
            mine = project_answer(links, words, target_words, span.start, span.end, span.label, max_gap, en_stop,
                                  target_answer_words)
            if not isinstance(mine, str):
                answers.append((span, mine.start, mine.end))
        answers, _ = drop_overlapping(answers)
        emitted_of = {(span.start, span.end): (start, end) for span, start, end in answers}
        for span in kept:
            reference = project_span(sure, span.start, span.end, max_gap=10_000)
            if isinstance(reference, str):
                continue
            spans += 1
            mine = emitted_of.get((span.start, span.end))
            rejected += mine is None
            exact += mine == reference
    emitted = spans - rejected
    return {"spans": spans, "exact": exact / spans if spans else 0.0, "rejected": rejected / spans if spans else 0.0,
            "exact_of_emitted": exact / emitted if emitted else 0.0}


def language_from_name(path: str) -> str | None:
    """The non-English code of a gold file named as in ../shared (enfr.src-tgt -> fr, roen -> ro)."""
    stem = Path(path).name.split(".")[0]
    if len(stem) == 4 and "en" in (stem[:2], stem[2:]):
        return stem[2:] if stem[:2] == "en" else stem[:2]
    return None


def layer_sweep(aligner, pairs, gold, args) -> dict[str, dict[str, float]]:
    methods = args.aligner_methods or [args.aligner_method]
    predicted = {(layer, method): [] for layer in args.aligner_layers for method in methods}
    for k in range(0, len(pairs), args.batch_size):
        for key, links in aligner.align_layers(pairs[k:k + args.batch_size], args.aligner_layers, methods).items():
            predicted[key] += links
    results = {}
    for (layer, method), links in predicted.items():
        result = score(links, gold)
        results[f"layer={layer} method={method}"] = result
        print(f"{Path(args.pairs).name}: simalign {args.aligner_model} layer={layer} method={method} "
              f"AER={result['aer']:.4f} precision={result['precision']:.4f} recall={result['recall']:.4f}")
    best = min(results, key=lambda k: results[k]["aer"])
    print(f"lowest AER: {best} ({results[best]['aer']:.4f})")
    return results


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", required=True, help="gold sentences, `src ||| tgt`, tokenised")
    parser.add_argument("--gold", required=True, help="gold links, 1-based i-j / ipj")
    parser.add_argument("--aligner", choices=("fast_align", "eflomal", "simalign"), default="fast_align",
                        help="default %(default)s, as clism_pairs")
    parser.add_argument("--extra_text", nargs="*", default=[], help="more parallel text for fast_align/eflomal to learn from")
    parser.add_argument("--symmetrisation", choices=SYMMETRISATIONS, default="grow-diag-final-and")
    parser.add_argument("--prefix_len", type=int, default=0, help="fast_align/eflomal: compare words by this many first characters")
    parser.add_argument("--identity_prior", type=float, default=1.0, help="fast_align/eflomal: prior linking identical words (0 = none)")
    parser.add_argument("--iterations", type=int, default=5, help="fast_align: EM iterations")
    parser.add_argument("--tension", type=float, default=4.0, help="fast_align: diagonal tension λ")
    parser.add_argument("--p0", type=float, default=0.08, help="fast_align: null-word probability")
    parser.add_argument("--alpha", type=float, default=0.01, help="fast_align: Dirichlet α of the VB M-step (0 = plain EM)")
    parser.add_argument("--aligner_model", default="bert-base-multilingual-cased")
    parser.add_argument("--aligner_method", choices=sorted(SIMALIGN_METHODS), default="itermax")
    parser.add_argument("--aligner_layer", type=int, default=None)
    parser.add_argument("--aligner_layers", type=int, nargs="+", default=None,
                        help="simalign: score each of these layers (0 = embeddings) instead of --aligner_layer")
    parser.add_argument("--aligner_methods", nargs="+", choices=sorted(SIMALIGN_METHODS), default=None,
                        help="simalign with --aligner_layers: the matching methods to score (default: --aligner_method)")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (simalign)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--english", choices=("first", "second"), default="first",
                        help="which column is English, for span projection (roen: second)")
    parser.add_argument("--max_gap", type=int, default=2, help="as clism_pairs --max_gap")
    parser.add_argument("--spacy_model", default="en_core_web_sm")
    parser.add_argument("--target_lang", default=None,
                        help="the other language, for the answer rules' stop words (default: from the file name, "
                             "enfr -> fr, roen -> ro)")
    parser.add_argument("--no_spans", action="store_true", help="skip the span-projection measure")
    args = parser.parse_args(argv)

    pairs, gold = read_pairs(args.pairs), read_gold(args.gold)
    if len(pairs) != len(gold):
        sys.exit(f"--pairs has {len(pairs)} lines, --gold has {len(gold)}")
    extra = [p for path in args.extra_text for p in read_pairs(path)]
    from corpora.words import stop_words

    en_stop = stop_words("en")  # loaded before the clock starts: not alignment time
    started, cpu_started = time.time(), cpu_seconds()
    if args.aligner == "fast_align":
        aligner = FastAlignAligner(args.symmetrisation, args.iterations, args.tension, args.p0, args.alpha,
                                   args.identity_prior, en_stop, args.prefix_len)
        predicted = aligner.align(pairs + extra)[: len(pairs)]
        setting = (f"fast_align {args.symmetrisation} iterations={args.iterations} tension={args.tension} p0={args.p0} "
                   f"alpha={args.alpha} prefix_len={args.prefix_len} identity_prior={args.identity_prior} "
                   f"trained on {len(pairs) + len(extra)} pairs")
    elif args.aligner == "eflomal":
        aligner = EflomalAligner(args.symmetrisation, prefix_len=args.prefix_len, identity_prior=args.identity_prior,
                                 prior_stop_words=en_stop)
        predicted = aligner.align(pairs + extra)[: len(pairs)]
        setting = f"eflomal {args.symmetrisation} prefix_len={args.prefix_len} identity_prior={args.identity_prior} trained on {len(pairs) + len(extra)} pairs"
    else:
        from corpora.clism.aligners import SimAlignAligner

        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        aligner = SimAlignAligner(args.aligner_model, args.aligner_method, args.aligner_layer)
        if args.aligner_layers:
            return layer_sweep(aligner, pairs, gold, args)
        started, cpu_started = time.time(), cpu_seconds()  # the model load is not alignment time
        predicted = []
        for k in range(0, len(pairs), args.batch_size):
            predicted += aligner.align(pairs[k:k + args.batch_size])
        setting = f"simalign {args.aligner_method} {args.aligner_model} layer {aligner.layer} on {aligner.device}"
    seconds, cpu = time.time() - started, cpu_seconds() - cpu_started
    result = score(predicted, gold)
    trained = len(pairs) + len(extra)
    print(f"{Path(args.pairs).name}: {setting}; {len(pairs)} pairs scored, {trained} aligned in {seconds:.2f}s "
          f"({trained / seconds:.1f} pairs/s; {trained / cpu:.1f} pairs per CPU second, child processes included)")
    if not args.no_spans:
        spans = span_projection(pairs, predicted, gold, args.english, args.max_gap, args.spacy_model,
                                args.target_lang or language_from_name(args.pairs))
        result.update({f"span_{k}": v for k, v in spans.items()})
        print(f"span projection: {spans['spans']} gold-projectable NER spans, exact={spans['exact']:.3f} "
              f"rejected={spans['rejected']:.3f} exact_of_emitted={spans['exact_of_emitted']:.3f} (max_gap={args.max_gap})")
    print(f"AER={result['aer']:.4f} precision={result['precision']:.4f} recall={result['recall']:.4f}")
    return result


if __name__ == "__main__":
    main()
