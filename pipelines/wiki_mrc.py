r"""wiki_mrc: Wikipedia dumps -> mPMR MRC triples (query, context, answers) in Parquet.

    python -m pipelines.wiki_mrc --runner DirectRunner                      # bundled sample
    python -m pipelines.wiki_mrc --dump en=enwiki-latest-pages-articles-multistream.xml.bz2 \
        --dump fr=frwiki-latest-pages-articles.xml.bz2 --output gs://bucket/mrc --runner DataflowRunner ...

Paper: mPMR (Xu et al., 2023) §2.2 and Appendix A.1. The stages are in wiki_mrc_transforms.py.
"""
from __future__ import annotations

import functools
import logging
import sys

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from corpora.wikitext.passes import not_built_note
from corpora.dumps.pages import SAMPLE_DIR, sample_dump_paths
from corpora.dumps.multistream import is_multistream_index
from corpora.schemas import MRC_SCHEMA
from corpora.seeding import stable_hash
from corpora.wiki.languages import WIKIPEDIA_LANGUAGES
from pipelines import beam_outputs, common, heldout, input_checks, memory_check, progress
from pipelines.input_checks import UsageError
from pipelines.row_checks import CheckRows
from pipelines.dataset_card import SAMPLE_LICENSE, CardConfig, DatasetCard, bookkeeping_configs
from pipelines.wiki_dump_reading import (
    DumpSpec, ReadDumps, expected_index_name, file_size, language_profiles, multistream_index_for,
    repeated_dumps,
    siteinfo_namespaces,
)
from corpora.mrc.entity_masking import LONGER_NAME_CHOICES

# A name inside another entity's longer link in its query: chosen by measurement (docs/wiki_mrc.md).
DEFAULT_LONGER_NAMES = "drop_sentence"
from pipelines.wiki_mrc_entities import (
    LinksByTargetFn, ResolveLinksFn, SelectMentionsFn, article_page_info, redirect_page_info,
)
from pipelines.wiki_mrc_transforms import (
    AssembleExamplesFn,
    BuildQueriesAndContextsFn,
    PairUnanswerableFn,
    ParsePagesFn,
    StoredText,
    bucket_key,
)
from pipelines.beam_outputs import DEAD_LETTER, STATS

JOB = "wiki_mrc"


class WikiMrcOptions(PipelineOptions):
    shared_options = (common.LanguageCheckOptions, heldout.HeldOutFloorOptions)

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument(
            "--dump", action="append", metavar="LANG=PATH",
            help="a pages-articles dump (.xml, .xml.bz2, or multistream .xml.bz2 with its -index.txt.bz2 beside it); "
            "repeatable; any Beam filesystem path; a wildcard takes every part of a dump split in parts "
            "(en=enwiki-latest-pages-articles-multistream*.bz2: the parts, not their indexes); LANG is any Wikipedia language code (the paper's 24 get their own "
            "tokenisers). Without any, the bundled sample (en, zh, th, ar, hi) is used.",
        )
        parser.add_argument("--query_words", type=int, default=50, help="Q: words of the definition article in the query (paper: 50)")
        parser.add_argument("--context_words", type=int, default=200, help="C: words of context around a mention (paper: 200)")
        parser.add_argument("--examples_per_entity", type=int, default=10,
                            help="answerable examples per entity, and as many unanswerable (paper: 10)")
        parser.add_argument("--min_mentions_en", type=int, default=10, help="drop English entities with fewer mentions (paper: 10)")
        parser.add_argument("--min_mentions", type=int, default=5, help="drop other languages' entities with fewer mentions (paper: 5)")
        parser.add_argument("--test_entities", default="0", metavar="N|FRACTION",
                            help="entities per language held out to an entity-disjoint test split: a count (paper: "
                            "1000) or a fraction (0.05); each language keeps --min_train_share of its entities for "
                            "training (default none)")
        parser.add_argument("--streams_per_range", type=int, default=20,
                            help="multistream bz2 streams (~100 pages each) read by one worker task (default %(default)s)")
        parser.add_argument("--max_page_bytes", type=int, default=20_000_000,
                            help="pages larger than this go to the dead letter (the largest real articles are ~2 MB; default %(default)s)")
        parser.add_argument("--names_in_longer_names", choices=LONGER_NAME_CHOICES, default=DEFAULT_LONGER_NAMES,
                            help="the entity's name inside a longer link to another entity in its query (\"the Gulf of "
                            "Mexico\" in Mexico's): drop its sentence (where every sentence holds one, mask it whole), "
                            "mask the longer name whole, or keep it (a leak the audit reports apart; default "
                            "%(default)s; docs/wiki_mrc.md)")
        parser.add_argument("--entities_per_bucket", type=int, default=64,
                            help="entities that exchange contexts for unanswerable examples (default %(default)s)")


