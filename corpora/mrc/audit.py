"""An independent check of wiki_mrc rows against the paper's definition of an MRC triple.

    python -m corpora.mrc.audit OUTPUT_DIR [--show 3]      # e.g. ./output/wiki_mrc

It reads the rows only (no job internals) and flags each row for every rule it breaks:

  markup             wiki markup in the query or context: [[ ]] {{ }} |, image options (thumb, 250px,
                     and their localised forms from the language table), <tags>, '' quotes, == headings
                     and their split signs ("= ="); where "|" is typed for the danda, a pipe that is
                     no danda (at a start, inside a bracket, not between words of the script)
  empty_brackets     brackets holding nothing but spaces and separators: "( )", "(; ;)", "[ , ]"
                     ("( )" after an ASCII identifier is code: "printf()")
  glued_numbers      two years run together ("17751783": a dash template dropped between them)
  glued_marks        a script's sentence mark glued to a word ("Երևան։", "सण॥", "မြန်မာ။"): the
                     tokeniser did not split it, so the word never equals the same name elsewhere
  title_in_query     the entity's title (or its unqualified form) still in the query, compared up to
                     case and, where the language allows, accents (corpora/name_folding.py); also
                     inflected where the language inflects names ("Κρήτης" for Κρήτη, bn "ঢাকার";
                     corpora/wiki/inflections.py) or respelled. With --dump, a title kept inside a
                     longer link of its definition page is not counted here but apart (below)
  unmarked_mention   answerable: a span of context words equal to the answer up to case (or an
                     inflected form of it) that is not an answer; unanswerable: the answer-free
                     context holds the title
  disambiguation     the context reads like a disambiguation page ("may refer to", localised)

A second table counts distinct queries per language (a query is shared by up to 20 rows): those
that leak (title_in_query) and those that keep the title inside a longer link of the definition
page, a leak the job accepts only under `--names_in_longer_names keep` (with the dumps; without
them such a query is counted as leaking).

The job's tests run it on every real excerpt; users can run it on their own output. Exit status 1
when more than --max_flagged_share of the rows are flagged.
"""
from __future__ import annotations

import glob
import re
import shlex
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from corpora.cli_flags import CommandParser
from corpora.mrc.entity_masking import is_name_variant
from corpora.wiki.inflections import name_inflection
from corpora.wiki.languages import wiki_language
from corpora.mrc.examples import find_spans
from corpora.dumps.multistream import is_multistream_index
from corpora.name_folding import fold_words
from corpora.titles import strip_qualifier

CHECKS = (
    "markup", "empty_brackets", "glued_numbers", "glued_marks", "title_in_query", "unmarked_mention", "disambiguation"
)

from corpora.mrc.audit_text import (  # noqa: E402  (re-exported: benchmarks and tests read them here)
    EMPTY_BRACKETS_RE as _EMPTY_BRACKETS_RE, GLUED_MARK_RE as _GLUED_MARK_RE, is_glued_years, markup_re as _markup_re,
)


def _char_spans(words: Sequence[str], name_words: Sequence[str], joins_with_space: bool, strip_accents: bool,
                glued_prefix: bool = False):
    """Character spans of `name_words` in the folded, joined `words` (whole words where spaced; with
    `glued_prefix`, the first may end a longer word: Arabic writes "و[[جامعة القاهرة]]", "and Cairo
    University", as one word "وجامعة" before the link's second)."""
    sep = " " if joins_with_space else ""
    text = sep + sep.join(fold_words(words, strip_accents)) + sep
    name = ("" if glued_prefix else sep) + sep.join(fold_words(name_words, strip_accents)) + sep
    if not name.strip():
        return text, []
    # A glued match is widened to the character before it (the separator, or the prefix's last
    # letter), so that it holds every whole-word span inside it, which open on a separator.
    widen = len(sep) if glued_prefix else 0
    spans, at = [], text.find(name)
    while at >= 0:
        spans.append((max(0, at - widen), at + len(name)))
        at = text.find(name, at + 1)
    return text, spans


