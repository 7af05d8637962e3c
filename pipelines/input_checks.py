"""Checks of a job's inputs before any work starts: each misconfiguration fails fast with one line
(UsageError) that says what to fix, instead of a worker traceback after hours of work."""
from __future__ import annotations

import difflib
import os
from collections.abc import Callable

from apache_beam.io.filesystems import FileSystems


class UsageError(SystemExit):
    """Fatal misconfiguration: one line on stderr that says what to fix, exit status 1 (SystemExit with a message)."""

    def __init__(self, message: str):
        super().__init__(f"error: {message}")


def parse_lang_paths(values: list[str] | None, flag: str, known_langs,
                     skip_in_patterns: Callable[[str], bool] | None = None) -> dict[str, list[str]]:
    """`--dump en=/x.bz2 --dump en=/y.bz2` -> {'en': ['/x.bz2', '/y.bz2']}, validated.

    A PATH with a wildcard (`*`, `?`, `[`) stands for every file it matches, in name order, on any
    Beam filesystem (Wikipedia's large dumps come in parts: `--dump "en=enwiki-*-multistream*.bz2"`);
    files for which `skip_in_patterns` is true are left out of a pattern's matches only (the parts'
    index files match the same pattern)."""
    by_lang: dict[str, list[str]] = {}
    for value in values or []:
        lang, sep, path = value.partition("=")
        if not sep or not lang or not path:
            raise UsageError(f"{flag} {value!r}: expected LANG=PATH, e.g. {flag} en=enwiki-latest-pages-articles.xml.bz2")
        if lang not in known_langs:
            raise UsageError(f"{flag} {value!r}: unknown language {lang!r}; {_known_codes_hint(lang, known_langs)}")
        # A file whose name holds a wildcard character ("Dump [2024].xml.bz2") is that file, not a pattern.
        literal = not is_pattern(path) or _exists(flag, value, path)
        paths = [path] if literal else _matching_files(flag, value, path, skip_in_patterns)
        for one in paths:
            _check_exists(flag, value, one)
            check_input_file(flag, value, one)
        by_lang.setdefault(lang, []).extend(paths)
    return by_lang


def is_pattern(path: str) -> bool:
    return any(char in path for char in "*?[")


def _matching_files(flag: str, value: str, pattern: str, skip: Callable[[str], bool] | None) -> list[str]:
    try:
        matched = FileSystems.match([pattern])[0].metadata_list
    except ValueError:  # Beam has no filesystem for this scheme without its extra
        raise UsageError(_no_filesystem(flag, value, pattern)) from None
    paths = sorted(m.path for m in matched if not (skip and skip(m.path)))
    if not paths:
        why = f"{pattern} matches only files that are no input here ({matched[0].path.rsplit('/', 1)[-1]}, …)" if matched \
            else f"no file matches {pattern}"
        raise UsageError(f"{flag} {value!r}: {why}")
    return paths


def _exists(flag: str, value: str, path: str) -> bool:
    try:
        return FileSystems.exists(path)
    except ValueError:  # Beam has no filesystem for this scheme without its extra
        raise UsageError(_no_filesystem(flag, value, path)) from None


def _check_exists(flag: str, value: str, path: str) -> None:
    if not _exists(flag, value, path):
        raise UsageError(f"{flag} {value!r}: file not found: {path}")


def _no_filesystem(flag: str, value: str, path: str) -> str:
    scheme = path.split("://")[0]
    return f"{flag} {value!r}: no filesystem for {scheme}:// paths; install it, e.g. pip install -e '.[gcp]' for gs://"


# Country codes written for a language code: "jp" drew "pt or ps or pl" from the spelling alone.
_COUNTRY_CODE_SLIPS = {"jp": "ja", "cn": "zh", "kr": "ko", "gr": "el", "dk": "da", "se": "sv", "cz": "cs",
                       "ua": "uk", "vn": "vi", "us": "en", "gb": "en", "il": "he", "ir": "fa", "ee": "et",
                       "rs": "sr", "at": "de", "tw": "zh", "hk": "zh", "mx": "es", "in": "hi", "pk": "ur"}


def _known_codes_hint(lang: str, known_langs) -> str:
    """The codes a short list can name; for Wikipedia's ~340, the nearest ones and where the rest are."""
    known = sorted(known_langs)
    if len(known) <= 30:
        return f"supported: {' '.join(known)}"
    near = [lang.lower()] if lang.lower() in known_langs else difflib.get_close_matches(lang.lower(), known, n=3, cutoff=0.5)
    slip = _COUNTRY_CODE_SLIPS.get(lang.lower())
    if slip in known_langs and slip not in near:
        near = [slip, *near][:3]
    guess = f"did you mean {' or '.join(near)}? " if near else ""
    return f"{guess}it takes a Wikipedia language code ({len(known)} known, e.g. en de fr ja zh; corpora/wiki/languages.py lists them)"


def check_input_file(flag: str, value: str, path: str) -> None:
    """An input path must be a file: a folder would fail deep inside the job with a traceback."""
    if not FileSystems.exists(path):
        raise UsageError(f"{flag} {value!r}: file not found: {path}")
    if "://" not in path and os.path.isdir(path):
        raise UsageError(f"{flag} {value!r}: {path} is a directory; give one file (repeat {flag} for several)")


