"""Throughput and memory of the whole wiki_mrc job against two baselines measured in the same run.

    python benchmarks/wiki_mrc.py [--dump PATH.xml.bz2] [--scales 1,4] [--forms plain,multistream]
                                  [--min_mentions_en 10] [--repeat 3] [--shared_links]
                                  [--compare_with /tmp/checkout-of-another-commit ...] [--keep DIR]

For each scale k the dump is repeated k times (benchmarks/scaled_dumps.py: copies get new page ids
and titles, and their links, redirects and template calls are renamed with the titles they point
to, so each copy is a part of the wiki with its own link graph, as the parts of a real dump are),
in each form asked for: `plain` one bz2 stream, `multistream` the excerpt re-packed as Wikimedia
publishes it (100-page bz2 streams and the `-index.txt.bz2`; the job reads it by byte ranges). Then
these run in fresh processes on one core, on the same file:
  floor        bz2 decompression + page iteration alone (corpora.dumps.pages), the least any job can
               do; on a multistream dump by the byte ranges the job reads;
  wikiextractor the reference pipeline's first stage, `WikiExtractor --json --links --processes 1`;
  wiki_mrc     the whole job, `python -m pipelines.wiki_mrc --direct_num_workers 1`;
  DIR's name   with --compare_with DIR (repeatable): the job as that checkout has it (run from DIR).
  memoised_parser  with --parser_share: the job with `parse_wikitext` memoised by page text. The k
               copies are the same pages, so it parses each page once instead of k times (same
               output); the difference to the job is (k-1)/k of what parsing costs inside the job,
               and the line after the table gives that share and the rest of the job against
               WikiExtractor (what the job would cost with a parser of zero cost). The copies must
               have the same text for that: --parser_share implies --shared_links (copies whose
               links all point at copy 0's pages, the input this benchmark had before).
Reported: articles/s and wikitext MB/s per CPU-second, peak RSS, and the job's ratios to each; with
two scales or more, the steady state of each run: articles per CPU-second between two scales (the
extra articles over the extra CPU time, so start-up cancels out), for each pair of consecutive scales.
With --repeat N the runs are interleaved N times (floor, wikiextractor, job, others, floor, ...) and
the least CPU time of each is reported: on a shared machine, load only ever adds time, so the
minimum is the best estimate of each one's own cost, and interleaving spreads any load over all.
With --keep DIR the scaled dumps are kept in DIR and reused by a later run (building the 128x dump
compresses ~0.8 GB of XML).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "benchmarks"))

from corpora.dumps.pages import RawPage, iter_pages_from_file  # noqa: E402
import scaled_dumps  # noqa: E402  (benchmarks/scaled_dumps.py)

DEFAULT_DUMP = REPO.parent / "shared" / "data" / "wikipedia" / "enwiki-excerpt.xml.bz2"

# Runs a command and prints its own children's CPU time and peak RSS as JSON.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
if proc.returncode:
    sys.stderr.write(proc.stderr.decode(errors="replace")[-2000:])
print(json.dumps({"rc": proc.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}))
"""

# wiki_mrc with parse_wikitext memoised by (page text, language), for --parser_share.
_MEMOISED_PARSER_JOB = """
import sys
sys.path.insert(0, {repo!r})
from pipelines import wiki_mrc, wiki_mrc_transforms
parse, parsed = wiki_mrc_transforms.parse_wikitext, {{}}
def memoised(text, language, title=""):
    key = (text, id(language))  # not the title: copies are renamed ({{{{PAGENAME}}}} aside, same parse)
    if key not in parsed:
        parsed[key] = parse(text, language, title)
    return parsed[key]
wiki_mrc_transforms.parse_wikitext = memoised
wiki_mrc.run(sys.argv[1:])
"""

_FLOOR = """
import sys
sys.path.insert(0, {repo!r})
from corpora.dumps.pages import iter_pages_from_file
with open(sys.argv[1], "rb") as f:
    n = sum(1 for _ in iter_pages_from_file(f, sys.argv[1], "bz2"))
"""

# The floor of a multistream dump: its byte ranges as the job plans and reads them.
_FLOOR_MULTISTREAM = """
import os, sys
sys.path.insert(0, {repo!r})
from corpora.dumps import multistream
from corpora.dumps.pages import read_stream_range
with open(sys.argv[1][: -len(".xml.bz2")] + "-index.txt.bz2", "rb") as index:  # Wikimedia's name, no Beam import
    offsets = multistream.read_index_offsets(index)
ranges = multistream.stream_ranges(offsets, os.path.getsize(sys.argv[1]), {streams_per_range})
with open(sys.argv[1], "rb") as f:
    n = sum(1 for start, end in ranges for _ in read_stream_range(f, start, end, sys.argv[1]))
"""
STREAMS_PER_RANGE = 20  # the job's default (--streams_per_range)


