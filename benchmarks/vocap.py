"""VoCAP's merged model against a joint SentencePiece model of the same size on a temperature-sampled mix.

    python benchmarks/vocap.py [--alpha 0.7] [--vocab_size 4000] [--grid 250:3000:250] [--en_lines 2000]

Data, all offline and real where we have it: English from the Wikipedia excerpt in
../shared/data/wikipedia (rendered by corpora.wikitext.parse, the high-resource language), French and
Romanian from the alignment gold sets in ../shared/data/alignment-gold (447 and 248 sentences, tokenised
text), and the bundled sample for ar, hi, ru, th, vi, zh (tens of sentences each: the low-resource
end). Both models see the same training sentences; every figure is on the same held-out sentences
(corpora.xy.vocap.split_heldout, seed 0).

* vocap  `python -m pipelines.vocap` on these files (DirectRunner, one worker), T = --vocab_size.
* joint  one unigram model of T pieces (the same 5 special tokens) trained on a mix that samples
         language i with probability n_i^0.3 / Σ n_j^0.3 (n = sentences; XLM-R's exponent), as many
         sentences as all languages hold together, drawn with repetition by keyed hash.

Per language: fertility = pieces per word on the held-out sentences (words from corpora.words, or
spaces for languages it lacks), and ALP (corpora.xy.vocap.average_log_probability: held-out, counts from
the language's training sentences). Higher ALP and lower fertility are better.
"""
from __future__ import annotations

import argparse
import io
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sentencepiece as spm

from corpora.dumps import pages as dumps
from corpora.xy import vocap
from corpora.wikitext.parse import parse_wikitext
from corpora.words import SUPPORTED_LANGS, get_tokenizer
from pipelines import vocap as vocap_job

SHARED = ROOT.parent / "shared" / "data"


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def english(max_lines: int, unit: str = "sentence") -> list[str]:
    """English Wikipedia lines: paragraphs, or (default) their sentences, so that English lines are as
    long as the other languages' sample sentences: ALP sums over a line, so line length weighs on it."""
    path = SHARED / "wikipedia" / "enwiki-excerpt.xml.bz2"
    lines = []
    with open(path, "rb") as f:
        for page in dumps.iter_pages_from_file(f, str(path), "bz2"):
            if isinstance(page, dumps.RawPage) and page.ns == 0 and not page.redirect:
                paragraphs = [s.strip() for s in parse_wikitext(page.text, "en").text.split("\n") if len(s.strip()) > 40]
                lines += paragraphs if unit == "paragraph" else [
                    s for p in paragraphs for s in SENTENCE_END.split(p) if len(s) > 20]
            if len(lines) >= max_lines:
                break
    return lines[:max_lines]


def gold_side(name: str, side: int) -> list[str]:
    text = (SHARED / "alignment-gold" / name).read_text(encoding="utf-8").splitlines()
    return [t.split(" ||| ")[side].strip() for t in text if " ||| " in t]


def corpora_by_lang(en_lines: int, en_unit: str = "sentence") -> dict[str, list[str]]:
    data = {"en": english(en_lines, en_unit), "fr": gold_side("enfr.src-tgt", 1), "ro": gold_side("roen.src-tgt", 0)}
    for lang in ("ar", "hi", "ru", "th", "vi", "zh"):
        data[lang] = [s for s in Path(vocap_job.sample_dir(), f"{lang}.txt").read_text(encoding="utf-8").splitlines() if s.strip()]
    return data


def joint_model(train: dict[str, list[str]], vocab_size: int, seed: int) -> bytes:
    """XLM-R style: a temperature-sampled mix (exponent 0.3 on sentence counts), one unigram model."""
    shares = vocap.smoothed_shares({lang: len(s) for lang, s in train.items()}, 0.3)
    mix = vocap.mixed_sample(train, shares, sum(map(len, train.values())), seed)
    model = io.BytesIO()
    spm.set_random_generator_seed(seed + 1)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(mix), model_writer=model, model_type="unigram", vocab_size=vocab_size,
        character_coverage=vocap.CHARACTER_COVERAGE, num_threads=1, shuffle_input_sentence=False,
        bos_id=0, pad_id=1, eos_id=2, unk_id=3, user_defined_symbols=["<mask>"], minloglevel=2,
        hard_vocab_limit=False)
    return model.getvalue()


