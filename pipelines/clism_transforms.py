"""The stages of clism_pairs as DoFns and composite PTransforms; text logic is in `corpora/`.

  PairSource ─► ReadPairs ─► batches of ParallelPair ─► TagEntities (spaCy NER loaded once per
  worker, nlp.pipe per batch over the English sentences this worker has not tagged yet; target
  words) ─► batches of TaggedPair (spans may be empty)
     ├─ fast_align, eflomal: split by key [lang pair, shard] ─► GroupByKey ─► AlignCorpus (one model
     │            per group, trained on every pair of the group, spanless pairs included: more data,
     │            better alignments) ─► ProjectSpans
     └─ simalign: pairs with spans ─► Batch ─► AlignBatch (model once per worker) ─► ProjectSpans
  ─► rows (clism schema), stats, dead letters

Pairs travel in batches (lists of up to --ner_batch_size pairs) from the reader to the aligner:
every element costs Beam a few Python calls at every step and a pickle at every shuffle, which
for one short sentence pair is as much as its tokenisation (measured: see docs/clism_pairs.md).
Inside a batch a pair is a plain tuple (see `tagged_to_wire`), which Beam's coder encodes in C.
"""
from __future__ import annotations

import collections
import logging
import posixpath
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from corpora import bitext
from corpora.clism.aligners import EflomalAligner, FastAlignAligner, SimAlignAligner
from corpora.clism.answers.repeats import pair_answers
from corpora.clism.answers.spans import answer_words, drop_overlapping
from corpora.clism.ner_spans import NER_CACHE_ENTRIES, CachedNer, Span, informative_spans, load_ner_pipeline
from corpora.seeding import stable_hash
from corpora.spacing import word_spaces
from corpora.word_tags import tag_words
from corpora.words import get_tokenizer, stop_words
from pipelines import progress
from pipelines.beam_outputs import DEAD_LETTER, STATS, TallyingDoFn, dead_letter
from pipelines.parallel_reading import read_pair_records

PROGRESS = logging.getLogger("xlu.progress")


class TaggedPair(NamedTuple):
    pair_id: str
    tgt_lang: str
    src_words: tuple
    tgt_words: tuple
    spans: tuple  # of Span, English side, inclusive word offsets
    tgt_tags: tuple = ()  # a part of speech per target word where the answer rules read them (ja, ko, zh)
    src_spaces: tuple = ()  # per word, whether whitespace follows it in the sentence (corpora/spacing.py)
    tgt_spaces: tuple = ()


# Beam's default coder encodes tuples, lists, str and int in C but pickles any other object one by
# one (a NamedTuple: a Python __reduce__ call and a class lookup each), and DirectRunner encodes an
# element several times (size estimates): a batch of 512 ParallelPair took 3.5 ms to encode and
# decode, as plain tuples 0.25 ms (TaggedPair with its spans 7.9 ms and 1.4 ms). So pairs cross
# stage boundaries as plain tuples and are named again inside the DoFn that reads them.

def tagged_to_wire(pair: TaggedPair) -> tuple:
    return (pair.pair_id, pair.tgt_lang, pair.src_words, pair.tgt_words, tuple(tuple(s) for s in pair.spans), pair.tgt_tags,
            pair.src_spaces, pair.tgt_spaces)


def tagged_from_wire(t: tuple) -> TaggedPair:
    return TaggedPair(t[0], t[1], t[2], t[3], tuple(Span._make(s) for s in t[4]), t[5], t[6], t[7])


def pair_key(tgt_lang: str) -> str:
    """The stats `lang` column of this job is the language pair."""
    return f"en-{tgt_lang}"


# ───────────────────────────── reading ─────────────────────────────


class ReadPairsFn(TallyingDoFn):
    """One PairSource -> lists of up to `batch_size` ParallelPair (as plain tuples); bad lines are
    counted and dead-lettered.

    A file is read by one worker from start to end (text lines cannot be split without a scan);
    the Reshuffle after this step spreads the batches over workers for NER and alignment. A batch
    is what nlp.pipe gets at once (larger batches: fewer, larger matrix products in NER).
    """

    def __init__(self, max_words: int, batch_size: int):
        self.max_words, self.batch_size = max_words, batch_size

    def process(self, source: bitext.PairSource):
        lang = pair_key(source.tgt_lang)
        name = f"{lang}/{posixpath.basename(source.paths[0])}"
        counts, batch = collections.Counter(), []
        for record in read_pair_records(source, name, self.max_words):
            counts["lines"] += 1
            if isinstance(record, bitext.BadLine):
                counts[record.reason] += 1
                yield dead_letter(",".join(source.paths), record.pair_id, "read", record.reason, record.excerpt)
            else:
                batch.append(tuple(record))
                if len(batch) == self.batch_size:
                    yield batch
                    batch = []
        if batch:
            yield batch
        for reason, n in counts.items():  # one Beam counter update per reason, not per line
            self.tally("read", reason, lang, n)