def title_leaks(query, title_words, linked_texts, joins_with_space, strip_accents, lang="") -> tuple[str, ...] | None:
    """The first title form found in the query outside every longer link text of the definition
    page (`linked_texts`: word tuples), or None. A title inside a longer link to another entity
    ("GNU Project" in GNU's query) is kept when the job is run so (`--names_in_longer_names keep`),
    and is counted apart (`title_in_longer_link`)."""
    for title in title_words:
        text, spans = _char_spans(query, title, joins_with_space, strip_accents)
        if not spans:
            continue
        longer = []
        for link in linked_texts:
            if len(link) > len(title) or (not joins_with_space and len("".join(link)) > len("".join(title))):
                longer += _char_spans(query, link, joins_with_space, strip_accents, glued_prefix=True)[1]
        for start, end in spans:
            if not any(a <= start and end <= b for a, b in longer):
                return title
    if joins_with_space:
        # Titles inflected or respelled in the language ("Κρήτης" in Crete's query, bn "ঢাকার"),
        # unless inside a link.
        linked_words = {w for link in linked_texts for w in fold_words(link, strip_accents)}
        folded = fold_words(query, strip_accents)
        for title in title_words:
            name = fold_words(title, strip_accents)
            for i in range(len(folded) - len(name) + 1):
                span = folded[i : i + len(name)]
                if span != name and all(w == n or is_name_variant(w, n, lang, strip_accents) for w, n in zip(span, name)) \
                        and not all(w in linked_words for w in span if w not in name):
                    return tuple(query[i : i + len(name)])
    return None


def title_in_longer_link(query, title_words, linked_texts, joins_with_space, strip_accents) -> bool:
    """Whether a title form stands in the query inside a longer link text of the definition page:
    a name kept inside another entity's name, which `--names_in_longer_names keep` accepts."""
    for title in title_words:
        spans = _char_spans(query, title, joins_with_space, strip_accents)[1]
        if not spans:
            continue
        for link in linked_texts:
            if len(link) > len(title) or (not joins_with_space and len("".join(link)) > len("".join(title))):
                longer = _char_spans(query, link, joins_with_space, strip_accents, glued_prefix=True)[1]
                if any(a <= start and end <= b for start, end in spans for a, b in longer):
                    return True
    return False


def _around(text: str, start: int, end: int, width: int = 60) -> str:
    return f"…{text[max(0, start - width):start]}⟦{text[start:end]}⟧{text[end:end + width]}…"


def _span_text(words: Sequence[str], start: int, end: int) -> str:
    before = " ".join(words[max(0, start - 8) : start])
    return f"…{before} ⟦{' '.join(words[start:end + 1])}⟧ {' '.join(words[end + 1 : end + 9])}…"


def audit_row(
    row: dict, title_words: list[tuple[str, ...]], markup_re: re.Pattern, dab_re, linked_texts=()
) -> dict[str, str]:
    """The checks a row fails, each with the text that fails it; `title_words` are the entity's
    title forms as word tuples, `linked_texts` the link texts of its definition page (word tuples;
    empty when the audit has no dump to read them from)."""
    language = wiki_language(row["lang"])
    spaced = language.joins_with_space
    query, context = row["query_words"], row["context_words"]
    flagged: dict[str, str] = {}
    for words in (query, context):
        joined = " ".join(words)
        for check, pattern in (("markup", markup_re), ("empty_brackets", _EMPTY_BRACKETS_RE)):
            match = check not in flagged and pattern.search(joined)
            if match:
                flagged[check] = _around(joined, match.start(), match.end())
        glued = next((k for k, w in enumerate(words) if is_glued_years(w)), None)
        if glued is not None and "glued_numbers" not in flagged:
            flagged["glued_numbers"] = _span_text(words, glued, glued)
        match = "glued_marks" not in flagged and _GLUED_MARK_RE.search(joined)
        if match:
            flagged["glued_marks"] = _around(joined, match.start(), match.end())
    leaked = title_leaks(query, title_words, linked_texts, spaced, language.fold_diacritics, row["lang"])
    if leaked:
        joined, shown = " ".join(query), " ".join(leaked)
        at = joined.lower().find(shown.lower())  # the hit itself, not the query's first words
        flagged["title_in_query"] = f"{shown!r} in: " + (_around(joined, at, at + len(shown)) if at >= 0 else joined[:240])
    answers = {(a["start"], a["end"]) for a in row["answers"]}
    names = list(title_words)
    if row["answerable"] and answers:
        start, end = min(answers)
        names.append(tuple(context[start : end + 1]))
    inflection = name_inflection(row["lang"], language.fold_diacritics) if spaced else None
    bases = inflection.bases if inflection is not None and inflection.inflects else None
    if row["answerable"] or not answers:
        covered = {i for s, e in answers for i in range(s, e + 1)}
        for name in names:
            missed = next(
                (span for span in find_spans(context, name, spaced, bases, language.fold_diacritics)
                 if not covered & set(range(span[0], span[1] + 1))),
                None,
            )
            if missed:
                flagged["unmarked_mention"] = _span_text(context, *missed)
                break
    if dab_re is not None:
        joined = " ".join(context) if spaced else "".join(context)
        match = dab_re.search(joined)
        if match:
            flagged["disambiguation"] = _around(joined, match.start(), match.end())
    return flagged


