"""The stages of xy_corpus as DoFns and composite PTransforms; the logic is in corpora/.

  (lang, file) ─► ReadMono ─► batches of lines ─► Reshuffle ─► TokeniseMono ─► key [lang, file,
      line // pack_lines] ─► GroupByKey ─► PackMrtd (sorted by line number, then packed) ─► MRTD rows
  BitextSource ─► ReadBitext ─► batches of ParallelPair ─► Reshuffle ─► TokenisePairs ─► batches of
      TokenisedPair
      ├─► count per language pair ─► ToList ─► PairProbs (Sinkhorn; writes pair_probs.*) ─┐ side input
      └──────────────────────────────────────────────────────────────────────► DrawTrtd ◄┘ ─► TRTD rows

Elements are batches of up to BATCH_SIZE lines or pairs until the rows: one encode call per batch,
and a shuffle moves a thousand lines for the cost of one element.

The vocabulary is loaded once per worker in setup(), from the copy beside the outputs.
"""
from __future__ import annotations

import collections
import logging
import posixpath

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from corpora import bitext
from corpora.xy import sinkhorn, vocabulary
from corpora.xy import shards as xy_shards
from corpora.schemas import XY_PAIR_PROBS_SCHEMA
from corpora.text_lines import decode_line
from pipelines import beam_outputs, common, progress
from pipelines.beam_outputs import DEAD_LETTER, STATS, TallyingDoFn, dead_letter
from pipelines.parallel_reading import read_pair_records

PROGRESS = logging.getLogger("xlu.progress")
ALL = "all"  # the stats row of job-wide metrics
NO_LIMIT = 1 << 62  # corpora.bitext's word limit: xy_corpus limits token ids instead
# --trtd_draws: rows per language pair follow pair_probs, or every usable pair is written once and a
# trainer that samples language pairs by pair_probs itself (training/data/xylent.py) sees all the data.
DRAW_BY_PAIR_PROBS, DRAW_ONCE = "pair_probs", "once"
BATCH_SIZE = 1024
MAX_MARGINAL_ERROR = 1e-6  # what the tests ask of the plan before removal  # lines (or pairs) per element between reading and tokenising: one encode call each


def _lines(f):
    return iter(f.readline, b"")


def source_names(paths: list[str]) -> list[str]:
    """Short, unique names for the files of one language or pair: ids are built from them."""
    names, seen = [], {}
    for path in paths:
        base = posixpath.basename(path.rstrip("/")) or "input"
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return names


class _VocabDoFn(TallyingDoFn):
    def __init__(self, vocab_path: str):
        self.vocab_path = vocab_path

    def setup(self):
        self.sp = vocabulary.load(self.vocab_path)  # a vocap model or a tokenizer folder: the same two calls


# ───────────────────────────── MRTD ─────────────────────────────


class ReadMonoFn(TallyingDoFn):
    """(lang, name, path) -> (lang, name, [(line number, text), ...]) batches of consecutive lines;
    not UTF-8 -> dead letter, empty -> counted. Batches, not lines, cross the shuffles: per-element
    overhead, not tokenisation, dominated the job's time when lines travelled one by one."""

    def process(self, element):
        lang, name, path = element
        batch, counts = [], collections.Counter()
        with FileSystems.open(path) as f:  # compression from the extension
            for number, raw in enumerate(_lines(f), 1):
                counts["lines"] += 1
                text = decode_line(raw)
                if text is None:
                    counts["not_utf8"] += 1
                    yield dead_letter(path, str(number), "read", "not_utf8", raw[:200].decode("utf-8", "replace"))
                    continue
                text = text.strip()
                if not text:
                    counts["empty"] += 1
                    continue
                batch.append((number, text))
                if len(batch) == BATCH_SIZE:
                    yield lang, name, batch
                    batch = []
        if batch:
            yield lang, name, batch
        for reason, n in sorted(counts.items()):
            self.tally("read", reason, lang, n)


