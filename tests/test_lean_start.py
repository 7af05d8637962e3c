"""pipelines/lean_start.py: what a job's process leaves unimported, and that Beam still works there."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from pipelines.lean_start import uses_google_cloud

REPO = Path(__file__).resolve().parents[1]
HAS_GCP = find_spec("google.cloud") is not None and find_spec("google.cloud.storage") is not None

# Imports Beam as wiki_mrc's command line does, then reads a local file through Beam's filesystems and
# reports what was imported and whether gs:// paths resolve.
PROBE = """
import json, sys
from pipelines import lean_start
lean_start.import_beam(sys.argv[1:])
from apache_beam.io.filesystems import FileSystems
with FileSystems.open(sys.argv[-1]) as f:
    head = f.read(5).decode()
try:
    FileSystems.get_filesystem("gs://bucket/x")
    gcs = True
except ValueError:
    gcs = False
print(json.dumps({"head": head, "gcs": gcs, "pandas": "pandas" in sys.modules,
                  "gcp": sorted(m for m in sys.modules if m.startswith(("google.cloud.storage", "google.auth")))}))
"""


def probe(*argv: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv, str(REPO / "README.md")], cwd=REPO,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv, expected", [
    (["--dump", "en=enwiki.xml.bz2", "--output", "out"], False),
    (["--runner", "DirectRunner", "--direct_num_workers", "1"], False),
    (["--dump", "en=gs://bucket/enwiki.xml.bz2"], True),
    (["--output", "gs://bucket/out"], True),
    (["--runner=DataflowRunner"], True),
    (["--project", "p", "--region", "r"], True),
    (["--temp_location=/tmp/t"], True),
])
def test_which_command_lines_use_google_cloud(argv, expected):
    assert uses_google_cloud(argv) is expected


def test_a_local_run_leaves_gcp_and_pandas_unimported():
    seen = probe("--dump", "en=enwiki.xml.bz2", "--output", "out")
    assert seen["head"] == (REPO / "README.md").read_text()[:5]  # Beam's local filesystem reads
    assert not seen["pandas"] and seen["gcp"] == []
    assert not seen["gcs"]


@pytest.mark.skipif(not HAS_GCP, reason="the gcp extra is not installed")
def test_a_gs_path_keeps_google_cloud_storage():
    seen = probe("--output", "gs://bucket/out")
    assert seen["gcs"] and "google.cloud.storage" in seen["gcp"]
    assert not seen["pandas"]
