"""`python -m training.run` end to end on a handful of real wiki_mrc rows with --config tiny:
the model overfits them and extracts their answers, a resumed run equals an uninterrupted one,
checkpoints that are not ours fail with one clear line, and every flag is documented."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub download, ever, in tests

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from pipelines import wiki_mrc
from training import run
from training.registry import get_spec
from training.data.mpmr import MPMRCollator
from training.data import list_shards
from training.models.mpmr import MPMRForWAE, best_spans

QUIET = ["--no_progress", "--no_tensorboard"]


@pytest.fixture(scope="session")
def few_rows(tmp_path_factory) -> Path:
    """Eight real rows of the bundled sample (six answerable, two not, several languages)."""
    out = tmp_path_factory.mktemp("wiki_mrc")
    wiki_mrc.run(["--runner", "DirectRunner", "--output", str(out)])
    table = pa.concat_tables([pq.read_table(f) for f in list_shards(out)])
    answerable = table.column("answerable").to_pylist()
    pick = [i for i, a in enumerate(answerable) if a][::25][:6] + [i for i, a in enumerate(answerable) if not a][::40][:2]
    few = tmp_path_factory.mktemp("few")
    (few / "data").mkdir()
    pq.write_table(table.take(pick), few / "data" / "train-00000-of-00001.parquet")  # keeps the schema metadata
    return few


def metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_tiny_model_overfits_real_rows_and_extracts_their_answers(few_rows, tmp_path):
    out = tmp_path / "run"
    # 200 steps: the rows the fixture picks change with the job's output; on today's 8 rows 100 steps
    # extracted 4 of 6 answers, 150 steps 5, 200 steps all 6 (the loss is near 0 long before).
    run.main(["--model", "mpmr", "--data", str(few_rows), "--output", str(out), "--config", "tiny",
              "--max_steps", "200", "--lr", "2e-3", *QUIET])
    records = metrics(out)
    losses = [m["loss"] for m in records]
    assert len(losses) == 200
    # Each window's wait for its batch: measured, and a part of the window's time, never more.
    assert all(0 < m["data_s"] < m["tokens"] / m["tokens_per_s"] for m in records)
    assert losses[-1] <= 0.1 * losses[0]  # the WAE loss falls by at least 90%
    final = out / "final"
    assert {"model.safetensors", "config.json", "tokenizer.json", "train_config.json"} <= {p.name for p in final.iterdir()}

    right, _, _ = extract(final, few_rows)
    print(f"overfit: loss {losses[0]:.4f} -> {losses[-1]:.6f}; {right} of 6 answers extracted")
    assert right >= 5, f"{right} of 6 answers extracted"


@pytest.mark.slow
def test_longer_overfit_extracts_every_answer_and_separates_the_cls_cell(few_rows, tmp_path):
    out = tmp_path / "run"
    run.main(["--model", "mpmr", "--data", str(few_rows), "--output", str(out), "--config", "tiny",
              "--max_steps", "400", "--lr", "1e-3", *QUIET])
    right, span_scores, cls = extract(out / "final", few_rows)
    assert right == 6
    assert min(span_scores[True]) > 0 > max(span_scores[False])  # answers above 0.5, nothing else
    assert min(cls[True]) > max(cls[False])  # the [CLS] cell ranks answerable contexts first


def extract(final: Path, few_rows: Path) -> tuple[int, dict, dict]:
    """Answers extracted right, and best-span and [CLS] logits by answerability."""
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(final)
    model = MPMRForWAE.from_pretrained(final).eval()
    rows = pq.read_table(few_rows / "data" / "train-00000-of-00001.parquet").to_pylist()
    batch = MPMRCollator(tokenizer)(rows)
    with torch.no_grad():
        spans, scores, cls = best_spans(model(batch["input_ids"], batch["attention_mask"]), batch["context_mask"])
    right, span_scores, cls_scores = 0, {True: [], False: []}, {True: [], False: []}
    for b, row in enumerate(rows):
        span_scores[row["answerable"]].append(scores[b].item())
        cls_scores[row["answerable"]].append(cls[b].item())
        if row["answerable"]:
            words = tuple(batch["context_word"][b, spans[b]].tolist())
            right += words in {(a["start"], a["end"]) for a in row["answers"]}
    return right, span_scores, cls_scores


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resumed_run_equals_uninterrupted_run(few_rows, tmp_path, workers):
    # Dropout on, batches of 4 over 8 rows: the resumed half crosses an epoch boundary and needs the
    # data position and the RNG state to come back exactly.
    args = ["--model", "mpmr", "--data", str(few_rows), "--config", "tiny", "--max_steps", "6", "--batch_size", "4",
            "--dropout", "0.1", "--save_every", "3", "--lr", "1e-3", "--num_workers", workers, *QUIET]
    whole = tmp_path / "whole"
    run.main([*args, "--output", str(whole)])
    assert [p.name for p in (whole / "checkpoints").iterdir()] and len(metrics(whole)) == 6

    resumed = tmp_path / "resumed"
    (resumed / "checkpoints").mkdir(parents=True)
    shutil.copytree(whole / "tokenizer", resumed / "tokenizer")
    shutil.copy(whole / "checkpoints" / "step-00000003.pt", resumed / "checkpoints")
    run.main([*args, "--output", str(resumed), "--resume"])
    assert [m["step"] for m in metrics(resumed)] == [4, 5, 6]
    assert [m["loss"] for m in metrics(resumed)] == [m["loss"] for m in metrics(whole)[3:]]
    a = MPMRForWAE.from_pretrained(whole / "final").state_dict()
    b = MPMRForWAE.from_pretrained(resumed / "final").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("content, message", [
    (b"not a checkpoint at all", "not a readable checkpoint"),
    (None, "not an xlu-factory training checkpoint"),
])
def test_corrupt_or_foreign_checkpoint_is_one_clear_line(few_rows, tmp_path, content, message):
    ckpt = tmp_path / "checkpoints" / "step-00000001.pt"
    ckpt.parent.mkdir(parents=True)
    if content is None:
        torch.save({"weights": torch.zeros(2)}, ckpt)  # someone else's file
    else:
        ckpt.write_bytes(content)
    with pytest.raises(SystemExit) as stop:
        run.main(["--model", "mpmr", "--data", str(few_rows), "--output", str(tmp_path), "--config", "tiny",
                  "--resume", "--max_steps", "2", *QUIET])
    text = str(stop.value.code)
    assert text.startswith(f"training.run: {ckpt}: {message}") and "\n" not in text


def test_missing_data_is_one_clear_line(tmp_path):
    with pytest.raises(SystemExit) as stop:
        run.main(["--model", "mpmr", "--data", str(tmp_path / "nope"), "--output", str(tmp_path), "--config", "tiny"])
    assert str(stop.value.code) == f"training.run: --data {tmp_path / 'nope'}: folder not found"


def test_every_flag_is_documented(capsys):
    with pytest.raises(SystemExit):
        run.parse_args(["--model", "mpmr", "--help"])
    text = capsys.readouterr().out
    parser_flags = ["--model", "--data", "--output", "--config", "--resume", "--device", "--init", "--max_steps",
                    "--grad_accum", "--lr", "--warmup_ratio", "--warmup_steps", "--grad_clip", "--max_query_tokens",
                    "--max_seq_len"]
    for flag in parser_flags:
        assert flag in text
    assert all(action.help for action in run.build_parser(get_spec("mpmr"))._actions)
    # Without --model the help still works and points to the model-specific flags.
    with pytest.raises(SystemExit):
        run.parse_args(["--help"])
    assert "--model NAME --help" in capsys.readouterr().out


def throughput_benchmark():
    """benchmarks/train_throughput.py as a module (benchmarks/ is not a package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "train_throughput.py"
    spec = importlib.util.spec_from_file_location("train_throughput", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    return benchmark


@pytest.mark.slow
def test_throughput_benchmark_runs_the_same_steps_in_both_loops(few_rows, capsys):
    """benchmarks/train_throughput.py: the bare loop, stepping between the run's steps, repeats the run's
    own computation (same batches, same losses: its random streams and the run's do not mix), and the
    overhead figures and their A/A resolution come out."""
    benchmark = throughput_benchmark()
    # With dropout, equal losses also show that the two loops' random streams stay apart.
    benchmark.main(["--data", str(few_rows), "--repeat", "2", "--steps", "6", "--warmup", "2", "--dropout", "0.1"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["same_losses"] is True
    assert result["rounds"] == 2 and result["steps_measured"] == 4 and len(result["every_round"]) == 2
    assert 0 < result["data_wait_share"] < 1
    for figure in ("loop_overhead", "loop_overhead_per_step", "aa_overhead", "aa_overhead_per_step"):
        assert isinstance(result[figure], float) and -1 < result[figure] < 10


def test_throughput_benchmark_runs_clism_on_its_bundled_pairs(capsys):
    """--model clism: its own data job's sample, its own collator and model, the same two loops."""
    benchmark = throughput_benchmark()
    benchmark.main(["--model", "clism", "--repeat", "1", "--steps", "4", "--warmup", "1", "--dropout", "0.1"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["model"] == "clism" and result["same_losses"] is True and result["steps_measured"] == 3


def test_throughput_benchmark_refuses_steps_that_leave_nothing_to_measure(capsys):
    with pytest.raises(SystemExit):
        throughput_benchmark().main(["--steps", "3"])
    assert "--steps 3 leaves no step to measure after --warmup 10" in capsys.readouterr().err