def plan(opts) -> tuple[list[DumpSpec], str]:
    """Validate the options (one-line errors) and list the dumps to read."""
    for name in ("query_words", "context_words", "examples_per_entity", "streams_per_range", "entities_per_bucket"):
        if getattr(opts, name) < 1:
            raise UsageError(f"--{name} must be at least 1, got {getattr(opts, name)}")
    heldout.parse_held_out("--test_entities", opts.test_entities, opts.min_train_share)
    if opts.dump:
        by_lang = input_checks.parse_lang_paths(opts.dump, "--dump", WIKIPEDIA_LANGUAGES, skip_in_patterns=is_multistream_index)
    else:
        by_lang = {lang: [path] for lang, path in sample_dump_paths().items()}
        logging.info("no --dump given: using the bundled sample dumps in %s", SAMPLE_DIR)
    repeated = repeated_dumps(by_lang)
    if repeated:
        raise UsageError(repeated)
    for lang, paths in sorted(by_lang.items()):
        for path in paths:
            input_checks.check_dump("--dump", lang, path, opts.allow_language_mismatch)
    specs = [
        DumpSpec(lang, path, multistream_index_for(path), siteinfo_namespaces(path))
        for lang, paths in sorted(by_lang.items()) for path in paths
    ]
    for spec in specs:
        if spec.index_path is None and "-multistream" in spec.path.rsplit("/", 1)[-1]:
            print(f"note: {spec.path}: no multistream index beside it, so one worker reads it from start to end; "
                  f"put {expected_index_name(spec.path)} beside it for parallel reading", file=sys.stderr)
    note = not_built_note()
    if note:
        print(note, file=sys.stderr)
    return specs, f"{len(specs)} dump(s) in {', '.join(sorted(by_lang))}"


def direct_runner_memory_warning(runner, specs: list[DumpSpec]) -> str | None:
    """pipelines/memory_check.py's line when DirectRunner would need more memory than there is."""
    if not memory_check.is_direct_runner(runner):
        return None
    try:
        sizes = {spec.path: file_size(spec.path) for spec in specs}
    except (OSError, IndexError, ValueError):  # a size we cannot read costs the warning, never the job
        return None
    return memory_check.direct_runner_warning(sizes, runner)


