"""wiki_mrc warns before it starts when DirectRunner's predicted peak is past the available memory
(pipelines/memory_check.py). The memory is faked with XLU_AVAILABLE_MEMORY_MB, never allocated."""
from __future__ import annotations

from pathlib import Path

import pytest

from corpora.dumps.pages import sample_dump_paths
from pipelines import memory_check, wiki_mrc

GB = 1_000_000_000


def test_the_prediction_grows_with_the_dump_and_bz2_counts_as_its_xml():
    small, large = memory_check.xml_megabytes("a.xml.bz2", GB // 10), memory_check.xml_megabytes("a.xml.bz2", GB)
    assert large == pytest.approx(10 * small)
    assert memory_check.xml_megabytes("a.xml", GB) == pytest.approx(1000)
    assert memory_check.xml_megabytes("a.xml.bz2", GB) > 3.5 * 1000  # the least ratio of the real excerpts
    assert memory_check.predicted_peak_mb(large) > memory_check.predicted_peak_mb(small) > memory_check.BASE_MB


@pytest.mark.parametrize("available_mb, runner, warns", [
    ("1000", "DirectRunner", True),
    ("1000", None, True),  # no --runner: the job's default, DirectRunner
    ("1000", "pipelines.dask.runner.DaskRunner", False),
    ("1000", "DataflowRunner", False),
    ("100000", "DirectRunner", False),
])
def test_the_warning_names_the_bounded_route_only_when_direct_runner_would_not_fit(monkeypatch, available_mb, runner, warns):
    monkeypatch.setenv(memory_check.AVAILABLE_MB_VARIABLE, available_mb)
    line = memory_check.direct_runner_warning({"gs://b/enwiki-pages-articles-multistream.xml.bz2": GB // 2}, runner)
    assert (line is not None) == warns
    if warns:
        assert "\n" not in line and line.startswith("warning: DirectRunner")
        assert "--runner pipelines.dask.runner.DaskRunner" in line and "docs/scale_out.md" in line
        assert "1.0 GB available" in line


def test_the_machine_reading_is_a_positive_amount(monkeypatch):
    monkeypatch.delenv(memory_check.AVAILABLE_MB_VARIABLE, raising=False)
    available = memory_check.available_mb()
    assert available is None or available > 0


def test_the_job_warns_once_before_it_runs(tmp_path: Path, monkeypatch, capfd):
    monkeypatch.setenv(memory_check.AVAILABLE_MB_VARIABLE, "50")
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(tmp_path / "out"),
                  "--dump", f"en={sample_dump_paths()['en']}", "--min_mentions_en", "1"])
    err = capfd.readouterr().err
    warnings = [line for line in err.splitlines() if "DirectRunner holds the whole job" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ")
    assert (tmp_path / "out" / "stats.parquet").exists()  # a warning, not a refusal
