r"""xy_corpus: monolingual text + X-Y bitext + the vocap model -> XY-LENT MRTD and TRTD token shards.

    python -m pipelines.vocap && python -m pipelines.xy_corpus          # bundled samples, DirectRunner
    python -m pipelines.xy_corpus --mono en=cc100.en.txt --mono sw=cc100.sw.txt.gz \
        --bitext en-sw=ccmatrix.en-sw.tsv --bitext sw-fr=train.sw,train.fr --vocab vocap/spm.model \
        --output gs://bucket/xy --runner DataflowRunner ...

Paper: XY-LENT §3.2 (Sinkhorn pair sampling, corpora/xy/sinkhorn.py) and §4 / Appendix A (MRTD and
TRTD sequences, corpora/xy/shards.py). The stages are in xy_transforms.py; the choices where the
paper is silent are in docs/xy_corpus.md.

Outputs under --output: mrtd/train-*.parquet, trtd/train-*.parquet (corpora/schemas.py
XY_MRTD_SCHEMA, XY_TRTD_SCHEMA; a folder per table, so that no folder holds two schemas), pair_probs.parquet, pair_probs.png, the vocabulary the ids are from
(spm.model for a vocap model, tokenizer/ for an encoder's tokenizer folder; corpora/xy/vocabulary.py),
stats.parquet and dead_letter/.
"""
from __future__ import annotations

import argparse
import functools
import logging
import os
import re
import sys
from importlib import resources

import apache_beam as beam
import pyarrow as pa
import sentencepiece as spm
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from corpora import language_check
from corpora.outputs import manifests
from corpora.xy import sinkhorn
from corpora.xy import vocabulary, vocap
from corpora.xy import shards as xy_shards
from corpora.schemas import XY_MRTD_SCHEMA, XY_PAIR_PROBS_SCHEMA, XY_TRTD_SCHEMA
from corpora.wikitext.parse import WIKIPEDIA_LANGUAGES
from pipelines import beam_outputs, common, heldout, input_checks, progress
from pipelines.beam_outputs import DEAD_LETTER, STATS
from pipelines.input_checks import UsageError
from pipelines.row_checks import CheckRows
from pipelines.parallel_reading import first_pairs
from pipelines.dataset_card import SAMPLE_LICENSE, CardConfig, DatasetCard, bookkeeping_configs
# Imported before XyCorpusOptions is defined, so that Beam's one parser of every options class meets
# vocap's --mono first (see XyCorpusOptions): whatever a process imports first, the flag is defined once.
from pipelines import vocap as vocap_job
from pipelines.xy_transforms import ALL, DRAW_BY_PAIR_PROBS, DRAW_ONCE, BuildMrtd, BuildTrtd, source_names

JOB = "xy_corpus"
DEFAULT_VOCAB = f"./output/{vocap_job.JOB}/spm.model"  # where `python -m pipelines.vocap` writes it
DEFAULT_TEMPERATURE = 5.0  # the temperature of Aharoni et al. (2019) and M2M-100's sampling
# The bundled bitext: the English-X sample of clism_pairs and the X-Y pairs pivoted from it (see
# corpora/samples/bitext/README.md), one file layout per reader.
# Language codes of two or three letters, as the bitext keys X-Y need them (`zh-yue` would be
# ambiguous there, and the stats name a language pair `x-y`).
XY_LANGUAGES = frozenset(lang for lang in WIKIPEDIA_LANGUAGES if re.fullmatch(r"[a-z]{2,3}", lang))
SAMPLE_BITEXT = (("parallel", "en-fr=en-fr.en,en-fr.fr"), ("parallel", "en-ar=en-ar.tsv"),
                 ("parallel", "en-hi=en-hi.txt"), ("parallel", "en-vi=en-vi.tsv"),
                 ("bitext", "fr-ar=fr-ar.fr,fr-ar.ar"), ("bitext", "vi-hi=vi-hi.tsv"), ("bitext", "ar-hi=ar-hi.txt"))


