"""Runs never mix: what an --output folder holds, whose data --data is, and whether
--init can be had without a download that will never come.

Before, a second `training.run` into a run folder appended to its metrics.jsonl and left the old
run's checkpoints beside the new ones (a later --resume continued the wrong run), and training clism
into an mpmr folder failed deep inside with "tokenizer has no [QUE] token". Now a folder that holds a
run is used only with --resume (same model and config) or --overwrite (which clears the run's files).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq

from corpora.outputs import manifests
from corpora.schemas import SCHEMA_NAME_KEY
from training import atomic_files
from training.tokenizer import load_tokenizer

DATA_JOB_MARKER = ".xlu-job"  # what pipelines.common writes in a data job's --output (training never imports it)
MARKER = "run.json"  # {"model", "config", "created"}: what made the folder, read by the checks below
# What a run writes (docs/training.md); --overwrite removes these and nothing else.
RUN_ENTRIES = ("checkpoints", "checkpoints.sha256", "metrics.jsonl", "tensorboard", "final", "best", "best.tmp",
               "tokenizer", "train_config.json", "data_fingerprint.json", MARKER)
# Entries that make a folder "a run": something trained. A start that failed before its first step
# (run.json, train_config.json, tokenizer/ only) is not one, and neither is a folder holding only a
# tokenizer put there on purpose (tests, nodes without a shared disk): the run uses that tokenizer.
RUN_EVIDENCE = ("checkpoints", "metrics.jsonl", "final", "best")
# Config fields that may change when a run is resumed: bookkeeping, the run's length, evaluation.
RESUMABLE_CHANGES = {"max_steps", "epochs", "num_workers", "log_every", "save_every", "keep_checkpoints",
                     "max_nonfinite_skips", "trust_remote_code", "eval_every", "eval_batches"}

# Which job writes which Parquet contract, and for which model (corpora/schemas.py names).
DATA_OWNERS = {"mrc": ("wiki_mrc", "mpmr"), "clism": ("clism_pairs", "clism"), "xy_mrtd": ("xy_corpus", "xylent"),
               "xy_trtd": ("xy_corpus", "xylent")}
MODEL_JOBS = {"mpmr": "wiki_mrc", "clism": "clism_pairs", "xylent": "xy_corpus"}


class RunFolderError(ValueError):
    """A misuse of --output, --data or --init: one line naming the flag and the fix."""


# ---- the --output folder ----

def _last_step(out: Path) -> int | None:
    steps = [int(p.stem.split("-")[1]) for p in (out / "checkpoints").glob("step-*.pt") if p.stem.split("-")[1].isdigit()]
    metrics = out / "metrics.jsonl"
    if metrics.exists():
        for line in reversed(metrics.read_text().splitlines()):
            try:
                steps.append(int(json.loads(line)["step"]))
                break
            except (ValueError, KeyError, TypeError):
                continue
    return max(steps) if steps else None


def read_marker(out: Path) -> dict:
    try:
        return json.loads((out / MARKER).read_text())
    except (OSError, ValueError):
        return {}


def describe_run(out: Path) -> str | None:
    """One phrase naming the run in `out` (model, config, step, when last written), or None if it holds none."""
    present = [name for name in RUN_EVIDENCE if (out / name).exists()]
    if not present:
        return None
    marker = read_marker(out)
    what = f"a --model {marker['model']} --config {marker.get('config', '?')} run" if marker.get("model") else "an unmarked run"
    step = _last_step(out)
    newest = max((out / name).stat().st_mtime for name in present)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(newest))
    return f"{what}{f' at step {step}' if step is not None else ''}, last written {when}"


def config_differences(out: Path, config: dict) -> list[str]:
    """The fields of this run's resolved config that differ from those the folder's run was made with
    (ignoring the ones a resume may change, and fields one of the two configs does not have: a field
    added or dropped since, e.g. mPMR's, which moved from the shared config to mPMR's recipe)."""
    path = out / "train_config.json"
    if not path.exists():
        return []
    try:
        saved = json.loads(path.read_text())
    except ValueError:
        return []
    mine = json.loads(json.dumps(config))  # tuples become lists, as in the saved file
    return [f"{key} {saved.get(key)!r} -> {mine.get(key)!r}" for key in sorted(set(saved) | set(mine))
            if key not in RESUMABLE_CHANGES | {"world_size"} and key in saved and key in mine and saved[key] != mine[key]]


def check_output(out: Path, model: str, config_name: str, config: dict, resume: bool, overwrite: bool) -> None:
    """Refuse an --output that holds another run, unless --resume (same model and config) or --overwrite.
    Read-only: every DDP rank calls it before rank 0 writes anything."""
    if resume and overwrite:
        raise RunFolderError("--resume and --overwrite: choose one (--overwrite clears the run that --resume continues)")
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"--output {out}: a file, not a folder")
    for folder in (out, *out.resolve().parents):
        data_job = folder / DATA_JOB_MARKER
        if data_job.is_file():
            # A data job's output is a dataset (its card can go to the Hub as it is): checkpoints and
            # tensorboard/ in it would be pushed with it, a file in its data/ breaks reading the rows,
            # and a rerun of the job would replace what is inside.
            job = data_job.read_text(encoding="utf-8", errors="replace").strip() or "a data job"
            where = "holds" if folder == out else f"is inside {folder}, which holds"
            raise RunFolderError(f"--output {out} {where} the output of {job} (a dataset); give the run a folder of its own")
    existing = describe_run(out) if out.exists() else None
    marker = read_marker(out) if out.exists() else {}
    if overwrite:
        return
    if existing is None:
        if marker.get("model") not in (None, model):
            # Its tokenizer/ (CLISM's has [QUE], XY-LENT's is another vocabulary) would be reused.
            raise RunFolderError(f"--output {out} was started by a --model {marker['model']} run (no step taken); "
                                 "--overwrite to replace it, or choose another --output")
        return
    if not resume:
        raise RunFolderError(f"--output {out} holds {existing}; pass --resume to continue it, --overwrite to replace it, "
                             "or choose another --output")
    if marker.get("model") and marker["model"] != model:
        raise RunFolderError(f"--output {out} holds {existing}, not --model {model}; --resume continues only the same "
                             "model: choose another --output, or --overwrite")
    differences = ([f"config {marker['config']!r} -> {config_name!r}"] if marker.get("config") not in (None, config_name)
                   else []) + config_differences(out, config)
    if differences:
        raise RunFolderError(f"--output {out} holds {existing} with another config ({'; '.join(differences)}); resume "
                             "with its flags, or --overwrite to start again")


def clear_run(out: Path) -> list[str]:
    """--overwrite: remove what a run writes (and nothing else the folder holds); the names removed."""
    removed = []
    for name in RUN_ENTRIES:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed


def mark(out: Path, model: str, config_name: str, resume: bool) -> None:
    """The folder's marker, written by rank 0 (a resumed run keeps the one of its start)."""
    if resume and (out / MARKER).exists():
        return
    atomic_files.write_text(out / MARKER, json.dumps({"model": model, "config": config_name,
                                                      "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, indent=2) + "\n")


def load_run_tokenizer(tok_dir: Path, trust_remote_code: bool = False):
    """The run's own tokenizer; a damaged file in it (cut short, edited) named in one line."""
    for path in sorted(tok_dir.glob("*.json")):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RunFolderError(f"{path}: unreadable ({str(error).splitlines()[0][:120]}); the run's tokenizer is "
                                 f"damaged: restore the file, or --overwrite to start the run again") from None
    try:
        return load_tokenizer(str(tok_dir), trust_remote_code)
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise RunFolderError(f"{tok_dir}: not a loadable tokenizer ({str(error).strip().splitlines()[0][:120] if str(error).strip() else type(error).__name__}); "
                             "restore it, or --overwrite to start the run again") from None


# ---- --data made for another model ----

def data_schema_names(data_dir: str) -> set[str]:
    """Contract names of the Parquet shards a data job's --output (or a folder inside it) holds, from the
    first footer of each table: the manifest's tables, or for a folder without one the layouts the jobs
    write (data/train-*, data/test-*; xy_corpus: mrtd/, trtd/, formerly data/mrtd/, data/trtd/)."""
    try:
        root = manifests.resolve_data_folder(data_dir)
        manifest = manifests.read_manifest(root)
    except manifests.ManifestError:
        return set()  # the data checks that follow say what is wrong with the folder
    if manifest:
        firsts = [root / shards[0] for splits in manifest.get("tables", {}).values() for shards in splits.values() if shards]
    else:
        folders = (root / "data", root, root / "mrtd", root / "trtd", root / "data" / "mrtd", root / "data" / "trtd")
        firsts = [f for folder in folders for split in ("train", "test") for f in sorted(folder.glob(f"{split}-*.parquet"))[:1]]
    names = set()
    for f in firsts:
        try:
            meta = pq.read_schema(f).metadata or {}
        except Exception:  # noqa: BLE001  unreadable shards are named by the data checks that follow
            continue
        names.add(meta.get(SCHEMA_NAME_KEY, b"?").decode())
    return names


def check_data_is_for(model: str, data_dir: str) -> None:
    """`--data X holds clism_pairs rows (for --model clism), not wiki_mrc rows` instead of a schema error
    that says to regenerate data which is fine, only for another model."""
    if not Path(data_dir).exists():
        return  # the data checks say "folder not found"
    owners = {DATA_OWNERS[name] for name in data_schema_names(data_dir) if name in DATA_OWNERS}
    others = sorted({o for o in owners if o[1] != model})
    if others and not any(o[1] == model for o in owners):
        job, owner = others[0]
        raise RunFolderError(f"--data {data_dir} holds {job} rows (for --model {owner}), not {MODEL_JOBS[model]} rows; "
                             f"train --model {owner} on it, or make {model} data with "
                             f"`python -m pipelines.{MODEL_JOBS[model]}`")


# ---- --init from the hub, offline ----

def _offline() -> bool:
    return any(os.environ.get(k, "").strip().upper() in ("1", "ON", "YES", "TRUE")
               for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout: float = 3.0) -> bool:
    """A TCP connection to the hub endpoint (HF_ENDPOINT) within `timeout`: the check transformers'
    own retries take minutes and 85 lines to make."""
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_init_available(init: str, reachable=hub_reachable, hint: str | None = None) -> None:
    """--init NAME not on disk and not in the local Hugging Face cache, offline or with the hub out of
    reach: one line instead of pages of retries. Never downloads anything."""
    path = Path(init).expanduser()
    if path.exists():
        return
    if init.startswith(("/", "./", "../", "~")) or (len(path.parts) > 1 and Path(path.parts[0]).is_dir()):
        # "runs/base/final" beside an existing runs/: a folder the user meant, not a hub name (whose
        # "Repo id must be in the form 'repo_name' or 'namespace/repo_name'" said nothing of the path)
        raise RunFolderError(f"--init {init}: no such folder (a saved model is a folder holding config.json)")
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(init, "config.json")
    except Exception:  # noqa: BLE001  a name that is not a valid repo id
        raise RunFolderError(f"--init {init}: no such folder, and not a Hugging Face model name") from None
    if isinstance(cached, str):
        return
    hint = hint or ("use --config tiny (random, no download), a local folder, or run once with the network to fill "
                    "the cache (HF_HOME)")
    if _offline():
        raise RunFolderError(f"--init {init}: not in the local Hugging Face cache and HF_HUB_OFFLINE is set; {hint}")
    if not reachable():
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        raise RunFolderError(f"--init {init}: not in the local Hugging Face cache and {endpoint} cannot be reached; {hint}")


# ---- where the results are ----

def result_lines(out: Path, model: str, step: int, best: dict | None, tensorboard: bool,
                 select_by: str | None = None) -> list[str]:
    """The closing summary. `select_by`: the metric best/ was chosen by, when there was a selection."""
    # XY-LENT's classes are saved beside its weights (auto_map): AutoModel loads them only when told to.
    loader = {"mpmr": "MPMRForWAE.from_pretrained", "clism": "CLISMForPreTraining.from_pretrained",
              "xylent": "AutoModel.from_pretrained(..., trust_remote_code=True)"}[model]
    lines = [f"training.run: done at step {step}; results in {out}",
             f"  final model:  {out / 'final'}   ({loader})"]
    if best:
        lines.append(f"  best model:   {out / 'best'}   ({best['metric']} {best['value']:.4f} at step {best['step']}, "
                     "held-out)")
    elif select_by:
        lines.append(f"  best model:   none: no evaluation after step 0 gave a {select_by} (NaN in every pass; "
                     "see metrics.jsonl)")
    lines.append(f"  metrics:      {out / 'metrics.jsonl'}")
    if tensorboard and (out / "tensorboard").exists():
        lines.append(f"  TensorBoard:  tensorboard --logdir {out / 'tensorboard'}")
    lines.append(f"  checkpoints:  {out / 'checkpoints'}   (continue with --resume)")
    return lines
