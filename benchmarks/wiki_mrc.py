"""Throughput and memory of the whole wiki_mrc job against two baselines measured in the same run.

    python benchmarks/wiki_mrc.py [--dump PATH.xml.bz2] [--scales 1,4] [--min_mentions_en 10]
                                  [--repeat 3] [--compare_with /tmp/checkout-of-another-commit ...]

For each scale k the dump is repeated k times (copies get new page ids and titles, so they are new
articles whose links still point at the original entities) and three things run in fresh processes
on one core:
  floor        bz2 decompression + page iteration alone (corpora.dumps.pages), the least any job can do;
  wikiextractor the reference pipeline's first stage, `WikiExtractor --json --links --processes 1`;
  wiki_mrc     the whole job, `python -m pipelines.wiki_mrc --direct_num_workers 1`;
  DIR's name   with --compare_with DIR (repeatable): the job as that checkout has it (run from DIR).
  memoised_parser  with --parser_share: the job with `parse_wikitext` memoised by page text. The k
               copies are the same pages, so it parses each page once instead of k times (same
               output); the difference to the job is (k-1)/k of what parsing costs inside the job,
               and the line after the table gives that share and the rest of the job against
               WikiExtractor (what the job would cost with a parser of zero cost).
Reported: articles/s and wikitext MB/s per CPU-second, peak RSS, and the job's ratios to each.
With --repeat N the runs are interleaved N times (floor, wikiextractor, job, others, floor, ...) and
the least CPU time of each is reported: on a shared machine, load only ever adds time, so the
minimum is the best estimate of each one's own cost, and interleaving spreads any load over all.
"""
from __future__ import annotations

import argparse
import bz2
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpora.dumps.pages import RawPage, iter_pages_from_file  # noqa: E402
from corpora.dumps.multistream import split_dump_pages  # noqa: E402

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


def measure(cmd: list[str], cwd: Path | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True, cwd=cwd)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["rc"]:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{out.stderr}")
    return result


def repeat_dump(src: Path, copies: int, dest: Path) -> None:
    """The dump k times over, copies renamed and renumbered so that they are distinct pages."""
    with bz2.open(src, "rb") as f:
        header, pages, footer = split_dump_pages(iter(lambda: f.read(1 << 20), b""))
    out = [header]
    for copy in range(copies):
        for page in pages:
            if copy:
                page = re.sub(rb"<title>(.*?)</title>", lambda m: b"<title>" + m.group(1) + b" %d</title>" % copy, page, count=1)
                page = re.sub(rb"<id>(\d+)</id>", lambda m: b"<id>%d</id>" % (int(m.group(1)) + copy * 100_000_000), page, count=1)
            out.append(page)
    out.append(footer)
    dest.write_bytes(bz2.compress(b"".join(out), 9))


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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP, help="an English pages-articles .xml.bz2")
    parser.add_argument("--scales", default="1,4", help="comma-separated repeat factors")
    parser.add_argument("--min_mentions_en", default="10")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds; the least CPU time of each run is kept")
    parser.add_argument("--compare_with", type=Path, action="append", default=[],
                        help="a checkout of another commit whose job runs on the same input (repeatable)")
    parser.add_argument("--parser_share", action="store_true",
                        help="also run the job with the parser memoised, and print what parsing costs inside it")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for k in (int(s) for s in args.scales.split(",")):
            dump = tmp / f"x{k}-pages-articles.xml.bz2"
            repeat_dump(args.dump, k, dump)
            pages, articles, mb = dump_size(dump)
            job_args = ["-m", "pipelines.wiki_mrc", "--runner", "DirectRunner", "--direct_num_workers", "1",
                        "--dump", f"en={dump}", "--min_mentions_en", args.min_mentions_en]
            runs = {
                "floor": ([sys.executable, "-c", _FLOOR.format(repo=str(REPO)), str(dump)], None),
                "wikiextractor": ([sys.executable, "-m", "wikiextractor.WikiExtractor", "--json", "--links",
                                   "--processes", "1", "-q", "-o", str(tmp / f"we{k}"), str(dump)], None),
                "wiki_mrc": ([sys.executable, *job_args, "--output", str(tmp / f"job{k}")], REPO),
            }
            for n, checkout in enumerate(args.compare_with):
                runs[checkout.name] = ([sys.executable, *job_args, "--output", str(tmp / f"other{n}-{k}")], checkout)
            if args.parser_share and k > 1:
                runs["memoised_parser"] = ([sys.executable, "-c", _MEMOISED_PARSER_JOB.format(repo=str(REPO)), *job_args[2:],
                                            "--output", str(tmp / f"memo{k}")], REPO)
            results: dict[str, list[dict]] = {name: [] for name in runs}
            for _ in range(args.repeat):
                for name, (cmd, cwd) in runs.items():
                    results[name].append(measure(cmd, cwd))
            if "memoised_parser" in runs and not same_files(tmp / f"job{k}" / "data", tmp / f"memo{k}" / "data"):
                raise SystemExit(f"{k}x: the job with the memoised parser wrote other rows than the job")
            best = {name: min(rs, key=lambda r: r["cpu"]) for name, rs in results.items()}
            rows.append((k, pages, articles, mb, best, results))
    print(f"dump {args.dump.name}; per CPU-second (user+sys of the process tree, least of {args.repeat}); RSS = peak of the process")
    print(f"{'scale':>5} {'pages':>6} {'articles':>8} {'MB':>6} | {'run':<15} {'cpu s':>6} {'wall s':>6} "
          f"{'art/s':>7} {'MB/s':>6} {'RSS MB':>7} | {'job/run':>7} | every run's cpu s")
    for k, pages, articles, mb, best, results in rows:
        job = best["wiki_mrc"]
        for name, r in best.items():
            ratio = job["cpu"] / r["cpu"]
            every = " ".join(f"{x['cpu']:.2f}" for x in results[name])
            print(f"{k:>5} {pages:>6} {articles:>8} {mb:>6.1f} | {name:<15} {r['cpu']:>6.2f} {r['wall']:>6.2f} "
                  f"{articles / r['cpu']:>7.1f} {mb / r['cpu']:>6.2f} {r['rss_mb']:>7.0f} | {ratio:>6.2f}x | {every}")
    for k, _, _, _, best, _ in rows:
        if "memoised_parser" in best:
            job, memo, reference = best["wiki_mrc"]["cpu"], best["memoised_parser"]["cpu"], best["wikiextractor"]["cpu"]
            parsing = (job - memo) * k / (k - 1)
            print(f"{k}x: parsing ~{parsing:.2f} CPU-s, {parsing / job:.0%} of the job; the rest of the job "
                  f"{job - parsing:.2f} s = {(job - parsing) / reference:.2f}x WikiExtractor")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(f"peak RSS of wiki_mrc at {last[0]}x vs {first[0]}x input: "
              f"{last[4]['wiki_mrc']['rss_mb'] / first[4]['wiki_mrc']['rss_mb']:.2f}x")


if __name__ == "__main__":
    main()