# A link's shown text, read by a regex (independent of the job's parser): "[[target|text]]" or
# "[[target]]", plus the letters glued after it.
_LINK_TEXT_RE = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]*))?\]\]")


def _link_texts(wikitext: str, trail_re):
    """Each link's shown text with its link trail (MediaWiki's $linkTrail of the language)."""
    for match in _LINK_TEXT_RE.finditer(wikitext):
        shown = match.group(2) if match.group(2) is not None else match.group(1)
        trail = trail_re.match(wikitext, match.end()) if trail_re is not None else None
        yield (shown + (trail.group() if trail else "")).strip()


def link_texts_of_pages(dumps_by_lang: dict[str, list[str]], pages: dict[str, set[int]]) -> dict[tuple[str, int], list[str]]:
    """The shown texts of every link in the wanted pages of each language's dumps."""
    from corpora.dumps.pages import RawPage, compression_for, iter_pages_from_file

    texts: dict[tuple[str, int], list[str]] = {}
    for lang, paths in dumps_by_lang.items():
        wanted = pages.get(lang, set())
        trail_re = wiki_language(lang).linktrail_re
        for path in paths:
            with open(path, "rb") as f:
                for page in iter_pages_from_file(f, path, compression_for(path)):
                    if isinstance(page, RawPage) and page.page_id in wanted:
                        texts[lang, page.page_id] = list(_link_texts(page.text, trail_re))
    return texts


