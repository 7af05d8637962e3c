"""Fault injection on the data jobs' outputs: every --output complete or absent, one writer at a time,
and every reader refusing what is partial, mixed or changed (docs/manifest.md).

Real jobs on the bundled samples: usage errors and crashes in a subprocess (exit status and stderr are
what a user sees), complete runs in-process. Disk full and read-only use a small tmpfs (root only).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpora.outputs import manifests
from corpora.outputs.lock import OutputLock, OutputLocked, lock_path
from test_faults_data import assert_usage_error  # noqa: E402  (exit 1, one error line, no traceback)

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def job_command(name: str, *args: str) -> list[str]:
    return [sys.executable, "-m", f"pipelines.{name}", "--runner", "DirectRunner", *args]


def job(name: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(job_command(name, *args), cwd=REPO, capture_output=True, text=True, timeout=timeout)


def shard_hashes(out: Path) -> dict[str, str]:
    return {rel: e["sha256"] for rel, e in manifests.read_manifest(out)["files"].items() if rel.endswith(".parquet")}


@pytest.fixture(scope="module")
def mrc_out(tmp_path_factory) -> Path:
    """A complete wiki_mrc output on the bundled sample (--test_entities 2: a train and a test split)."""
    from pipelines import wiki_mrc

    out = tmp_path_factory.mktemp("wiki_mrc") / "out"
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(out), "--test_entities", "2"])
    return out


@pytest.fixture
def copy(mrc_out, tmp_path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(mrc_out, target)
    return target


def refused(path: Path) -> str:
    from training.data import DataFolderError, list_shards

    with pytest.raises(DataFolderError) as error:
        list_shards(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"--data {path}: "), message
    return message


# ---- the manifest of a complete output ----

def test_a_complete_output_has_its_manifest_and_no_staging_or_lock(mrc_out):
    manifest = manifests.verify_folder(mrc_out)
    assert manifest["kind"] == manifests.DATA_JOB and manifest["name"] == "wiki_mrc"
    assert manifest["state"] == manifests.COMPLETE and "--test_entities 2" in manifest["command"]
    assert manifest["code_version"]["version"] and manifest["default_table"] == "mrc"
    assert {i["flag"] for i in manifest["inputs"]} == {"--dump ar", "--dump en", "--dump hi", "--dump th", "--dump zh"}
    assert all(i["hash_method"] == "sha256" and len(i["hash"]) == 64 for i in manifest["inputs"])
    train, test = manifest["tables"]["mrc"]["train"], manifest["tables"]["mrc"]["test"]
    assert len(train) == len(test) == 4
    rows = sum(manifest["files"][rel]["rows"] for rel in train + test)
    assert rows == manifest["stats"]["examples/answerable"] + manifest["stats"]["examples/unanswerable"]
    for rel, entry in manifest["files"].items():
        assert (mrc_out / rel).stat().st_size == entry["bytes"]
    siblings = {p.name for p in mrc_out.parent.iterdir()}
    assert siblings == {"out"}, siblings  # no .out.staging, .out.lock or .out.replaced left


# ---- consumers refuse what differs (training's reader, in one line) ----

def test_deleted_shard_is_refused(copy):
    (copy / "data" / "train-00001-of-00004.parquet").unlink()
    assert "data/train-00001-of-00004.parquet is missing" in refused(copy)


def test_extra_shard_of_another_run_is_refused(copy):
    shutil.copy(copy / "data" / "train-00000-of-00004.parquet", copy / "data" / "train-00000-of-00003.parquet")
    message = refused(copy)
    assert "data/train-00000-of-00003.parquet not in the manifest" in message and "mixed" in message


def test_mixed_shard_sets_are_refused(copy, tmp_path):
    """Two runs' shard sets in one folder (what two concurrent writers left before the lock)."""
    from pipelines import wiki_mrc

    other = tmp_path / "other"
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(other), "--num_shards", "3"])
    for shard in (other / "data").glob("*.parquet"):
        shutil.copy(shard, copy / "data" / shard.name)
    assert "-of-00003.parquet and 2 more not in the manifest" in refused(copy)


def test_shrunk_shard_is_refused_naming_the_rows(copy):
    shard = copy / "data" / "train-00002-of-00004.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, 3), shard)
    message = refused(copy)
    assert f"data/train-00002-of-00004.parquet has 3 rows, the manifest says {table.num_rows} rows" in message


def test_same_size_change_is_caught_by_the_checksum(copy):
    shard = copy / "data" / "test-00000-of-00004.parquet"
    raw = bytearray(shard.read_bytes())
    raw[8] ^= 0xFF  # inside the first page: size and footer unchanged
    shard.write_bytes(bytes(raw))
    assert "data/test-00000-of-00004.parquet: sha256 differs" in refused(copy)


def test_unfinished_manifest_is_refused(copy):
    manifest = manifests.read_manifest(copy)
    manifest["state"] = manifests.RUNNING
    manifests.write_manifest(copy, manifest)
    assert "did not finish (state 'running'" in refused(copy)