def check_dump(flag: str, lang: str, path: str, allow_language_mismatch: bool) -> None:
    """A dump must be a file the reader knows, and its siteinfo must agree with the declared language.

    Rows are labelled with the declared language; a dump declared with the wrong one would yield a
    whole language of mislabelled rows without any error, so it is refused unless the user says so.
    A dump without a readable siteinfo is not refused here: the reader counts what it finds.
    """
    from apache_beam.io.filesystem import CompressionTypes

    from corpora.dumps import pages as dumps
    from corpora.dumps import siteinfo

    value = f"{lang}={path}"
    check_input_file(flag, value, path)
    try:
        compression = dumps.compression_for(path)
    except ValueError:
        name = path.rsplit("/", 1)[-1]
        kind = name[name.index("."):] if "." in name else "no extension"
        unpack = {".gz": f"gunzip -c {name}", ".zip": f"unzip -p {name}", ".xz": f"xz -dc {name}",
                  ".zst": f"zstd -dc {name}"}.get(kind[kind.rfind("."):] if "." in kind else "")
        # Not for a file whose name says it holds something else (xquad.en.json.gz is no dump).
        holds_other = any(f".{other}." in name for other in ("json", "jsonl", "txt", "csv", "tsv", "parquet", "sql"))
        fix = f" (e.g. {unpack} | bzip2 > {name.split('.')[0]}.xml.bz2)" if unpack and not holds_other else ""
        raise UsageError(f"{flag} {value!r}: unsupported file type ({kind}); give a pages-articles dump as .xml or "
                         f".xml.bz2{fix}") from None
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        _check_dump_bytes(flag, value, path, compression, f.read(64))
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        info = siteinfo.read_siteinfo_from_file(f, compression)
    if info is None or allow_language_mismatch or siteinfo.declared_language_matches(lang, info):
        return
    site = info.dbname[: -len("wiki")].replace("_", "-") if info.dbname.endswith("wiki") else info.lang
    raise UsageError(f"{flag} {value!r}: the dump's siteinfo says xml:lang=\"{info.lang}\" (dbname {info.dbname or '?'}), "
                     f"not {lang}; declare it as {flag} {site or info.lang}={path}, or pass --allow_language_mismatch")


def _check_dump_bytes(flag: str, value: str, path: str, compression: str, head: bytes) -> None:
    """The name says how a dump is read; its first bytes must agree. Plain XML named .xml.bz2 was
    read as one damaged bz2 region: the whole dump lost, behind a warning about its siteinfo."""
    name = path.rsplit("/", 1)[-1]
    is_bzip2 = head.startswith(b"BZh")
    if compression == "bz2" and head and not is_bzip2:
        looks_like = "plain XML" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") else "not bzip2"
        raise UsageError(f"{flag} {value!r}: {name} is {looks_like}, not bzip2 as its name says; "
                         f"rename it to {name[:-len('.bz2')]} or compress it (bzip2 {name[:-len('.bz2')]})")
    if compression == "none" and is_bzip2:
        raise UsageError(f"{flag} {value!r}: {name} is bzip2-compressed; name it {name}.bz2")


def check_mono_text(flag: str, by_lang: dict[str, list[str]]) -> None:
    """Every language needs one usable line: with none, a SentencePiece or packing step would fail
    late with a message about its own internals."""
    for lang, paths in sorted(by_lang.items()):
        if not any(has_text_line(path, flag, f"{lang}={path}") for path in paths):
            raise UsageError(f"{flag} {lang}={','.join(paths)}: no non-empty line; give text with one sentence a "
                             f"line, or drop {flag} {lang}")
        for path in paths:
            check_line_ends(flag, f"{lang}={path}", path)
            if _is_wiki_dump(path):
                # Read as lines, a dump's XML and wikitext made 78% of an MRTD run's rows (and the
                # vocabulary's commonest pieces "=", "&", "▁[[", "quot"), with no error.
                raise UsageError(f"{flag} {lang}={path}: a MediaWiki XML dump, not text; give plain text, one "
                                 f"sentence or paragraph a line (a dump's articles go to pipelines.wiki_mrc)")


def _is_wiki_dump(path: str) -> bool:
    """Does the file (compression from its extension) open with a MediaWiki export's <mediawiki> root?"""
    try:
        with FileSystems.open(path) as f:
            head = f.read(1 << 12)
    except (OSError, EOFError, ValueError):
        return False  # has_text_line has read it already; a later read error is the job's to report
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<?xml"):
        head = head[head.find(b"?>") + 2:].lstrip()
    return head.startswith(b"<mediawiki")


def _has_separated_line(path: str, lines: int = 100) -> bool:
    """Does one of the first non-empty lines of a single parallel file hold a separator? A file of one
    language given alone would otherwise run to the end with every line dead-lettered and no rows."""
    seen = 0
    with FileSystems.open(path) as f:  # compressed files are not iterable: read by lines
        for raw in iter(f.readline, b""):
            if b"\t" in raw or b"|||" in raw:
                return True
            seen += bool(raw.strip())
            if seen >= lines:
                return False
    return False


