"""Does the running text rebuilt from the rows' words equal the text they came from?

For wiki_mrc output: every context (the words and their space flags, joined) must be a span of its
mention page's plain text, and every query must be the start of its definition page's text with each
`[MASK]` standing for a name; both after corpora/spacing.normalise_spacing (invisible controls out,
whitespace runs one space). For clism_pairs output, or parallel text tokenised as the job does: both
sentences must equal their line. Each check is made for the flags (schema v2) and for the script rule
that rows without flags are read with (training/data/word_pieces.running_text), per language.

    python benchmarks/spacing_roundtrip.py mrc OUTPUT --dump en=enwiki-excerpt.xml.bz2 --dump ja=...
    python benchmarks/spacing_roundtrip.py ntrex ../shared/data/parallel/ntrex128 --langs ko th zh ja --lines 500
"""
from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

import pyarrow.parquet as pq

from corpora.dumps import pages as dumps
from corpora.spacing import join_words, normalise_spacing, word_spaces
from corpora.mrc.entity_masking import MASK
from corpora.wikitext.parse import parse_wikitext
from pipelines.wiki_dump_reading import DumpSpec, language_profiles, siteinfo_namespaces
from training.data.word_pieces import glued_flags, running_text


def article_texts(lang: str, path: str, page_ids: set[int]) -> dict[int, str]:
    """The plain text of the given pages, parsed as the job parses them (the dump's own namespaces)."""
    language = language_profiles([DumpSpec(lang, path, None, siteinfo_namespaces(path))])[lang]
    texts = {}
    with open(path, "rb") as f:
        for page in dumps.iter_pages_from_file(f, path, dumps.compression_for(path)):
            if isinstance(page, dumps.RawPage) and page.page_id in page_ids:
                texts[page.page_id] = normalise_spacing(parse_wikitext(page.text, language, page.title).text)
    return texts


def boundaries_wrong(words: list[str], spaces: list[bool]) -> int:
    """Joins between two words where the script rule puts a space and the text has none, or the reverse."""
    rule = glued_flags(words) or [False] * len(words)
    return sum(rule[k] != (not spaces[k - 1]) for k in range(1, len(words)))


def query_matches(query: str, text: str) -> bool:
    """The query is the start of the text, a `[MASK]` standing for a name (no space at its edges), less
    whole sentences left out (`--names_in_longer_names drop_sentence`): its sentences follow one
    another in the text, the first at the text's start or at a sentence's."""
    pos = 0
    for k, sentence in enumerate(_SENTENCE_BREAK.split(query)):
        if not sentence:
            continue
        body = r"\S(?:.*?\S)?".join(re.escape(p) for p in sentence.split(MASK))
        if k == 0:
            pattern = re.compile(r"(?:\A|(?<=[.!?;·।॥|。！？։؟۔።။…]))\s*" + body)
        else:
            pattern = re.compile(body)
        found = pattern.search(text, pos)
        if found is None:
            return False
        pos = found.end()
    return True


# After a sentence's end mark (corpora/mrc/query_sentences.py), with the space that may follow it.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?।॥|。！？։؟۔።။…])\s?")


def mrc_report(output: Path, dumps_by_lang: dict[str, str]) -> dict[str, collections.Counter]:
    rows = [r for f in sorted((output / "data").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_lang = collections.defaultdict(list)
    for r in rows:
        by_lang[r["lang"]].append(r)
    for lang, lang_rows in sorted(by_lang.items()):
        pages = {r["mention_page"] for r in lang_rows} | {r["definition_page"] for r in lang_rows}
        texts = article_texts(lang, dumps_by_lang[lang], pages)
        c = counts[lang]
        contexts = {(r["mention_page"], tuple(r["context_words"])): r for r in lang_rows}
        for (page, _), r in sorted(contexts.items()):
            text = texts[page]
            c["contexts"] += 1
            c["contexts_wrong_now"] += join_words(r["context_words"], r["context_spaces"]) not in text
            c["contexts_wrong_by_script_rule"] += running_text(r["context_words"]) not in text
            c["context_joins"] += len(r["context_words"]) - 1
            c["context_joins_wrong_by_script_rule"] += boundaries_wrong(r["context_words"], r["context_spaces"])
        queries = {r["definition_page"]: r for r in lang_rows}
        for page, r in sorted(queries.items()):
            text = texts[page]
            c["queries"] += 1
            c["queries_wrong_now"] += not query_matches(join_words(r["query_words"], r["query_spaces"]), text)
            c["queries_wrong_by_script_rule"] += not query_matches(running_text(r["query_words"]), text)
    return counts


def ntrex_report(folder: Path, langs: list[str], lines: int) -> dict[str, collections.Counter]:
    """Each language's NTREX lines tokenised as clism_pairs tokenises a target side (English: the
    blank spaCy tokenizer, whose rules en_core_web_sm's tokenizer shares)."""
    from corpora.words import get_tokenizer

    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for lang in langs:
        path = folder / f"{lang}.txt"
        sentences = [" ".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines()[:lines]]
        tokenizer = get_tokenizer(lang)
        c = counts[lang]
        for text, words in zip(sentences, tokenizer.tokenize_many(sentences)):
            if not words:
                continue
            spaces = word_spaces(text, words)
            c["sentences"] += 1
            c["sentences_wrong_now"] += spaces is None or join_words(words, spaces) != normalise_spacing(text)
            c["sentences_wrong_by_script_rule"] += running_text(words) != normalise_spacing(text)
            if spaces is not None:
                c["joins"] += len(words) - 1
                c["joins_wrong_by_script_rule"] += boundaries_wrong(words, spaces)
    return counts


def _print(counts: dict[str, collections.Counter]) -> None:
    for lang, c in sorted(counts.items()):
        print(lang, " ".join(f"{k}={v}" for k, v in sorted(c.items())))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    mrc = sub.add_parser("mrc", help="a wiki_mrc output against its dumps")
    mrc.add_argument("output", type=Path)
    mrc.add_argument("--dump", action="append", required=True, metavar="LANG=PATH")
    ntrex = sub.add_parser("ntrex", help="NTREX-128 lines tokenised as clism_pairs does")
    ntrex.add_argument("folder", type=Path)
    ntrex.add_argument("--langs", nargs="+", required=True)
    ntrex.add_argument("--lines", type=int, default=1997)
    a = p.parse_args(argv)
    if a.what == "mrc":
        _print(mrc_report(a.output, dict(d.split("=", 1) for d in a.dump)))
    else:
        _print(ntrex_report(a.folder, a.langs, a.lines))


if __name__ == "__main__":
    main()
