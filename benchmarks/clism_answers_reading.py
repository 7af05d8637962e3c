"""CLISM answers on real NTREX pairs, per aligner, for reading by eye: before and after a change to the
answer rules, on the same alignments.

    python benchmarks/clism_answers_reading.py align --langs de,zh,ar,hi,ja --aligner fast_align --out A.pkl
    python benchmarks/clism_answers_reading.py align --langs de --aligner simalign --aligner_model DIR \
        --lines 300 --out S.pkl
    python benchmarks/clism_answers_reading.py answers A.pkl --out answers.jsonl   # under the rules checked out
    python benchmarks/clism_answers_reading.py compare before.jsonl after.jsonl --sample 40 --seed 1
    python benchmarks/clism_answers_reading.py compare before.jsonl after.jsonl --changed 20   # changed ones

`align` runs the job's own stages in this process (the English words and informative spans of
spaCy NER, the target tokeniser and tags, the aligner: fast_align and eflomal over every pair read,
simalign over the pairs with a span) and pickles the pairs with their alignments, so that answer
rules of two checkouts (`answers`, run with the copy of this script inside each checkout: it puts
its own checkout first on the path) are compared on the same links: eflomal's sampler is unseeded and would otherwise differ between two runs of the job.
`answers` projects every span as the job's project step does (corpora/clism/answers/spans.py, then
overlapping answers dropped) and writes one JSON line per English span. `compare` counts the
answers that changed per language pair and prints a seeded sample of spans with both answers, to be
judged by hand (docs/clism_pairs.md, "Answers read by eye").
"""
from __future__ import annotations

import argparse
import collections
import json
import pickle
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NTREX = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "parallel" / "ntrex128"


