"""Runs never mix (issue 18 item 3, training/run_folder.py): an --output holding a run is refused unless
--resume (same model and config) or --overwrite; data made for another model says which; an --init
that is neither on disk nor in the cache is one line, offline or with the hub out of reach; the run
ends by printing where its results are."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from test_training_run import QUIET, few_rows, metrics  # noqa: F401  (few_rows is a fixture)

from corpora.schemas import CLISM_SCHEMA
from training import run, run_folder


def mpmr(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "mpmr", "--data", str(data), "--output", str(out), "--config", "tiny", *QUIET, *extra]


def stop_message(argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        run.main(argv)
    assert isinstance(stop.value.code, str) and "\n" not in stop.value.code, stop.value.code
    return stop.value.code


def test_a_second_run_into_a_run_folder_is_refused_and_names_the_first(few_rows, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "3", "--save_every", "3"))
    before = (out / "metrics.jsonl").read_text()
    message = stop_message(mpmr(few_rows, out, "--max_steps", "2"))
    assert message.startswith(f"training.run: --output {out} holds a --model mpmr --config tiny run at step 3, "
                              "last written 20"), message
    assert message.endswith("pass --resume to continue it, --overwrite to replace it, or choose another --output")
    assert (out / "metrics.jsonl").read_text() == before  # nothing appended, nothing written

    # Another model into it, even with --resume: refused, naming both.
    message = stop_message(["--model", "clism", "--data", str(few_rows), "--output", str(out), "--config", "tiny",
                            "--resume", *QUIET])
    assert "holds a --model mpmr --config tiny run at step 3" in message and "not --model clism" in message, message

    # --resume with another learning rate: says what differs.
    message = stop_message(mpmr(few_rows, out, "--max_steps", "4", "--resume", "--lr", "5e-4"))
    assert "with another config (lr 0.001 -> 0.0005)" in message, message
    assert stop_message(mpmr(few_rows, out, "--resume", "--overwrite")).startswith("training.run: --resume and --overwrite")


def test_overwrite_clears_the_run_and_nothing_else(few_rows, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "4", "--save_every", "2"))
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    run.main(mpmr(few_rows, out, "--max_steps", "1", "--overwrite"))
    assert "--overwrite: removed checkpoints, checkpoints.sha256, metrics.jsonl, final, tokenizer" in capsys.readouterr().err
    assert [m["step"] for m in metrics(out)] == [1]  # a fresh log, not appended to the old one
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step-00000001.pt"]  # old ones gone
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "run.json").read_text())["model"] == "mpmr"


def test_resume_with_more_steps_continues_and_a_tokenizer_alone_is_not_a_run(few_rows, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "2", "--save_every", "2"))
    run.main(mpmr(few_rows, out, "--max_steps", "3", "--resume", "--log_every", "1"))  # length and logging may change
    assert [m["step"] for m in metrics(out)] == [1, 2, 3]
    fresh = tmp_path / "fresh"
    (fresh / "tokenizer").mkdir(parents=True)
    for f in (out / "tokenizer").iterdir():
        (fresh / "tokenizer" / f.name).write_bytes(f.read_bytes())
    run.main(mpmr(few_rows, fresh, "--max_steps", "1"))  # a prepared tokenizer is used, not refused
    assert (fresh / "final" / "model.safetensors").exists()


def test_data_for_another_model_says_which_model_it_is_for(few_rows, tmp_path):  # noqa: F811
    clism_data = tmp_path / "clism_pairs"
    (clism_data / "data").mkdir(parents=True)
    pq.write_table(CLISM_SCHEMA.empty_table(), clism_data / "data" / "train-00000-of-00001.parquet")
    message = stop_message(mpmr(clism_data, tmp_path / "a", "--max_steps", "1"))
    assert message.startswith(f"training.run: --data {clism_data} holds clism_pairs rows (for --model clism), not "
                              "wiki_mrc rows; train --model clism on it"), message
    message = stop_message(["--model", "clism", "--data", str(few_rows), "--output", str(tmp_path / "b"),
                            "--config", "tiny", *QUIET])
    assert message.startswith(f"training.run: --data {few_rows} holds wiki_mrc rows (for --model mpmr), not "
                              "clism_pairs rows"), message
    message = stop_message(["--model", "xylent", "--data", str(few_rows), "--output", str(tmp_path / "c"),
                            "--config", "tiny", *QUIET])
    assert "holds wiki_mrc rows (for --model mpmr), not xy_corpus rows" in message, message


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free once closed: a connection there is refused at once


def test_an_uncached_hub_init_offline_or_unreachable_is_one_line(few_rows, tmp_path, monkeypatch):  # noqa: F811
    name = "xlu-factory-tests/not-a-cached-model"  # in no cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    message = stop_message(mpmr(few_rows, tmp_path / "a", "--init", name, "--max_steps", "1"))
    assert message == (f"training.run: --init {name}: not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
                       "use --config tiny (random, no download), a local folder, or run once with the network to fill "
                       "the cache (HF_HOME)")
    # Online in principle, but the endpoint refuses connections: the probe says so in a moment.
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(run_folder.RunFolderError) as refused:
        run_folder.check_init_available(name)
    assert f"not in the local Hugging Face cache and {endpoint} cannot be reached" in str(refused.value)
    # A reachable hub lets transformers download as before (the probe is the only thing asked here).
    assert run_folder.check_init_available(name, reachable=lambda: True) is None
    run_folder.check_init_available(str(few_rows))  # a local folder is never looked up
    with pytest.raises(run_folder.RunFolderError, match="no such folder"):  # nor a path to one that is not there
        run_folder.check_init_available(str(tmp_path / "runs" / "final"))


def test_the_run_ends_by_printing_where_its_results_are(few_rows, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "run"
    run.main(["--model", "mpmr", "--data", str(few_rows), "--output", str(out), "--config", "tiny", "--max_steps", "1",
              "--no_progress"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == f"training.run: done at step 1; results in {out}"
    assert f"final model:  {out / 'final'}   (MPMRForWAE.from_pretrained)" in lines[1]
    assert any(line.strip() == f"metrics:      {out / 'metrics.jsonl'}" for line in lines)
    assert any(line.strip() == f"TensorBoard:  tensorboard --logdir {out / 'tensorboard'}" for line in lines)
    assert not any("best model" in line for line in lines)  # no held-out data in few_rows: no best/


def test_summary_says_when_no_pass_could_be_selected(tmp_path):
    """A selection whose metric was NaN in every pass saves no best/: the closing lines say so, rather
    than leaving the best-model line out without a word."""
    lines = run_folder.result_lines(tmp_path, "xylent", 60, None, False, "disc_f1")
    assert any(line.startswith("  best model:   none: no evaluation after step 0 gave a disc_f1") for line in lines)
    assert not any("best model" in line for line in run_folder.result_lines(tmp_path, "xylent", 60, None, False))


def test_a_data_jobs_output_is_no_run_folder(tmp_path):
    # A new user trained into the dataset folder itself: checkpoints beside a card meant for the Hub.
    from training.run_folder import RunFolderError, check_output

    (tmp_path / ".xlu-job").write_text("wiki_mrc")
    for overwrite in (False, True):
        with pytest.raises(RunFolderError, match="holds the output of wiki_mrc"):
            check_output(tmp_path, "mpmr", "tiny", {}, resume=False, overwrite=overwrite)
    # its data/ too: a checkpoint file there broke pandas.read_parquet("OUT/data")
    with pytest.raises(RunFolderError, match="is inside .* which holds the output of wiki_mrc"):
        check_output(tmp_path / "data", "mpmr", "tiny", {}, resume=False, overwrite=False)
