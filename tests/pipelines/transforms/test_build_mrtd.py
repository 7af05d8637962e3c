"""BuildMrtd alone (pipelines/xy_transforms.py) on two tiny monolingual files and a tiny vocabulary:
lines packed in file order as `<s> line </s> line </s>`, one group every `pack_lines` lines; bad
lines dead-lettered with their reason; lines, sequences and tokens counted."""
from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from corpora.xy.vocap import BOS_ID, EOS_ID
from pipelines.xy_transforms import BuildMrtd

from transform_checks import assert_outputs, summed, write_tiny_vocab

ZERO_WIDTH_SPACE = "\u200b"  # survives strip() but SentencePiece's normaliser removes it: no ids


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "spm.model"
    return path, write_tiny_vocab(path)


def test_lines_packed_in_file_order_per_group_and_bad_lines_dead_lettered(tmp_path, vocab):
    vocab_path, sp = vocab
    en = tmp_path / "en.txt"
    en.write_bytes("hello world\n\nthe cat\n".encode() + b"\xff\xfe not utf-8\n" + f"a dog\n{ZERO_WIDTH_SPACE}\n".encode())
    fr = tmp_path / "fr.txt"
    fr.write_text("un chat\ndeux chats\ntrois\n", encoding="utf-8")
    ids = {text: sp.encode(text) for text in ("hello world", "the cat", "a dog", "un chat", "deux chats", "trois")}
    expected_rows = [
        # pack_lines=2: en lines 1-2, 3-4, 5-6 are groups 0, 1, 2; the empty and the undecodable line leave none
        ("en/en.txt/000000/000000", "en", [BOS_ID, *ids["hello world"], EOS_ID]),
        ("en/en.txt/000001/000000", "en", [BOS_ID, *ids["the cat"], EOS_ID]),
        ("en/en.txt/000002/000000", "en", [BOS_ID, *ids["a dog"], EOS_ID]),
        ("fr/fr.txt/000000/000000", "fr", [BOS_ID, *ids["un chat"], EOS_ID, *ids["deux chats"], EOS_ID]),
        ("fr/fr.txt/000001/000000", "fr", [BOS_ID, *ids["trois"], EOS_ID]),
    ]
    files = [("en", "en.txt", str(en)), ("fr", "fr.txt", str(fr))]
    with test_pipeline.TestPipeline() as p:
        rows, stats, dead = p | beam.Create(files) | BuildMrtd(str(vocab_path), max_len=64, pack_lines=2)
        line_tokens = {lang: sum(len(ids[t]) for t in texts) for lang, texts in
                       (("en", ("hello world", "the cat", "a dog")), ("fr", ("un chat", "deux chats", "trois")))}
        assert_outputs({
            "rows": (rows | "Fields" >> beam.Map(lambda r: (r["id"], r["lang"], r["input_ids"])), equal_to(expected_rows)),
            "dead letters": (dead | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"])),
                             equal_to([(str(en), "4", "read", "not_utf8"), ("en/en.txt", "6", "tokenise", "empty")])),
            "stats": (summed(stats), equal_to([
                (("en", "read/lines"), 6), (("en", "read/empty"), 1), (("en", "read/not_utf8"), 1),
                (("en", "tokenise/empty"), 1), (("en", "mrtd/lines"), 3), (("en", "mrtd/sequences"), 3),
                (("en", "mrtd/line_tokens"), line_tokens["en"]), (("en", "mrtd/tokens"), line_tokens["en"] + 3 + 3),
                (("fr", "read/lines"), 3), (("fr", "mrtd/lines"), 3), (("fr", "mrtd/sequences"), 2),
                (("fr", "mrtd/line_tokens"), line_tokens["fr"]), (("fr", "mrtd/tokens"), line_tokens["fr"] + 2 + 3),
            ])),
        })


def test_a_group_longer_than_max_len_opens_new_sequences_whole_lines_first(tmp_path, vocab):
    vocab_path, sp = vocab
    lines = ["the cat sat on the mat", "a dog", "a dog"]
    (tmp_path / "en.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    first, second, third = (sp.encode(t) for t in lines)
    max_len = len(first) + 2  # `<s> first </s>` fills a sequence; the next line opens another
    assert len(second) + len(third) + 3 <= max_len
    with test_pipeline.TestPipeline() as p:
        rows, _, _ = p | beam.Create([("en", "en.txt", str(tmp_path / "en.txt"))]) | BuildMrtd(
            str(vocab_path), max_len=max_len, pack_lines=100)
        assert_that(rows | beam.Map(lambda r: (r["id"], r["input_ids"])), equal_to([
            ("en/en.txt/000000/000000", [BOS_ID, *first, EOS_ID]),
            ("en/en.txt/000000/000001", [BOS_ID, *second, EOS_ID, *third, EOS_ID]),
        ]))