class BuildMrcExamples(beam.PTransform):
    """Pages -> (example rows, entity bundles, stats, dead letters); bundles feed the test split."""

    def __init__(self, opts, languages):
        super().__init__()
        self.opts, self.languages = opts, languages

    def expand(self, pages):
        o = self.opts
        mode = progress.progress_mode(getattr(o, "no_progress", True))
        parsed = pages | "ParsePages" >> beam.ParDo(ParsePagesFn(self.languages, mode)).with_outputs(
            "redirects", STATS, DEAD_LETTER, main="articles"
        )
        articles = parsed.articles
        pages_by_title = (
            (articles | "ArticleTitles" >> beam.Map(article_page_info),
             parsed.redirects | "RedirectTitles" >> beam.Map(redirect_page_info))
            | "PagesByTitle" >> beam.Flatten()
        )
        links = articles | "LinksByTarget" >> beam.ParDo(LinksByTargetFn())
        resolved = (
            (pages_by_title, links)
            | "PagesAndLinks" >> beam.Flatten()
            | "JoinLinksWithPages" >> beam.GroupByKey()
            | "ResolveRedirects" >> beam.ParDo(ResolveLinksFn()).with_outputs("aliases", STATS, DEAD_LETTER, main="mentions")
        )
        selected = (
            (pages_by_title, resolved.mentions, resolved.aliases)
            | "PagesMentionsAndAliases" >> beam.Flatten()
            | "JoinMentionsWithEntities" >> beam.GroupByKey()
            | "SelectMentions" >> beam.ParDo(
                SelectMentionsFn(o.seed, o.examples_per_entity, o.min_mentions_en, o.min_mentions)
            ).with_outputs("entities", STATS, main="mentions")
        )
        texts = articles | "TextsByPage" >> beam.Map(lambda a: ((a.lang, a.page_id), StoredText.of(a)))
        built = (
            {"article": texts, "entity": selected.entities, "selected": selected.mentions}
            | "JoinArticlesWithRequests" >> beam.CoGroupByKey()
            | "BuildQueriesAndContexts" >> beam.ParDo(
                BuildQueriesAndContextsFn(o.seed, o.query_words, o.context_words, self.languages, mode,
                                          getattr(o, "names_in_longer_names", DEFAULT_LONGER_NAMES))
            ).with_outputs("contexts", STATS, DEAD_LETTER, main="queries")
        )
        assembled = (
            {"query": built.queries, "contexts": built.contexts}
            | "JoinQueriesWithContexts" >> beam.CoGroupByKey()
            | "AssembleAnswerable" >> beam.ParDo(AssembleExamplesFn()).with_outputs("bundles", STATS, main="rows")
        )
        bundles = assembled.bundles
        entities_per_lang = (
            bundles | "LangOfBundle" >> beam.Map(lambda b: b.lang) | "EntitiesPerLang" >> beam.combiners.Count.PerElement()
        )
        unanswerable = (
            bundles
            | "KeyByBucket" >> beam.Map(
                bucket_key, o.seed, o.entities_per_bucket, beam.pvalue.AsDict(entities_per_lang)
            )
            | "GroupBuckets" >> beam.GroupByKey()
            | "PairUnanswerable" >> beam.ParDo(PairUnanswerableFn(o.seed)).with_outputs(STATS, main="rows")
        )
        stats = (
            parsed[STATS], resolved[STATS], selected[STATS], built[STATS], assembled[STATS], unanswerable[STATS]
        ) | "AllStats" >> beam.Flatten()
        dead = (parsed[DEAD_LETTER], resolved[DEAD_LETTER], built[DEAD_LETTER]) | "StageDeadLetters" >> beam.Flatten()
        rows = (assembled.rows, unanswerable.rows) | "AllRows" >> beam.Flatten()
        return rows, bundles, stats, dead


def build(p: beam.Pipeline, opts, specs: list[DumpSpec]) -> None:
    """The whole job on pipeline `p`: read, build examples, write data, stats and dead letters."""
    warning = direct_runner_memory_warning(p.options.view_as(StandardOptions).runner, specs)
    if warning:  # the pipeline has not started: a user can stop it and take the bounded route
        print(warning, file=sys.stderr, flush=True)
    out = opts.output
    read = p | "ReadDumps" >> ReadDumps(specs, opts.streams_per_range, opts.max_page_bytes,
                                        progress.progress_mode(opts.no_progress))
    languages = language_profiles(specs)
    rows, bundles, stats, dead = read["pages"] | "BuildMrcExamples" >> BuildMrcExamples(opts, languages)
    checked = rows | "CheckRows" >> CheckRows(MRC_SCHEMA)
    rows = checked["rows"]
    splits = {"train": rows}
    held_out = heldout.parse_held_out("--test_entities", opts.test_entities, opts.min_train_share)
    if held_out is not None:
        split = rows | "SplitTrainTest" >> heldout.SplitRows(held_out, functools.partial(entity_unit, opts.seed))
        splits = {"train": split["train"], "test": split["test"]}
        stats = (stats, split[STATS]) | "StatsWithSplit" >> beam.Flatten()
    data_dir = FileSystems.join(out, "data")
    for split, split_rows in splits.items():
        split_rows | f"Write{split.title()}" >> beam_outputs.WriteParquetShards(
            data_dir, split, MRC_SCHEMA, opts.num_shards, shuffle_seed=opts.seed)
    (stats, read[STATS], checked[STATS]) | "Stats" >> beam.Flatten() | "WriteStats" >> beam_outputs.WriteStats(out)
    (dead, read[DEAD_LETTER], checked[DEAD_LETTER]) | "DeadLetters" >> beam.Flatten() | "WriteDeadLetters" >> beam_outputs.WriteDeadLetters(out)


def entity_unit(seed: int, row: dict) -> tuple[str, int]:
    """The held-out unit of an MRC row: its entity, in its language."""
    return row["lang"], heldout.unit_hash(seed, row["lang"], row["entity"])


