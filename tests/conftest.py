"""Session set-up shared by every test module.

* Tests never reach a model hub (set before any test module imports transformers).
* Real data (XQuAD, WikiANN, Wikipedia excerpts, alignment gold sets, ...) is read in place, never
  copied into the repo: `$XLU_SHARED_DATA`, by default `../shared/data` beside this checkout (docs/install.md,
  "Real data"). Tests that need it are skipped without it, and their skip reason names the
  variable.
"""
import fcntl
import os
import shutil
import sys
from pathlib import Path
from typing import Callable

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Under pytest-xdist (`-n 2`) every worker is one process per core: torch's default of one thread
# per core would run 2 x 2 threads on 2 cores, and its OpenMP threads then wait on each other
# (the training, fine-tuning, XY-LENT and fault tests took 134 s on 2 cores with it, 89 s without).
# Set before any test module imports torch; subprocesses (jobs, dask workers) inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
# tests/ mirrors the packages, one folder each; test modules share fixtures and helpers by module
# name across folders (test_clism_job's run_job, test_dumps' page_xml), so every folder is importable
# whichever file pytest collects first.
for _folder in sorted({p.parent for p in Path(__file__).parent.rglob("test_*.py")}, reverse=True):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
SHARED_DATA_VARIABLE = "XLU_SHARED_DATA"
SHARED_DATA = Path(os.environ.get(SHARED_DATA_VARIABLE) or REPO.parent / "shared" / "data").resolve()
# Modules written before the variable read XLU_SHARED (the folder holding data/): keep them in step.
if SHARED_DATA.name == "data":
    os.environ.setdefault("XLU_SHARED", str(SHARED_DATA.parent))

SKIP_HINT = f" (set {SHARED_DATA_VARIABLE} to the real-data folder; looked in {SHARED_DATA})"


def _about_shared_data(reason: str) -> bool:
    return ("shared" in reason or str(SHARED_DATA) in reason) and SHARED_DATA_VARIABLE not in reason


def pytest_collection_modifyitems(items):
    """A skip for want of ../shared/data says how to point the tests at the data elsewhere."""
    for item in items:
        for mark in list(item.iter_markers("skipif")):
            reason = mark.kwargs.get("reason", "")
            if mark.args and _about_shared_data(reason):
                item.add_marker(pytest.mark.skipif(mark.args[0], reason=reason + SKIP_HINT), append=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The same for tests that call pytest.skip(...) themselves once they find the data missing."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(report.longrepr, tuple) and _about_shared_data(report.longrepr[2]):
        path, line, reason = report.longrepr
        report.longrepr = (path, line, reason + SKIP_HINT)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, made by `build(folder)` once per test session, not once per xdist worker
    (each worker's session fixtures are its own, and a module fixture is made again whenever the
    worker runs another module's test in between). Under a lock; a build that fails is made again."""
    base = tmp_path_factory.getbasetemp()
    # xdist: every worker has its own basetemp under the session's directory. Without xdist the
    # basetemp is the session's directory (its parent outlives the session).
    common = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = common / name
    with open(common / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (common / f"{name}.done").exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            build(out)
            (common / f"{name}.done").touch()
    return out


# ── XY-LENT shards: the bundled sample through vocap and xy_corpus, once per test session ──

@pytest.fixture(scope="session")
def xylent_vocab(tmp_path_factory):
    pytest.importorskip("sentencepiece")
    from pipelines import vocap

    out = built_once(tmp_path_factory, "vocap", lambda folder: vocap.run(["--output", str(folder / "job")]))
    return out / "job" / "spm.model"


@pytest.fixture(scope="session")
def xylent_shards(xylent_vocab, tmp_path_factory):
    """The xy_corpus job's output on the bundled samples (TRTD rows drawn by pair_probs, the default)."""
    from pipelines import xy_corpus

    out = built_once(tmp_path_factory, "xy", lambda folder: xy_corpus.run(
        ["--vocab", str(xylent_vocab), "--output", str(folder / "job")]))
    return out / "job"


@pytest.fixture(scope="session")
def xylent_shards_once(xylent_vocab, tmp_path_factory):
    """The same with `--trtd_draws once`: every bitext pair once, whatever pair_probs says."""
    from pipelines import xy_corpus

    out = built_once(tmp_path_factory, "xy_once", lambda folder: xy_corpus.run(
        ["--vocab", str(xylent_vocab), "--output", str(folder / "job"), "--trtd_draws", "once"]))
    return out / "job"
