"""Throughput of clism_pairs with the statistical aligner: pairs per second per core.

    python benchmarks/clism_pairs.py [--repeat 120] [--langs fr,vi] [--aligner fast_align|eflomal]
                                     [--rounds 3] [--compare_with /tmp/checkout-of-another-commit ...]
    python benchmarks/clism_pairs.py --ntrex de,fr,el,vi,ar [--ntrex_lines 1997] ...   # real text
    python benchmarks/clism_pairs.py --ntrex de,fr --aligner simalign --aligner_model DIR --no_stages

The bundled sample is repeated (`--repeat` copies of each language pair's 42 lines, so the job
sees N distinct line ids; 120 copies = 20,160 pairs), or with --ntrex the real NTREX-128 test set
(`$XLU_SHARED_DATA/parallel/ntrex128`, default ../shared/data: en.txt and X.txt, 1,997 line-aligned
news sentences, each English line once per target language), and the same input is measured in one run:

* job        the whole job as a user runs it, `python -m pipelines.clism_pairs` in a fresh process
             (DirectRunner, one worker): imports, model loading, read, NER, alignment, projection,
             Parquet; CPU seconds of that process tree;
* DIR's name with --compare_with DIR (repeatable): the same command run from DIR (its code);
* ner        spaCy NER on every English line (the job's pipeline, nlp.pipe), plus target tokenisation,
             in this process, no Beam;
* ner_once   the same through CachedNer as the job runs it: NER once per distinct English line;
* alignment  the statistical aligner (--aligner, default fast_align as the job) over the same
             tokenised pairs, in this process, no Beam.

With --rounds N the job runs (this checkout, then every --compare_with) are interleaved N times
and the least CPU time of each is reported: on a shared machine load only ever adds time, so the
minimum is the best estimate of each one's own cost, and interleaving spreads any load over all.
The job's output files are compared byte for byte with every other checkout's (same input, same
seed: they must be equal unless the code changed what is written).

"Per core" divides by CPU seconds (user + system, the process and its children: eflomal runs as
a child process and may use several threads), not wall time, so that the figure does not depend on
how many cores the host lends. Repetition flatters the job: the sample's 42 English lines are
shared by its four language pairs and repeated, so the job tags 42 distinct sentences whatever
--repeat is, and eflomal's vocabulary stays small. --ntrex measures real, non-repeated text (there
the English side repeats only once per target language, as in any multi-way corpus); see
docs/clism_pairs.md for both.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.wiki_mrc import measure  # noqa: E402  (a command's process-tree CPU and peak RSS)
from corpora import bitext as parallel  # noqa: E402
from corpora.clism.aligners import make_aligner  # noqa: E402
from corpora.clism.ner_spans import CachedNer, load_ner_pipeline  # noqa: E402
from corpora.words import get_tokenizer, stop_words  # noqa: E402
from benchmarks.timing import Clock  # noqa: E402
from pipelines import clism_pairs  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NTREX = Path(os.environ.get("XLU_SHARED_DATA", REPO.parent / "shared" / "data")) / "parallel" / "ntrex128"

SAMPLE_FILES = {"fr": ("en-fr.en", "en-fr.fr"), "ar": ("en-ar.tsv",), "hi": ("en-hi.txt",), "vi": ("en-vi.tsv",)}


def sample_pairs(lang: str) -> list[tuple[str, str]]:
    """(English, X) texts of the bundled sample for one language pair."""
    base = Path(clism_pairs.sample_dir())
    files = SAMPLE_FILES[lang]
    source = parallel.PairSource(lang, files, True)
    if len(files) == 2:
        records = parallel.read_two_files(open(base / files[0], "rb"), open(base / files[1], "rb"), source, lang, 100)
    else:
        records = parallel.read_single_file(open(base / files[0], "rb"), source, lang, 100)
    return [(r.src_text, r.tgt_text) for r in records]


def ntrex_pairs(lang: str, lines: int) -> list[tuple[str, str]]:
    """(English, X) texts of the first `lines` lines of NTREX-128, as the job reads them."""
    files = (NTREX / "en.txt", NTREX / f"{lang}.txt")
    for f in files:
        if not f.is_file():
            raise SystemExit(f"--ntrex {lang}: {f} not found (set XLU_SHARED_DATA to the folder holding parallel/ntrex128)")
    source = parallel.PairSource(lang, tuple(map(str, files)), True)
    records = parallel.read_two_files(open(files[0], "rb"), open(files[1], "rb"), source, lang, 100)
    return [(r.src_text, r.tgt_text) for r in records if isinstance(r, parallel.ParallelPair)][:lines]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=120, help="copies of the sample (default %(default)s)")
    parser.add_argument("--langs", default="fr,vi,ar,hi")
    parser.add_argument("--ntrex", metavar="LANGS",
                        help="real text instead of the repeated sample: NTREX-128 en-X for these X (e.g. de,fr,el,vi,ar)")
    parser.add_argument("--ntrex_lines", type=int, default=1997, help="first N lines of each NTREX pair (default: all)")
    parser.add_argument("--aligner", choices=("fast_align", "eflomal", "simalign"), default="fast_align")
    parser.add_argument("--aligner_model", help="simalign: an encoder folder (python -m training.convert_e5 DIR)")
    parser.add_argument("--aligner_layer", default="7", help="simalign: the encoder layer (default %(default)s)")
    parser.add_argument("--aligner_method", default="argmax", help="simalign: argmax, itermax or match")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved job runs; the least CPU time of each is kept")
    parser.add_argument("--compare_with", type=Path, action="append", default=[],
                        help="a checkout of another commit whose job runs on the same input (repeatable)")
    parser.add_argument("--no_stages", action="store_true", help="time only the whole job(s), not NER and alignment apart")
    args = parser.parse_args(argv)
    if args.aligner == "simalign" and not args.aligner_model:
        parser.error("--aligner simalign needs --aligner_model DIR (python -m training.convert_e5 DIR)")
    aligner_flags = (["--aligner_model", args.aligner_model, "--aligner_layer", args.aligner_layer,
                      "--aligner_method", args.aligner_method] if args.aligner == "simalign" else [])
    langs = (args.ntrex or args.langs).split(",")

    with tempfile.TemporaryDirectory(prefix="clism-bench-") as tmp:
        texts, specs = {}, []
        for lang in langs:
            texts[lang] = ntrex_pairs(lang, args.ntrex_lines) if args.ntrex else sample_pairs(lang) * args.repeat
            path = Path(tmp) / f"en-{lang}.tsv"
            path.write_text("".join(f"{en}\t{x}\n" for en, x in texts[lang]), encoding="utf-8")
            specs += ["--pairs", f"{lang}={path}"]
        n = sum(len(v) for v in texts.values())
        distinct = len({en for v in texts.values() for en, _ in v})
        what = f"NTREX-128, first {args.ntrex_lines} lines" if args.ntrex else f"{args.repeat} copies of the sample"
        print(f"{n:,} pairs ({what}, {', '.join('en-' + lang for lang in langs)}), {distinct:,} distinct English lines")

        stages = {}
        if not args.no_stages:
            # Loading the model and the tokenizers is a once-per-worker cost: keep it out of the rates.
            nlp = load_ner_pipeline("en_core_web_sm")
            for lang in langs:
                get_tokenizer(lang).tokenize_many(["warm up"])
            with Clock() as stages["ner"]:
                tokenised = {}
                for lang in langs:
                    docs = nlp.pipe([en for en, _ in texts[lang]], batch_size=512)
                    src = [[t.text for t in doc] for doc in docs]
                    tgt = get_tokenizer(lang).tokenize_many([x for _, x in texts[lang]])
                    tokenised[lang] = list(zip(src, tgt))
            with Clock() as stages["ner_once"]:  # as the job: batches of 512, one cache for all pairs
                ner = CachedNer(nlp)
                for lang in langs:
                    for k in range(0, len(texts[lang]), 512):
                        batch = texts[lang][k:k + 512]
                        ner.tag([en for en, _ in batch])
                        get_tokenizer(lang).tokenize_many([x for _, x in batch])
            with Clock() as stages["alignment"]:
                for lang in langs:
                    make_aligner(args.aligner, prior_stop_words=stop_words("en"), model=args.aligner_model,
                                 layer=int(args.aligner_layer), method=args.aligner_method).align(tokenised[lang])

        job_args = ["-m", "pipelines.clism_pairs", "--runner", "DirectRunner", "--direct_num_workers", "1",
                    "--aligner", args.aligner, *aligner_flags, *specs]
        # -m puts the working directory first on sys.path: each checkout runs its own code.
        checkouts = {"job": REPO, **{c.name: c.resolve() for c in args.compare_with}}
        results: dict[str, list[dict]] = {name: [] for name in checkouts}
        for _ in range(args.rounds):
            for k, (name, checkout) in enumerate(checkouts.items()):
                out = Path(tmp) / f"out{k}"
                results[name].append(measure([sys.executable, *job_args, "--output", str(out), "--overwrite"], checkout))
        outputs = {name: parquet_bytes(Path(tmp) / f"out{k}") for k, name in enumerate(checkouts)}
        kept = sum(r["value"] for r in pq.read_table(Path(tmp) / "out0" / "stats.parquet").to_pylist()
                   if r["metric"] == "pairs/kept")

    print(f"\n{'stage':<12}{'wall s':>9}{'cpu s':>9}{'pairs/s':>10}{'pairs/s/core':>14}")
    for name, clock in stages.items():
        print(f"{name:<12}{clock.wall:>9.1f}{clock.cpu:>9.1f}{n / clock.wall:>10,.0f}{n / clock.cpu:>14,.0f}")
    print(f"\nwhole job in a fresh process, least CPU of {args.rounds} interleaved round(s); "
          f"{os.cpu_count()} cores visible; the job kept {kept:,} pairs")
    print(f"{'run':<24}{'cpu s':>8}{'wall s':>8}{'RSS MB':>8}{'pairs/s/core':>14}{'job/run cpu':>13}  same bytes  every run's cpu s")
    job_cpu = min(r["cpu"] for r in results["job"])
    for name, runs in results.items():
        best = min(runs, key=lambda r: r["cpu"])
        same = "yes" if outputs[name] == outputs["job"] else "NO"
        every = " ".join(f"{r['cpu']:.2f}" for r in runs)
        print(f"{name:<24}{best['cpu']:>8.2f}{best['wall']:>8.1f}{best['rss_mb']:>8.0f}{n / best['cpu']:>14,.0f}"
              f"{job_cpu / best['cpu']:>12.2f}x  {same:<10}  {every}")


def parquet_bytes(out: Path) -> dict[str, bytes]:
    """Every Parquet file of a job's output (rows, stats, dead letters), by relative path."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


if __name__ == "__main__":
    main()