def audit_rows(rows: Iterable[dict], tokenize_title, dumps_by_lang: dict[str, list[str]] | None = None) -> tuple[Counter, dict, dict]:
    """(rows per language, flagged rows per (language, check), examples per (language, check)).

    `tokenize_title(lang, titles) -> list[list[str]]` gives the title's words as the job's word
    tokeniser does, so that a title is compared word for word with the rows. With the dumps the rows
    came from, a title kept inside a longer link of its definition page is not a leak.
    """
    rows = list(rows)
    linked: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    if dumps_by_lang:
        pages: dict[str, set[int]] = defaultdict(set)
        for row in rows:
            pages[row["lang"]].add(row["definition_page"])
        for (lang, page_id), texts in link_texts_of_pages(dumps_by_lang, pages).items():
            unique = list(dict.fromkeys(t for t in texts if t))
            linked[lang, page_id] = [tuple(w) for w in tokenize_title(lang, unique) if w]
    entities_by_lang: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        entities_by_lang[row["lang"]].add(row["entity"])
    title_words: dict[str, dict[str, list[tuple[str, ...]]]] = {}
    for lang, entities in entities_by_lang.items():
        entities = sorted(entities)
        forms = [[e, strip_qualifier(e)] for e in entities]
        flat = [f for pair in forms for f in pair]
        tokenised = tokenize_title(lang, flat)
        title_words[lang] = {
            e: list(dict.fromkeys(tuple(w) for w in tokenised[2 * k : 2 * k + 2] if w)) for k, e in enumerate(entities)
        }
    totals: Counter = Counter()
    flagged: Counter = Counter()
    examples: dict = defaultdict(list)
    patterns = {}
    queries: dict[tuple, set] = defaultdict(set)  # (lang, kind) -> distinct (entity, query)
    for row in rows:
        lang = row["lang"]
        if lang not in patterns:
            patterns[lang] = (_markup_re(lang), wiki_language(lang).dab_phrase_re)
        totals[lang] += 1
        titles, links = title_words[lang].get(row["entity"], []), linked.get((lang, row["definition_page"]), ())
        failed = audit_row(row, titles, *patterns[lang], links)
        query = (row["entity"], tuple(row["query_words"]))
        if query not in queries[lang, "all"]:
            queries[lang, "all"].add(query)
            if "title_in_query" in failed:
                queries[lang, "leaky"].add(query)
            language = wiki_language(lang)
            if links and title_in_longer_link(row["query_words"], titles, links, language.joins_with_space,
                                              language.fold_diacritics):
                queries[lang, "in_longer_link"].add(query)
                if len(examples[lang, "in_longer_link"]) < 5:
                    examples[lang, "in_longer_link"].append(f"{row['entity']!r}: {' '.join(row['query_words'])[:200]}")
        for check, detail in failed.items():
            flagged[lang, check] += 1
            if len(examples[lang, check]) < 5:
                examples[lang, check].append(f"{row['entity']!r}: {detail}")
        if failed:
            flagged[lang, "any"] += 1
    for (lang, kind), distinct in queries.items():
        flagged[lang, f"queries_{kind}"] = len(distinct)
    return totals, flagged, examples


def _tokenize_titles(lang: str, titles: list[str]) -> list[list[str]]:
    from corpora.words import get_tokenizer

    return get_tokenizer(lang).tokenize_many(titles)


def format_report(totals: Counter, flagged: Counter) -> str:
    header = f"{'lang':<6}{'rows':>8}{'flagged':>9}{'share':>8}  " + "".join(f"{c:>18}" for c in CHECKS)
    lines = [header]
    for lang in sorted(totals):
        n, bad = totals[lang], flagged[lang, "any"]
        lines.append(
            f"{lang:<6}{n:>8,}{bad:>9,}{bad / max(n, 1):>8.2%}  " + "".join(f"{flagged[lang, c]:>18,}" for c in CHECKS)
        )
    lines.append("")
    lines.append(f"{'lang':<6}{'queries':>9}{'leaky':>8}{'share':>8}{'in a longer link':>18}")
    for lang in sorted(totals):
        n = flagged[lang, "queries_all"]
        leaky, longer = flagged[lang, "queries_leaky"], flagged[lang, "queries_in_longer_link"]
        lines.append(f"{lang:<6}{n:>9,}{leaky:>8,}{leaky / max(n, 1):>8.2%}{longer:>18,}")
    return "\n".join(lines)


def recorded_dumps(output: Path) -> list[str]:
    """The --dump values of the command that made `output`, from its dataset card ("## How it was
    made"): the audit needs the dumps, and a user who ran the job has already named them once."""
    card = output / "README.md"
    if not card.is_file():
        return []
    text = card.read_text(encoding="utf-8")
    start = text.find("## How it was made")
    fence = text.find("```bash\n", start) if start >= 0 else -1
    if fence < 0:
        return []
    command = text[fence + len("```bash\n") : text.find("\n```", fence + 1)]
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    dumps = [value for flag, value in zip(words, words[1:]) if flag == "--dump"]
    dumps += [word[len("--dump="):] for word in words if word.startswith("--dump=")]
    if not dumps and "pipelines.wiki_mrc" in words:  # the job without --dump reads its bundled samples
        from corpora.dumps.pages import sample_dump_paths

        dumps = [f"{lang}={path}" for lang, path in sample_dump_paths().items()]
    return dumps


