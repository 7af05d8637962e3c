"""Held-out test splits, made per language (or language pair) by a count or a fraction of its units:
wiki_mrc's entities, the source sentences of clism_pairs and xy_corpus.

Every row of a unit goes to the same side. A unit's place in a seeded order is a hash of (seed,
unit); `--test_entities 20` holds out the 20 first units of each language in that order, `0.05`
those whose hash falls in the first 5% of the hash range (about 5% of each language's units, each
unit decided alone). A language never gives more than its share above the floor `--min_train_share`
to test: a count is cut to what leaves that share in training, and a fraction above 1 - the share is
refused; the summary says where a count was cut, or where a small language's fraction left it under
the floor by chance.

With `across_languages` (parallel data), a unit held out in one language pair is held out in every
pair: an English sentence of the test side is in no training pair, whichever its translation.
"""
from __future__ import annotations

import math
import sys
from typing import Callable, NamedTuple

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from corpora.seeding import stable_hash
from pipelines.beam_outputs import STATS, TallyingDoFn
from pipelines.input_checks import UsageError

HASH_RANGE = 1 << 64
DEFAULT_MIN_TRAIN_SHARE = 0.5


class HeldOut(NamedTuple):
    count: int | None
    fraction: float | None
    min_train_share: float

    def threshold(self) -> int:
        return int(self.fraction * HASH_RANGE)


class HeldOutFloorOptions(PipelineOptions):
    """--min_train_share, defined once for the jobs that hold data out (see common.JobOptions)."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--min_train_share", type=float, default=DEFAULT_MIN_TRAIN_SHARE,
                            help="the share of each language's units (entities, sentences) that stays in training "
                            "whatever the held-out count asks; the summary names a language where it cut the "
                            "count (default %(default)s)")


class HeldOutSentencesOptions(PipelineOptions):
    """--test_sentences, for the parallel-data jobs."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--test_sentences", default="0", metavar="N|FRACTION",
                            help="source sentences per language pair held out to a test split, with every pair of "
                            "each one: a count (200) or a fraction (0.05); default none")


def parse_held_out(flag: str, value, min_train_share: float) -> HeldOut | None:
    """`--flag N` or `--flag 0.05` -> HeldOut; 0 -> None; anything else a one-line error."""
    if not 0 <= min_train_share < 1:
        raise UsageError(f"--min_train_share must be at least 0 and below 1, got {min_train_share}")
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        raise UsageError(f"{flag} {text}: give a count (20) or a fraction below 1 (0.05)") from None
    if number == 0:
        return None
    if number >= 1:
        if number != int(number):
            raise UsageError(f"{flag} {text}: a count is a whole number; a fraction is below 1")
        return HeldOut(int(number), None, min_train_share)
    if number < 0:
        raise UsageError(f"{flag} {text}: must be 0 (none), a count or a fraction below 1")
    if number > 1 - min_train_share:
        raise UsageError(f"{flag} {text}: holds out more than 1 - --min_train_share ({1 - min_train_share:g}) of each "
                         f"language; lower it, or lower --min_train_share")
    return HeldOut(None, number, min_train_share)


def held_out_quota(units: int, spec: HeldOut) -> int:
    """Units of a language that a count holds out: the count, cut to leave the floor in training."""
    return max(0, min(spec.count, units - math.ceil(spec.min_train_share * units)))


class PickHeldOut(beam.PTransform):
    """(lang, unit hash) of every row -> {"picked": (lang, frozenset of held-out hashes)} for a count
    (empty for a fraction, decided by the hash alone), and per-language stats: `split/units`,
    `split/train_floor` (the units --min_train_share keeps), `split/test_units_cut` (what the floor
    took from the count)."""

    def __init__(self, spec: HeldOut):
        super().__init__()
        self.spec = spec

    def expand(self, keyed):
        spec = self.spec
        units = keyed | "DistinctUnits" >> beam.Distinct()
        counts = units | "UnitsPerLang" >> beam.combiners.Count.PerKey()
        stats = [counts | "UnitStats" >> beam.FlatMap(_unit_stats, spec.min_train_share)]
        if spec.count is not None:
            picked = (
                units
                | "FirstUnits" >> beam.combiners.Top.SmallestPerKey(spec.count)
                | "CutToFloor" >> beam.Map(_cut_to_floor, spec, beam.pvalue.AsDict(counts))
            )
            stats.append(picked | "CutStats" >> beam.FlatMap(_cut_stats, spec, beam.pvalue.AsDict(counts)))
            picked = picked | "AsSets" >> beam.MapTuple(lambda lang, hashes: (lang, frozenset(hashes)))
        else:
            picked = keyed.pipeline | "NoSets" >> beam.Create([])
        return {"picked": picked, STATS: stats | "SplitUnitStats" >> beam.Flatten()}