def measure(cmd: list[str], cwd: Path | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True, cwd=cwd)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["rc"]:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{out.stderr}")
    return result


def repeat_dump(src: Path, copies: int, dest: Path, multistream: bool = False,
                shared_links: bool = False) -> scaled_dumps.Written:
    """The dump k times over (benchmarks/scaled_dumps.py), plain or multistream."""
    if multistream:
        return scaled_dumps.write_multistream(src, copies, dest, shared_links)
    return scaled_dumps.write_plain(src, copies, dest, shared_links)


def scaled_dump(src: Path, copies: int, form: str, folder: Path, shared_links: bool) -> Path:
    """The dump of this scale and form in `folder`, built unless a finished one is there."""
    links = "shared-links-" if shared_links else ""
    name = f"enwiki-{links}x{copies}-pages-articles" + ("-multistream.xml.bz2" if form == "multistream" else ".xml.bz2")
    dump, done = folder / name, folder / (name + ".done")
    if not done.exists():
        repeat_dump(src, copies, dump, form == "multistream", shared_links)
        done.write_text("")
    return dump


def same_files(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and \
        all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def dump_size(path: Path) -> tuple[int, int, float]:
    pages = articles = chars = 0
    with open(path, "rb") as f:
        for page in iter_pages_from_file(f, str(path), "bz2"):
            if isinstance(page, RawPage):
                pages += 1
                if page.ns == 0 and page.redirect is None:
                    articles += 1
                    chars += len(page.text.encode("utf-8"))
    return pages, articles, chars / 1e6


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP, help="an English pages-articles .xml.bz2")
    parser.add_argument("--scales", default="1,4", help="comma-separated repeat factors (e.g. 16,64,128)")
    parser.add_argument("--forms", default="multistream", help="comma-separated: plain, multistream")
    parser.add_argument("--min_mentions_en", default="10")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds; the least CPU time of each run is kept")
    parser.add_argument("--compare_with", type=Path, action="append", default=[],
                        help="a checkout of another commit whose job runs on the same input (repeatable)")
    parser.add_argument("--parser_share", action="store_true",
                        help="also run the job with the parser memoised, and print what parsing costs inside it")
    parser.add_argument("--shared_links", action="store_true",
                        help="copies whose links point at copy 0's pages (implied by --parser_share)")
    parser.add_argument("--keep", type=Path, help="build the scaled dumps here and reuse them")
    args = parser.parse_args(argv)
    args.shared_links = args.shared_links or args.parser_share
    args.scales = [int(k) for k in args.scales.split(",")]
    args.forms = args.forms.split(",")
    if set(args.forms) - {"plain", "multistream"}:
        parser.error(f"--forms: plain and/or multistream, not {args.forms}")
    return args


def runs_for(args, k: int, form: str, dump: Path, tmp: Path) -> dict[str, tuple[list[str], Path | None]]:
    job_args = ["-m", "pipelines.wiki_mrc", "--runner", "DirectRunner", "--direct_num_workers", "1",
                "--dump", f"en={dump}", "--min_mentions_en", args.min_mentions_en]
    floor = (_FLOOR_MULTISTREAM.format(repo=str(REPO), streams_per_range=STREAMS_PER_RANGE)
             if form == "multistream" else _FLOOR.format(repo=str(REPO)))
    tag = f"{form}{k}"
    runs = {
        "floor": ([sys.executable, "-c", floor, str(dump)], None),
        "wikiextractor": ([sys.executable, "-m", "wikiextractor.WikiExtractor", "--json", "--links",
                           "--processes", "1", "-q", "-o", str(tmp / f"we-{tag}"), str(dump)], None),
        "wiki_mrc": ([sys.executable, *job_args, "--output", str(tmp / f"job-{tag}")], REPO),
    }
    for n, checkout in enumerate(args.compare_with):
        runs[checkout.name] = ([sys.executable, *job_args, "--output", str(tmp / f"other{n}-{tag}")], checkout)
    if args.parser_share and k > 1:
        runs["memoised_parser"] = ([sys.executable, "-c", _MEMOISED_PARSER_JOB.format(repo=str(REPO)), *job_args[2:],
                                    "--output", str(tmp / f"memo-{tag}")], REPO)
    return runs


