"""The summary of pipelines.dask.runner's --dask_trace_dir files (`benchmarks/wiki_mrc_memory.py
--dask_trace` prints it after a traced run): per stage, the largest task output and group; per
worker process, the tasks that raised its peak RSS (VmHWM) most, and how many parsed partitions it
held for consumers that had not run yet (what the task order decides).

    python benchmarks/dask_trace_summary.py WORK/trace-dask-disk-16
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def read_trace(directory: Path) -> list[dict]:
    records = []
    for path in sorted(directory.glob("trace-*.jsonl")):
        records.extend(json.loads(line) for line in path.read_text().splitlines())
    return records


PARSE = "BuildMrcExamples/ParsePages/ParDo(ParsePagesFn)"
PARSE_CONSUMERS = ("BuildMrcExamples/ArticleTitles", "BuildMrcExamples/LinksByTarget", "BuildMrcExamples/TextsByPage")


def waiting_partitions(records: list[dict], producer: str, consumers: tuple[str, ...]) -> dict[int, int]:
    """Per process that ran `producer`'s bundles: the most of its output partitions finished at one
    time whose consumer bundles (same partition index) had not all finished: what the workers held."""
    done = {(r["label"], r["index"]): r["start"] + r["seconds"] for r in records if r["kind"] == "bundle"}
    events: list = []
    for r in records:
        if r["kind"] == "bundle" and r["label"] == producer:
            released = max(done.get((c, r["index"]), float("inf")) for c in consumers)
            events += [(r["start"] + r["seconds"], 1, r["pid"]), (released, -1, r["pid"])]
    held: dict = {}
    most: dict = {}
    for _, change, pid in sorted(events, key=lambda e: (e[0], e[1])):
        held[pid] = held.get(pid, 0) + change
        most[pid] = max(most.get(pid, 0), held[pid])
    return most


def print_trace_summary(directory: Path, stream=sys.stdout, top: int = 12) -> None:
    """The runner's --dask_trace_dir lines: per stage, the largest task output and group; per
    worker process, the tasks that raised its peak RSS (VmHWM) most."""
    records = read_trace(directory)
    print(f"\ntrace {directory}: {len(records)} tasks", file=stream)
    stages: dict = {}
    for r in records:
        stage = stages.setdefault((r["kind"], r["label"]), {"tasks": 0, "in": 0, "bytes": 0, "max_bytes": 0,
                                                            "largest_group": None, "max_rss_up": 0.0})
        stage["tasks"] += 1
        stage["in"] = max(stage["in"], r.get("in") or 0)
        size = r.get("bytes") or sum(b for _, b in (r.get("out") or {}).values())
        stage["bytes"] += max(size, 0)
        stage["max_bytes"] = max(stage["max_bytes"], size)
        group = r.get("largest_group")
        if group and (stage["largest_group"] is None or group[1] > stage["largest_group"][1]):
            stage["largest_group"] = group
        stage["max_rss_up"] = max(stage["max_rss_up"], (r["rss_after"] or 0) - (r["rss_before"] or 0))
    print(f"{'kind':<7}{'stage':<58}{'tasks':>6}{'max in':>9}{'total MB':>9}{'max MB':>8}{'max +RSS':>9}  largest group "
          "(key, values, MB)", file=stream)
    for (kind, label), st in sorted(stages.items(), key=lambda kv: -kv[1]["max_bytes"]):
        group = st["largest_group"]
        group_text = f"{group[0][:40]}, {group[1]:,}, {group[2] / 1e6:.2f}" if group else ""
        print(f"{kind:<7}{label[-57:]:<58}{st['tasks']:>6}{st['in']:>9,}{st['bytes'] / 1e6:>9.1f}"
              f"{st['max_bytes'] / 1e6:>8.2f}{st['max_rss_up']:>9.0f}  {group_text}", file=stream)
    if any(r["label"] == PARSE for r in records):  # --dask_fusion off: ParsePages is a task of its own
        waiting = waiting_partitions(records, PARSE, PARSE_CONSUMERS)
        print(f"\nparsed partitions held at once for consumers that had not run (by worker process): {waiting}",
              file=stream)
    for pid in sorted({r["pid"] for r in records}):
        mine = sorted((r for r in records if r["pid"] == pid), key=lambda r: r["start"])
        fullest = max(mine, key=lambda r: r.get("managed_bytes", 0))
        print(f"\nprocess {pid}: dask held up to {fullest.get('managed_bytes', 0) / 1e6:.0f} MB of results "
              f"({fullest.get('held_keys', 0)} keys), during {fullest['kind']} {fullest['label'][-50:]}", file=stream)
        raised = sorted(mine, key=lambda r: (r["hwm_after"] or 0) - (r["hwm_before"] or 0), reverse=True)[:top]
        print(f"\nprocess {pid}: {len(mine)} tasks, VmHWM {mine[-1]['hwm_after']:.0f} MB, last RSS "
              f"{mine[-1]['rss_after']:.0f} MB; the tasks that raised VmHWM most (MB: before -> after):", file=stream)
        for r in raised:
            print(f"  +{r['hwm_after'] - r['hwm_before']:>5.0f}  {r['hwm_before']:>6.0f} -> {r['hwm_after']:>6.0f}  "
                  f"rss {r['rss_before']:>6.0f} -> {r['rss_after']:>6.0f}  managed {r.get('managed_bytes', 0) / 1e6:>6.1f} MB "
                  f"in {r.get('held_keys', 0)} keys  {r['kind']} {r['label'][-50:]} [{r['index']}]", file=stream)
    stream.flush()


if __name__ == "__main__":
    print_trace_summary(Path(sys.argv[1]))
