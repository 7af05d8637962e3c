r"""vocap: monolingual text -> VoCAP vocabulary allocation and one merged SentencePiece model.

    python -m pipelines.vocap --runner DirectRunner                     # bundled sample (8 languages)
    python -m pipelines.vocap --mono en=en.txt --mono sw=sw.txt.gz --vocab_size 500000 \
        --grid 1000:50000:1000 --output gs://bucket/vocap --runner DataflowRunner ...

Paper: XY-LENT §3.3 after VoCAP (Zheng et al., 2021). Per language (one Beam element each, in
parallel): unigram SentencePiece models over --grid and the ALP of each; then one step allocates
--vocab_size across languages by weighted marginal ALP gain and builds the merged model. The
algorithm and its choices are in corpora/vocap.py and docs/vocap.md.

Outputs under --output: spm.model, spm.vocab, alp.parquet, allocation.parquet, alp_curves.png,
stats.parquet, dead_letter/, and hf_tokenizer/ (a Hugging Face fast tokenizer with the same ids) when
transformers is installed.
"""
from __future__ import annotations

import heapq
import logging
import os
import posixpath
import sys
import tempfile
import time
from importlib import resources

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from corpora import vocab_exports, vocap
from corpora.schemas import ALLOCATION_SCHEMA, ALP_SCHEMA
from corpora.text_lines import decode_line
from pipelines.dataset_card import SAMPLE_LICENSE, CardConfig, DatasetCard, bookkeeping_configs
from corpora.seeding import stable_hash
from corpora.wikitext import WIKIPEDIA_LANGUAGES
from pipelines import beam_outputs, common, input_checks
from pipelines.input_checks import UsageError
from pipelines.beam_outputs import DEAD_LETTER, STATS, TallyingDoFn, dead_letter

JOB = "vocap"
PROGRESS = logging.getLogger("xlu.progress")
_LOG = logging.getLogger(__name__)
# The paper's full-scale settings, and the bundled sample's (a few KB a language holds a few hundred
# pieces at most, so a 500k target would just take every piece of every model).
FULL_VOCAB_SIZE, FULL_GRID = 500_000, "1000:50000:1000"
SAMPLE_VOCAB_SIZE, SAMPLE_GRID = 2000, "100:1000:100"
ALL = "all"  # the stats row of job-wide metrics


class VocapOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--mono", action="append", metavar="LANG=PATH",
                            help="monolingual text, one sentence or document per line; repeatable; any Beam "
                            "filesystem path (.gz/.bz2 by extension), or a wildcard for every file it matches (en=cc/en/*.txt.gz). "
                            "Without any, the bundled sample in 8 languages.")
        parser.add_argument("--vocab_size", type=int, default=None,
                            help=f"T, the merged model's size, special tokens included (default {FULL_VOCAB_SIZE:,} as "
                            f"the paper; {SAMPLE_VOCAB_SIZE:,} on the bundled sample)")
        parser.add_argument("--grid", default=None,
                            help=f"per-language model sizes, START:STOP:STEP or a,b,c (default {FULL_GRID}; "
                            f"{SAMPLE_GRID} on the bundled sample)")
        parser.add_argument("--beta", type=float, default=0.7, help="weight exponent of q_i in Σ q_i^β ALP_i (VoCAP: 0.7)")
        parser.add_argument("--alpha", type=float, default=0.7,
                            help="q_i = n_i^α / Σ n_j^α, n_i the characters of language i (default %(default)s)")
        parser.add_argument("--heldout", type=float, default=0.1, help="fraction of sentences held out for ALP")
        parser.add_argument("--max_sentences", type=int, default=1_000_000,
                            help="per language, train on at most this many sentences (a seeded sample)")
        parser.add_argument("--mix_sentences", type=int, default=200_000,
                            help="size of the q^β-weighted mixed sample that re-estimates the merged scores")
        parser.add_argument("--em_passes", type=int, default=3, help="Viterbi re-estimation passes over the mixed sample")


