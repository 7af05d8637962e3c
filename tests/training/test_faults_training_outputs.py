"""Fault injection on training's outputs, as a user meets each case: one writer per run folder, no run in a
data job's folder, a read-only or full disk, Ctrl-C, data changed under a --resume, and the user mistakes
that must be one line (too small --max_seq_len, a damaged run tokenizer, --init weights that are not a
state dict, rows too long for the tiny tokenizer). Each checks the exit code, the message and what is
left on disk."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from corpora.outputs.manifests import DATA_JOB, new_manifest, write_manifest
from corpora.outputs.lock import OutputLock, lock_path
from training import checkpoint, finetune, run
from training.atomic_files import TMP_MARK, replacing, replacing_folder
from training.tokenizer import pieces_of

from test_training_run import few_rows  # noqa: F401  (a fixture: eight real rows of the bundled sample)

# End-to-end runs of whole jobs and commands: after the default suite (CI runs both).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
QUIET = ["--no_progress", "--no_tensorboard"]


def mpmr(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "mpmr", "--data", str(data), "--output", str(out), "--config", "tiny", *QUIET, *extra]


def stop_message(main, argv: list[str]) -> str:
    """A command's one-line refusal: what `sys.exit(message)` prints, with exit status 1."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert isinstance(stop.value.code, str), f"exit code {stop.value.code!r}, expected a message"
    assert "\n" not in stop.value.code
    return stop.value.code


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if TMP_MARK in p.name or p.suffix == ".tmp"]


@contextlib.contextmanager
def small_disk(where: Path, size: str, read_only: bool = False):
    """A real file system of `size` (tmpfs) at `where`, read-only if asked; skipped where mounting is
    not allowed. A read-only folder without root is a chmod (root writes through permissions)."""
    where.mkdir()
    if read_only and os.geteuid() != 0:
        where.chmod(0o555)
        try:
            yield where
        finally:
            where.chmod(0o755)
        return
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}" + (",ro" if read_only else ""), "tmpfs",
                           str(where)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:80]})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture(scope="module")
def tiny_run(few_rows, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "2"))
    return out


# ---- one writer per folder ----

@pytest.mark.parametrize("resume", [False, True])
def test_a_second_writer_is_refused_naming_the_holder(tiny_run, few_rows, tmp_path, resume):
    out = tmp_path / "run"
    shutil.copytree(tiny_run, out)
    before = (out / "metrics.jsonl").read_text()
    with OutputLock(out, "python -m training.run --output run (the first writer)"):
        message = stop_message(run.main, mpmr(few_rows, out, "--max_steps", "4", *(["--resume"] if resume else [])))
    assert message.startswith(f"training.run: --output {out}: another process is writing it (pid {os.getpid()} on "
                              f"{socket.gethostname()}, started "), message
    assert "(the first writer)" in message and message.endswith("wait for it to end, or give another folder")
    assert (out / "metrics.jsonl").read_text() == before  # nothing written by the refused one
    assert not lock_path(out).exists()  # released by its holder


def test_finetune_refuses_a_folder_another_finetune_writes(tiny_run, tmp_path):
    out = tmp_path / "ft"
    with OutputLock(out, "python -m training.finetune (the first)"):
        message = stop_message(finetune.main, ["--task", "squad", "--init", str(tiny_run / "final"), "--output",
                                                str(out), "--max_steps", "1", "--no_progress"])
    assert message.startswith(f"training.finetune: --output {out}: another process is writing it (pid {os.getpid()}")
    assert not (out / "metrics.json").exists()


def test_a_stale_lock_is_taken_over_with_a_notice(few_rows, tmp_path, capsys):
    out = tmp_path / "run"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer runs, on this host: a writer killed with -9
    lock_path(out).write_text(json.dumps({"pid": gone.pid, "host": socket.gethostname(),
                                          "started": "2026-01-01T00:00:00+0000", "command": "killed run"}))
    run.main(mpmr(few_rows, out, "--max_steps", "1"))
    err = capsys.readouterr().err
    assert f"notice: {out}: took over the lock of pid {gone.pid} on {socket.gethostname()}" in err
    assert "which is gone" in err
    assert (out / "final" / "config.json").is_file() and not lock_path(out).exists()


# ---- another kind's folder ----

def data_rows_folder(few_rows: Path, folder: Path) -> Path:
    shutil.copytree(few_rows / "data", folder / "data")
    pq.write_table(pa.table({"lang": ["en"], "metric": ["examples/answerable"], "value": [6]}), folder / "stats.parquet")
    return folder