class XyCorpusOptions(PipelineOptions):
    shared_options = (common.LanguageCheckOptions, heldout.HeldOutFloorOptions, heldout.HeldOutSentencesOptions)

    @classmethod
    def _add_argparse_args(cls, parser):
        try:
            parser.add_argument("--mono", action="append", metavar="LANG=PATH",
                                help="monolingual text, one sentence or document per line; repeatable; any Beam "
                                "filesystem path (.gz/.bz2 by extension), or a wildcard for every file it matches (en=cc/en/*.txt.gz). "
                                "Every bitext language needs some.")
        except argparse.ArgumentError:
            # Beam parses every PipelineOptions subclass of the process into one parser, and vocap's
            # --mono (the same flag: append, LANG=PATH) is already there; this job reads its own
            # options from a parser of this class alone (common.job_options), where it is defined.
            pass
        parser.add_argument("--bitext", action="append", metavar="X-Y=PATH",
                            help="X-Y bitext in any direction; repeatable. `X-Y=FILE` (a TSV or `x ||| y` lines) or "
                            "`X-Y=X_FILE,Y_FILE` (two line-aligned files). Without --mono and --bitext, the bundled "
                            "sample: 8 languages of monolingual text, en-X and X-Y bitext in 5.")
        parser.add_argument("--vocab", default=DEFAULT_VOCAB,
                            help="the vocap SentencePiece model (default %(default)s, what `python -m pipelines.vocap` writes), "
                            "or an encoder's Hugging Face tokenizer folder (tokenizer.json, XLM-R's ids: e.g. a "
                            "`python -m training.convert_e5` folder) to continue pre-training that encoder")
        parser.add_argument("--max_len", type=int, default=512,
                            help="longest sequence in tokens, specials included (paper: 512); longer TRTD pairs are dropped")
        parser.add_argument("--temperature", type=float, default=DEFAULT_TEMPERATURE,
                            help="T of the Sinkhorn marginals p^(1/T) (default %(default)s)")
        parser.add_argument("--epsilon", type=float, default=sinkhorn.EPSILON,
                            help="ε of the cost -log(Q + ε), Q the pair counts as a joint distribution (default %(default)s)")
        parser.add_argument("--trtd_pairs", type=int, default=None,
                            help="TRTD rows to draw by pair_probs, in expectation (default: as many as usable bitext pairs)")
        parser.add_argument("--trtd_draws", choices=(DRAW_BY_PAIR_PROBS, DRAW_ONCE), default=DRAW_BY_PAIR_PROBS,
                            help="pair_probs (default): the TRTD rows of each language pair follow pair_probs (pairs of "
                            "a down-weighted language pair thinned, of an up-weighted one repeated); once: every usable "
                            "pair once, for a trainer that draws language pairs by pair_probs itself")
        parser.add_argument("--pack_lines", type=int, default=100_000,
                            help="MRTD packs this many consecutive lines of a file together, one Beam group each")


def samples_dir(kind: str) -> str:
    return str(resources.files("corpora") / "samples" / kind)


def _sample_specs() -> tuple[list[str], list[str]]:
    mono_dir = samples_dir("mono")
    mono = [f"{name[:-4]}={FileSystems.join(mono_dir, name)}"
            for name in sorted(os.listdir(mono_dir)) if name.endswith(".txt")]
    bitext = []
    for kind, spec in SAMPLE_BITEXT:
        key, _, paths = spec.partition("=")
        bitext.append(f"{key}={','.join(FileSystems.join(samples_dir(kind), p) for p in paths.split(','))}")
    return mono, bitext


