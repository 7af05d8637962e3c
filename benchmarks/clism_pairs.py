"""Throughput of clism_pairs with the statistical aligner: pairs per second per core.

    python benchmarks/clism_pairs.py [--repeat 50] [--langs fr,vi] [--aligner fast_align|eflomal]

The bundled sample is repeated (`--repeat` copies of each language pair's 42 lines, so the job
sees N distinct line ids) and the same input is measured three ways in one run:

* job        the whole Beam job (DirectRunner, one worker): read, NER, alignment, projection, Parquet;
* ner        spaCy NER (the job's pipeline, nlp.pipe) plus target tokenisation, no Beam;
* alignment  the statistical aligner (--aligner, default fast_align as the job) over the same
             tokenised pairs, no Beam.

"Per core" divides by CPU seconds (user + system, this process and its children: eflomal runs as
a child process and may use several threads), not wall time, so that the figure does not depend on
how many cores the host lends. Repetition makes eflomal's vocabulary small and NER's input
repetitive; both costs are dominated by per-token work, so the rates carry over to real text within
the noise of a shared machine (see docs/clism_pairs.md for numbers on the gold sets too).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora import parallel  # noqa: E402
from corpora.aligners import make_aligner  # noqa: E402
from corpora.ner_spans import load_ner_pipeline  # noqa: E402
from corpora.words import get_tokenizer, stop_words  # noqa: E402
from benchmarks.timing import Clock  # noqa: E402
from pipelines import clism_pairs  # noqa: E402

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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=50, help="copies of the sample (default %(default)s)")
    parser.add_argument("--langs", default="fr,vi,ar,hi")
    parser.add_argument("--aligner", choices=("fast_align", "eflomal"), default="fast_align")
    args = parser.parse_args(argv)
    langs = args.langs.split(",")

    with tempfile.TemporaryDirectory(prefix="clism-bench-") as tmp:
        texts, specs = {}, []
        for lang in langs:
            texts[lang] = sample_pairs(lang) * args.repeat
            path = Path(tmp) / f"en-{lang}.tsv"
            path.write_text("".join(f"{en}\t{x}\n" for en, x in texts[lang]), encoding="utf-8")
            specs += ["--pairs", f"{lang}={path}"]
        n = sum(len(v) for v in texts.values())
        print(f"{n:,} pairs ({args.repeat} copies of the sample, {', '.join('en-' + lang for lang in langs)})")

        # Loading the model and the tokenizers is a once-per-worker cost: keep it out of the rates.
        nlp = load_ner_pipeline("en_core_web_sm")
        for lang in langs:
            get_tokenizer(lang).tokenize_many(["warm up"])
        with Clock() as ner:
            tokenised = {}
            for lang in langs:
                docs = nlp.pipe([en for en, _ in texts[lang]], batch_size=512)
                src = [[t.text for t in doc] for doc in docs]
                tgt = get_tokenizer(lang).tokenize_many([x for _, x in texts[lang]])
                tokenised[lang] = list(zip(src, tgt))
        with Clock() as align:
            for lang in langs:
                make_aligner(args.aligner, prior_stop_words=stop_words("en")).align(tokenised[lang])  # as the job
        with Clock() as job:
            stats = clism_pairs.run(["--runner", "DirectRunner", "--output", os.path.join(tmp, "out"),
                                     "--aligner", args.aligner, *specs])
        kept = sum(r["value"] for r in stats.to_pylist() if r["metric"] == "pairs/kept")

    print(f"\n{'stage':<12}{'wall s':>9}{'cpu s':>9}{'pairs/s':>10}{'pairs/s/core':>14}")
    for name, clock in (("ner", ner), ("alignment", align), ("job", job)):
        print(f"{name:<12}{clock.wall:>9.1f}{clock.cpu:>9.1f}{n / clock.wall:>10,.0f}{n / clock.cpu:>14,.0f}")
    print(f"(job kept {kept:,} pairs; {os.cpu_count()} cores visible)")


if __name__ == "__main__":
    main()