def test_older_output_without_manifest_is_refused_and_hand_made_shards_warned(copy, tmp_path, capsys):
    (copy / "manifest.json").unlink()  # what the jobs wrote before manifests: the .xlu-job marker alone
    assert "written by an older version of wiki_mrc, without manifest.json" in refused(copy)
    hand = tmp_path / "hand"
    (hand / "data").mkdir(parents=True)
    shutil.copy(copy / "data" / "train-00000-of-00004.parquet", hand / "data" / "train-00000-of-00001.parquet")
    from training.data import list_shards

    assert list_shards(hand) == [hand / "data" / "train-00000-of-00001.parquet"]
    assert "no manifest.json (Parquet not written by a data job)" in capsys.readouterr().err


def test_training_refuses_a_changed_folder_in_one_line(copy, tmp_path):
    from training import run

    (copy / "data" / "train-00003-of-00004.parquet").unlink()
    with pytest.raises(SystemExit) as stop:
        run.main(["--model", "mpmr", "--data", str(copy), "--output", str(tmp_path / "run"), "--config", "tiny",
                  "--max_steps", "1", "--no_progress", "--no_tensorboard"])
    message = str(stop.value.code)
    assert message.startswith(f"training.run: --data {copy}: ") and "train-00003-of-00004.parquet is missing" in message
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_audit_refuses_a_changed_folder(copy):
    from corpora.mrc import audit as mrc_audit

    (copy / "data" / "test-00001-of-00004.parquet").unlink()
    with pytest.raises(SystemExit) as stop:
        mrc_audit.main([str(copy)])
    assert "test-00001-of-00004.parquet is missing" in str(stop.value.code)


# ---- one writer at a time ----

def wait_for(predicate, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.05)


def test_second_job_into_the_same_output_is_refused_naming_the_first(tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen(job_command("clism_pairs", "--output", str(out)), cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: lock_path(out).exists() and lock_path(out).stat().st_size > 0)
        os.kill(first.pid, signal.SIGSTOP)  # held mid-run, whatever the machine's speed
        second = job("wiki_mrc", "--output", str(out))
        assert_usage_error(second, f"--output {out}: another process is writing it (pid {first.pid} on ", "started ")
        assert f"not there yet: a data job is writing it (pid {first.pid} on " in refused(out)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-2000:]
    manifest = manifests.verify_folder(out)
    assert manifest["name"] == "clism_pairs"
    assert {p.name for p in (out / "data").iterdir()} == {f"train-0000{i}-of-00004.parquet" for i in range(4)}


def test_lock_of_a_killed_writer_is_taken_over_with_a_notice(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.run([sys.executable, "-c", "import os, sys; from corpora.outputs.lock import lock_output; "
                             f"lock_output({str(out)!r}, 'killed'); os.kill(os.getpid(), 9)"], cwd=REPO)
    assert holder.returncode == -9 and lock_path(out).stat().st_size > 0
    notices = []
    with OutputLock(out, "next", notice=notices.append):
        with pytest.raises(OutputLocked, match="another process is writing it"):
            OutputLock(out, "third").acquire()
    assert len(notices) == 1 and "took over the lock of pid" in notices[0] and "(killed), which is gone" in notices[0]
    assert not lock_path(out).exists()


def test_killed_job_leaves_nothing_a_reader_takes_and_a_rerun_completes(tmp_path):
    out = tmp_path / "out"
    running = subprocess.Popen(job_command("wiki_mrc", "--output", str(out)), cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    staging = manifests.staging_path(out)
    wait_for(lambda: (staging / "manifest.json").exists() or running.poll() is not None)
    running.kill()
    running.wait()
    assert not out.exists() and staging.is_dir()
    message = refused(out)
    assert "not there yet: a data job that was writing it did not finish" in message
    rerun = job("wiki_mrc", "--output", str(out))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "took over the lock of pid" in rerun.stderr
    manifests.verify_folder(out)
    assert not staging.exists()


def test_killed_rerun_keeps_the_earlier_complete_output(copy):
    before = shard_hashes(copy)
    running = subprocess.Popen(job_command("wiki_mrc", "--output", str(copy), "--test_entities", "2"), cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: (manifests.staging_path(copy) / "manifest.json").exists() or running.poll() is not None)
    running.kill()
    running.wait()
    assert manifests.verify_folder(copy) and shard_hashes(copy) == before


# ---- what wrote a folder ----

def test_data_job_refuses_a_training_run_folder(tmp_path):
    run_dir = tmp_path / "runs" / "mpmr"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"model": "mpmr", "config": "tiny"}))
    for target in (run_dir, run_dir / "data"):
        result = job("clism_pairs", "--output", str(target))
        assert_usage_error(result, f"--output {target}", "a training run (mpmr)", "choose another --output")
    assert sorted(p.name for p in run_dir.iterdir()) == ["run.json"]
    assert manifests.folder_kind(run_dir) == (manifests.TRAINING_RUN, "mpmr")


