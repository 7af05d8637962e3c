"""Python's cyclic garbage collector kept off the runner's data in a dask worker.

Between tasks the runner's data lives as Python objects (a stage's exported lists, a shuffle piece
unpickled, a partition's groups), where Beam's own runners hold encoded bytes, which the collector
does not track. With the collector on, every 700 net container allocations start a collection of
the young objects, and the full collections that follow scan every live one again: the workers
spent a sixth to a quarter of their CPU in the collector (docs/scale_out.md §4).

So while a task of the runner runs the collector is off, and when the last running task of the
process ends, everything alive is frozen (`gc.freeze()`: moved where automatic collections do not
scan it; reference counting still frees it when dask lets a result go). Now and then a task's end
runs one full collection over everything instead (frozen objects included), so that a reference
cycle made by a task (an exception's traceback, say) is freed, not kept for ever: the next one is
due after FULL_COLLECTION_COST_SHARE's inverse times the last one's CPU time (at least
MIN_SECONDS_BETWEEN_FULL_COLLECTIONS of process CPU), so they cost the process about 2% of its CPU
whatever its heap holds.
"""
from __future__ import annotations

import contextlib
import gc
import threading
import time

FULL_COLLECTION_COST_SHARE = 0.02
MIN_SECONDS_BETWEEN_FULL_COLLECTIONS = 1.0

_LOCK = threading.Lock()
_running = 0
_disabled_here = False
_next_full_collection = 0.0  # process CPU seconds


@contextlib.contextmanager
def collection_paused():
    """The collector off while any task of this process is inside (worker threads may overlap)."""
    global _running, _disabled_here, _next_full_collection
    with _LOCK:
        if _running == 0 and gc.isenabled():
            gc.disable()
            _disabled_here = True
        _running += 1
    try:
        yield
    finally:
        with _LOCK:
            _running -= 1
            now = time.process_time()
            if now >= _next_full_collection:
                gc.unfreeze()
                gc.collect()
                spent = time.process_time() - now
                _next_full_collection = now + max(spent / FULL_COLLECTION_COST_SHARE, MIN_SECONDS_BETWEEN_FULL_COLLECTIONS)
            if _running == 0 and _disabled_here:
                gc.freeze()
                _disabled_here = False
                gc.enable()