def sample_dir() -> str:
    return str(resources.files("corpora") / "samples" / "mono")


def plan(opts):
    if not 0 < opts.heldout < 1:
        raise UsageError(f"--heldout must be between 0 and 1, got {opts.heldout}")
    for name in ("beta", "alpha"):
        if not 0 <= getattr(opts, name) <= 1:
            raise UsageError(f"--{name} must be between 0 and 1, got {getattr(opts, name)}")
    for name in ("max_sentences", "mix_sentences"):
        if getattr(opts, name) < 2:
            raise UsageError(f"--{name} must be at least 2, got {getattr(opts, name)}")
    if opts.em_passes < 0:
        raise UsageError(f"--em_passes must be 0 or more, got {opts.em_passes}")
    specs = opts.mono
    if not specs:
        specs = [f"{posixpath.splitext(name)[0]}={FileSystems.join(sample_dir(), name)}" for name in _sample_files()]
        _LOG.info("no --mono given: using the bundled sample in %s", sample_dir())
        opts.vocab_size = opts.vocab_size or SAMPLE_VOCAB_SIZE
        opts.grid = opts.grid or SAMPLE_GRID
    opts.vocab_size = opts.vocab_size or FULL_VOCAB_SIZE
    opts.grid = opts.grid or FULL_GRID
    try:
        grid = vocap.parse_grid(opts.grid)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if opts.vocab_size <= len(vocap.SPECIALS):
        raise UsageError(f"--vocab_size must be more than {len(vocap.SPECIALS)} (the special tokens), got {opts.vocab_size}")
    by_lang = input_checks.parse_lang_paths(specs, "--mono", WIKIPEDIA_LANGUAGES)
    input_checks.check_mono_text("--mono", by_lang)
    inputs = sorted(by_lang.items())
    headline = (f"{len(inputs)} language(s) ({' '.join(lang for lang, _ in inputs)}), T={opts.vocab_size:,}, "
                f"grid {grid[0]:,}..{grid[-1]:,} ({len(grid)} sizes)")
    return (inputs, grid), headline


def _sample_files() -> list[str]:
    return sorted(p.name for p in resources.files("corpora").joinpath("samples", "mono").iterdir()
                  if p.name.endswith(".txt"))


class ReadMonoFn(TallyingDoFn):
    """(lang, paths) -> (lang, sentences, characters): UTF-8 lines, stripped; a seeded sample of at
    most --max_sentences (the lowest keyed hashes, in file order) so that memory stays bounded."""

    def __init__(self, max_sentences: int, seed: int):
        self.max_sentences, self.seed = max_sentences, seed

    def process(self, element):
        lang, paths = element
        kept, characters = [], 0
        for path in paths:
            with FileSystems.open(path) as f:
                for number, raw in enumerate(iter(f.readline, b""), 1):
                    self.tally("read", "lines", lang)
                    line = decode_line(raw)
                    if line is None:
                        self.tally("read", "not_utf8", lang)
                        yield dead_letter(path, str(number), "read", "not_utf8", raw.decode("utf-8", "replace"))
                        continue
                    line = line.strip()
                    if not line:
                        self.tally("read", "empty", lang)
                        continue
                    characters += len(line)
                    item = (-stable_hash(self.seed, "sample", lang, path, number), path, number, line)
                    if len(kept) < self.max_sentences:
                        heapq.heappush(kept, item)
                    else:
                        heapq.heappushpop(kept, item)  # drops the largest hash
        sentences = [line for _, path, number, line in sorted(kept, key=lambda k: (paths.index(k[1]), k[2]))]
        self.tally("read", "sentences", lang, len(sentences))
        self.tally("read", "characters", lang, characters)
        yield lang, sentences, characters


