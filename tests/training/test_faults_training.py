"""Fault injection on the training side (issue 14, items 3 and 4): each case as a user meets it, checked
by exit code, message and what is left on disk.

- a learning rate that blows up (NaN loss): non-zero exit naming the step, no final/, no NaN on disk,
  metrics.jsonl strict JSON;
- a checkpoint with 4 KiB flipped in the middle: refused by its checksum, the run falls back to the
  previous one and says so; a checkpoint with NaN tensors is refused even without a checksum;
- truncated, foreign, zero-row and damaged Parquet shards (mPMR and XY-LENT): one line naming the file
  (and the row group), never a pyarrow traceback or a SentencePiece error;
- a resumed run writes each step's metrics once;
- a model folder shipping Python code (auto_map) is not executed without --trust_remote_code, while the
  project's own XY-LENT folders load without it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from training import checkpoint, finetune, finetune_clism, run

from test_training_run import few_rows  # noqa: F401  (a fixture: eight real rows of the bundled sample)

REPO = Path(__file__).resolve().parents[2]
QUIET = ["--no_progress", "--no_tensorboard"]


def mpmr(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "mpmr", "--data", str(data), "--output", str(out), "--config", "tiny", *QUIET, *extra]


def stop_message(argv: list[str]) -> str:
    """training.run's one-line refusal: what `sys.exit(message)` prints, with exit status 1."""
    with pytest.raises(SystemExit) as stop:
        run.main(argv)
    assert isinstance(stop.value.code, str), f"exit code {stop.value.code!r}, expected a message"
    assert "\n" not in stop.value.code
    return stop.value.code


def strict_json_lines(path: Path) -> list[dict]:
    """Each line parsed as JSON proper: a bare NaN or Infinity (Python's extension) fails."""
    def no_constant(name):
        raise ValueError(f"{path}: bare {name} is not JSON")
    return [json.loads(line, parse_constant=no_constant) for line in path.read_text().splitlines()]


def flip_middle(path: Path, size: int = 4096) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 - size // 2
    for i in range(middle, middle + size):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


# ---- item 3: non-finite loss or gradient ----