class TokeniseMonoFn(_VocabDoFn):
    """A batch of lines -> ((lang, name, group), [(line number, ids), ...]) per pack group it holds;
    one encode call per batch."""

    def __init__(self, vocab_path: str, pack_lines: int, progress_mode=None, total_lines: int | None = None):
        super().__init__(vocab_path)
        self.pack_lines = pack_lines
        self.progress_mode, self.total_lines = progress_mode, total_lines

    def process(self, element):
        lang, name, batch = element
        groups: dict[int, list] = {}
        lines = tokens = unknown = 0
        unk = self.sp.unk_id()
        # num_threads=1 everywhere: Beam already runs one DoFn per worker thread, and sentencepiece's
        # own pool of a batch encode made the process abort at exit ("terminate called without an
        # active exception", exit status 134) in 2 of 5 runs here.
        for (number, text), ids in zip(batch, self.sp.encode([text for _, text in batch], num_threads=1)):
            if not ids:  # only characters the normaliser removes
                self.tally("tokenise", "empty", lang)
                yield dead_letter(f"{lang}/{name}", str(number), "tokenise", "empty", text)
                continue
            lines, tokens, unknown = lines + 1, tokens + len(ids), unknown + ids.count(unk)
            groups.setdefault((number - 1) // self.pack_lines, []).append((number, ids))
        self.tally("mrtd", "lines", lang, lines)
        meter = progress.meter(self.progress_mode, "xy_mono", "tokenising monolingual lines", "lines", self.total_lines)
        if meter is not None:
            meter.advance(len(batch))
        self.tally("mrtd", "line_tokens", lang, tokens)
        self.tally("mrtd", "unknown_tokens", lang, unknown)
        for group, lines_ids in sorted(groups.items()):
            yield (lang, name, group), lines_ids


class PackMrtdFn(TallyingDoFn):
    """One group of consecutive lines -> packed MRTD rows; sorting by line number first makes the
    packing independent of the order in which the shuffle delivers the batches."""

    def __init__(self, max_len: int):
        self.max_len = max_len

    def process(self, element):
        (lang, name, group), batches = element
        ordered = [ids for _, ids in sorted(line for batch in batches for line in batch)]
        sequences = xy_shards.pack_sequences(ordered, self.max_len)
        self.tally("mrtd", "sequences", lang, len(sequences))
        self.tally("mrtd", "tokens", lang, sum(len(ids) for ids in sequences))
        for k, ids in enumerate(sequences):
            yield {"id": f"{lang}/{name}/{group:06d}/{k:06d}", "lang": lang, "input_ids": ids}


class BuildMrtd(beam.PTransform):
    """(lang, name, path) triples -> MRTD rows, with stats and dead letters."""

    def __init__(self, vocab_path: str, max_len: int, pack_lines: int, progress_mode=None, total_lines=None):
        super().__init__()
        self.vocab_path, self.max_len, self.pack_lines = vocab_path, max_len, pack_lines
        self.progress_mode, self.total_lines = progress_mode, total_lines

    def expand(self, files):
        read = files | "ReadMono" >> beam.ParDo(ReadMonoFn()).with_outputs(STATS, DEAD_LETTER, main="batches")
        tokenised = (
            read["batches"]
            | "SpreadBatches" >> beam.Reshuffle()
            | "TokeniseMono" >> beam.ParDo(TokeniseMonoFn(self.vocab_path, self.pack_lines, self.progress_mode, self.total_lines))
            .with_output_types(tuple[tuple[str, str, int], list[tuple[int, list[int]]]])  # keyed, for GroupLines
            .with_outputs(STATS, DEAD_LETTER, main="ids")
        )
        packed = (
            tokenised["ids"]
            | "GroupLines" >> beam.GroupByKey()
            | "PackMrtd" >> beam.ParDo(PackMrtdFn(self.max_len)).with_outputs(STATS, main="rows")
        )
        stats = (read[STATS], tokenised[STATS], packed[STATS]) | "MrtdStats" >> beam.Flatten()
        dead = (read[DEAD_LETTER], tokenised[DEAD_LETTER]) | "MrtdDeadLetters" >> beam.Flatten()
        return packed["rows"], stats, dead


# ───────────────────────────── TRTD ─────────────────────────────


class ReadBitextFn(TallyingDoFn):
    """(BitextSource, name) -> batches of ParallelPair (x side first); bad lines are counted and
    dead-lettered. A file is read by one worker from start to end; the Reshuffle after it spreads
    the batches."""

    def process(self, element):
        source, name = element
        lang = xy_shards.pair_key(source.x_lang, source.y_lang)
        record_name = f"{source.key}/{name}"
        batch, counts = [], collections.Counter()
        for record in read_pair_records(source.as_pair_source(), record_name, NO_LIMIT):
            counts["lines"] += 1
            if isinstance(record, bitext.BadLine):
                counts[record.reason] += 1
                yield dead_letter(",".join(source.paths), record.pair_id, "read", record.reason, record.excerpt)
                continue
            batch.append(record)
            if len(batch) == BATCH_SIZE:
                yield batch
                batch = []
        if batch:
            yield batch
        for reason, n in sorted(counts.items()):
            self.tally("read", reason, lang, n)


class TokenisePairsFn(_VocabDoFn):
    """A batch of ParallelPair -> a batch of TokenisedPair; a side with no ids or a pair over
    max_len is a counted drop (a truncated translation would no longer be one)."""

    def __init__(self, vocab_path: str, max_len: int, progress_mode=None, total_pairs: int | None = None):
        super().__init__(vocab_path)
        self.max_len = max_len
        self.progress_mode, self.total_pairs = progress_mode, total_pairs

    def process(self, batch):
        xs = self.sp.encode([p.src_text for p in batch], num_threads=1)
        ys = self.sp.encode([p.tgt_text for p in batch], num_threads=1)
        usable, counts, unknown = [], collections.Counter(), collections.Counter()
        unk = self.sp.unk_id()
        for pair, x_ids, y_ids in zip(batch, xs, ys):
            x_lang, y_lang = pair.tgt_lang.split("-")  # the readers carry the X-Y key there
            lang = xy_shards.pair_key(x_lang, y_lang)
            excerpt = f"{pair.src_text} ||| {pair.tgt_text}"
            if not x_ids or not y_ids:
                self.tally("tokenise", "empty", lang)
                yield dead_letter(lang, pair.pair_id, "tokenise", "empty", excerpt)
                continue
            if xy_shards.trtd_length(x_ids, y_ids) > self.max_len:
                self.tally("pairs", "too_long", lang)
                yield dead_letter(lang, pair.pair_id, "tokenise", "too_long", excerpt)
                continue
            counts[lang] += 1
            unknown[lang, "tokens"] += len(x_ids) + len(y_ids)
            unknown[lang, "unknown_tokens"] += x_ids.count(unk) + y_ids.count(unk)
            usable.append(xy_shards.TokenisedPair(pair.pair_id, x_lang, y_lang, tuple(x_ids), tuple(y_ids)))
        for lang, n in sorted(counts.items()):
            self.tally("pairs", "usable", lang, n)
        meter = progress.meter(self.progress_mode, "xy_bitext", "tokenising bitext pairs", "pairs", self.total_pairs)
        if meter is not None:
            meter.advance(len(batch))
        for (lang, metric), n in sorted(unknown.items()):
            self.tally("pairs", metric, lang, n)
        if usable:
            yield usable


def count_by_language_pair(batch: list[xy_shards.TokenisedPair]):
    counts = collections.Counter(xy_shards.pair_key(p.x_lang, p.y_lang) for p in batch)
    return sorted(counts.items())


common.FATAL_MESSAGES["fatal/no_usable_bitext_pair"] = (
    "xy_corpus: no usable bitext pair (every line empty, too long or unreadable); the counts above and "
    "dead_letter/ say why each line was dropped")


class PairProbsFn(TallyingDoFn):
    """Usable pairs per language pair -> Sinkhorn pair_probs; writes pair_probs.parquet and .png and
    returns the table the draws need: {pair key: (pairs, prob)} and the number of rows to draw."""

    def __init__(self, output: str, temperature: float, epsilon: float, trtd_pairs: int | None, draws: str):
        self.output, self.temperature, self.epsilon, self.trtd_pairs = output, temperature, epsilon, trtd_pairs
        self.draws = draws

    def process(self, counts):
        if not counts:
            self.tally("fatal", "no_usable_bitext_pair", ALL)
            return
        result = sinkhorn.sinkhorn_pair_probs({tuple(k.split("-")): n for k, n in counts}, self.temperature,
                                              self.epsilon)
        target = self.trtd_pairs or sum(n for _, n in counts)
        rows = result.pair_rows()
        for row in rows:  # what this job writes: the pair_probs mix, or every pair once
            row["expected_draws"] = row["prob"] * target if self.draws == DRAW_BY_PAIR_PROBS else float(row["pairs"])
        beam_outputs.write_parquet_file(FileSystems.join(self.output, "pair_probs.parquet"), rows, XY_PAIR_PROBS_SCHEMA)
        png = sinkhorn.plot_pair_probs(result, f"XY-LENT pair sampling (T={self.temperature:g}); "
                                       f"mass removed from pairs with no data {result.removed_mass:.3g}")
        with FileSystems.create(FileSystems.join(self.output, "pair_probs.png")) as sink:
            sink.write(png)
        self.tally("sinkhorn", "removed_mass_ppb", ALL, round(result.removed_mass * 1e9))
        self.tally("sinkhorn", "iterations", ALL, result.iterations)
        self.tally("sinkhorn", "marginal_error_ppb", ALL, round(result.marginal_error * 1e9))
        if result.marginal_error > MAX_MARGINAL_ERROR:
            logging.getLogger(__name__).warning(
                "xy_corpus: Sinkhorn stopped %.2g from the marginals p^(1/T) after %d iterations; pair_probs is a "
                "distribution but not the optimum: raise --epsilon", result.marginal_error, result.iterations)
        self.tally("trtd", "target_rows", ALL, target)
        PROGRESS.info("xy_corpus: Sinkhorn over %d languages in %d iterations (marginals within %.1g); mass on pairs "
                      "with no data %.3g removed", len(result.langs), result.iterations, result.marginal_error,
                      result.removed_mass)
        for row in rows:
            if row["pairs"]:
                PROGRESS.info("  %s-%s  pairs %8s  data %.4f  prob %.4f", row["src_lang"], row["tgt_lang"],
                              f"{row['pairs']:,}", row["data_share"], row["prob"])
                # In the stats, so that the summary can show what training draws and name the pairs
                # the plan starves (under --trtd_draws once the trainer samples by these too).
                self.tally("pairs", "prob_ppb", f"{row['src_lang']}-{row['tgt_lang']}", round(row["prob"] * 1e9))
        yield {"pairs": {f"{r['src_lang']}-{r['tgt_lang']}": (r["pairs"], r["prob"]) for r in rows if r["pairs"]},
               "target": target, "draws": self.draws}


class DrawTrtdFn(TallyingDoFn):
    """A batch of TokenisedPair -> 0..k TRTD rows per pair by pair_probs (corpora/xy/shards.py),
    each copy flipped or not."""

    def __init__(self, seed: int):
        self.seed = seed

    def process(self, batch: list[xy_shards.TokenisedPair], table):
        counts = collections.Counter()
        for pair in batch:
            lang = xy_shards.pair_key(pair.x_lang, pair.y_lang)
            pairs, prob = table["pairs"][lang]
            if table["draws"] == DRAW_BY_PAIR_PROBS:
                copies = xy_shards.draw_count(self.seed, pair.pair_id, xy_shards.draw_rate(prob, pairs, table["target"]))
            else:
                copies = 1
            for k in range(copies):
                flipped = xy_shards.is_flipped(self.seed, pair.pair_id, k)
                if flipped:
                    src_lang, tgt_lang, first, second = pair.y_lang, pair.x_lang, pair.y_ids, pair.x_ids
                else:
                    src_lang, tgt_lang, first, second = pair.x_lang, pair.y_lang, pair.x_ids, pair.y_ids
                ids, src_len = xy_shards.trtd_sequence(first, second)
                counts[(lang, "rows")] += 1
                counts[(lang, "flipped")] += flipped
                counts[(lang, "tokens")] += len(ids)
                yield {"id": f"{pair.pair_id}#{k}", "src_lang": src_lang, "tgt_lang": tgt_lang, "input_ids": ids,
                       "n_ids": len(ids), "src_len": src_len, "flipped": flipped}
        for (lang, metric), n in sorted(counts.items()):
            self.tally("trtd", metric, lang, n)


class BuildTrtd(beam.PTransform):
    """(BitextSource, name) pairs -> TRTD rows drawn by the Sinkhorn pair_probs, with stats and dead letters."""

    def __init__(self, opts, vocab_path: str, progress_mode=None, total_pairs: int | None = None):
        super().__init__()
        self.opts, self.vocab_path = opts, vocab_path
        self.progress_mode, self.total_pairs = progress_mode, total_pairs

    def expand(self, sources):
        opts = self.opts
        read = sources | "ReadBitext" >> beam.ParDo(ReadBitextFn()).with_outputs(STATS, DEAD_LETTER, main="batches")
        tokenised = (
            read["batches"]
            | "SpreadBatches" >> beam.Reshuffle()
            | "TokenisePairs" >> beam.ParDo(TokenisePairsFn(self.vocab_path, opts.max_len, self.progress_mode,
                                                                       self.total_pairs)).with_outputs(
                STATS, DEAD_LETTER, main="pairs")
        )
        probs = (
            tokenised["pairs"]
            | "CountByLanguagePair" >> beam.FlatMap(count_by_language_pair)
            | "CountPairs" >> beam.CombinePerKey(sum)
            | "AllCounts" >> beam.combiners.ToList()
            | "PairProbs" >> beam.ParDo(PairProbsFn(opts.output, opts.temperature, opts.epsilon,
                                                    opts.trtd_pairs, opts.trtd_draws)).with_outputs(STATS, main="table")
        )
        drawn = tokenised["pairs"] | "DrawTrtd" >> beam.ParDo(
            DrawTrtdFn(opts.seed), beam.pvalue.AsSingleton(probs["table"])).with_outputs(STATS, main="rows")
        stats = (read[STATS], tokenised[STATS], probs[STATS], drawn[STATS]) | "TrtdStats" >> beam.Flatten()
        dead = (read[DEAD_LETTER], tokenised[DEAD_LETTER]) | "TrtdDeadLetters" >> beam.Flatten()
        return drawn["rows"], stats, dead