class AlpCurveFn(TallyingDoFn):
    """(lang, sentences, characters) -> one dict per language: the grid's (size, ALP) curve, the models
    on its upper hull (the only ones the allocation can choose), and the training sentences."""

    def __init__(self, grid: list[int], heldout: float, seed: int):
        self.grid, self.heldout, self.seed = grid, heldout, seed

    def process(self, element):
        lang, sentences, characters = element
        started = time.time()
        train, heldout = vocap.split_heldout(sentences, self.heldout, self.seed, lang)
        self.tally("sentences", "train", lang, len(train))
        self.tally("sentences", "heldout", lang, len(heldout))
        if len(train) < 1 or not heldout:
            self.tally("language", "too_little_text", lang)
            yield dead_letter(lang, lang, "grid", "too_little_text", " | ".join(sentences)[:200])
            return
        curve = vocap.alp_curve(train, heldout, self.grid, self.seed)
        self.tally("grid", "models", lang, len(curve))
        if not curve:
            self.tally("language", "grid_too_small", lang)
            yield dead_letter(lang, lang, "grid", "grid_too_small", f"largest grid size {self.grid[-1]} is below "
                              "the pieces this language's characters need")
            return
        on_hull = {size for size, _ in vocap.upper_hull([(p.size, p.alp) for p in curve])}
        for point in curve:
            if point.size not in on_hull and point is not curve[0]:
                point.model = b""
        best = max(curve, key=lambda p: p.alp)
        PROGRESS.info("vocap %s: %s sentences (%s held out), %d models %d..%d pieces, ALP %.1f..%.1f, %.1fs",
                      lang, f"{len(train):,}", f"{len(heldout):,}", len(curve), curve[0].size, curve[-1].size,
                      curve[0].alp, best.alp, time.time() - started)
        yield {"lang": lang, "characters": characters, "curve": curve, "train": train}


common.FATAL_MESSAGES["fatal/vocab_size_below_smallest_models"] = (
    "vocap: --vocab_size is below the pieces the smallest grid models of all languages hold together (the number is "
    "in dead_letter/, reason vocab_size_too_small): raise --vocab_size, or start --grid lower")
common.FATAL_MESSAGES["fatal/no_language_with_enough_text"] = (
    "vocap: no language has enough text for a held-out sentence and a grid model; dead_letter/ says which "
    "(too_little_text: give more text; grid_too_small: raise the end of --grid)")