@pytest.mark.slow
def test_huge_lr_stops_with_the_step_named_and_leaves_no_nan_on_disk(few_rows, tmp_path):
    out = tmp_path / "run"
    # As a user runs it: the exit status is the process's.
    result = subprocess.run([sys.executable, "-m", "training.run", *mpmr(few_rows, out, "--max_steps", "6", "--lr", "1e9",
                                                                         "--save_every", "1")],
                            cwd=REPO, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 1, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("training.run: step 2: non-finite loss nan"), result.stderr[-2000:]
    assert "no final/ written" in last and "--max_nonfinite_skips" in last
    assert not (out / "final").exists()
    # Only the finite step-1 checkpoint was written, with its sum; it loads and holds no NaN.
    saved = checkpoint.checkpoint_paths(out / "checkpoints")
    assert [p.name for p in saved] == ["step-00000001.pt"]
    assert checkpoint.verify(saved[0]) is None and checkpoint.read_manifest(out / "checkpoints").keys() == {saved[0].name}
    state = checkpoint.load(saved[0])
    assert checkpoint.nonfinite({"model": state["model"], "optimizer": state["optimizer"]}) == []
    records = strict_json_lines(out / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2]
    assert records[1]["loss"] == "NaN" and records[1]["stopped"] is True
    assert float(records[1]["loss"]) != float(records[1]["loss"])  # the string reads back as a float NaN


def test_tolerated_nonfinite_steps_are_skipped_then_the_run_stops(few_rows, tmp_path, capsys):
    out = tmp_path / "run"
    message = stop_message(mpmr(few_rows, out, "--max_steps", "8", "--lr", "1e9", "--max_nonfinite_skips", "2"))
    # Steps 2 and 3 are skipped (no update), the third non-finite step stops the run.
    assert message.startswith("training.run: step 4: non-finite loss nan"), message
    assert "stopped after 3 such steps (--max_nonfinite_skips 2)" in message
    err = capsys.readouterr().err
    assert "step 2: non-finite loss nan" in err and "update skipped (1 of 2 tolerated)" in err
    assert "step 3: non-finite loss nan" in err and "update skipped (2 of 2 tolerated)" in err
    records = strict_json_lines(out / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    assert [r.get("nonfinite_skips", 0) for r in records] == [0, 1, 2, 3]
    assert not (out / "final").exists()


SQUAD = {"data": [{"title": "t", "paragraphs": [
    {"context": "Lisbon is the capital and largest city of Portugal.", "qas": [
        {"id": "1", "question": "What is the capital of Portugal?", "answers": [{"text": "Lisbon", "answer_start": 0}]},
        {"id": "2", "question": "Which country is Lisbon in?", "answers": [{"text": "Portugal", "answer_start": 43}]}]},
    {"context": "The monarchy fell in 1910 and the republic began.", "qas": [
        {"id": "3", "question": "When did the monarchy fall?", "answers": [{"text": "1910", "answer_start": 21}]}]}]}]}


@pytest.fixture(scope="module")
def tiny_final(few_rows, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny_run")
    run.main(mpmr(few_rows, out, "--max_steps", "2"))
    return out / "final"


@pytest.mark.parametrize("command", ["finetune", "finetune_clism"])
def test_finetune_with_a_huge_lr_stops_and_writes_no_final(tiny_final, tmp_path, command):
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(SQUAD))
    out = tmp_path / "ft"
    common = ["--init", str(tiny_final), "--train", str(squad), "--eval", str(squad), "--output", str(out),
              "--lr", "1e9", "--max_steps", "6", "--batch_size", "3", "--warmup_ratio", "0", "--device", "cpu"]
    with pytest.raises(SystemExit) as stop:
        if command == "finetune":
            finetune.main(["--task", "squad", *common, "--max_seq_len", "64", "--max_query_tokens", "16"])
        else:
            finetune_clism.main([*common, "--head", "standard", "--max_seq_len", "64", "--max_query_tokens", "16"])
    message = str(stop.value.code)
    assert message.startswith(f"training.{command}: step ") and "non-finite loss" in message, message
    assert message.endswith("stopped before the update, no final/ written. Lower --lr")
    assert not list(out.rglob("final"))


# ---- item 3: checkpoint checksums ----

def test_corrupt_checkpoint_is_refused_and_the_run_falls_back_to_the_previous_one(few_rows, tmp_path, capsys):
    out = tmp_path / "run"
    args = mpmr(few_rows, out, "--max_steps", "4", "--save_every", "2", "--batch_size", "4", "--dropout", "0.1")
    run.main(args)
    before = strict_json_lines(out / "metrics.jsonl")
    newest, previous = out / "checkpoints" / "step-00000004.pt", out / "checkpoints" / "step-00000002.pt"
    flip_middle(newest)
    capsys.readouterr()
    run.main([*args, "--resume"])
    err = capsys.readouterr().err
    # Refused by its sum (torch itself would load it: its zip reader checks no CRC), then the fallback.
    assert f"training.run: {newest}: checksum mismatch (sha256 " in err and "the file is corrupt; refused" in err, err
    assert f"resuming from {previous} (step 2), falling back past the refused one" in err
    records = strict_json_lines(out / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3, 4]  # steps 3 and 4 redone, logged once
    assert [r["loss"] for r in records] == [r["loss"] for r in before]  # exactly the same
    assert checkpoint.verify(newest) is None  # rewritten by the resumed run, with its new sum
    assert (out / "final" / "model.safetensors").exists()


def test_a_corrupt_only_checkpoint_stops_with_one_line(few_rows, tmp_path):
    out = tmp_path / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "2", "--save_every", "2"))
    only = out / "checkpoints" / "step-00000002.pt"
    flip_middle(only)
    message = stop_message(mpmr(few_rows, out, "--max_steps", "4", "--resume"))
    assert message.startswith(f"training.run: {only}: checksum mismatch (sha256 "), message
    assert message.endswith("delete it or start without --resume; no good checkpoint to fall back to")


