"""Rebuild the bundled monolingual sample of `pipelines.vocap` (see README.md here).

    python corpora/samples/mono/build_mono_samples.py

Text only from this repository's own hand-written samples (the wiki sample dumps, rendered to plain
text by corpora.wikitext.parse, and the parallel sample) and spaCy's bundled example sentences, so it
runs offline and the languages come out with very different amounts of text (as real corpora do).
"""
from __future__ import annotations

import importlib
import pathlib

from corpora.dumps import pages as dumps
from corpora.wikitext.parse import parse_wikitext

HERE = pathlib.Path(__file__).resolve().parent
SAMPLES = HERE.parent
WIKI = {"en": "enwiki-sample-pages-articles.xml.bz2", "zh": "zhwiki-sample-pages-articles.xml.bz2",
        "th": "thwiki-sample-pages-articles.xml.bz2", "ar": "arwiki-sample-pages-articles.xml.bz2",
        "hi": "hiwiki-sample-pages-articles.xml.bz2"}
PARALLEL = {"en": ("en-fr.en", None), "fr": ("en-fr.fr", None), "ar": ("en-ar.tsv", 1),
            "hi": ("en-hi.txt", "|||"), "vi": ("en-vi.tsv", 1)}
SPACY = ("ru", "fr", "zh", "hi", "ar", "vi", "en")  # ja, ko: 4 sentences each, too few to train on


def wiki_lines(lang: str) -> list[str]:
    path = SAMPLES / "wiki" / WIKI[lang]
    lines = []
    with open(path, "rb") as f:
        pages = list(dumps.iter_pages_from_file(f, str(path), "bz2"))
    for page in pages:
        if not isinstance(page, dumps.RawPage) or page.ns != 0 or page.redirect:
            continue
        parsed = parse_wikitext(page.text, lang)
        if parsed.is_disambiguation:
            continue
        lines += [line.strip() for line in parsed.text.split("\n") if len(line.strip()) > 20]
    return lines


def parallel_lines(lang: str) -> list[str]:
    name, column = PARALLEL[lang]
    text = (SAMPLES / "parallel" / name).read_text(encoding="utf-8").splitlines()
    if column is None:
        return [t.strip() for t in text if t.strip()]
    if column == "|||":
        return [t.split("|||")[1].strip() for t in text if "|||" in t]
    return [t.split("\t")[column].strip() for t in text if "\t" in t]


def spacy_lines(lang: str) -> list[str]:
    return [s.strip() for s in importlib.import_module(f"spacy.lang.{lang}.examples").sentences]


def main() -> None:
    by_lang: dict[str, list[str]] = {}
    for lang in WIKI:
        by_lang.setdefault(lang, []).extend(wiki_lines(lang))
    for lang in PARALLEL:
        by_lang.setdefault(lang, []).extend(parallel_lines(lang))
    for lang in SPACY:
        by_lang.setdefault(lang, []).extend(spacy_lines(lang))
    for lang, lines in sorted(by_lang.items()):
        seen, unique = set(), []
        for line in lines:
            if line not in seen:
                seen.add(line)
                unique.append(line)
        (HERE / f"{lang}.txt").write_text("\n".join(unique) + "\n", encoding="utf-8")
        print(f"{lang}: {len(unique)} lines, {sum(map(len, unique))} chars")


if __name__ == "__main__":
    main()