@pytest.mark.parametrize("sign", ["manifest", "xlu-job", "data and stats"])
def test_a_run_never_writes_into_a_data_jobs_folder(few_rows, tmp_path, sign):
    data = data_rows_folder(few_rows, tmp_path / "wiki_mrc_out")
    if sign == "manifest":
        write_manifest(data, new_manifest(DATA_JOB, "wiki_mrc", "python -m pipelines.wiki_mrc", state="complete"))
    elif sign == "xlu-job":
        (data / ".xlu-job").write_text("wiki_mrc\n")
    listing = sorted(p.name for p in data.rglob("*"))
    for out in (data, data / "runs" / "mpmr"):
        message = stop_message(run.main, mpmr(few_rows, out, "--max_steps", "1"))
        where = "holds" if out == data else f"is inside {data}, which holds"
        assert message.startswith(f"training.run: --output {out} {where} a dataset written by "), message
        assert message.endswith("a training run writes a folder of its own: choose another --output")
    assert sorted(p.name for p in data.rglob("*")) == listing  # not a byte written


def test_finetune_never_writes_into_a_data_jobs_or_a_training_runs_folder(few_rows, tiny_run, tmp_path):
    data = data_rows_folder(few_rows, tmp_path / "data_out")
    for out, what in ((data, "a dataset written by a data job"), (tiny_run, "a training run (mpmr)")):
        message = stop_message(finetune.main, ["--task", "squad", "--init", str(tiny_run / "final"), "--output",
                                                str(out), "--max_steps", "1", "--no_progress"])
        assert message.startswith(f"training.finetune: --output {out} holds {what}"), message
    assert not (tiny_run / "metrics.json").exists()


# ---- the disk ----

def test_a_read_only_output_is_one_line(few_rows, tiny_run, tmp_path):
    with small_disk(tmp_path / "ro", "1m", read_only=True) as ro:
        message = stop_message(run.main, mpmr(few_rows, ro / "run", "--max_steps", "1"))
        assert message.startswith(f"training.run: --output {ro / 'run'}: cannot write there ("), message
        assert message.endswith("choose a writable --output")
        message = stop_message(finetune.main, ["--task", "squad", "--init", str(tiny_run / "final"), "--output",
                                                str(ro / "ft"), "--max_steps", "1", "--no_progress"])
        assert message.startswith(f"training.finetune: --output {ro / 'ft'}: cannot write there ("), message


def test_a_full_disk_while_saving_a_checkpoint_is_one_line_and_leaves_no_temporary(few_rows, tmp_path):
    # A tiny checkpoint is ~2 MB: the first fits on a 3 MB disk, the second does not.
    with small_disk(tmp_path / "disk", "3m") as disk:
        out = disk / "run"
        message = stop_message(run.main, mpmr(few_rows, out, "--max_steps", "3", "--save_every", "1",
                                              "--keep_checkpoints", "5"))
        assert message == (f"training.run: no space left on device: {out / 'checkpoints' / 'step-00000002.pt'} "
                           "(not written; free space, then --resume continues from step 1)")
        assert temporaries(out) == []
        saved = checkpoint.checkpoint_paths(out / "checkpoints")
        assert [p.name for p in saved] == ["step-00000001.pt"] and checkpoint.verify(saved[0]) is None
        assert not (out / "final").exists()


# ---- Ctrl-C ----

