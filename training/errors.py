"""The errors a training or fine-tuning command turns into one line (tracebacks are for bugs). Kept
apart from the commands so that the fine-tuning loop and the pre-training loop import no each other."""
from __future__ import annotations


class NonFiniteError(RuntimeError):
    """A NaN or inf loss, gradient or weight: the run stops before it reaches the disk."""


class OutputError(ValueError):
    """An --output that cannot be used: another kind's folder, not writable, full."""


class Interrupted(Exception):
    """Ctrl-C: where the run was and from where `--resume` continues (None: no checkpoint yet)."""

    def __init__(self, step: int, resume_step: int | None):
        super().__init__(f"interrupted at step {step}")
        self.step, self.resume_step = step, resume_step

    def line(self, command: str, resumable: bool = True) -> str:
        if not resumable:
            return f"{command}: interrupted at step {self.step}: rerun the same command to start again"
        if self.resume_step is None:
            return (f"{command}: interrupted at step {self.step}, before the first checkpoint: rerun with --resume "
                    "to start again")
        return (f"{command}: interrupted at step {self.step}: rerun with --resume to continue from step "
                f"{self.resume_step}")


EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C