def model_in_folder(path: str) -> str:
    """The vocap job's output folder stands for the spm.model in it (a natural --vocab to give); a
    tokenizer folder stands for itself."""
    inside = FileSystems.join(path, "spm.model")
    if not path.endswith(".model") and ("://" in path or os.path.isdir(path)) and FileSystems.exists(inside):
        return inside
    if vocabulary.is_tokenizer_folder(path):
        return path
    if "://" not in path and os.path.isdir(path):
        raise UsageError(f"--vocab {path}: a folder without spm.model or tokenizer.json; give the model file that "
                         "`python -m pipelines.vocap` writes (OUTPUT/spm.model), or an encoder's tokenizer folder")
    return path


def check_tokenizer_folder(path: str) -> None:
    """A fast tokenizer whose specials sit where the rows need them, or a one-line error."""
    problem = vocabulary.tokenizer_folder_problem(path)
    if problem:
        raise UsageError(f"--vocab {path}: {problem}")


def check_vocab(path: str) -> None:
    """A vocap model, or a one-line error: the ids of every shard depend on it."""
    if not FileSystems.exists(path):
        raise UsageError(f"--vocab {path}: not found; run `python -m pipelines.vocap` first "
                                "(it writes ./output/vocap/spm.model) or pass --vocab PATH")
    with FileSystems.open(path) as f:
        model = f.read()
    try:
        sp = spm.SentencePieceProcessor(model_proto=model)
    except RuntimeError as error:
        raise UsageError(f"--vocab {path}: not a SentencePiece model ({str(error).splitlines()[0][:100]})") from None
    pieces = tuple(sp.id_to_piece(i) for i in range(min(len(vocap.SPECIALS), sp.get_piece_size())))
    if pieces != vocap.SPECIALS:
        raise UsageError(f"--vocab {path}: ids 0..4 are {' '.join(pieces)}, not {' '.join(vocap.SPECIALS)}; "
                                "use a model from `python -m pipelines.vocap`")


def check_side_languages(value: str, source: xy_shards.BitextSource) -> None:
    """Sides swapped or a wrong file: one line before anything runs (corpora/language_check.py)."""
    pairs = first_pairs(source.as_pair_source(), language_check.SAMPLE_LINES)
    problem = language_check.bitext_side_mismatch([p.src_text for p in pairs], [p.tgt_text for p in pairs],
                                                  source.x_lang, source.y_lang)
    if problem:
        raise UsageError(f"--bitext {value!r} (its first {len(pairs)} pairs): {problem}; or pass --allow_language_mismatch")


def parse_bitext(specs: list[str]) -> list[xy_shards.BitextSource]:
    sources = []
    for value in specs:
        try:
            source = xy_shards.parse_bitext_spec(value)
        except ValueError as error:
            raise UsageError(str(error)) from None
        input_checks.check_parallel_inputs("bitext", value, source.paths)
        sources.append(source)
    return sources