def test_a_checkpoint_with_nan_is_refused_even_without_its_checksum(few_rows, tmp_path, capsys):
    out = tmp_path / "run"
    run.main(mpmr(few_rows, out, "--max_steps", "2", "--save_every", "1"))
    newest = out / "checkpoints" / "step-00000002.pt"
    state = torch.load(newest, map_location="cpu", weights_only=True)
    moments = next(iter(state["optimizer"]["state"].values()))
    moments["exp_avg_sq"].view(-1)[:974] = float("nan")  # the damaged optimiser state
    torch.save(state, newest)
    assert checkpoint.verify(newest).startswith("checksum mismatch")  # with its sum, refused by it
    (out / checkpoint.MANIFEST).unlink()  # as if copied by hand without the sums
    capsys.readouterr()
    run.main(mpmr(few_rows, out, "--max_steps", "3", "--resume"))
    err = capsys.readouterr().err
    assert f"training.run: {newest}: NaN or inf in 1 tensor(s) (first: optimizer.state." in err, err
    assert "loaded unverified" in err and "(step 1), falling back" in err


# ---- item 3: Parquet errors name the file (and the row group) ----

def shard_copy(few_rows: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data_copy"
    shutil.copytree(few_rows, data)
    return data


@pytest.mark.parametrize("damage", ["truncated", "not_parquet"])
def test_unreadable_shard_is_one_line_naming_the_file(few_rows, tmp_path, damage):
    data = shard_copy(few_rows, tmp_path)
    shard = data / "data" / "train-00000-of-00001.parquet"
    raw = shard.read_bytes()
    shard.write_bytes(raw[: len(raw) // 2] if damage == "truncated" else b"id,lang\n1,en\n")
    message = stop_message(mpmr(data, tmp_path / "run", "--max_steps", "2"))
    assert message.startswith(f"training.run: {shard}: not a readable Parquet file ("), message
    assert "Traceback" not in message


def test_zero_row_shard_is_one_line_naming_the_file_not_a_sentencepiece_error(few_rows, tmp_path):
    data = shard_copy(few_rows, tmp_path)
    shard = data / "data" / "train-00000-of-00001.parquet"
    pq.write_table(pq.read_table(shard).slice(0, 0), shard)
    message = stop_message(mpmr(data, tmp_path / "run", "--max_steps", "2"))
    assert message.startswith(f"training.run: {shard}: 0 rows;"), message
    assert "sentences_" not in message and "SentencePiece" not in message


def test_an_empty_shard_beside_full_ones_is_fine(few_rows, tmp_path):
    # The data jobs write every shard, empty ones too (pipelines/beam_outputs.py): not an error.
    data = shard_copy(few_rows, tmp_path)
    table = pq.read_table(data / "data" / "train-00000-of-00001.parquet")
    pq.write_table(table.slice(0, 0), data / "data" / "train-00001-of-00001.parquet")
    run.main(mpmr(data, tmp_path / "run", "--max_steps", "2"))
    assert (tmp_path / "run" / "final" / "model.safetensors").exists()


@pytest.mark.parametrize("reader", ["tokenizer", "loop", "worker"])
def test_damaged_row_group_names_the_file_and_the_row_group(few_rows, tmp_path, reader):
    data = shard_copy(few_rows, tmp_path)
    shard = data / "data" / "train-00000-of-00001.parquet"
    pq.write_table(pq.read_table(shard), shard, row_group_size=2)  # 4 row groups
    out = tmp_path / "run"
    if reader != "tokenizer":  # the tokenizer is made, from intact rows, before the damage
        run.main(mpmr(data, tmp_path / "first", "--max_steps", "1"))
        shutil.copytree(tmp_path / "first" / "tokenizer", out / "tokenizer")  # a tokenizer alone is not a run
    raw = bytearray(shard.read_bytes())
    page = pq.read_metadata(shard).row_group(2).column(4)  # context_words of row group 2
    start = page.dictionary_page_offset or page.data_page_offset
    raw[start:start + 16] = b"\xff" * 16  # its page header no longer parses
    shard.write_bytes(bytes(raw))
    # The footer is intact: the run starts, and stops when the tiny tokenizer's training reads the rows,
    # or when a batch first needs row group 2 (in the loop's process, or in a DataLoader worker whose
    # traceback must not reach the user).
    workers = "1" if reader == "worker" else "0"
    message = stop_message(mpmr(data, out, "--max_steps", "8", "--batch_size", "2", "--num_workers", workers))
    assert message.startswith(f"training.run: {shard}: row group 2: unreadable ("), message
    assert "Traceback" not in message and "DataLoader" not in message


@pytest.fixture(scope="module")
def xy_data(tmp_path_factory) -> Path:
    """The xy_corpus job's output on the bundled samples (tests/test_xylent.py's fixture)."""
    from pipelines import vocap, xy_corpus

    vocab = tmp_path_factory.mktemp("vocap")
    vocap.run(["--output", str(vocab)])
    out = tmp_path_factory.mktemp("xy")
    xy_corpus.run(["--vocab", str(vocab / "spm.model"), "--output", str(out)])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "zero_rows"])
def test_xylent_bad_shard_names_the_file(xy_data, tmp_path, damage):
    data = tmp_path / "xy"
    shutil.copytree(xy_data, data)
    for name in ("manifest.json", ".xlu-job"):  # shards damaged by hand, read as found (tests/test_faults_outputs.py
        (data / name).unlink()                  # has the same damage refused by the manifest)
    shards = sorted((data / "mrtd").glob("train-*.parquet"))
    if damage == "truncated":
        raw = shards[0].read_bytes()
        shards[0].write_bytes(raw[: len(raw) // 2])
        want = f"training.run: {shards[0]}: not a readable Parquet file ("
    else:
        for shard in shards:
            pq.write_table(pq.read_table(shard).slice(0, 0), shard)
        where = shards[0] if len(shards) == 1 else f"{shards[0].parent}: all {len(shards)} shards ({shards[0].name} …)"
        want = f"training.run: {where}: 0 rows;"
    message = stop_message(["--model", "xylent", "--data", str(data), "--output", str(tmp_path / "run"),
                            "--config", "tiny", "--max_steps", "2", *QUIET])
    assert message.startswith(want), message
    assert "sentences_" not in message and "SentencePiece" not in message


# ---- item 3: resumed runs log each step once ----

def test_resumed_run_writes_each_step_once(few_rows, tmp_path, capsys):
    out = tmp_path / "run"
    args = mpmr(few_rows, out, "--max_steps", "6", "--save_every", "3", "--batch_size", "4", "--dropout", "0.1")
    run.main(args)
    whole = strict_json_lines(out / "metrics.jsonl")
    # Killed after logging step 6 but before its checkpoint landed, mid-way through a line of step 7's.
    (out / "checkpoints" / "step-00000006.pt").unlink()
    shutil.rmtree(out / "final")
    with open(out / "metrics.jsonl", "a") as f:
        f.write('{"step": 7, "loss": 0.1')
    capsys.readouterr()
    run.main([*args, "--resume"])
    assert "4 lines after step 3 dropped" in capsys.readouterr().err
    resumed = strict_json_lines(out / "metrics.jsonl")
    assert [r["step"] for r in resumed] == [1, 2, 3, 4, 5, 6]
    assert [r["loss"] for r in resumed] == [r["loss"] for r in whole]  # and bit-identical


# ---- item 4: no remote code without consent ----

@pytest.fixture()
def code_shipping_model(tmp_path) -> tuple[Path, Path]:
    """A model folder whose config and tokenizer config name Python that would leave a marker file."""
    folder, marker = tmp_path / "model", tmp_path / "remote_code_ran"
    folder.mkdir()
    (folder / "evil.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "from transformers import PretrainedConfig, PreTrainedModel\n"
        "class EvilConfig(PretrainedConfig):\n    model_type = 'evil'\n"
        "class EvilModel(PreTrainedModel):\n    config_class = EvilConfig\n")
    auto_map = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps({"model_type": "evil", "auto_map": auto_map}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["evil.EvilModel", None]}}))
    return folder, marker