def sigint_default() -> None:
    """In the child: Ctrl-C's default action. A suite started in the background by a
    non-interactive shell ignores SIGINT, and a Python that starts with it ignored never raises
    KeyboardInterrupt, so these tests would fail for how they were launched."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_is_one_line_exit_130_and_resume_continues(few_rows, tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "training.run", *mpmr(few_rows, out, "--max_steps", "400", "--save_every", "10")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=sigint_default)
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 120
    while (not metrics.exists() or len(metrics.read_text().splitlines()) < 25) and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    err = process.communicate(timeout=60)[1]
    assert process.returncode == 130, err[-2000:]
    last = err.strip().splitlines()[-1]
    step = int(last.split("interrupted at step ")[1].split(":")[0])
    resume_from = max(int(p.stem.split("-")[1]) for p in checkpoint.checkpoint_paths(out / "checkpoints"))
    assert last == f"training.run: interrupted at step {step}: rerun with --resume to continue from step {resume_from}"
    assert "Traceback" not in err and resume_from <= step < 400
    assert temporaries(out) == [] and not (out / "final").exists() and not lock_path(out).exists()
    for path in checkpoint.checkpoint_paths(out / "checkpoints"):
        checkpoint.load(path)  # each one complete, with its sum
    done = subprocess.run([*command[:-2], "--max_steps", str(resume_from + 5), "--resume"], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [json.loads(line)["step"] for line in metrics.read_text().splitlines()] == list(range(1, resume_from + 6))


# ---- data changed under --resume ----

def test_resume_on_changed_data_is_refused_unless_allowed(few_rows, tmp_path, capsys):
    data, out = tmp_path / "data", tmp_path / "run"
    shutil.copytree(few_rows, data)
    run.main(mpmr(data, out, "--max_steps", "2"))
    shard = data / "data" / "train-00000-of-00001.parquet"
    size = shard.stat().st_size
    pq.write_table(pq.read_table(shard).slice(0, 3), shard)  # a shard that shrank from 8 rows to 3
    message = stop_message(run.main, mpmr(data, out, "--max_steps", "4", "--resume"))
    assert message == (f"training.run: --resume: the data differs from what the run in {out} started on (--data: "
                       f"train-00000-of-00001.parquet {size:,} -> {shard.stat().st_size:,} bytes); resume on the same "
                       "data, or pass --allow_data_change")
    assert checkpoint.checkpoint_paths(out / "checkpoints")[-1].name == "step-00000002.pt"
    capsys.readouterr()
    run.main(mpmr(data, out, "--max_steps", "4", "--resume", "--allow_data_change"))
    assert "--allow_data_change: continuing on changed data (--data: train-00000-of-00001.parquet" in capsys.readouterr().err
    # The same data somewhere else is the same data.
    moved = tmp_path / "moved"
    shutil.copytree(data, moved)
    run.main(mpmr(moved, out, "--max_steps", "5", "--resume"))


# ---- user mistakes: one line ----

def test_a_max_seq_len_below_the_minimum_names_the_minimum(few_rows, tmp_path):
    message = stop_message(run.main, mpmr(few_rows, tmp_path / "run", "--max_steps", "1", "--max_seq_len", "64"))
    assert message == ("training.run: --max_seq_len 64: too small; the minimum is 133 (--max_query_tokens 128 + 4 "
                       "special tokens + 1 context subword; or lower --max_query_tokens)")
    run.main(mpmr(few_rows, tmp_path / "run", "--max_steps", "1", "--max_seq_len", "64", "--max_query_tokens", "16"))


def test_a_truncated_run_tokenizer_is_named_on_resume(tiny_run, few_rows, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(tiny_run, out)
    tokenizer = out / "tokenizer" / "tokenizer.json"
    tokenizer.write_text(tokenizer.read_text()[: tokenizer.stat().st_size // 2])
    message = stop_message(run.main, mpmr(few_rows, out, "--max_steps", "4", "--resume"))
    assert message.startswith(f"training.run: {tokenizer}: unreadable ("), message
    assert message.endswith("the run's tokenizer is damaged: restore the file, or --overwrite to start the run again")


@pytest.mark.parametrize("command", ["run", "finetune"])
def test_init_weights_that_are_not_a_state_dict_are_one_line(tiny_run, few_rows, tmp_path, command):
    model = tmp_path / "model"
    model.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_run / "final" / name, model / name)
    torch.save([1, 2, 3], model / "pytorch_model.bin")
    if command == "run":
        message = stop_message(run.main, mpmr(few_rows, tmp_path / "out", "--max_steps", "1", "--init", str(model)))
    else:
        message = stop_message(finetune.main, ["--task", "squad", "--init", str(model), "--output", str(tmp_path / "ft"),
                                                "--max_steps", "1", "--no_progress"])
    assert message == (f"training.{command}: --init {model}: {model / 'pytorch_model.bin'} holds a list, not a state "
                       "dict (parameter name -> tensor); save the model with save_pretrained")
    torch.save({"a": [1]}, tmp_path / "weights.pt")
    message = stop_message(run.main, mpmr(few_rows, tmp_path / "out2", "--max_steps", "1", "--init",
                                          str(tmp_path / "weights.pt")))
    assert message.startswith(f"training.run: --init {tmp_path / 'weights.pt'}: a file; give a saved model's folder")


def test_the_tiny_tokenizer_trains_on_rows_longer_than_4_kb(few_rows, tmp_path):
    table = pq.read_table(few_rows / "data" / "train-00000-of-00001.parquet")
    long_words = [(words * (6000 // max(1, len(" ".join(words)))) + ["end"])
                  for words in table.column("context_words").to_pylist()]
    assert all(len(" ".join(w).encode()) > 4096 for w in long_words)
    data = tmp_path / "long" / "data"
    data.mkdir(parents=True)
    column = table.schema.get_field_index("context_words")
    longer = table.set_column(column, table.schema.field(column), pa.array(long_words, table.schema.field(column).type))
    pq.write_table(longer, data / "train-00000-of-00001.parquet")
    out = tmp_path / "run"
    run.main(mpmr(data.parent, out, "--max_steps", "1", "--max_seq_len", "256"))
    assert (out / "final" / "tokenizer.json").is_file()


def test_long_lines_are_cut_below_sentencepieces_limit():
    for line in ["a" * 9000, " ".join(["word"] * 3000), "ab " * 10, ("x" * 5000 + " y") * 2, "日本" * 3000]:
        pieces = pieces_of(line)
        assert all(0 < len(p.encode()) <= 4000 for p in pieces)
        assert "".join(pieces).replace(" ", "") == line.replace(" ", "")


# ---- --init RUN, --no_progress ----

def test_finetune_init_a_run_folder_uses_its_best_else_final_and_says_which(tiny_run, tmp_path, capsys):
    run_copy = tmp_path / "run"
    shutil.copytree(tiny_run, run_copy)
    common = ["--task", "squad", "--max_steps", "1", "--max_seq_len", "64", "--max_query_tokens", "16",
              "--max_eval_examples", "2", "--no_progress", "--device", "cpu"]
    finetune.main([*common, "--init", str(run_copy), "--output", str(tmp_path / "ft1")])
    err = capsys.readouterr().err
    assert (f"training.finetune: --init {run_copy} is a run folder; using {run_copy / 'final'} (the model of its last "
            "step; it kept no best/)") in err
    assert "Writing model shards" not in err and "Loading weights" not in err  # --no_progress: no bar at all
    shutil.copytree(run_copy / "final", run_copy / "best")
    (run_copy / "best" / "selection.json").write_text(json.dumps({"metric": "top1_span_f1", "value": 0.5, "step": 2}))
    finetune.main([*common, "--init", str(run_copy), "--output", str(tmp_path / "ft2")])
    assert (f"using {run_copy / 'best'} (its best held-out model: top1_span_f1 0.5000 at step 2)"
            in capsys.readouterr().err)
    assert json.loads((tmp_path / "ft2" / "metrics.json").read_text())["init"] == str(run_copy / "best")


# ---- atomic files ----

def test_a_failed_write_leaves_neither_a_temporary_nor_a_half_file(tmp_path):
    target = tmp_path / "train_config.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), replacing(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old" and temporaries(tmp_path) == []
    (tmp_path / "final").mkdir()
    (tmp_path / "final" / "config.json").write_text("old")
    with pytest.raises(KeyboardInterrupt), replacing_folder(tmp_path / "final") as tmp:
        (tmp / "config.json").write_text("half")
        raise KeyboardInterrupt
    assert (tmp_path / "final" / "config.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final", "train_config.json"]


def test_the_data_fingerprint_comes_from_the_jobs_manifest_and_still_sees_a_changed_file(few_rows, tmp_path):
    from corpora.outputs.manifests import file_entry
    from training import data_fingerprint

    job = tmp_path / "job"
    shutil.copytree(few_rows, job)
    shard = job / "data" / "train-00000-of-00001.parquet"
    manifest = new_manifest(DATA_JOB, "wiki_mrc", "python -m pipelines.wiki_mrc", state="complete",
                            files={"data/train-00000-of-00001.parquet": file_entry(shard.read_bytes())})
    write_manifest(job, manifest)
    listed = data_fingerprint.fingerprint(job)
    assert listed == {"data/train-00000-of-00001.parquet": {"bytes": shard.stat().st_size,
                                                            "sha256": manifest["files"]["data/train-00000-of-00001.parquet"]["sha256"]}}
    assert data_fingerprint.fingerprint(job / "data") == listed  # --data given as its data/ folder
    pq.write_table(pq.read_table(shard).slice(0, 3), shard)  # no longer what the manifest lists: hashed here
    assert data_fingerprint.fingerprint(job) == {"train-00000-of-00001.parquet": {
        "bytes": shard.stat().st_size, "sha256": checkpoint.sha256(shard)}}


def test_ctrl_c_in_finetune_is_one_line_exit_130_and_leaves_no_final(tiny_run, tmp_path):
    out = tmp_path / "ft"
    command = [sys.executable, "-m", "training.finetune", "--task", "squad", "--init", str(tiny_run / "final"),
               "--output", str(out), "--max_steps", "5000", "--log_every", "1", "--max_seq_len", "64",
               "--max_query_tokens", "16", "--batch_size", "2", "--no_progress", "--device", "cpu"]
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default,
                               env={**os.environ, "HF_HUB_OFFLINE": "1"})
    lines = []
    for line in process.stderr:  # the losses are printed as the steps go
        lines.append(line)
        if line.startswith("step 3/"):
            process.send_signal(signal.SIGINT)
            break
    lines += process.stderr.readlines()
    process.wait(timeout=60)
    assert process.returncode == 130, "".join(lines)[-2000:]
    last = lines[-1].strip()
    assert last.startswith("training.finetune: interrupted at step ") and last.endswith(
        ": rerun the same command to start again"), last
    assert "Traceback" not in "".join(lines)
    assert not (out / "final").exists() and not (out / "metrics.json").exists() and temporaries(out) == []
    assert not lock_path(out).exists()
