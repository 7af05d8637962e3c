"""Shared job plumbing: option parsing, deterministic Parquet shards, stats."""
import os
import random

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from corpora.schemas import MRC_SCHEMA, SchemaMismatch, STATS_SCHEMA, check_schema
from pipelines import beam_outputs, common, input_checks


def rows(n):
    return [
        {"id": f"en:{i}:a00", "lang": "en", "entity": f"E{i}", "query_words": ["[MASK]", "is"],
         "context_words": ["x"] * (i % 7 + 1), "answers": [{"start": 0, "end": 0}], "answerable": True,
         "definition_page": i, "mention_page": i + 1}
        for i in range(n)
    ]


def write(tmp, data, workers):
    options = PipelineOptions([f"--direct_num_workers={workers}", "--direct_running_mode=multi_threading"])
    with common.make_pipeline(options) as p:
        p | beam.Create(data) | beam_outputs.WriteParquetShards(str(tmp), "train", MRC_SCHEMA, 3)
    return {name: (tmp / name).read_bytes() for name in sorted(os.listdir(tmp))}


def test_shards_are_byte_identical_whatever_order_and_workers(tmp_path):
    data = rows(200)
    first = write(tmp_path / "a", data, 1)
    shuffled = list(data)
    random.Random(1).shuffle(shuffled)
    second = write(tmp_path / "b", shuffled, 2)
    assert list(first) == [f"train-0000{i}-of-00003.parquet" for i in range(3)]
    assert first == second
    table = pq.read_table(tmp_path / "a")
    assert table.num_rows == 200
    check_schema(pq.read_schema(tmp_path / "a" / "train-00000-of-00003.parquet"), MRC_SCHEMA, "shard")


def test_empty_input_still_writes_every_shard(tmp_path):
    files = write(tmp_path, [], 1)
    assert len(files) == 3
    assert pq.read_table(tmp_path / "train-00001-of-00003.parquet").num_rows == 0


def test_check_schema_rejects_a_foreign_file():
    with pytest.raises(SchemaMismatch, match="expected mrc v2"):
        check_schema(STATS_SCHEMA, MRC_SCHEMA, "x.parquet")


def test_lang_path_errors_are_one_line(tmp_path):
    dump = tmp_path / "d.xml"
    dump.write_text("<mediawiki/>")
    assert input_checks.parse_lang_paths([f"en={dump}"], "--dump", {"en"}) == {"en": [str(dump)]}
    for bad, message in [
        ("en", "expected LANG=PATH"),
        (f"xx={dump}", "unknown language 'xx'"),
        (f"en={tmp_path}/missing.xml", "file not found"),
        ("en=nosuchscheme://bucket/x.xml", "no filesystem for nosuchscheme://"),
    ]:
        with pytest.raises(SystemExit, match=message) as err:
            input_checks.parse_lang_paths([bad], "--dump", {"en"})
        assert "\n" not in str(err.value)
    # Wikipedia's ~340 codes are not listed in the line; the nearest one is named
    from corpora.wiki.languages import WIKIPEDIA_LANGUAGES

    with pytest.raises(SystemExit) as err:
        input_checks.parse_lang_paths([f"EN={dump}"], "--dump", WIKIPEDIA_LANGUAGES)
    assert "did you mean en?" in str(err.value) and len(str(err.value)) < 250
    # A country code for the language code: the language first, not what the spelling is near
    with pytest.raises(SystemExit, match="did you mean ja or "):
        input_checks.parse_lang_paths([f"jp={dump}"], "--dump", WIKIPEDIA_LANGUAGES)


def test_a_wildcard_path_stands_for_its_files_in_name_order(tmp_path):
    for name in ("b.txt", "a.txt", "a-index.txt", "c.log"):
        (tmp_path / name).write_text("x\n")
    found = input_checks.parse_lang_paths([f"en={tmp_path}/*.txt", f"en={tmp_path}/c.log"], "--mono", {"en"},
                                          skip_in_patterns=lambda path: "-index" in path)
    assert found == {"en": [str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(tmp_path / "c.log")]}
    with pytest.raises(SystemExit, match=r"no file matches .*/\*\.xml$") as err:
        input_checks.parse_lang_paths([f"en={tmp_path}/*.xml"], "--mono", {"en"})
    assert "\n" not in str(err.value)


def test_pipelines_run_with_fewer_garbage_collections_and_the_collector_is_restored_after():
    import gc

    before = gc.get_threshold()
    with common.fewer_garbage_collections():
        assert gc.get_threshold()[0] == 100_000 and gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(ValueError):
        with common.fewer_garbage_collections():
            raise ValueError("a failing pipeline")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
