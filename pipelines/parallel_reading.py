"""Reading a parallel source's files as records, for the jobs that read bitext (clism_pairs,
xy_corpus): their readers and their checks before a run open, choose and close the files alike."""
from __future__ import annotations

import itertools

from apache_beam.io.filesystems import FileSystems

from corpora import bitext


def read_pair_records(source: bitext.PairSource, name: str, max_words: int):
    """Every record of a parallel source in file order, the first column's language first:
    ParallelPair or BadLine. The files are closed when the records run out or the generator is closed."""
    handles = [FileSystems.open(p) for p in source.paths]  # compression from the extension
    try:
        lines = [iter(h.readline, b"") for h in handles]
        if len(lines) == 2:
            first, second = lines if source.english_first else lines[::-1]
            in_order = bitext.PairSource(source.tgt_lang, source.paths, True)
            yield from bitext.read_two_files(first, second, in_order, name, max_words)
        else:
            yield from bitext.read_single_file(lines[0], source, name, max_words)
    finally:
        for h in handles:
            h.close()


def first_pairs(source: bitext.PairSource, n: int) -> list[bitext.ParallelPair]:
    """The first n well-formed pairs of a source, read as the jobs read them."""
    records = read_pair_records(source, "check", max_words=10**9)
    try:
        return list(itertools.islice((r for r in records if isinstance(r, bitext.ParallelPair)), n))
    finally:
        records.close()