def plan(opts):
    """Validate the options (one-line errors); the inputs are (mono files, bitext sources)."""
    if opts.max_len < xy_shards.MIN_MAX_LEN:
        raise UsageError(f"--max_len must be at least {xy_shards.MIN_MAX_LEN}, got {opts.max_len}")
    if opts.temperature <= 0:
        raise UsageError(f"--temperature must be positive, got {opts.temperature}")
    if not 0 < opts.epsilon < 1:
        raise UsageError(f"--epsilon must be between 0 and 1, got {opts.epsilon}")
    if opts.trtd_pairs is not None and opts.trtd_pairs < 1:
        raise UsageError(f"--trtd_pairs must be at least 1, got {opts.trtd_pairs}")
    if opts.trtd_pairs is not None and opts.trtd_draws == DRAW_ONCE:
        raise UsageError("--trtd_pairs sets how many rows pair_probs draws; with --trtd_draws once every pair "
                                "is written once: give one or the other")
    if opts.pack_lines < 1:
        raise UsageError(f"--pack_lines must be at least 1, got {opts.pack_lines}")
    heldout.parse_held_out("--test_sentences", opts.test_sentences, opts.min_train_share)
    mono_specs, bitext_specs = opts.mono, opts.bitext
    if not mono_specs and not bitext_specs:
        mono_specs, bitext_specs = _sample_specs()
        logging.info("no --mono or --bitext given: using the bundled samples")
    elif not bitext_specs:
        raise UsageError("no --bitext given: TRTD needs X-Y bitext, e.g. --bitext fr-ar=fr-ar.tsv "
                                "(or give neither --mono nor --bitext for the bundled sample)")
    elif not mono_specs:
        raise UsageError("no --mono given: MRTD needs monolingual text in every bitext language, "
                                "e.g. --mono fr=fr.txt (or give neither flag for the bundled sample)")
    mono = input_checks.parse_lang_paths(mono_specs, "--mono", XY_LANGUAGES)
    input_checks.check_mono_text("--mono", mono)
    input_checks.refuse_repeated_files("--mono", mono)
    sources = parse_bitext(bitext_specs)
    input_checks.refuse_repeated_sources("--bitext", [(value, s.paths) for value, s in zip(bitext_specs, sources)])
    if not opts.allow_language_mismatch:
        for spec, source in zip(bitext_specs, sources):
            check_side_languages(spec, source)
    opts.vocab = model_in_folder(opts.vocab)
    if vocabulary.is_tokenizer_folder(opts.vocab):
        check_tokenizer_folder(opts.vocab)
    else:
        if "://" not in opts.vocab:  # a vocap output is checked against its manifest: complete, unchanged
            try:
                manifests.verified_file(opts.vocab, "--vocab")
            except manifests.ManifestError as error:
                raise UsageError(str(error)) from None
        check_vocab(opts.vocab)
    bitext_langs = {lang for s in sources for lang in (s.x_lang, s.y_lang)}
    missing = sorted(bitext_langs - set(mono))
    if missing:
        raise UsageError(
            f"--bitext languages without --mono text: {' '.join(missing)}; every bitext language needs monolingual "
            f"text (MRTD and TRTD train one model over the same languages): add --mono {missing[0]}=PATH")
    mono_only = sorted(set(mono) - bitext_langs)
    if mono_only:
        # Documented behaviour, not an error: CC-100 has languages that CCMatrix lacks.
        logging.getLogger("xlu.progress").info("xy_corpus: no bitext in %s: MRTD only", " ".join(mono_only))
    files = [(lang, name, path) for lang, paths in sorted(mono.items())
             for name, path in zip(source_names(paths), paths)]
    by_key: dict[str, list[xy_shards.BitextSource]] = {}
    for s in sources:
        by_key.setdefault(s.key, []).append(s)
    named = [(s, name) for key in sorted(by_key)
             for s, name in zip(by_key[key], source_names([s.paths[0] for s in by_key[key]]))]
    headline = (f"{len(mono)} language(s) of monolingual text ({' '.join(sorted(mono))}), "
                f"{len(sources)} bitext source(s) in {len({xy_shards.pair_key(s.x_lang, s.y_lang) for s in sources})} "
                f"language pair(s), vocab {opts.vocab}, max_len {opts.max_len}, T={opts.temperature:g}")
    return (files, named), headline


def copy_vocab(vocab: str, output: str) -> str:
    """`spm.model` (or a tokenizer folder's files in `tokenizer/`) beside the shards: training finds
    the vocabulary of the ids there, and workers read it from the output, which every worker can
    reach (a laptop path is not)."""
    if vocabulary.is_tokenizer_folder(vocab):
        return vocabulary.copy_tokenizer_folder(vocab, FileSystems.join(output, vocabulary.OUTPUT_FOLDER))
    target = FileSystems.join(output, "spm.model")
    if os.path.abspath(vocab) != os.path.abspath(target):
        with FileSystems.open(vocab) as f:
            model = f.read()
        with FileSystems.create(target) as sink:
            sink.write(model)
    return target