# ---- the disk: full, read-only ----

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounts a tmpfs (root only)")


@pytest.fixture
def small_disk(tmp_path):
    def mount(options: str) -> Path:
        where = tmp_path / "disk"
        where.mkdir(exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
        mounted.append(where)
        return where
    mounted: list[Path] = []
    yield mount
    for where in mounted:
        subprocess.run(["umount", str(where)], check=False)


@needs_root
def test_disk_full_is_one_line_and_leaves_nothing(small_disk):
    disk = small_disk("size=64k")
    out = disk / "out"
    result = job("wiki_mrc", "--output", str(out))
    assert_usage_error(result, f"--output {out}: no space left on the device", "nothing was published at --output")
    assert list(disk.iterdir()) == []


@needs_root
def test_read_only_output_is_one_line(small_disk):
    disk = small_disk("ro,size=64k")
    out = disk / "out"
    assert_usage_error(job("clism_pairs", "--output", str(out)),
                   f"--output {out}: cannot write there (a read-only filesystem)", "choose a writable --output")


# ---- tables: one schema per folder, every card config loads ----

def test_xy_corpus_tables_each_in_their_folder_and_every_card_config_loads(xylent_shards):
    import pandas as pd
    import yaml

    datasets = pytest.importorskip("datasets")
    assert not (xylent_shards / "data").exists()
    mrtd, trtd = pd.read_parquet(xylent_shards / "mrtd"), pd.read_parquet(xylent_shards / "trtd")
    assert list(mrtd.columns) == ["id", "lang", "input_ids"] and "src_len" in trtd.columns
    manifest = manifests.verify_folder(xylent_shards)
    assert sum(manifest["files"][rel]["rows"] for rel in manifest["tables"]["mrtd"]["train"]) == len(mrtd)
    header = yaml.safe_load((xylent_shards / "README.md").read_text().split("---")[1])
    names = [c["config_name"] for c in header["configs"]]
    dead_rows = sum(pq.read_metadata(f).num_rows for f in (xylent_shards / "dead_letter").glob("*.parquet"))
    assert ("dead_letter" in names) == (dead_rows > 0)
    for name in names:
        loaded = datasets.load_dataset(str(xylent_shards), name)
        assert loaded["train"].num_rows > 0


def test_xy_corpus_refuses_a_changed_vocap_model(xylent_vocab, tmp_path):
    vocab = tmp_path / "vocap"
    shutil.copytree(xylent_vocab.parent, vocab)
    with open(vocab / "spm.model", "ab") as f:
        f.write(b"\0")
    assert_usage_error(job("xy_corpus", "--vocab", str(vocab), "--output", str(tmp_path / "xy")),
                   f"--vocab {vocab / 'spm.model'}: ", "spm.model has ", "rerun `python -m pipelines.vocap`")


def test_what_training_calls_kinds_and_the_data_fingerprint(mrc_out, tmp_path):
    """The API training uses: refuse_other_kind both ways, and the fingerprint a run records of its data."""
    with pytest.raises(manifests.ManifestError, match=r"is inside .*which holds the output of a data job \(wiki_mrc\)"):
        manifests.refuse_other_kind(mrc_out / "run", manifests.TRAINING_RUN)
    unmarked_run = tmp_path / "ft"
    (unmarked_run / "final").mkdir(parents=True)
    manifests.refuse_other_kind(unmarked_run, manifests.FINETUNE_RUN)  # a run folder of before markers: usable
    with pytest.raises(manifests.ManifestError, match="holds the output of a training run; a data job"):
        manifests.refuse_other_kind(unmarked_run, manifests.DATA_JOB)
    fingerprint = manifests.data_fingerprint(mrc_out / "data")
    assert fingerprint["job"] == "wiki_mrc" and fingerprint == manifests.data_fingerprint(mrc_out)
    hand = tmp_path / "hand"
    hand.mkdir()
    shutil.copy(mrc_out / "data" / "train-00000-of-00004.parquet", hand / "train-00000-of-00001.parquet")
    before = manifests.data_fingerprint(hand)["shards_sha256"]
    pq.write_table(pq.read_table(hand / "train-00000-of-00001.parquet").slice(0, 1), hand / "train-00000-of-00001.parquet")
    assert manifests.data_fingerprint(hand)["shards_sha256"] != before


def test_an_output_inside_another_jobs_output_is_refused(mrc_out):
    from pipelines.input_checks import UsageError
    from pipelines.output_folder import OutputTransaction

    with pytest.raises(UsageError) as refused_run:
        OutputTransaction(str(mrc_out / "data"), "clism_pairs", "python -m pipelines.clism_pairs", False).begin()
    assert f"is inside {mrc_out}, the output of the wiki_mrc job" in str(refused_run.value)
    manifests.verify_folder(mrc_out)
