"""--dask_trace_dir (debug): one JSON line per dask task about what it did, for finding where a
worker's memory goes.

Every task appends to `DIR/trace-<pid>.jsonl`: its kind (bundle, shuffle write/read, group, side
input), Beam label and partition, elements in and out, pickled bytes per output, the largest group
of a GroupByKey, the process's RSS and VmHWM before and after, and what dask held in the worker's
memory at the end. `benchmarks/wiki_mrc_memory.py --dask_trace` summarises the files. Pickling
every output costs CPU: traced runs are not for timings.
"""
from __future__ import annotations

import json
import os
import pickle
import time


def _proc_status_mb() -> dict:
    fields = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    fields[line[:5]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return fields


def _pickled_size(value) -> int:
    try:
        return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # a value only cloudpickle takes: not measured
        return -1


def _describe(kind: str, args, out) -> dict:
    """What a task received and returned, by kind of task (debug only: pickling costs time)."""
    if kind == "bundle":  # a stage's task: one list per PCollection read outside the stage
        items = args[0]
        return {"in": len(items) if hasattr(items, "__len__") else None,
                "out": {str(position): [len(values), _pickled_size(values)] for position, values in enumerate(out)}}
    if kind == "write":
        items, (_, offsets) = args[0], out
        pieces = [b - a for a, b in zip(offsets, offsets[1:])]
        return {"in": len(items) if hasattr(items, "__len__") else None, "bytes": offsets[-1],
                "largest_piece": max(pieces, default=0)}
    if kind == "group":
        largest = max(out, key=lambda kv: len(kv[1]), default=None)
        return {"groups": len(out), "values": sum(len(v) for _, v in out), "bytes": _pickled_size(out),
                "largest_group": None if largest is None else
                [repr(largest[0])[:80], len(largest[1]), _pickled_size(largest)]}
    return {"out": len(out) if hasattr(out, "__len__") else None, "bytes": _pickled_size(out)}


class TracedTask:
    """--dask_trace_dir: runs a task and appends one JSON line about it to `trace-<pid>.jsonl`."""

    def __init__(self, func, kind: str, label: str, index, directory: str):
        self.func, self.kind, self.label, self.index, self.directory = func, kind, label, index, directory

    def __call__(self, *args):
        before, start, cpu = _proc_status_mb(), time.time(), time.process_time()
        out = self.func(*args)
        after, end, cpu_end = _proc_status_mb(), time.time(), time.process_time()
        record = {"kind": self.kind, "label": self.label, "index": self.index, "pid": os.getpid(),
                  "start": start, "seconds": end - start, "cpu": cpu_end - cpu,
                  "rss_before": before.get("VmRSS"), "rss_after": after.get("VmRSS"),
                  "hwm_before": before.get("VmHWM"), "hwm_after": after.get("VmHWM"),
                  **_describe(self.kind, args, out)}
        try:
            from distributed import get_worker
            worker = get_worker()
            record["worker"], record["managed_bytes"], record["held_keys"] = worker.address, worker.state.nbytes, len(worker.data)
            held: dict = {}
            for key in list(worker.data):
                task = worker.state.tasks.get(key)
                name = key[0] if isinstance(key, tuple) else key
                held[name] = held.get(name, 0) + (task.nbytes or 0 if task is not None else 0)
            record["held"] = sorted(held.items(), key=lambda kv: -kv[1])[:4]
        except Exception:  # not in a worker (dask's local scheduler)
            pass
        with open(os.path.join(self.directory, f"trace-{os.getpid()}.jsonl"), "a") as f:
            f.write(json.dumps(record, default=str) + "\n")
        return out


def traced(func, kind: str, label: str, index, directory: str | None):
    return func if directory is None else TracedTask(func, kind, label, index, directory)