def build(p: beam.Pipeline, opts, inputs) -> None:
    files, sources = inputs
    out = opts.output
    vocab_path = copy_vocab(opts.vocab, out)
    mode = progress.progress_mode(opts.no_progress)
    counted = mode.kind != progress.OFF
    mono_lines = progress.local_line_count([path for _, _, path in files]) if counted else None
    bitext_lines = progress.local_line_count([s.paths[0] for s, _ in sources]) if counted else None
    mrtd_rows, mrtd_stats, mrtd_dead = (p | "MonoFiles" >> beam.Create(files)
                                        | "BuildMrtd" >> BuildMrtd(vocab_path, opts.max_len, opts.pack_lines,
                                                                   mode, mono_lines))
    trtd_rows, trtd_stats, trtd_dead = (p | "BitextSources" >> beam.Create(sources)
                                        | "BuildTrtd" >> BuildTrtd(opts, vocab_path, mode, bitext_lines))
    mrtd_checked = mrtd_rows | "CheckMrtdRows" >> CheckRows(XY_MRTD_SCHEMA)
    trtd_checked = trtd_rows | "CheckTrtdRows" >> CheckRows(XY_TRTD_SCHEMA)
    mrtd_rows, trtd_rows = mrtd_checked["rows"], trtd_checked["rows"]
    # One folder per table (OUT/mrtd/, OUT/trtd/): no folder holds two schemas.
    tables = {"mrtd": ({"train": mrtd_rows}, XY_MRTD_SCHEMA, "Mrtd"), "trtd": ({"train": trtd_rows}, XY_TRTD_SCHEMA, "Trtd")}
    split_stats = []
    held_out = heldout.parse_held_out("--test_sentences", opts.test_sentences, opts.min_train_share)
    if held_out is not None:
        for table, unit_of, across in (("mrtd", functools.partial(mrtd_unit, opts.seed), False),
                                       ("trtd", functools.partial(trtd_unit, opts.seed), True)):
            splits, schema, name = tables[table]
            split = splits["train"] | f"Split{name}" >> heldout.SplitRows(held_out, unit_of, across_languages=across)
            tables[table] = ({"train": split["train"], "test": split["test"]}, schema, name)
            split_stats.append(split[beam_outputs.STATS])
    for table, (splits, schema, name) in tables.items():
        for split_name, rows in splits.items():
            rows | f"Write{name}{'' if split_name == 'train' else 'Test'}" >> beam_outputs.WriteParquetShards(
                FileSystems.join(out, table), split_name, schema, opts.num_shards, shuffle_seed=opts.seed)
    (mrtd_stats, trtd_stats, mrtd_checked[STATS], trtd_checked[STATS], *split_stats) | "Stats" >> beam.Flatten() | "WriteStats" >> beam_outputs.WriteStats(out)
    (mrtd_dead, trtd_dead, mrtd_checked[DEAD_LETTER], trtd_checked[DEAD_LETTER]) | "DeadLetters" >> beam.Flatten() | "WriteDeadLetters" >> beam_outputs.WriteDeadLetters(out)


def mrtd_unit(seed: int, row: dict) -> tuple[str, int]:
    """The held-out unit of an MRTD row: the row itself (a packed run of consecutive lines)."""
    return row["lang"], heldout.unit_hash(seed, row["id"])


def trtd_unit(seed: int, row: dict) -> tuple[str, int]:
    """The held-out unit of a TRTD row: the X sentence of its X-Y pair (as the bitext gives the pair),
    so that every drawn copy of a pair, flipped or not, and every pair with that X sentence, whatever
    its Y language, are on one side."""
    ids, src_len = row["input_ids"], row["src_len"]
    first, second = ids[1:src_len - 1], ids[src_len:-1]  # <s> first </s> second </s>
    x_lang, x_ids = (row["tgt_lang"], second) if row["flipped"] else (row["src_lang"], first)
    return xy_shards.pair_key(row["src_lang"], row["tgt_lang"]), heldout.unit_hash(seed, x_lang, tuple(x_ids))


