"""The first stage of wiki_mrc: dump files -> (lang, page) records, read by byte range in parallel when
a multistream dump has its index (Wikimedia's `-multistream-index.txt.bz2`), else one read a file.
Damaged regions and unreadable indexes go to the dead letter; the rest of the dump is still read."""
from __future__ import annotations

import logging
import os
import re
import sys
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from corpora.dumps import pages as dumps
from corpora.dumps import multistream
from corpora.dumps import siteinfo
from corpora.wiki.languages import WikiLanguage, wiki_language
from pipelines import input_identity
from pipelines import progress
from pipelines.beam_outputs import DEAD_LETTER, STATS, TallyingDoFn, dead_letter

PROGRESS = logging.getLogger("xlu.progress")


class DumpSpec(NamedTuple):
    lang: str
    path: str
    index_path: str | None
    namespaces: tuple = ()  # ((key, name), ...) from the dump's <siteinfo>, read by the job's plan()


def expected_index_name(path: str) -> str | None:
    """Wikipedia names the index of `X-multistream.xml.bz2` as `X-multistream-index.txt.bz2`, and that
    of a part of a large wiki's dump, `X-multistream3.xml-p151574p311329.bz2`, as
    `X-multistream-index3.txt-p151574p311329.bz2`."""
    if path.endswith("multistream.xml.bz2"):
        return path[: -len(".xml.bz2")] + "-index.txt.bz2"
    if part := _MULTISTREAM_PART_RE.search(path):
        return path[: part.start()] + "-multistream-index%s.txt-%s.bz2" % part.group("number", "pages")
    return None


def multistream_index_for(path: str) -> str | None:
    index = expected_index_name(path)
    return index if index and FileSystems.exists(index) else None


_MULTISTREAM_PART_RE = re.compile(r"-multistream(?P<number>\d+)\.xml-(?P<pages>p\d+p\d+)\.bz2$")
# A dump folder holds one dump in up to four forms: X.xml.bz2, X-multistream.xml.bz2, and both cut
# in parts (X1.xml-p1p41242.bz2, X-multistream1.xml-p1p41242.bz2, ...).
_PART_SUFFIX_RE = re.compile(r"\d+\.xml-p\d+p\d+\.bz2$")


def dump_form(path: str) -> tuple[str, str]:
    """(the dump a file holds, the form it holds it in): files of one dump in two forms hold the
    same pages twice, and every row built from them would be there twice."""
    name = path.rsplit("/", 1)[-1]
    multistream = "-multistream" in name
    part = bool(_PART_SUFFIX_RE.search(name))
    dump = _PART_SUFFIX_RE.sub(".xml.bz2", name.replace("-multistream", ""))
    return dump, ("multistream " if multistream else "") + ("parts" if part else "file")


def same_pages_twice(paths: list[str]) -> str | None:
    """Why `paths` (one language's dumps) would read pages twice, or None: a file given twice (by
    name), or one dump in two forms by name (a pattern such as "enwiki-2026-pages-articles*.bz2"
    matches all four)."""
    seen: dict[str, str] = {}
    forms: dict[str, dict[str, str]] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if name in seen:  # the same path twice, or a copy of the file in another folder
            return f"{path} is given twice" if seen[name] == path else f"{seen[name]} and {path} have one name, so hold one dump"
        seen[name] = path
        dump, form = dump_form(path)
        forms.setdefault(dump, {}).setdefault(form, path)
    for dump, by_form in sorted(forms.items()):
        if len(by_form) > 1:
            examples = " and ".join(p.rsplit("/", 1)[-1] for p in list(by_form.values())[:2])
            return f"{examples} hold the same dump ({dump}) in {len(by_form)} forms ({', '.join(sorted(by_form))})"
    return None


def repeated_dumps(by_lang: dict[str, list[str]]) -> str | None:
    """The one line that refuses dumps that would read pages twice, or None: a file given twice, one
    dump in two forms (by name, or by content: pipelines/input_identity.py), in one language or two."""
    for lang, paths in sorted(by_lang.items()):
        twice = same_pages_twice(paths)
        if twice:
            return (f"--dump {lang}=…: {twice}: every page and row would be there twice; give each dump once "
                    f"and in one form (e.g. only the multistream files)")
    repeat = input_identity.first_repeat(
        [(f"--dump {lang}={path}", path) for lang, paths in sorted(by_lang.items()) for path in paths])
    return input_identity.refusal("page", repeat) if repeat else None


def file_size(path: str) -> int:
    """Size in bytes; a local name with `[` or `*` in it is that file, not a pattern to match."""
    if "://" not in path:
        return os.path.getsize(path)
    return FileSystems.match([path])[0].metadata_list[0].size_in_bytes


class PlanReadsFn(TallyingDoFn):
    """A multistream dump becomes byte ranges that workers read in parallel; others one read.

    An index that cannot be read, or whose offsets do not point at bz2 stream starts inside the file
    (shifted, mid-stream, past the end), must not lose the dump: the file is then read
    as one sequential stream (a multistream file is a valid bz2 file), the index goes to the dead
    letter and the count `read/bad_multistream_index` gives the job's warning. On a local disk every
    offset is checked; elsewhere, where each check is a request, the offsets the reads start at, the
    only ones a read depends on (a range reads its streams one after another).
    """

    def __init__(self, streams_per_range: int):
        self.streams_per_range = streams_per_range

    def process(self, spec: DumpSpec):
        if spec.index_path is not None:
            try:
                ranges = self._checked_ranges(spec)
            except (ValueError, OSError, EOFError) as error:
                self.tally("read", "bad_multistream_index", spec.lang)
                yield dead_letter(spec.index_path, "index", "read", "bad_multistream_index",
                                  f"the dump was read sequentially: {error}")
            else:
                for start, end in ranges:
                    yield spec.lang, spec.path, start, end
                return
        yield spec.lang, spec.path, None, None

    def _checked_ranges(self, spec: DumpSpec) -> list[tuple[int, int | None]]:
        with FileSystems.open(spec.index_path, compression_type=CompressionTypes.UNCOMPRESSED) as index:
            offsets = multistream.read_index_offsets(index)
        size = file_size(spec.path)
        ranges = multistream.stream_ranges(offsets, size, self.streams_per_range)
        checked = offsets if "://" not in spec.path else [start for start, _ in ranges]
        with FileSystems.open(spec.path, compression_type=CompressionTypes.UNCOMPRESSED) as dump:
            problem = multistream.index_mismatch(dump, sorted({0, *checked}), size)
        if problem:
            raise ValueError(f"the index does not match the dump: {problem}")
        return ranges


