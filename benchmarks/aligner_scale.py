"""Word aligners at growing input: pairs per CPU-second and peak RSS, each in a fresh process.

    python benchmarks/aligner_scale.py [--lang de] [--sizes 100,400] [--aligners fast_align,eflomal,simalign]
                                       [--aligner_model DIR] [--max_batch_tokens 8192,0]

Real NTREX-128 pairs (`$XLU_SHARED_DATA/parallel/ntrex128`: en.txt and X.txt, line-aligned), the
first N lines, words split on white space. Each aligner aligns all N pairs in one `align` call, as
clism_pairs gives a shard to the statistical aligners; for simalign, each value of --max_batch_tokens
is a run (0: no bound, every sentence of the call in one padded forward pass, as the aligner did
before it sliced its input). Reported per run: CPU seconds of the process (imports and model loading
included, so the per-pair figure is the slope between two sizes), pairs per CPU-second between the
sizes, and peak RSS (ru_maxrss) at each size: flat means the aligner's memory does not grow with
its input.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("XLU_SHARED_DATA", REPO.parent / "shared" / "data"))

_RUN = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from corpora.clism.aligners import EflomalAligner, FastAlignAligner, SimAlignAligner
name, n, model, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
with open(sys.argv[5], encoding="utf-8") as f:
    src = [line.split() for _, line in zip(range(n), f)]
with open(sys.argv[6], encoding="utf-8") as f:
    tgt = [line.split() for _, line in zip(range(n), f)]
if name == "simalign":
    aligner = SimAlignAligner(model, "argmax", device="cpu", max_batch_tokens=max_tokens or 10**12)
else:
    aligner = {{"fast_align": FastAlignAligner, "eflomal": EflomalAligner}}[name]()
links = sum(len(a) for a in aligner.align(list(zip(src, tgt))))
usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({{"cpu": usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime,
                  "rss_mb": max(usage.ru_maxrss, children.ru_maxrss) / 1024, "links": links}}))
"""


def run(name: str, n: int, model: str, max_tokens: int, src: Path, tgt: Path) -> dict:
    # One thread, as on a Beam worker core; the CPU time is then the aligner's own.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _RUN.format(repo=str(REPO)), name, str(n), model, str(max_tokens),
                          str(src), str(tgt)], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"{name} on {n} pairs failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default="de")
    parser.add_argument("--sizes", default="100,400")
    parser.add_argument("--aligners", default="fast_align,eflomal,simalign")
    parser.add_argument("--aligner_model", default=None, help="simalign's encoder (a Hugging Face folder)")
    parser.add_argument("--max_batch_tokens", default="8192,0", help="simalign runs; 0 = one forward pass per call")
    args = parser.parse_args(argv)
    folder = SHARED / "parallel" / "ntrex128"
    src, tgt = folder / "en.txt", folder / f"{args.lang}.txt"
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = []
    for name in args.aligners.split(","):
        bounds = [int(b) for b in args.max_batch_tokens.split(",")] if name == "simalign" else [0]
        if name == "simalign" and not args.aligner_model:
            raise SystemExit("--aligner_model: the encoder folder (python -m training.convert_e5 DIR makes e5-small)")
        for bound in bounds:
            label = name if name != "simalign" else f"simalign max_batch_tokens={bound or 'none'}"
            results = [run(name, n, args.aligner_model or "-", bound, src, tgt) for n in sizes]
            runs.append((label, results))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"NTREX-128 en-{args.lang}, first {args.sizes} lines; one thread; load average {load} on {os.cpu_count()} cores")
    print(f"{'aligner':<36} " + " ".join(f"{f'cpu s @{n}':>10} {f'RSS MB @{n}':>11}" for n in sizes)
          + f" {'pairs/s (slope)':>16} links @{sizes[-1]}")
    for label, results in runs:
        slope = (sizes[-1] - sizes[0]) / max(results[-1]["cpu"] - results[0]["cpu"], 1e-9)
        cells = " ".join(f"{r['cpu']:>10.1f} {r['rss_mb']:>11.0f}" for r in results)
        print(f"{label:<36} {cells} {slope:>16.1f} {results[-1]['links']}")


if __name__ == "__main__":
    main()