class AllocateAndMergeFn(TallyingDoFn):
    """Every language's curve -> the allocation, the merged model and the small output files."""

    def __init__(self, opts):
        self.output, self.vocab_size, self.seed = opts.output, opts.vocab_size, opts.seed
        self.alpha, self.beta = opts.alpha, opts.beta
        self.mix_sentences, self.em_passes = opts.mix_sentences, opts.em_passes

    def process(self, languages):
        languages = sorted(languages, key=lambda d: d["lang"])
        if not languages:
            self.tally("fatal", "no_language_with_enough_text", ALL)
            return
        curves = {d["lang"]: d["curve"] for d in languages}
        shares = vocap.smoothed_shares({d["lang"]: d["characters"] for d in languages}, self.alpha)
        weights = {lang: q ** self.beta for lang, q in shares.items()}
        try:
            allocation = vocap.allocate(curves, weights, self.vocab_size)
        except vocap.VocabularyTooSmall as error:
            self.tally("fatal", "vocab_size_below_smallest_models", ALL)
            yield dead_letter(ALL, "vocab_size", "allocate", "vocab_size_too_small", str(error))
            return
        chosen_scores = {}
        for lang, curve in curves.items():
            model = next(p.model for p in curve if p.size == allocation.grid_sizes[lang])
            scores = dict(vocap.model_pieces(model))
            chosen_scores[lang] = [(piece, scores.get(piece, min(scores.values()))) for piece in allocation.pieces[lang]]
        mixed = vocap.mixed_sample({d["lang"]: d["train"] for d in languages}, weights, self.mix_sentences, self.seed)
        merged = vocap.merge_models(curves[languages[0]["lang"]][0].model, allocation.union,
                                    vocap.initial_scores(chosen_scores, weights), mixed, self.em_passes)
        self._write(merged, curves, shares, allocation)
        for lang in curves:
            self.tally("allocation", "pieces", lang, allocation.sizes[lang])
        self.tally("allocation", "target_pieces", ALL, allocation.target)
        self.tally("allocation", "union_pieces", ALL, len(allocation.union))
        self.tally("allocation", "merged_model_pieces", ALL, vocap.processor(merged).get_piece_size())
        self.tally("allocation", "mixed_sentences", ALL, len(mixed))
        if len(allocation.union) < allocation.target:
            # A language's largest model smaller than the size asked of it: its text holds no more pieces,
            # so a larger grid gives nothing more there.
            text_bound = all(curve[-1].size < curve[-1].requested for curve in curves.values())
            remedy = ("its text holds no more: give more text, or a --vocab_size near %d" % (len(allocation.union) + 5)
                      if text_bound else "raise the grid's largest size or give more text")
            _LOG.warning("vocap: the grid's models hold %d distinct pieces, fewer than --vocab_size %d asks "
                         "(minus %d special tokens): the merged model has every one of them; %s",
                         len(allocation.union), self.vocab_size, len(vocap.SPECIALS), remedy)
        PROGRESS.info("vocap: merged model %s pieces (T=%s) from %d languages", f"{len(allocation.union) + 5:,}",
                      f"{self.vocab_size:,}", len(curves))

    def _write(self, merged: bytes, curves, shares, allocation) -> None:
        def put(name: str, data: bytes) -> None:
            with FileSystems.create(FileSystems.join(self.output, name)) as sink:
                sink.write(data)

        put("spm.model", merged)
        put("spm.vocab", vocap.vocab_text(merged).encode("utf-8"))
        beam_outputs.write_parquet_file(
            FileSystems.join(self.output, "alp.parquet"),
            [{"lang": lang, "size": p.size, "alp": p.alp} for lang in sorted(curves) for p in curves[lang]], ALP_SCHEMA)
        beam_outputs.write_parquet_file(
            FileSystems.join(self.output, "allocation.parquet"),
            [{"lang": lang, "size": allocation.sizes[lang], "share": shares[lang], "alp": allocation.alps[lang]}
             for lang in sorted(curves)], ALLOCATION_SCHEMA)
        self._write_hf_tokenizer(merged, put)
        put("alp_curves.png", vocab_exports.plot_curves(
            {lang: [(p.size, p.alp) for p in curve] for lang, curve in curves.items()},
            {lang: (allocation.sizes[lang] + 1, allocation.alps[lang]) for lang in curves},  # +1: the model's <unk>
            f"VoCAP: ALP per language, allocated sizes circled (T={self.vocab_size:,})"))


    @staticmethod
    def _write_hf_tokenizer(merged: bytes, put) -> None:
        """`hf_tokenizer/`: the merged model for `XLMRobertaTokenizerFast.from_pretrained` (same ids),
        when transformers is installed; the data side does not need it."""
        try:
            tokenizer = vocab_exports.hf_tokenizer(merged)
        except ImportError:
            _LOG.info("vocap: transformers is not installed; no hf_tokenizer/ written")
            return
        with tempfile.TemporaryDirectory() as tmp:
            tokenizer.save_pretrained(tmp)
            for name in sorted(os.listdir(tmp)):
                with open(os.path.join(tmp, name), "rb") as f:
                    put(f"hf_tokenizer/{name}", f.read())