def test_finetune_refuses_remote_code_without_the_flag(code_shipping_model, tmp_path):
    folder, marker = code_shipping_model
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "Lisbon is in Portugal.", "qas": [
        {"id": "1", "question": "Where is Lisbon?", "answers": [{"text": "Portugal", "answer_start": 13}]}]}]}]}))
    with pytest.raises(SystemExit) as stop:
        finetune.main(["--task", "squad", "--init", str(folder), "--train", str(squad), "--eval", str(squad),
                       "--output", str(tmp_path / "ft")])
    assert stop.value.code == (f"training.finetune: --init {folder}: {folder / 'config.json'} asks to run Python code "
                               "shipped with the model (auto_map); not run without consent: pass --trust_remote_code "
                               "if you trust its author")
    with pytest.raises(SystemExit) as stop:
        finetune_clism.main(["--init", str(folder), "--train", str(squad), "--eval", str(squad),
                             "--output", str(tmp_path / "ftc")])
    assert str(stop.value.code).startswith(f"training.finetune_clism: --init {folder}: {folder / 'config.json'} asks")
    assert not marker.exists()


def test_training_run_refuses_remote_code_without_the_flag(code_shipping_model, few_rows, tmp_path):
    folder, marker = code_shipping_model
    message = stop_message(mpmr(few_rows, tmp_path / "run", "--init", str(folder), "--max_steps", "1"))
    assert message.startswith(f"training.run: --init {folder}: {folder / 'config.json'} asks to run Python code"), message
    assert message.endswith("pass --trust_remote_code if you trust its author")
    assert not marker.exists()