def dataset_card(opts, specs: list[DumpSpec]) -> DatasetCard:
    rows = CardConfig("mrc", {"train": "data/train-*.parquet", "test": "data/test-*.parquet"}, MRC_SCHEMA,
                      "query (Q words, the entity as [MASK]), context (C words), answers as inclusive word offsets")
    if opts.dump:
        license, source = "cc-by-sa-4.0", (
            "Text of Wikipedia (the dumps given with --dump), under the Creative Commons Attribution-ShareAlike "
            "licence (CC BY-SA 4.0; dumps before June 2023: CC BY-SA 3.0 and the GFDL). Attribute Wikipedia's "
            "contributors; each row names its pages (definition_page, mention_page).")
    else:
        license, source = SAMPLE_LICENSE, "The project's bundled sample dumps, written for it (corpora/samples/wiki)."
    return DatasetCard(
        title="mPMR machine-reading rows from Wikipedia (xlu-factory wiki_mrc)",
        summary="Query / context / answer triples of the multilingual Pre-trained Machine Reader (mPMR, Xu et al. "
                "2023, §2.2): the query is the start of an entity's own article with the entity as [MASK], the "
                "context is text around a link to it in another article; half of the rows are unanswerable.",
        license=license, source=source, configs=[rows, *bookkeeping_configs()],
        languages=sorted({s.lang for s in specs}))


def input_files(opts, specs: list[DumpSpec]) -> list[tuple[str, str]]:
    """The files the job reads, for the manifest: each dump and its multistream index."""
    return [(f"--dump {s.lang}", path) for s in specs for path in (s.path, s.index_path) if path]


def run(argv=None) -> pa.Table:
    return common.run_job(argv, JOB, WikiMrcOptions, __doc__, plan, build, print_summary, card=dataset_card,
                          inputs_of=input_files)


TABLE4_METRICS = ("entities/with_examples", "examples/answerable", "examples/unanswerable")


def print_summary(stats: pa.Table, seconds: float, stream=None) -> None:
    """The paper's Table 4 per language, then every count, so that each page is accounted for."""
    stream = stream or sys.stdout
    values = common.stats_by_lang(stats)
    print(f"\n{'lang':<6}{'entities':>10}{'answerable':>12}{'unanswerable':>14}{'examples':>10}", file=stream)
    totals = [0, 0, 0]
    for lang in sorted(values):
        e, a, u = (values[lang].get(m, 0) for m in TABLE4_METRICS)
        totals = [totals[0] + e, totals[1] + a, totals[2] + u]
        print(f"{lang:<6}{e:>10,}{a:>12,}{u:>14,}{a + u:>10,}", file=stream)
    print(f"{'total':<6}{totals[0]:>10,}{totals[1]:>12,}{totals[2]:>14,}{totals[1] + totals[2]:>10,}", file=stream)
    for lang in sorted(values):
        if not values[lang].get("entities/with_examples"):
            print(_no_examples_note(lang, values[lang]), file=stream)
    heldout.print_split_table(values, "entities", stream)
    common.print_count_table(values, stream)
    print(f"\ndone in {seconds:.1f}s", file=stream)


def _no_examples_note(lang: str, counts: dict) -> str:
    """A language with no rows gets a line that says why, rather than a row of zeros alone."""
    above, below = counts.get("entities/above_min_mentions", 0), counts.get("entities/below_min_mentions", 0)
    if not counts.get("pages/article", 0):  # an empty dump, or one without <page>: its warning says which
        return f"note: {lang}: no examples: the dump gave no article (see the warning below)"
    if above:
        return f"note: {lang}: no examples although {above:,} entities have enough mentions; see the counts below"
    links, missing = counts.get("mentions/links", 0), counts.get("mentions/missing_target", 0)
    flag = "--min_mentions_en" if lang == "en" else "--min_mentions"
    lacking = f"{missing:,} of {links:,} links point to pages the dump lacks"
    if not below:
        return f"note: {lang}: no examples: no article of the dump is linked from another ({lacking}); a bigger dump gives some"
    return (f"note: {lang}: no examples: no entity has enough mentions ({below:,} have fewer; {lacking}); a bigger "
            f"dump or a lower {flag} gives some")


if __name__ == "__main__":
    run()