def _unit_stats(lang_units: tuple, min_train_share: float):
    lang, units = lang_units
    yield (lang, "split/units"), units
    yield (lang, "split/train_floor"), math.ceil(min_train_share * units)


def _cut_to_floor(lang_hashes: tuple, spec: HeldOut, counts: dict):
    lang, hashes = lang_hashes
    return lang, sorted(hashes)[: held_out_quota(counts.get(lang, 0), spec)]


def _cut_stats(lang_hashes: tuple, spec: HeldOut, counts: dict):
    lang, hashes = lang_hashes
    cut = min(spec.count, counts.get(lang, 0)) - len(hashes)
    if cut:
        yield (lang, "split/test_units_cut"), cut


class SplitRowsFn(TallyingDoFn):
    """Rows -> train (main) and `test` outputs by their unit, counted per language."""

    def __init__(self, spec: HeldOut, unit_of: Callable, across_languages: bool):
        self.spec, self.unit_of, self.across_languages = spec, unit_of, across_languages

    def process(self, row, picked):
        lang, unit = self.unit_of(row)
        if self.spec.fraction is not None:
            test = unit < self.spec.threshold()
        elif self.across_languages:
            test = any(unit in hashes for hashes in picked.values())
        else:
            test = unit in picked.get(lang, ())
        self.tally("split", "test_rows" if test else "train_rows", lang)
        if test:
            yield beam.pvalue.TaggedOutput("test_units", (lang, unit))
        yield beam.pvalue.TaggedOutput("test", row) if test else row


class SplitRows(beam.PTransform):
    """Rows -> {"train", "test", STATS}: `unit_of(row)` gives (lang, unit hash)."""

    def __init__(self, spec: HeldOut, unit_of: Callable, across_languages: bool = False):
        super().__init__()
        self.spec, self.unit_of, self.across_languages = spec, unit_of, across_languages

    def expand(self, rows):
        picked = rows | "UnitOfRow" >> beam.Map(self.unit_of) | "PickHeldOut" >> PickHeldOut(self.spec)
        split = rows | "SplitRows" >> beam.ParDo(
            SplitRowsFn(self.spec, self.unit_of, self.across_languages), beam.pvalue.AsDict(picked["picked"])
        ).with_outputs("test", "test_units", STATS, main="train")
        # Counted from the split itself: across languages a pair holds out the units other pairs picked too.
        test_units = (
            split.test_units
            | "DistinctTestUnits" >> beam.Distinct()
            | "TestUnitsPerLang" >> beam.combiners.Count.PerKey()
            | "TestUnitStats" >> beam.MapTuple(lambda lang, n: ((lang, "split/test_units"), n))
        )
        stats = (picked[STATS], split[STATS], test_units) | "SplitStats" >> beam.Flatten()
        return {"train": split.train, "test": split.test, STATS: stats}


def unit_hash(seed: int, *unit) -> int:
    return stable_hash(seed, "test", *unit)


def print_split_table(values: dict[str, dict[str, int]], unit_name: str, stream=None) -> None:
    """Train and test per language, in units and rows, with a note where the floor cut a count or a
    fraction left a language under it."""
    stream = stream or sys.stdout
    langs = sorted(lang for lang, v in values.items() if "split/units" in v)
    if not langs:
        return
    print(f"\n{'split':<9}{unit_name + ' train':>18}{unit_name + ' test':>18}{'rows train':>12}{'rows test':>11}",
          file=stream)
    for lang in langs:
        v = values[lang]
        units, test = v.get("split/units", 0), v.get("split/test_units", 0)
        print(f"{lang:<9}{units - test:>18,}{test:>18,}{v.get('split/train_rows', 0):>12,}{v.get('split/test_rows', 0):>11,}",
              file=stream)
    for lang in langs:
        v = values[lang]
        units, test, cut = v.get("split/units", 0), v.get("split/test_units", 0), v.get("split/test_units_cut", 0)
        floor = v.get("split/train_floor", 0)
        if cut:
            print(f"note: {lang}: {test:,} of its {units:,} {unit_name} held out, {cut:,} fewer than asked: "
                  f"--min_train_share keeps {floor:,} for training", file=stream)
        elif units - test < floor:
            print(f"note: {lang}: {units - test:,} of its {units:,} {unit_name} left for training, under the "
                  f"{floor:,} of --min_train_share (a fraction of few units, or units held out in another pair)",
                  file=stream)
        elif not test:
            print(f"note: {lang}: no {unit_name} held out (it has {units:,})", file=stream)