def read_ntrex(lang: str, lines: int | None, ntrex: Path) -> list[tuple[str, str]]:
    english = (ntrex / "en.txt").read_text(encoding="utf-8").splitlines()
    target = (ntrex / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
    pairs = list(zip(english, target))
    return pairs[:lines] if lines else pairs


def align(args) -> None:
    from corpora.clism.aligners import EflomalAligner, FastAlignAligner, SimAlignAligner
    from corpora.clism.ner_spans import CachedNer, informative_spans, load_ner_pipeline
    from corpora.word_tags import tag_words
    from corpora.words import get_tokenizer, stop_words

    nlp = load_ner_pipeline("en_core_web_sm")
    english_stops = stop_words("en")
    ner = CachedNer(nlp, derive=lambda words, ents: informative_spans(words, ents, english_stops)[0])
    out = []
    for lang in args.langs.split(","):
        texts = read_ntrex(lang, args.lines, Path(args.ntrex))
        tagged = ner.tag([en for en, _ in texts])
        targets = get_tokenizer(lang).tokenize_many([x for _, x in texts])
        pairs = []
        for k, ((en, x), tag, tgt) in enumerate(zip(texts, tagged, targets)):
            if not tag.words or not tgt or len(tag.words) > args.max_words or len(tgt) > args.max_words:
                continue
            tags = tag_words(lang, x, tgt) if tag.derived else ()
            pairs.append({"line": k, "lang": lang, "src": tag.words, "tgt": tuple(tgt), "spans": tuple(tag.derived),
                          "tags": tags})
        if args.aligner == "simalign":
            pairs = [p for p in pairs if p["spans"]]
            aligner = SimAlignAligner(args.aligner_model, args.aligner_method)
            links = []
            for b in range(0, len(pairs), 16):
                links += aligner.align([(p["src"], p["tgt"]) for p in pairs[b : b + 16]])
        elif args.aligner == "eflomal":
            links = EflomalAligner(prior_stop_words=english_stops).align([(p["src"], p["tgt"]) for p in pairs])
        else:
            links = FastAlignAligner(prior_stop_words=english_stops).align([(p["src"], p["tgt"]) for p in pairs])
        for p, a in zip(pairs, links):
            if p["spans"]:
                out.append({**p, "alignment": sorted(a), "aligner": args.aligner})
        print(f"en-{lang}: {len(pairs)} pairs aligned ({args.aligner})", file=sys.stderr)
    with open(args.out, "wb") as f:
        pickle.dump(out, f)


def dropped_span(words, label) -> bool:
    """The English span rule of the checkout run (corpora/clism/ner_spans.py) that came after the
    pickle's spans were taken."""
    try:
        from corpora.clism.ner_spans import NAME_LABELS, _only_initialisms
    except ImportError:
        return False
    return label in NAME_LABELS and _only_initialisms(words)


def answers(args) -> None:
    from corpora.clism.answers.spans import answer_words, drop_overlapping, project_answer
    from corpora.words import stop_words

    with open(args.pickle, "rb") as f:
        pairs = pickle.load(f)
    english_stops = stop_words("en")
    with open(args.out, "w", encoding="utf-8") as out:
        for p in pairs:
            words = answer_words(p["lang"])
            results, emitted = [], []
            try:
                from corpora.clism.answers.repeats import pair_answers
            except ImportError:  # a checkout from before repeated names were read together
                def pair_answers(alignment, src, tgt, spans, gap, stops, words, tags):
                    return [project_answer(alignment, src, tgt, s.start, s.end, s.label, gap, stops, words, tags)
                            for s in spans]
            found = pair_answers(p["alignment"], p["src"], p["tgt"], p["spans"], 2, english_stops, words, p["tags"])
            for s, answer in zip(p["spans"], found):
                results.append(answer if isinstance(answer, str) else (answer.start, answer.end))
                if not isinstance(answer, str):
                    emitted.append((s, answer.start, answer.end))
            kept, _ = drop_overlapping(emitted)
            kept_spans = {(s.start, s.end) for s, _, _ in kept}
            for s, result in zip(p["spans"], results):
                if dropped_span(p["src"][s.start : s.end + 1], s.label):
                    result = "span/common_noun_initialism"
                if not isinstance(result, str) and (s.start, s.end) not in kept_spans:
                    result = "overlapping_answers"
                out.write(json.dumps({
                    "aligner": p["aligner"], "lang": p["lang"], "line": p["line"], "label": s.label,
                    "src": " ".join(p["src"][s.start : s.end + 1]), "span": [s.start, s.end],
                    "answer": result if isinstance(result, str) else " ".join(p["tgt"][result[0] : result[1] + 1]),
                    "at": None if isinstance(result, str) else list(result)}, ensure_ascii=False) + "\n")


def compare(args) -> None:
    def load(path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    before, after = load(args.before), load(args.after)
    key = lambda r: (r["aligner"], r["lang"], r["line"], tuple(r["span"]))  # noqa: E731
    old = {key(r): r for r in before}
    changed = collections.Counter()
    rows_changed = collections.defaultdict(set)
    emitted = collections.Counter()
    by_group = collections.defaultdict(list)
    for r in after:
        group = (r["aligner"], r["lang"])
        o = old[key(r)]
        if (o["at"], o["answer"]) != (r["at"], r["answer"]):
            changed[group] += 1
            rows_changed[group].add(r["line"])
        emitted[group, "before"] += o["at"] is not None
        emitted[group, "after"] += r["at"] is not None
        by_group[group].append((o, r))
    print("aligner\tpair\tspans\temitted before\temitted after\tanswers changed\tpairs changed")
    for group in sorted(by_group):
        print(f"{group[0]}\ten-{group[1]}\t{len(by_group[group])}\t{emitted[group, 'before']}\t{emitted[group, 'after']}"
              f"\t{changed[group]}\t{len(rows_changed[group])}")
    if args.sample:
        for group in sorted(by_group):
            rng = random.Random(f"{args.seed}/{group[0]}/{group[1]}")
            items = by_group[group]
            picked = sorted(rng.sample(range(len(items)), min(args.sample, len(items))))
            print(f"\n## {group[0]} en-{group[1]}")
            for k in picked:
                o, r = items[k]
                mark = "=" if (o["at"], o["answer"]) == (r["at"], r["answer"]) else "≠"
                print(f"{k}\t{r['line']}\t{r['label']}\t{r['src']}\t{o['answer']}\t{mark}\t{r['answer']}")
    if args.changed is not None:
        for group in sorted(by_group):
            print(f"\n## changed {group[0]} en-{group[1]}")
            items = [(o, r) for o, r in by_group[group] if (o["at"], o["answer"]) != (r["at"], r["answer"])]
            if args.changed:
                rng = random.Random(f"{args.seed}/changed/{group[0]}/{group[1]}")
                items = [items[k] for k in sorted(rng.sample(range(len(items)), min(args.changed, len(items))))]
            for o, r in items:
                print(f"{r['line']}\t{r['label']}\t{r['src']}\t{o['answer']}\t→\t{r['answer']}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("align")
    a.add_argument("--langs", required=True)
    a.add_argument("--aligner", choices=("fast_align", "eflomal", "simalign"), default="fast_align")
    a.add_argument("--aligner_model")
    a.add_argument("--aligner_method", default="itermax")
    a.add_argument("--lines", type=int, default=None, help="the first N lines of each file (default: all)")
    a.add_argument("--max_words", type=int, default=100)
    a.add_argument("--ntrex", default=str(NTREX))
    a.add_argument("--out", required=True)
    b = sub.add_parser("answers")
    b.add_argument("pickle")
    b.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--sample", type=int, default=0)
    c.add_argument("--seed", default="1")
    c.add_argument("--changed", type=int, nargs="?", const=0, default=None,
                   help="list the answers that changed (all, or a seeded sample of N a group)")
    args = parser.parse_args(argv)
    {"align": align, "answers": answers, "compare": compare}[args.command](args)


if __name__ == "__main__":
    main()
