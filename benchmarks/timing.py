"""Wall and CPU time of a block, children included: the benchmarks report CPU seconds because the
development machine is shared, and Beam's worker processes are children."""
from __future__ import annotations

import resource
import time


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Clock:
    """`with Clock() as c: ...` then `c.wall`, `c.cpu` (seconds)."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, cpu_seconds() - self.cpu