def build(p: beam.Pipeline, opts, inputs) -> None:
    by_lang, grid = inputs
    out = opts.output
    read = (
        p
        | "Languages" >> beam.Create(by_lang)
        | "ReadMono" >> beam.ParDo(ReadMonoFn(opts.max_sentences, opts.seed)).with_outputs(
            STATS, DEAD_LETTER, main="sentences")
    )
    curves = (
        read["sentences"]
        | "SpreadLanguages" >> beam.Reshuffle()
        | "AlpCurves" >> beam.ParDo(AlpCurveFn(grid, opts.heldout, opts.seed)).with_outputs(
            STATS, DEAD_LETTER, main="curves")
    )
    merged = (
        curves["curves"]
        | "AllLanguages" >> beam.combiners.ToList()
        | "AllocateAndMerge" >> beam.ParDo(AllocateAndMergeFn(opts)).with_outputs(STATS, DEAD_LETTER, main="done")
    )
    ((read[STATS], curves[STATS], merged[STATS]) | "Stats" >> beam.Flatten() | "WriteStats" >> beam_outputs.WriteStats(out))
    ((read[DEAD_LETTER], curves[DEAD_LETTER], merged[DEAD_LETTER]) | "DeadLetters" >> beam.Flatten()
     | "WriteDeadLetters" >> beam_outputs.WriteDeadLetters(out))


def run(argv=None) -> pa.Table:
    return common.run_job(argv, JOB, VocapOptions, __doc__, plan, build, print_summary, card=dataset_card,
                          inputs_of=input_files)


def input_files(opts, inputs) -> list[tuple[str, str]]:
    """The files the job reads, for the manifest."""
    by_lang, _ = inputs
    return [(f"--mono {lang}", path) for lang, paths in by_lang for path in paths]


def dataset_card(opts, inputs) -> DatasetCard:
    langs = [lang for lang, _ in inputs[0]]
    return DatasetCard(
        title="VoCAP vocabulary (xlu-factory vocap)",
        summary="A SentencePiece vocabulary (`spm.model`, `hf_tokenizer/`) whose capacity is allocated per language "
                "by VoCAP (Zheng et al. 2021), with the tables that decided it.",
        license="other" if opts.mono else SAMPLE_LICENSE,
        source=("The monolingual text given with --mono; the vocabulary is derived from it (set `license:` above)."
                if opts.mono else "The project's bundled monolingual sample (corpora/samples/mono)."),
        configs=[CardConfig("allocation", {"train": "allocation.parquet"}, ALLOCATION_SCHEMA,
                            "the vocabulary size given to each language"),
                 CardConfig("alp", {"train": "alp.parquet"}, ALP_SCHEMA,
                            "average log-probability of held-out text per language and vocabulary size"),
                 *bookkeeping_configs()],
        languages=sorted(langs))


_LEFT_OUT = {
    "language/grid_too_small": "its characters need more pieces than the grid's largest size; raise the end of --grid",
    "language/too_little_text": "too little text for a held-out sentence and a model; give more text",
}


def print_summary(stats: pa.Table, seconds: float, stream=None) -> None:
    """Sentences, grid models and allocated pieces per language, then every count."""
    stream = stream or sys.stdout
    values = common.stats_by_lang(stats)
    print(f"\n{'lang':<8}{'sentences':>11}{'held out':>10}{'models':>8}{'allocated':>11}", file=stream)
    for lang in sorted(k for k in values if k != ALL):
        v = values[lang]
        print(f"{lang:<8}{v.get('sentences/train', 0):>11,}{v.get('sentences/heldout', 0):>10,}"
              f"{v.get('grid/models', 0):>8,}{v.get('allocation/pieces', 0):>11,}", file=stream)
    job = values.get(ALL, {})
    if job.get("allocation/merged_model_pieces"):
        print(f"merged model: {job['allocation/merged_model_pieces']:,} pieces "
              f"(union {job.get('allocation/union_pieces', 0):,} + {len(vocap.SPECIALS)} special tokens)", file=stream)
    for lang in sorted(k for k in values if k != ALL):
        # A language left out has no piece of its own in the vocabulary: its text encodes as <unk>.
        why = next((text for metric, text in _LEFT_OUT.items() if values[lang].get(metric)), None)
        if why:
            print(f"warning: {lang}: left out of the vocabulary: {why}", file=stream)
    common.print_count_table(values, stream)
    print(f"\ndone in {seconds:.1f}s", file=stream)


if __name__ == "__main__":
    run()