def words(lang: str, sentence: str) -> int:
    if lang in SUPPORTED_LANGS:
        return max(1, len(get_tokenizer(lang).tokenize(sentence)))
    return max(1, len(sentence.split()))


def measure(model: bytes, train: list[str], heldout: list[str], lang: str) -> tuple[float, float]:
    sp = spm.SentencePieceProcessor(model_proto=model)
    pieces = sum(len(ids) for ids in sp.encode(heldout))
    fertility = pieces / sum(words(lang, s) for s in heldout)
    return fertility, vocap.average_log_probability(model, train, heldout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab_size", type=int, default=4000)
    parser.add_argument("--grid", default="250:3000:250")
    parser.add_argument("--en_lines", type=int, default=2000)
    parser.add_argument("--en_unit", choices=("sentence", "paragraph"), default="sentence",
                        help="English lines: Wikipedia sentences (as long as the other languages' lines) or paragraphs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.7, help="the vocap job's --alpha (data-share smoothing)")
    args = parser.parse_args(argv)
    data = corpora_by_lang(args.en_lines, args.en_unit)
    for lang, lines in sorted(data.items()):
        print(f"{lang}: {len(lines):,} lines, {sum(map(len, lines)) / len(lines):.0f} characters a line", file=sys.stderr)
    split = {lang: vocap.split_heldout(s, 0.1, args.seed, lang) for lang, s in data.items()}
    with tempfile.TemporaryDirectory() as tmp:
        flags = []
        for lang, sentences in data.items():
            path = Path(tmp, f"{lang}.txt")
            path.write_text("\n".join(sentences) + "\n", encoding="utf-8")
            flags += ["--mono", f"{lang}={path}"]
        started = time.time()
        vocap_job.run(flags + ["--vocab_size", str(args.vocab_size), "--grid", args.grid, "--seed", str(args.seed),
                               "--alpha", str(args.alpha), "--heldout", "0.1", "--output", str(Path(tmp, "out"))])
        vocap_seconds = time.time() - started
        merged = Path(tmp, "out", "spm.model").read_bytes()
        import pyarrow.parquet as pq
        allocation = {r["lang"]: r for r in pq.read_table(Path(tmp, "out", "allocation.parquet")).to_pylist()}
    started = time.time()
    joint = joint_model({lang: tr for lang, (tr, _) in split.items()}, args.vocab_size, args.seed)
    joint_seconds = time.time() - started
    print(f"\nT = {args.vocab_size:,}, vocap --alpha {args.alpha}; vocap job {vocap_seconds:.0f}s, joint model {joint_seconds:.0f}s; "
          f"sizes: vocap {spm.SentencePieceProcessor(model_proto=merged).get_piece_size():,}, "
          f"joint {spm.SentencePieceProcessor(model_proto=joint).get_piece_size():,}\n")
    print("| lang | sentences (train/held-out) | VoCAP pieces allocated | fertility joint | fertility VoCAP "
          "| ALP joint | ALP VoCAP |")
    print("|---|---|---|---|---|---|---|")
    for lang in sorted(data, key=lambda lang: -len(data[lang])):
        train, heldout = split[lang]
        fj, aj = measure(joint, train, heldout, lang)
        fv, av = measure(merged, train, heldout, lang)
        print(f"| {lang} | {len(train):,}/{len(heldout):,} | {allocation[lang]['size']:,} | {fj:.2f} | {fv:.2f} "
              f"| {aj:.1f} | {av:.1f} |")


if __name__ == "__main__":
    main()
