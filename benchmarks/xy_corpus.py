"""Throughput of xy_corpus against SentencePiece encoding alone, and the Sinkhorn variants compared.

    python benchmarks/xy_corpus.py [--repeat 20] [--vocab output/vocap/spm.model]

1. Throughput. The bundled samples (8 languages of monolingual text, 7 language pairs of bitext)
   are repeated `--repeat` times (distinct line ids, so the job sees N lines) and measured two ways
   in one run, in input tokens per second and per CPU second:
   * encode  the stock sentencepiece encoding of every line and both sides of every pair, batched
             as the job does (one thread), no Beam: the floor of any job that tokenises;
   * job     the whole Beam job (DirectRunner, one worker): read, tokenise, pack, count, Sinkhorn,
             draw, sorted Parquet shards, stats.
   The ratio job/encode says what Beam, packing and writing cost on top of tokenisation.
2. Sinkhorn. The balanced plan with the zero-data mass removed (the job's) against POT's unbalanced
   solver, on the sample's counts, an English-centric corpus and a CCMatrix-like one of 60
   languages: mass on pairs with no data, distance of the sampled language marginal to p^(1/T)
   (L1 of the marginals of the sampled pairs), and solve time.

The vocabulary is the vocap job's on its bundled sample (built in a temporary folder when --vocab
is not given).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sentencepiece as spm  # noqa: E402

from corpora import bitext as parallel  # noqa: E402
from corpora.xy import sinkhorn  # noqa: E402
from benchmarks.timing import Clock  # noqa: E402
from pipelines import vocap, xy_corpus  # noqa: E402


def read_bitext(spec: str) -> tuple[str, list[tuple[str, str]]]:
    source = xy_corpus.xy_shards.parse_bitext_spec(spec)
    handles = [open(p, "rb") for p in source.paths]
    if len(handles) == 2:
        records = parallel.read_two_files(handles[0], handles[1], source.as_pair_source(), source.key, 1 << 30)
    else:
        records = parallel.read_single_file(handles[0], source.as_pair_source(), source.key, 1 << 30)
    pairs = [(r.src_text, r.tgt_text) for r in records if isinstance(r, parallel.ParallelPair)]
    for h in handles:
        h.close()
    return source.key, pairs


def write_inputs(tmp: Path, repeat: int) -> tuple[list[str], list[str], list[str]]:
    """The samples repeated: (job flags, every mono line, every bitext side)."""
    mono_specs, bitext_specs = xy_corpus._sample_specs()
    flags, mono_lines, sides = [], [], []
    for spec in mono_specs:
        lang, _, path = spec.partition("=")
        lines = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()] * repeat
        (tmp / f"{lang}.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        flags += ["--mono", f"{lang}={tmp / f'{lang}.txt'}"]
        mono_lines += lines
    for spec in bitext_specs:
        key, pairs = read_bitext(spec)
        pairs = pairs * repeat
        (tmp / f"{key}.tsv").write_text("".join(f"{x}\t{y}\n" for x, y in pairs), encoding="utf-8")
        flags += ["--bitext", f"{key}={tmp / f'{key}.tsv'}"]
        sides += [x for x, _ in pairs] + [y for _, y in pairs]
    return flags, mono_lines, sides


def throughput(vocab: str, repeat: int, tmp: Path) -> None:
    flags, mono_lines, sides = write_inputs(tmp, repeat)
    sp = spm.SentencePieceProcessor(model_file=vocab)
    sp.encode(["warm up"])
    with Clock() as encode:
        tokens = 0
        for texts in (mono_lines, sides):
            for start in range(0, len(texts), 1024):  # the job's largest batch
                tokens += sum(len(ids) for ids in sp.encode(texts[start:start + 1024], num_threads=1))
    with Clock() as job:
        stats = xy_corpus.run(["--runner", "DirectRunner", "--vocab", vocab, "--output", str(tmp / "out"), *flags])
    values = {(r["lang"], r["metric"]): r["value"] for r in stats.to_pylist()}
    sequences = sum(v for (_, m), v in values.items() if m == "mrtd/sequences")
    drawn = sum(v for (_, m), v in values.items() if m == "trtd/rows")
    print(f"\nthroughput: {len(mono_lines):,} monolingual lines + {len(sides) // 2:,} bitext pairs "
          f"({repeat} copies of the samples), {tokens:,} input tokens; {os.cpu_count()} cores visible")
    # CPU seconds as well as wall: on a shared machine the wall ratio moves with the neighbours' load
    print(f"{'stage':<8}{'wall s':>9}{'cpu s':>9}{'tokens/s':>12}{'tokens/cpu s':>14}{'wall vs encode':>16}"
          f"{'cpu vs encode':>15}")
    for name, clock in (("encode", encode), ("job", job)):
        print(f"{name:<8}{clock.wall:>9.2f}{clock.cpu:>9.2f}{tokens / clock.wall:>12,.0f}{tokens / clock.cpu:>14,.0f}"
              f"{encode.wall / clock.wall:>16.3f}{encode.cpu / clock.cpu:>15.3f}")
    print(f"(job wrote {sequences:,} MRTD sequences and {drawn:,} TRTD rows)")


def ccmatrix_like(n_langs: int, seed: int) -> dict[tuple[str, str], int]:
    """Mined bitext in the shape of CCMatrix: log-uniform pair sizes, English in every pair, half
    of the X-Y pairs missing, more data between big languages."""
    rng = random.Random(seed)
    langs = ["en"] + [f"l{i:02d}" for i in range(1, n_langs)]
    size = {lang: 10 ** rng.uniform(3, 7) for lang in langs}
    size["en"] = 1e8
    counts = {}
    for i, a in enumerate(langs):
        for b in langs[i + 1:]:
            if a == "en" or rng.random() < 0.5:
                counts[(a, b)] = int(min(size[a], size[b]) * rng.uniform(0.05, 0.5))
    return counts


def sampled_marginal(plan: np.ndarray) -> np.ndarray:
    return (plan.sum(axis=0) + plan.sum(axis=1)) / 2


def compare_sinkhorn(sample_counts: dict[tuple[str, str], int], temperature: float) -> None:
    cases = {
        "sample": sample_counts,
        "en-centric": {("en", x): n for x, n in (("fr", 1_000_000), ("de", 500_000), ("ar", 200_000),
                                                 ("hi", 50_000), ("sw", 10_000), ("vi", 300_000))},
        "ccmatrix-60": ccmatrix_like(60, 0),
    }
    print(f"\nSinkhorn (T={temperature:g}): mass on pairs with no data, L1 of the sampled language marginal to "
          "p^(1/T), solve time")
    print(f"{'corpus':<13}{'langs':>6}{'pairs':>7}{'method':>22}{'no-data mass':>14}{'L1 to p^(1/T)':>15}{'ms':>9}")
    for name, counts in cases.items():
        langs, matrix = sinkhorn.count_matrix(counts)
        marginal = sinkhorn.temperature_marginal(sinkhorn.language_shares(matrix), temperature)
        cost = sinkhorn.cost_matrix(matrix)
        started = time.perf_counter()
        result = sinkhorn.sinkhorn_pair_probs(counts, temperature)
        balanced_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        unbalanced = sinkhorn.unbalanced_plan(marginal, cost, reg_m=1.0)
        unbalanced_ms = (time.perf_counter() - started) * 1000
        kept_unbalanced, removed_unbalanced = sinkhorn.remove_zero_data_mass(unbalanced, matrix)
        rows = (("balanced, removed", result.removed_mass, result.probs, balanced_ms),
                ("unbalanced reg_m=1", removed_unbalanced, kept_unbalanced, unbalanced_ms))
        for method, removed, probs, ms in rows:
            distance = np.abs(sampled_marginal(probs) - marginal).sum()
            print(f"{name:<13}{len(langs):>6}{int((matrix > 0).sum() // 2):>7}{method:>22}{removed:>14.2e}"
                  f"{distance:>15.3f}{ms:>9.1f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="copies of the samples (default %(default)s)")
    parser.add_argument("--vocab", default=None, help="a vocap spm.model (default: vocap on its sample, built here)")
    parser.add_argument("--temperature", type=float, default=xy_corpus.DEFAULT_TEMPERATURE)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="xy-bench-") as tmp:
        tmp = Path(tmp)
        vocab = args.vocab
        if vocab is None:
            vocap.run(["--output", str(tmp / "vocap")])
            vocab = str(tmp / "vocap" / "spm.model")
        throughput(vocab, args.repeat, tmp)
    sample_counts = {}
    for spec in xy_corpus._sample_specs()[1]:
        key, pairs = read_bitext(spec)
        sample_counts[tuple(key.split("-"))] = len(pairs)
    compare_sinkhorn(sample_counts, args.temperature)


if __name__ == "__main__":
    main()