# ───────────────────────────── NER and informative spans ─────────────────────────────


class TagEntitiesFn(TallyingDoFn):
    """A batch of ParallelPair -> one list of TaggedPair (both as plain tuples), with the informative
    English spans.

    The spaCy pipeline loads once per worker (setup) and runs with nlp.pipe over the batch's
    English sentences not tagged before on this worker (CachedNer: multi-way corpora repeat the
    English side once per target language). With `pretokenized`, words are the input's
    space-separated tokens (the gold sets are tokenised so), and spaCy tags a Doc built from them;
    otherwise English words are spaCy's tokens and target words come from corpora.words for the
    target language.
    """

    def __init__(self, spacy_model: str, pretokenized: bool, max_words: int, max_span_words: int,
                 labels: frozenset[str] | None, cache_entries: int = NER_CACHE_ENTRIES, progress_mode=None,
                 total_pairs: int | None = None):
        self.spacy_model, self.pretokenized = spacy_model, pretokenized
        self.max_words, self.max_span_words, self.labels = max_words, max_span_words, labels
        self.cache_entries = cache_entries
        self.progress_mode, self.total_pairs = progress_mode, total_pairs

    def setup(self):
        # The NER pipeline first: it imports spaCy without torch, and stop_words() would import it with
        # torch if it came first (memory and seconds of CPU per worker; benchmarks/README.md).
        nlp = load_ner_pipeline(self.spacy_model)
        self.stop_words = stop_words("en")
        self.ner = CachedNer(nlp, self.pretokenized, self.cache_entries, derive=self.informative_spans)
        # Best effort, not stats: how often NER ran depends on which worker saw which batch.
        self.texts_tagged = Metrics.counter("xlu", "ner/texts_tagged")

    def informative_spans(self, words, entities):
        return informative_spans(words, entities, self.stop_words, self.max_span_words, self.labels)

    def process(self, batch):
        # Made before the batch is tagged, so that the rate counts the tagging's time.
        meter = progress.meter(self.progress_mode, "clism_ner", "tagging entities", "pairs", self.total_pairs)
        batch = [bitext.ParallelPair._make(t) for t in batch]
        if self.pretokenized:
            tgt_words = [p.tgt_text.split() for p in batch]
        else:
            tgt_words = [None] * len(batch)
            by_lang: dict[str, list[int]] = {}
            for k, p in enumerate(batch):
                by_lang.setdefault(p.tgt_lang, []).append(k)
            for lang, ks in by_lang.items():
                for k, words in zip(ks, get_tokenizer(lang).tokenize_many([batch[k].tgt_text for k in ks])):
                    tgt_words[k] = words
        before = self.ner.texts_tagged
        english = self.ner.tag([p.src_text for p in batch])
        self.texts_tagged.inc(self.ner.texts_tagged - before)
        tagged, counts = [], collections.Counter()
        for pair, (src, entities, (spans, rejected)), tgt in zip(batch, english, tgt_words):
            # src: the English words, NER's own tokens, stored and aligned as they are
            lang = pair_key(pair.tgt_lang)
            if len(src) > self.max_words or len(tgt) > self.max_words or not src or not tgt:
                reason = "too_long" if src and tgt else "empty"
                counts["words", reason, lang] += 1
                yield dead_letter(lang, pair.pair_id, "words", reason, f"{pair.src_text} ||| {pair.tgt_text}")
                continue
            counts["ner", "entities", lang] += len(entities)
            for reason, n in rejected.items():
                counts["span", reason, lang] += n
            counts["ner", "informative_spans", lang] += len(spans)
            if not spans:
                # Dropped from the output but still aligned by fast_align/eflomal: every pair is training data.
                counts["pairs", "no_span", lang] += 1
            tags = tag_words(pair.tgt_lang, pair.tgt_text, tgt) if spans and not self.pretokenized else ()
            src_spaces = sentence_spaces(pair.src_text, src, "en")
            tgt_spaces = sentence_spaces(pair.tgt_text, tgt, None if self.pretokenized else pair.tgt_lang)
            tagged.append(tagged_to_wire(TaggedPair(pair.pair_id, pair.tgt_lang, src, tuple(tgt), tuple(spans), tags,
                                                    src_spaces, tgt_spaces)))
        tally_all(self, counts)
        if meter is not None:
            meter.advance(len(batch))
            progress.note(self.progress_mode, "pairs_with_spans", sum(1 for t in tagged if t[4]))
        if tagged:
            yield tagged