def test_the_marker_code_does_run_with_the_flag(code_shipping_model, tmp_path):
    # The refusals above mean something only if this folder's code really runs when allowed.
    folder, marker = code_shipping_model
    script = ("import sys\nfrom training.tasks.reader import load_reader\n"
              "try:\n    load_reader(sys.argv[1], trust_remote_code=True)\nexcept Exception:\n    pass\n")
    subprocess.run([sys.executable, "-c", script, str(folder)], cwd=REPO, capture_output=True, text=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")})
    assert marker.read_text() == "ran"


def test_saved_xylent_model_loads_without_remote_code(tmp_path):
    from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM

    from training.models.xylent import XYLentConfig, XYLentForPreTraining
    from training.tasks.reader import MRCReader, load_reader

    torch.manual_seed(0)
    model = XYLentForPreTraining(XYLentConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                              intermediate_size=32, generator_layers=1, rel_pos_buckets=8,
                                              rel_pos_max_distance=16))
    model.eval()
    model.save_parts(tmp_path / "final")
    # The folder carries the code for users outside this project, but this project needs none of it.
    assert json.loads((tmp_path / "final" / "config.json").read_text())["auto_map"]
    assert (tmp_path / "final" / "xylent.py").exists()
    before = set(sys.modules)
    reader = load_reader(str(tmp_path / "final"))
    assert isinstance(reader, MRCReader) and type(reader.encoder).__module__ == "training.models.xylent"
    disc = AutoModel.from_pretrained(tmp_path / "final", trust_remote_code=False).eval()
    gen = AutoModelForMaskedLM.from_pretrained(tmp_path / "final" / "generator", trust_remote_code=False)
    assert type(AutoConfig.from_pretrained(tmp_path / "final")).__module__ == "training.models.xylent"
    assert type(disc).__module__ == type(gen).__module__ == "training.models.xylent"
    assert not [m for m in set(sys.modules) - before if m.startswith("transformers_modules")]
    ids = torch.tensor([[0, 7, 9, 2]])
    with torch.no_grad():
        assert torch.equal(disc(input_ids=ids).last_hidden_state, model.discriminator.xylent(ids).last_hidden_state)

    # Outside this project (no `import training` first) the folder's own code is what loads, with consent.
    script = ("import sys, torch\nfrom transformers import AutoModel\n"
              "m = AutoModel.from_pretrained(sys.argv[1], trust_remote_code=True).eval()\n"
              "print(type(m).__module__)\n"
              "print(m(input_ids=torch.tensor([[0, 7, 9, 2]])).last_hidden_state.sum().item())\n")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "final")], cwd=tmp_path, capture_output=True,
                            text=True, env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")})
    assert result.returncode == 0, result.stderr[-2000:]
    module, total = result.stdout.split()
    assert module.startswith("transformers_modules")
    with torch.no_grad():
        assert float(total) == pytest.approx(model.discriminator.xylent(ids).last_hidden_state.sum().item(), abs=1e-5)