def _local_dump_exists(spec: str) -> bool:
    """Only local files (the audit reads them plainly); a pattern counts if it matches one."""
    path = spec.partition("=")[2]
    return bool(path) and "://" not in path and bool(glob.glob(path))


def main(argv=None) -> int:
    parser = CommandParser(prog="python -m corpora.mrc.audit", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="a wiki_mrc --output folder (its data/ is read)")
    parser.add_argument("--show", type=int, default=2, help="example rows to print per flagged check")
    parser.add_argument("--max_flagged_share", type=float, default=0.01)
    parser.add_argument("--dump", action="append", default=[], metavar="LANG=PATH",
                        help="the dumps the rows came from (local paths): a title kept inside a longer link of "
                        "its definition page is then not counted as a leak")
    args = parser.parse_args(argv)
    dumps_by_lang: dict[str, list[str]] = defaultdict(list)
    specs = args.dump
    if not specs:
        recorded = recorded_dumps(Path(args.output))
        specs = [spec for spec in recorded if _local_dump_exists(spec)]
        missing = [spec for spec in recorded if spec not in specs]
        if specs:
            print(f"the dumps the job read (its README.md's command): {' '.join(specs)}", file=sys.stderr)
        if missing:
            print(f"note: the job's command names dumps not found here: {' '.join(missing)}; pass --dump for them",
                  file=sys.stderr)
        if not specs:
            print("note: without --dump, a title kept inside a longer link of its definition page counts as a leak "
                  "in title_in_query", file=sys.stderr)
    for spec in specs:
        lang, eq, path = spec.partition("=")
        if not eq:
            parser.error(f"--dump {spec}: expected LANG=PATH")
        # A wildcard, as the job takes it: its files, without the multistream indexes it also matches.
        matched = sorted(p for p in glob.glob(path) if not is_multistream_index(p)) if glob.has_magic(path) else [path]
        dumps_by_lang[lang].extend(matched)
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from corpora.schemas import MRC_SCHEMA, SCHEMA_NAME_KEY, SchemaMismatch, check_schema

    from corpora.outputs import manifests

    if not Path(args.output).is_dir():
        sys.exit(f"python -m corpora.mrc.audit: {Path(args.output) / 'data'}: no Parquet files; give the --output "
                 "folder of a wiki_mrc run")
    try:  # the job's rows, train and test, once the folder was checked against its manifest
        files = (manifests.verified_shards(args.output, split="train", flag="output", required=False)
                 + manifests.verified_shards(args.output, split="test", flag="output", required=False))
    except manifests.ManifestError as error:
        sys.exit(f"python -m corpora.mrc.audit: {error}")
    if not files:
        sys.exit(f"python -m corpora.mrc.audit: {Path(args.output) / 'data'}: no Parquet files; give the --output "
                 "folder of a wiki_mrc run")
    for path in files:
        schema = pq.read_schema(path)
        name = (schema.metadata or {}).get(SCHEMA_NAME_KEY, b"?").decode()
        if name != MRC_SCHEMA.metadata[SCHEMA_NAME_KEY].decode():
            sys.exit(f"python -m corpora.mrc.audit: {path}: rows of schema {name!r}, not wiki_mrc's; "
                     "give the --output folder of a wiki_mrc run")
        try:
            check_schema(schema, MRC_SCHEMA, str(path))
        except SchemaMismatch as error:
            sys.exit(f"python -m corpora.mrc.audit: {error}")
    rows = ds.dataset([str(path) for path in files], format="parquet").to_table().to_pylist()
    totals, flagged, examples = audit_rows(rows, _tokenize_titles, dumps_by_lang)
    print(format_report(totals, flagged))
    for (lang, check), details in sorted(examples.items()):
        for detail in details[: args.show]:
            print(f"  {lang} {check}: {detail}")
    worst = max((flagged[lang, "any"] / totals[lang] for lang in totals), default=0.0)
    return 1 if worst > args.max_flagged_share else 0


if __name__ == "__main__":
    sys.exit(main())
