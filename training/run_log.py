"""What a training run reports as it goes: metrics.jsonl, TensorBoard scalars and the progress bar
(rank 0 only), and the logging window whose sums make each metrics line."""
from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

from training import atomic_files


def json_safe(value):
    """JSON has no NaN or infinity (Python writes a bare NaN that strict parsers reject): such floats go
    to metrics.jsonl as the strings "NaN", "Infinity", "-Infinity", which float() reads back."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def truncate_metrics(path: Path, step: int) -> None:
    """Keep the metrics of steps ≤ `step` (the resumed one): the run logs the later steps again. A torn
    last line (a kill mid-write) goes too."""
    if not path.exists():
        return
    lines = path.read_text().splitlines()
    keep = []
    for line in lines:
        try:
            if json.loads(line)["step"] <= step:
                keep.append(line)
        except (ValueError, KeyError, TypeError):
            pass
    if len(keep) != len(lines):
        atomic_files.write_text(path, "".join(line + "\n" for line in keep))
        print(f"{path}: {len(lines) - len(keep)} lines after step {step} dropped; they are logged again", file=sys.stderr)


class RunLog:
    """Rank 0's reports: a JSON line per logged step in OUTPUT/metrics.jsonl (appended: a resumed run
    continues the file), the same scalars in OUTPUT/tensorboard when tensorboard is installed, and a
    progress bar that messages are printed through, so that they do not tear it. On the other ranks
    (`active` false) every method does nothing."""

    def __init__(self, out: Path, active: bool, tensorboard: bool, progress: bool, total: int, initial: int, desc: str):
        self.active = active
        self.writer = self.progress = self.metrics_file = None
        if not active:
            return
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
                self.writer = SummaryWriter(str(out / "tensorboard"))
            except ImportError:  # tensorboard is optional: metrics.jsonl carries the same numbers
                pass
        if progress:
            from tqdm import tqdm
            self.progress = tqdm(total=total, initial=initial, desc=desc, dynamic_ncols=True)
        self.metrics_file = out / "metrics.jsonl"

    def write(self, record: dict, scalars: dict[str, float]) -> None:
        """One metrics line, and `scalars` (TensorBoard tag: value) at the record's step."""
        if self.metrics_file is None:
            return
        # One write per line: a reader of the file mid-run never sees half a line.
        atomic_files.append_line(self.metrics_file, json.dumps({k: json_safe(v) for k, v in record.items()}, allow_nan=False))
        if self.writer:
            for tag, value in scalars.items():
                self.writer.add_scalar(tag, value, record["step"])

    def say(self, message: str) -> None:
        if self.progress:
            self.progress.write(message, file=sys.stderr)
        elif self.active:
            print(message, file=sys.stderr)

    def advance(self, loss_value: float) -> None:
        if self.progress:
            self.progress.update(1)
            self.progress.set_postfix(loss=f"{loss_value:.4f}")

    def close_progress(self) -> None:
        if self.progress:
            self.progress.close()
            self.progress = None

    def close(self) -> None:
        self.close_progress()
        self.metrics_file = None
        if self.writer:
            self.writer.close()
            self.writer = None


class LogWindow:
    """The steps since the last metrics line: their tokens (rate over the window's wall time), the
    seconds the loop waited for batches (reading, collating; with --num_workers, what the workers did
    not have ready: the share of the time that data, not the model, took), the data's counts, and each
    model's own loss terms (e.g. CLISM's clism/cacr/mlm), averaged over the steps."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.started = time.perf_counter()
        self.tokens, self.data_s, self.steps = 0, 0.0, 0
        self.counts: Counter = Counter()
        self.terms: Counter = Counter()

    def rates(self, world: int) -> dict:
        elapsed = time.perf_counter() - self.started
        return {"tokens": self.tokens * world, "tokens_per_s": self.tokens * world / max(elapsed, 1e-9),
                "data_s": round(self.data_s, 6)}

    def mean_terms(self) -> dict:
        return {k: v / self.steps for k, v in sorted(self.terms.items())}