def _splits(table: str, opts) -> dict[str, str]:
    splits = {"train": f"{table}/train-*.parquet"}
    if heldout.parse_held_out("--test_sentences", opts.test_sentences, opts.min_train_share) is not None:
        splits["test"] = f"{table}/test-*.parquet"
    return splits


def dataset_card(opts, inputs) -> DatasetCard:
    files, named = inputs
    ids_of = (f"the tokenizer in {vocabulary.OUTPUT_FOLDER}/" if vocabulary.is_tokenizer_folder(opts.vocab)
              else "spm.model")
    # MRTD and TRTD rows have different columns: two configs, so that each loads with its own schema.
    configs = [
        CardConfig("mrtd", _splits("mrtd", opts), XY_MRTD_SCHEMA,
                   f"monolingual token rows (ids of {ids_of}) for replaced-token detection"),
        CardConfig("trtd", _splits("trtd", opts), XY_TRTD_SCHEMA,
                   "X-Y translation-pair token rows (source then target, src_len tokens of source)"),
        CardConfig("pair_probs", {"train": "pair_probs.parquet"}, XY_PAIR_PROBS_SCHEMA,
                   "the Sinkhorn language-pair sampling probabilities"),
        *bookkeeping_configs(),
    ]
    if opts.mono or opts.bitext:
        license, source = "other", (
            "The monolingual text (--mono) and bitext (--bitext) given; the rows inherit their licences "
            "(CC-100 and CCMatrix have their own terms). Set `license:` above before sharing.")
    else:
        license, source = SAMPLE_LICENSE, ("The project's bundled samples (corpora/samples/mono, corpora/samples/bitext; "
                                           "spaCy's example sentences, MIT).")
    return DatasetCard(
        title="XY-LENT token rows (xlu-factory xy_corpus)",
        summary="Token-id rows for XY-LENT pre-training: monolingual rows (MRTD) and many-to-many bitext rows "
                "(TRTD) encoded with " + ("the VoCAP vocabulary `spm.model`" if ids_of == "spm.model" else
                                  f"an encoder's own tokenizer (`{vocabulary.OUTPUT_FOLDER}/`)")
                + " beside them, and the Sinkhorn pair_probs.",
        license=license, source=source, configs=configs,
        languages=sorted({lang for lang, _, _ in files}))


def run(argv=None) -> pa.Table:
    return common.run_job(argv, JOB, XyCorpusOptions, __doc__, plan, build, print_summary, card=dataset_card,
                          inputs_of=input_files)


def input_files(opts, inputs) -> list[tuple[str, str]]:
    """The files the job reads, for the manifest: the text, the bitext and the vocabulary."""
    files, named = inputs
    return ([(f"--mono {lang}", path) for lang, _, path in files]
            + [(f"--bitext {source.key}", path) for source, _ in named for path in source.paths]
            + [("--vocab", FileSystems.join(opts.vocab, vocabulary.TOKENIZER_JSON)
                if vocabulary.is_tokenizer_folder(opts.vocab) else opts.vocab)])