def sentence_spaces(text: str, words, lang: str | None) -> tuple:
    """The words' space flags from the sentence they were tokenised from; if a word cannot be placed in
    it, the language's rule (a space after every word where words are written with spaces; `lang` None:
    words the input gave space-separated)."""
    spaces = word_spaces(text, words)
    if spaces is not None:
        return tuple(spaces)
    return (get_tokenizer(lang).joins_with_space if lang else True,) * len(words)


def tally_all(fn: TallyingDoFn, counts: collections.Counter) -> None:
    """Counts gathered over a batch, as (stage, reason, lang) -> n, into the DoFn's stats: one Beam
    counter update per key and batch instead of one per pair (a counter update costs about as much
    as projecting a span)."""
    for (stage, reason, lang), n in sorted(counts.items()):
        fn.tally(stage, reason, lang, n)


# ───────────────────────────── alignment and projection ─────────────────────────────


def clism_row(pair: TaggedPair, projected: list[tuple[Span, int, int]]) -> dict:
    return {
        "id": pair.pair_id,
        "src_lang": "en",
        "tgt_lang": pair.tgt_lang,
        "src_words": list(pair.src_words),
        "src_spaces": list(pair.src_spaces),
        "tgt_words": list(pair.tgt_words),
        "tgt_spaces": list(pair.tgt_spaces),
        "spans": [
            {"src_start": s.start, "src_end": s.end, "tgt_start": ts, "tgt_end": te, "label": s.label}
            for s, ts, te in projected
        ],
    }


class _ProjectingDoFn(TallyingDoFn):
    def __init__(self, max_gap: int):
        self.max_gap = max_gap

    def project(self, pair: TaggedPair, alignment, counts: collections.Counter):
        """Rows of one aligned pair: each span through the alignment; the pair if any span is left.
        What happens is counted into `counts` (see tally_all)."""
        lang = pair_key(pair.tgt_lang)
        if not pair.spans:
            return
        projected = []
        words, english_stops = answer_words(pair.tgt_lang), stop_words("en")
        answers = pair_answers(alignment, pair.src_words, pair.tgt_words, pair.spans, self.max_gap, english_stops, words,
                               pair.tgt_tags)
        for span, answer in zip(pair.spans, answers):
            if isinstance(answer, str):
                counts["project", answer, lang] += 1
                continue
            if answer.repaired:
                counts["project", "edges_trimmed", lang] += 1
            projected.append((span, answer.start, answer.end))
        projected, overlapping = drop_overlapping(projected)
        if overlapping:
            counts["project", "overlapping_answers", lang] += overlapping
        if not projected:
            counts["pairs", "no_span_projected", lang] += 1
            return
        counts["pairs", "kept", lang] += 1
        counts["spans", "kept", lang] += len(projected)
        yield clism_row(pair, projected)


class AlignCorpusFn(_ProjectingDoFn):
    """(key, pairs) -> rows: one statistical model (fast_align or eflomal) fitted on every pair of the group."""

    def __init__(self, max_gap: int, symmetrisation: str, prefix_len: int = 0, n_samplers: int = 3,
                 identity_prior: float = 1.0, aligner: str = "fast_align"):
        super().__init__(max_gap)
        self.aligner = aligner
        self.symmetrisation, self.prefix_len, self.n_samplers = symmetrisation, prefix_len, n_samplers
        self.identity_prior = identity_prior

    def process(self, element):
        (tgt_lang, shard), batches = element
        # Beam gives the group in any order. fast_align's EM sums its counts in input order, so
        # a fixed order is what makes its output the same bytes on every run and worker layout;
        # for eflomal it makes reruns as alike as its unseeded sampler allows.
        pairs = sorted((tagged_from_wire(t) for batch in batches for t in batch), key=lambda p: p.pair_id)
        PROGRESS.info("%s: aligning %d pairs of en-%s (shard %d)", self.aligner, len(pairs), tgt_lang, shard)
        if self.aligner == "fast_align":
            aligner = FastAlignAligner(self.symmetrisation, identity_prior=self.identity_prior,
                                       prior_stop_words=stop_words("en"))
        else:
            aligner = EflomalAligner(self.symmetrisation, self.n_samplers, prefix_len=self.prefix_len,
                                     identity_prior=self.identity_prior, prior_stop_words=stop_words("en"))
        alignments = aligner.align([(p.src_words, p.tgt_words) for p in pairs])
        self.tally("align", "pairs", pair_key(tgt_lang), len(pairs))
        counts = collections.Counter()
        for pair, alignment in zip(pairs, alignments):
            yield from self.project(pair, alignment, counts)
        tally_all(self, counts)


