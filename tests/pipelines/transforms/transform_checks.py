"""What the transform tests share: one assert_that over several outputs of a transform, stats summed
as the jobs' WriteStats sums them, matchers for named counts and for a fact of every element, and a
tiny SentencePiece vocabulary."""
from __future__ import annotations

import io

import apache_beam as beam
import sentencepiece as spm
from apache_beam.testing.util import BeamAssertException, assert_that


def assert_outputs(matchers: dict, label: str = "CheckOutputs") -> None:
    """{name: (pcollection, matcher)} checked by one assert_that: the elements of each output go to
    its matcher (an `equal_to(...)` or any function that raises). One assert_that adds a dozen steps
    that DirectRunner is slow to build, many times a Map's cost, so a test makes one, not one an output."""
    tagged = [pcoll | f"{label}Tag{name}" >> beam.Map(lambda element, name=name: (name, element))
              for name, (pcoll, _) in matchers.items()]

    def check(actual):
        by_name = {name: [] for name in matchers}
        for name, element in actual:
            by_name[name].append(element)
        for name, (_, matcher) in matchers.items():
            try:
                matcher(by_name[name])
            except BeamAssertException as failure:
                raise BeamAssertException(f"{name}: {failure}") from None

    assert_that(tagged | f"{label}Flatten" >> beam.Flatten(), check, label=label)


def summed(stats, label: str = "SumStats"):
    """((lang, metric), n) tallies of every bundle -> one total per (lang, metric)."""
    return stats | label >> beam.CombinePerKey(sum)


def counts_include(expected: dict):
    """A matcher: each named (lang, metric) total has its value (absent counts as 0)."""

    def check(actual):
        totals = dict(actual)
        wrong = {key: (totals.get(key, 0), want) for key, want in expected.items() if totals.get(key, 0) != want}
        if wrong:
            raise BeamAssertException(f"stats (got, expected): {wrong}; all stats: {sorted(totals.items())}")

    return check


def check_each(predicate, what: str):
    """A matcher: `predicate` holds for every element, and there is at least one."""

    def check(actual):
        if not actual:
            raise BeamAssertException(f"no elements to check that {what}")
        failing = [a for a in actual if not predicate(a)]
        if failing:
            raise BeamAssertException(f"{len(failing)} of {len(actual)} elements break '{what}', e.g. {failing[0]!r}")

    return check


TINY_VOCAB_TEXT = ["hello world", "the cat sat on the mat", "a dog", "un chat", "deux chats", "trois", "le chien",
                   "صباح الخير", "شكرا", "قطة"]


def write_tiny_vocab(path):
    """A SentencePiece model with vocap's ids (<s> <pad> </s> <unk> <mask> = 0..4), trained in a
    tenth of a second on a few words of English, French and Arabic; returns its processor."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TINY_VOCAB_TEXT * 5), model_writer=model, vocab_size=60, model_type="unigram",
        bos_id=0, pad_id=1, eos_id=2, unk_id=3, user_defined_symbols=["<mask>"], character_coverage=1.0,
        hard_vocab_limit=False, num_threads=1, minloglevel=2)
    path.write_bytes(model.getvalue())
    return spm.SentencePieceProcessor(model_proto=model.getvalue())