def print_summary(stats: pa.Table, seconds: float, stream=None) -> None:
    """MRTD per language, TRTD per language pair, the Sinkhorn removal, then every count."""
    stream = stream or sys.stdout
    values = common.stats_by_lang(stats)
    mono = sorted(k for k in values if k != ALL and "-" not in k)
    pairs = sorted(k for k in values if "-" in k)
    print(f"\nMRTD\n{'lang':<8}{'lines':>10}{'tokens':>12}{'sequences':>11}", file=stream)
    for lang in mono:
        v = values[lang]
        print(f"{lang:<8}{v.get('mrtd/lines', 0):>10,}{v.get('mrtd/tokens', 0):>12,}{v.get('mrtd/sequences', 0):>11,}",
              file=stream)
    job = values.get(ALL, {})
    drawn_total = sum(values[k].get("trtd/rows", 0) for k in pairs)
    print(f"\nTRTD\n{'pair':<8}{'usable':>10}{'prob':>9}{'drawn':>10}{'share':>8}{'flipped':>9}", file=stream)
    for key in pairs:
        v = values[key]
        drawn = v.get("trtd/rows", 0)
        print(f"{key:<8}{v.get('pairs/usable', 0):>10,}{v.get('pairs/prob_ppb', 0) / 1e9:>9.4f}{drawn:>10,}"
              f"{drawn / max(drawn_total, 1):>8.3f}{v.get('trtd/flipped', 0) / max(drawn, 1):>9.3f}", file=stream)
    print(f"Sinkhorn: {job.get('sinkhorn/iterations', 0):,} iterations; mass on pairs with no data, removed: "
          f"{job.get('sinkhorn/removed_mass_ppb', 0) / 1e9:.3g} (pair_probs.parquet, pair_probs.png)", file=stream)
    heldout.print_split_table(values, "units", stream)
    common.print_count_table(values, stream)
    _warn_of_starved_pairs(values, job.get("trtd/target_rows", 0))
    _warn_of_unknown_tokens(values)
    print(f"\ndone in {seconds:.1f}s", file=stream)


def _warn_of_starved_pairs(values: dict, target_rows: int) -> None:
    """One line naming the language pairs with data that pair_probs gives under one row of
    `target_rows`: the balanced plan with marginals p^(1/T) can leave a large pair almost nothing
    (NTREX, 24 languages: en-fr and en-zh, 1,997 pairs each, at 1e-7), and training never sees them."""
    starved = sorted((v["pairs/prob_ppb"] / 1e9, key, v.get("pairs/usable", 0)) for key, v in values.items()
                     if "-" in key and v.get("pairs/usable") and "pairs/prob_ppb" in v
                     and v["pairs/prob_ppb"] / 1e9 * target_rows < 1)
    if starved:
        named = ", ".join(f"{key} ({usable:,} pairs, prob {prob:.1e})" for prob, key, usable in starved[:8])
        more = f" and {len(starved) - 8} more" if len(starved) > 8 else ""
        print(f"warning: {len(starved)} language pair(s) with data get under one of the {target_rows:,} TRTD rows "
              f"at these pair_probs, and training samples none of them: {named}{more}. The balanced Sinkhorn plan "
              f"with marginals p^(1/T) moves their languages' mass to pairs of languages with few partners "
              f"(docs/xy_corpus.md)",
              file=sys.stderr)


# A vocabulary built with a language's text leaves almost none of it <unk>; one built without it,
# half. NTREX through a VoCAP vocabulary of ar de en ja ru th zh: en 0.016%, de 0.012%; hi 47.7%,
# ko 44.1% (and their pairs with en 26.1%, 19.4%).
UNKNOWN_SHARE_WARNING = 0.01


def _warn_of_unknown_tokens(values: dict) -> None:
    """One line per language (or pair) whose ids are over 1% <unk>: the job still writes them, but a
    model cannot learn a language it sees as <unk>, and nothing else in the output says so."""
    for key, v in sorted(values.items()):
        tokens = v.get("mrtd/line_tokens", 0) + v.get("pairs/tokens", 0)
        unknown = v.get("mrtd/unknown_tokens", 0) + v.get("pairs/unknown_tokens", 0)
        if tokens and unknown / tokens > UNKNOWN_SHARE_WARNING:
            print(f"warning: {key}: {unknown / tokens:.1%} of the token ids are <unk>; the vocabulary (--vocab) "
                  f"was built without this language's text or with too little of it (its rare characters have no "
                  f"piece): build one with more of it (python -m pipelines.vocap)",
                  file=sys.stderr)


if __name__ == "__main__":
    run()