class AlignBatchFn(_ProjectingDoFn):
    """A batch of pairs -> rows, with the neural aligner loaded once per worker."""

    def __init__(self, max_gap: int, model: str, method: str, layer: int | None, progress_mode=None):
        super().__init__(max_gap)
        self.model, self.method, self.layer = model, method, layer
        self.progress_mode = progress_mode

    def setup(self):
        if self.progress_mode is None or self.progress_mode.kind != progress.BAR:
            from transformers.utils import logging as transformers_logging
            transformers_logging.disable_progress_bar()  # its "Loading weights" bar: on a terminal only
        self.aligner = SimAlignAligner(self.model, self.method, self.layer)

    def process(self, batch):
        batch = [tagged_from_wire(t) for t in batch]
        alignments = self.aligner.align([(p.src_words, p.tgt_words) for p in batch])
        # The total grows while entity tagging, fused with this step, is still ahead of it.
        total = progress.noted("pairs_with_spans")
        meter = progress.meter(self.progress_mode, "clism_align", "aligning pairs with spans", "pairs", total)
        if meter is not None:
            meter.advance(len(batch), total=total)
        counts = collections.Counter()
        for pair, alignment in zip(batch, alignments):
            counts["align", "pairs", pair_key(pair.tgt_lang)] += 1
            yield from self.project(pair, alignment, counts)
        tally_all(self, counts)


def split_by_lang_pair_shard(batch: list[tuple], seed: int, shards: int):
    """One batch of tagged pairs (as tagged_to_wire) -> ((tgt_lang, shard), the batch's pairs with
    that key) elements, so that the GroupByKey before alignment moves lists, not single pairs."""
    groups: dict[tuple[str, int], list[tuple]] = {}
    for t in batch:
        pair_id, tgt_lang = t[0], t[1]
        shard = stable_hash(seed, pair_id) % shards if shards > 1 else 0
        groups.setdefault((tgt_lang, shard), []).append(t)
    return sorted(groups.items())


class BuildClismPairs(beam.PTransform):
    """Batches (lists) of ParallelPair -> (rows, stats, dead letters)."""

    def __init__(self, opts, progress_mode=None, total_pairs: int | None = None):
        super().__init__()
        self.opts, self.progress_mode, self.total_pairs = opts, progress_mode, total_pairs

    def expand(self, pairs):
        o = self.opts
        labels = frozenset(o.entity_labels.split(",")) if o.entity_labels else None
        tagged = (
            pairs
            | "TagEntities" >> beam.ParDo(
                TagEntitiesFn(o.spacy_model, o.pretokenized, o.max_words, o.max_span_words, labels,
                              o.ner_cache_entries, self.progress_mode, self.total_pairs)
            ).with_outputs(STATS, DEAD_LETTER, main="pairs")
        )
        if o.aligner in ("fast_align", "eflomal"):
            shards = o.align_shards
            aligned = (
                tagged.pairs
                | "KeyByLangPairShard" >> beam.FlatMap(split_by_lang_pair_shard, o.seed, shards)
                | "GroupForEflomal" >> beam.GroupByKey()  # step name kept: Dataflow update compatibility
                | "AlignCorpus" >> beam.ParDo(
                    AlignCorpusFn(o.max_gap, o.symmetrisation, o.eflomal_prefix_len, o.eflomal_samplers,
                                  o.identity_prior, o.aligner)
                ).with_outputs(STATS, main="rows")
            )
        else:
            aligned = (
                tagged.pairs
                | "HasSpans" >> beam.FlatMap(lambda batch: [t for t in batch if tagged_from_wire(t).spans])
                | "BatchForAligner" >> beam.BatchElements(min_batch_size=4, max_batch_size=o.align_batch_size)
                | "AlignBatches" >> beam.ParDo(
                    AlignBatchFn(o.max_gap, o.aligner_model, o.aligner_method, o.aligner_layer, self.progress_mode)
                ).with_outputs(STATS, main="rows")
            )
        stats = (tagged[STATS], aligned[STATS]) | "AllStats" >> beam.Flatten()
        return aligned.rows, stats, tagged[DEAD_LETTER]


class ReadPairs(beam.PTransform):
    """PairSources -> {"pairs": lists of up to `batch_size` ParallelPair, stats, dead letters}."""

    def __init__(self, sources: list[bitext.PairSource], max_words: int, batch_size: int):
        super().__init__()
        self.sources, self.max_words, self.batch_size = sources, max_words, batch_size

    def expand(self, pbegin):
        read = (
            pbegin
            | "Sources" >> beam.Create(self.sources)
            | "ReadLines" >> beam.ParDo(ReadPairsFn(self.max_words, self.batch_size)).with_outputs(
                STATS, DEAD_LETTER, main="pairs")
        )
        pairs = read.pairs | "Spread" >> beam.Reshuffle()
        return {"pairs": pairs, STATS: read[STATS], DEAD_LETTER: read[DEAD_LETTER]}