def siteinfo_namespaces(path: str) -> tuple:
    """The namespace names a dump's <siteinfo> declares (a few KB at the head of the file); () when
    it has none (a WikiExtractor-era excerpt, a damaged head), and the job says so."""
    try:
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            info = siteinfo.read_siteinfo_from_file(f, dumps.compression_for(path))
    except Exception as error:  # a head we cannot read costs the local names, never the job
        print(f"warning: {path}: cannot read <siteinfo> ({error}); using the language table's namespace names",
              file=sys.stderr)
        return ()
    if info is None or not info.namespaces:
        # A `warning:` line as the job's others are, not logging's "WARNING:root:".
        print(f"warning: {path}: no <siteinfo> namespaces; using the language table's names", file=sys.stderr)
        return ()
    return tuple(sorted(info.namespaces.items()))


def language_profiles(specs: list[DumpSpec]) -> dict[str, WikiLanguage]:
    """Each language's profile with the namespace names its dumps' <siteinfo> declared."""
    profiles: dict[str, WikiLanguage] = {}
    for spec in specs:
        profile = profiles.get(spec.lang) or wiki_language(spec.lang)
        if spec.namespaces:
            profile = profile.with_siteinfo(dict(spec.namespaces))
        profiles[spec.lang] = profile
    return profiles


class ReadPagesFn(TallyingDoFn):
    """Pages of one file or byte range, counted into the job's progress meter (pipelines/progress.py),
    or with a progress line every `progress_every` pages when progress is off."""

    def __init__(self, max_page_bytes: int, progress_every: int = 10_000, progress_mode=None,
                 sizes: dict | None = None):
        self.max_page_bytes, self.progress_every = max_page_bytes, progress_every
        self.progress_mode, self.sizes = progress_mode, sizes or {}

    def process(self, read):
        lang, path, start, end = read
        source = path if start is None else f"{path}:{start}-{end}"
        pages = 0
        meter = progress.meter(self.progress_mode, "read_dumps", "reading dumps", "pages",
                               sum(self.sizes.values()) or None, "B")
        read_end = end if end is not None else self.sizes.get(path)
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f, \
                progress.ByteTracker(meter, f, start or 0, read_end) as bytes_read:
            if start is None:
                records = dumps.iter_pages_from_file(f, path, dumps.compression_for(path), self.max_page_bytes)
            else:
                records = dumps.read_stream_range(f, start, end, source, self.max_page_bytes)
            for record in records:
                if isinstance(record, dumps.BadRecord):
                    self.tally("read", record.reason, lang)
                    yield dead_letter(record.source, record.record_id, record.stage, record.reason, record.excerpt)
                    continue
                pages += 1
                bytes_read.page()
                if pages % self.progress_every == 0 and meter is None:
                    PROGRESS.info("%s: %s pages read from %s", lang, f"{pages:,}", source)
                self.tally("pages", "read", lang)
                yield lang, record


class ReadDumps(beam.PTransform):
    def __init__(self, specs: list[DumpSpec], streams_per_range: int, max_page_bytes: int, progress_mode=None):
        super().__init__()
        self.specs, self.streams_per_range, self.max_page_bytes = specs, streams_per_range, max_page_bytes
        self.progress_mode = progress_mode

    def expand(self, pbegin):
        planned = (
            pbegin
            | "Dumps" >> beam.Create(self.specs)
            | "PlanByteRanges" >> beam.ParDo(PlanReadsFn(self.streams_per_range)).with_outputs(
                STATS, DEAD_LETTER, main="reads")
        )
        read = (
            planned.reads
            # Spread the ranges over workers; without it a runner may read them all in one bundle.
            | "SpreadRanges" >> beam.Reshuffle()
            | "ReadPages" >> beam.ParDo(ReadPagesFn(self.max_page_bytes, progress_mode=self.progress_mode,
                                                    sizes=dump_sizes(self.specs, self.progress_mode)))
            .with_outputs(STATS, DEAD_LETTER, main="pages")
        )
        dead = (planned[DEAD_LETTER], read[DEAD_LETTER]) | "ReadDeadLetters" >> beam.Flatten()
        stats = (planned[STATS], read[STATS]) | "ReadStats" >> beam.Flatten()
        return {"pages": read.pages, STATS: stats, DEAD_LETTER: dead}


def dump_sizes(specs: list[DumpSpec], progress_mode) -> dict[str, int]:
    """Each dump's size in bytes: the progress bar's total (nothing to look up when it is off)."""
    if progress_mode is None or progress_mode.kind == progress.OFF:
        return {}
    # Local dumps only: on a cloud runner progress is Beam's counters, and a lookup here is a request
    # made while the job is built (a dry run with no credentials would wait on it).
    local = [s.path for s in specs if "://" not in s.path]
    return {m.path: m.size_in_bytes for result in (FileSystems.match(local) if local else [])
            for m in result.metadata_list}