def has_text_line(path: str, flag: str = "", value: str = "", max_bytes: int = 64 << 20) -> bool:
    """Does the file (compression from its extension) hold a line that is not blank?

    Reads until the first such line, so a real corpus costs one read; only a file of blank lines is
    read further, up to `max_bytes`.
    """
    read = 0
    try:
        with FileSystems.open(path) as f:  # compression from the extension, as the job reads it
            while read < max_bytes:
                chunk = f.read(1 << 16)
                if not chunk:
                    return False
                if chunk.strip():
                    return True
                read += len(chunk)
    except (OSError, EOFError, ValueError) as error:  # e.g. a .gz that is not gzip
        raise UsageError(f"{flag} {value!r}: cannot read {path} ({str(error).splitlines()[0][:120]})") from None
    return True  # a huge blank prefix: let the job count it rather than read on here


def check_line_ends(flag: str, value: str, path: str, head_bytes: int = 1 << 16) -> None:
    """Lines must end in LF (or CRLF): a file with CR alone (classic Mac OS) reads as one line, so
    every pair or sentence in it would be one rejected record."""
    try:
        with FileSystems.open(path) as f:  # compression from the extension, as the job reads it
            head = f.read(head_bytes)
    except (OSError, EOFError, ValueError):
        return  # has_text_line reports an unreadable file
    if b"\r" in head and b"\n" not in head:
        name = path.rsplit("/", 1)[-1]
        raise UsageError(f"{flag} {value!r}: {name} ends its lines with CR alone (old Mac line ends), so it "
                         f"reads as one line; convert them first, e.g. tr '\\r' '\\n' < {name} > fixed-{name}")


def check_parallel_inputs(flag: str, value: str, paths) -> None:
    """Every file of a parallel input exists, and two line-aligned files have as many lines.

    Files that differ in length are misaligned somewhere: every pair after the first extra line would
    be wrong, so the job stops with both counts before spending any work on them.
    """
    from corpora.bitext import count_lines

    for path in paths:
        check_input_file(f"--{flag}", value, path)
        if not has_text_line(path, f"--{flag}", value):
            raise UsageError(f"--{flag} {value!r}: {path} has no non-empty line; give text with one segment a line")
        check_line_ends(f"--{flag}", value, path)
    if len(paths) == 1 and not _has_separated_line(paths[0]):
        key = value.partition("=")[0]
        sides = key.split("-") if "-" in key else ["en", key]
        raise UsageError(f"--{flag} {value!r}: none of its first lines has a tab or ' ||| ', so it holds one side only; "
                         f"one file holds both (a TSV, or 'x ||| y'), two line-aligned files are given as "
                         f"{key}={sides[0].upper()}_FILE,{sides[-1].upper()}_FILE")
    if len(paths) == 2:
        counts = []
        for path in paths:
            with FileSystems.open(path) as f:
                counts.append(count_lines(f))
        if counts[0] != counts[1]:
            raise UsageError(f"--{flag} {value!r}: line counts differ: {paths[0]} has {counts[0]:,} lines, "
                             f"{paths[1]} has {counts[1]:,}; the files must be line-aligned")


def refuse_repeated_files(flag: str, by_lang: dict[str, list[str]], record: str = "line") -> None:
    """One input given twice, under any name or form (pipelines/input_identity.py), in one language
    or two: one line before the run."""
    from pipelines import input_identity

    repeat = input_identity.first_repeat(
        [(f"{flag} {lang}={path}", path) for lang, paths in sorted(by_lang.items()) for path in paths])
    if repeat:
        raise UsageError(input_identity.refusal(record, repeat))


def refuse_repeated_sources(flag: str, sources: list[tuple[str, tuple[str, ...]]]) -> None:
    """A parallel source given twice (its files under any name or form), or whose two sides are one
    file: one line before the run. `sources` are (the flag's value, its files)."""
    from pipelines import input_identity

    repeat = input_identity.first_repeated_source([(f"{flag} {value}", paths) for value, paths in sources])
    if repeat:
        raise UsageError(input_identity.refusal("pair", repeat))


def refuse_clashing_pair_ids(flag: str, sources: list[tuple[str, str, tuple[str, ...]]]) -> None:
    """clism_pairs names a pair `en-X/<first file's name>:<line>`: two sources of one language pair
    whose first files share a name would give the same ids to different pairs. `sources` are (the
    flag's value, the non-English language, its files)."""
    seen: dict[tuple[str, str], str] = {}
    for value, pair, paths in sources:
        key = (f"en-{pair}", paths[0].rstrip("/").rsplit("/", 1)[-1])
        if key in seen:
            raise UsageError(f"{flag} {seen[key]} and {flag} {value}: both files are named {key[1]}, and pair ids "
                             f"({key[0]}/{key[1]}:LINE) are built from the name, so different pairs would share ids; "
                             f"give one of them another name (a copy or a link)")
        seen[key] = value
