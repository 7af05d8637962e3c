"""ReadDumps alone (pipelines/wiki_dump_reading.py) on three tiny dumps made here: a plain .xml with an
oversized page, a multistream .bz2 read by byte ranges through its index, and a multistream whose
index is damaged (read whole instead). Every page arrives once; what is lost is dead-lettered with
its reason and counted."""
from __future__ import annotations

import collections

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import equal_to

from corpora.dumps.multistream import write_multistream
from pipelines.beam_outputs import DEAD_LETTER, STATS
from pipelines.wiki_dump_reading import DumpSpec, PlanReadsFn, ReadDumps

from test_dumps import FOOTER, HEADER, page_xml
from transform_checks import assert_outputs, counts_include, summed

MAX_PAGE_BYTES = 2_000
FR_TITLES = ["Paris", "Lyon", "Marseille", "Nice", "Lille"]  # two pages a stream: three streams
DE_TITLES = ["Berlin", "Bonn", "Köln"]


def dumps(tmp_path) -> list[DumpSpec]:
    en = tmp_path / "enwiki-pages-articles.xml"
    en.write_bytes(HEADER + page_xml(1, "Alpha", "Alpha is a letter.") + page_xml(2, "Huge", "word " * 1_000)
                   + page_xml(3, "Beta", "Beta follows [[Alpha]].") + FOOTER)
    fr, fr_index = tmp_path / "frwiki-multistream.xml.bz2", tmp_path / "frwiki-multistream-index.txt.bz2"
    write_multistream([page_xml(10 + k, t, f"{t} est une ville.") for k, t in enumerate(FR_TITLES)],
                      HEADER, FOOTER, fr, fr_index, pages_per_stream=2)
    de, de_index = tmp_path / "dewiki-multistream.xml.bz2", tmp_path / "dewiki-multistream-index.txt.bz2"
    write_multistream([page_xml(20 + k, t, f"{t} ist eine Stadt.") for k, t in enumerate(DE_TITLES)],
                      HEADER, FOOTER, de, de_index, pages_per_stream=1)
    de_index.write_bytes(b"this is not bzip2")
    return [DumpSpec("en", str(en), None), DumpSpec("fr", str(fr), str(fr_index)), DumpSpec("de", str(de), str(de_index))]


def test_every_page_once_and_each_loss_dead_lettered_with_its_reason(tmp_path):
    specs = dumps(tmp_path)
    assert len(PlanReadsFn(1)._checked_ranges(specs[1])) == 4  # the fr dump as byte ranges: the header, three page streams
    p = test_pipeline.TestPipeline()  # run by hand below, for its Beam counters
    read = p | ReadDumps(specs, streams_per_range=1, max_page_bytes=MAX_PAGE_BYTES)
    pages = read["pages"] | "IdAndTitle" >> beam.MapTuple(lambda lang, page: (lang, page.page_id, page.title, page.ns))
    en_texts = (read["pages"] | "English" >> beam.Filter(lambda lang_page: lang_page[0] == "en")
                | "Texts" >> beam.MapTuple(lambda lang, page: page.text))
    dead = read[DEAD_LETTER] | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"]))
    assert_outputs({
        "pages": (pages, equal_to([("en", 1, "Alpha", 0), ("en", 3, "Beta", 0)]
                                  + [("fr", 10 + k, t, 0) for k, t in enumerate(FR_TITLES)]
                                  + [("de", 20 + k, t, 0) for k, t in enumerate(DE_TITLES)])),
        "texts": (en_texts, equal_to(["Alpha is a letter.", "Beta follows [[Alpha]]."])),
        "dead letters": (dead, equal_to([(specs[0].path, "2", "read", "page_too_large"),
                                         (specs[2].index_path, "index", "read", "bad_multistream_index")])),
        "stats": (summed(read[STATS]), counts_include({("en", "pages/read"): 2, ("en", "read/page_too_large"): 1,
                                                       ("fr", "pages/read"): 5, ("de", "pages/read"): 3,
                                                       ("de", "read/bad_multistream_index"): 1})),
    })
    result = p.run()
    result.wait_until_finish()
    counters = collections.Counter()
    for counter in result.metrics().query(MetricsFilter().with_namespace("xlu"))["counters"]:
        counters[counter.key.metric.name] += counter.committed
    assert (counters["pages/read"], counters["read/page_too_large"]) == (10, 1)  # the stats' totals, as Beam counters