def steady_state(rows: list) -> list[str]:
    """Articles per CPU-second of each run between consecutive scales of one form: start-up cancels."""
    lines = []
    for form in dict.fromkeys(r[1] for r in rows):
        mine = [r for r in rows if r[1] == form]
        for (k1, _, _, a1, _, best1, _), (k2, _, _, a2, _, best2, _) in zip(mine, mine[1:]):
            extra_cpu = {name: best2[name]["cpu"] - best1[name]["cpu"] for name in best2 if name in best1}
            if min(extra_cpu.values()) <= 0:  # noise larger than the step: no slope to report
                lines.append(f"steady state {form} {k1}x->{k2}x: not measurable (a run's CPU time did not grow)")
                continue
            rates = {name: (a2 - a1) / cpu for name, cpu in extra_cpu.items()}
            job = rates["wiki_mrc"]
            shown = "  ".join(f"{name} {rate:.0f}" + ("" if name == "wiki_mrc" else f" (job/run CPU {job and rate / job:.2f}x)")
                              for name, rate in rates.items())
            lines.append(f"steady state {form} {k1}x->{k2}x, articles per CPU-second: {shown}")
    return lines


def main(argv=None) -> None:
    args = parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = args.keep or tmp
        folder.mkdir(parents=True, exist_ok=True)
        for form in args.forms:
            for k in args.scales:
                dump = scaled_dump(args.dump, k, form, folder, args.shared_links)
                pages, articles, mb = dump_size(dump)
                runs = runs_for(args, k, form, dump, tmp)
                results: dict[str, list[dict]] = {name: [] for name in runs}
                for _ in range(args.repeat):
                    for name, (cmd, cwd) in runs.items():
                        results[name].append(measure(cmd, cwd))
                if "memoised_parser" in runs and not same_files(tmp / f"job-{form}{k}" / "data", tmp / f"memo-{form}{k}" / "data"):
                    raise SystemExit(f"{k}x: the job with the memoised parser wrote other rows than the job")
                best = {name: min(rs, key=lambda r: r["cpu"]) for name, rs in results.items()}
                rows.append((k, form, pages, articles, mb, best, results))
        if len(args.forms) > 1:
            for k in args.scales:
                jobs = [tmp / f"job-{form}{k}" for form in args.forms]
                same = all(same_files(jobs[0] / part, other / part) for other in jobs[1:] for part in ("data", "dead_letter"))
                print(f"{k}x: the job's rows and dead letters from {' and '.join(args.forms)}: "
                      f"{'identical bytes' if same else 'DIFFERENT'}")
    load = os.getloadavg()
    links = "copies share copy 0's link targets" if args.shared_links else "each copy with its own link graph"
    print(f"dump {args.dump.name} ({links}); per CPU-second (user+sys of the process tree, least of {args.repeat}); "
          f"RSS = peak of the process; load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"{'scale':>5} {'form':<11} {'pages':>6} {'articles':>8} {'MB':>6} | {'run':<15} {'cpu s':>6} {'wall s':>6} "
          f"{'art/s':>7} {'MB/s':>6} {'RSS MB':>7} | {'job/run':>7} | every run's cpu s")
    for k, form, pages, articles, mb, best, results in rows:
        job = best["wiki_mrc"]
        for name, r in best.items():
            ratio = job["cpu"] / r["cpu"]
            every = " ".join(f"{x['cpu']:.2f}" for x in results[name])
            print(f"{k:>5} {form:<11} {pages:>6} {articles:>8} {mb:>6.1f} | {name:<15} {r['cpu']:>6.2f} {r['wall']:>6.2f} "
                  f"{articles / r['cpu']:>7.1f} {mb / r['cpu']:>6.2f} {r['rss_mb']:>7.0f} | {ratio:>6.2f}x | {every}")
    for line in steady_state(rows):
        print(line)
    for k, form, _, _, _, best, _ in rows:
        if "memoised_parser" in best:
            job, memo, reference = best["wiki_mrc"]["cpu"], best["memoised_parser"]["cpu"], best["wikiextractor"]["cpu"]
            parsing = (job - memo) * k / (k - 1)
            print(f"{k}x: parsing ~{parsing:.2f} CPU-s, {parsing / job:.0%} of the job; the rest of the job "
                  f"{job - parsing:.2f} s = {(job - parsing) / reference:.2f}x WikiExtractor")
    for form in args.forms:
        mine = [r for r in rows if r[1] == form]
        if len(mine) > 1:
            first, last = mine[0], mine[-1]
            print(f"peak RSS of wiki_mrc at {last[0]}x vs {first[0]}x {form} input: "
                  f"{last[5]['wiki_mrc']['rss_mb'] / first[5]['wiki_mrc']['rss_mb']:.2f}x")


if __name__ == "__main__":
    main()
