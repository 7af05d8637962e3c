"""Plain text of a Wikipedia dump's articles, one paragraph a line: monolingual input for
`pipelines.xy_corpus --mono` from the dumps the wiki_mrc job reads (docs/results.md §6).

    python benchmarks/wiki_plain_text.py --dump el=../shared/data/wikipedia/elwiki-excerpt.xml.bz2 \
        --output /tmp/xy_in/wiki [--min_chars 40]

Articles only (namespace 0, no redirects, no disambiguation pages), through the wiki_mrc job's own
parser (corpora/wikitext/parse.py), so the text is what its MRC rows are cut from. Writes
OUTPUT/LANG.txt per dump and prints the articles and lines kept.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora.dumps import pages as dump_pages  # noqa: E402
from corpora.wikitext.parse import parse_wikitext  # noqa: E402


def article_paragraphs(path: str, lang: str, min_chars: int):
    """(article count, paragraphs) of the dump's articles, paragraphs of at least `min_chars`."""
    articles, paragraphs = 0, []
    with open(path, "rb") as f:
        for page in dump_pages.iter_pages_from_file(f, path, dump_pages.compression_for(path)):
            if not isinstance(page, dump_pages.RawPage) or page.ns != 0 or page.redirect is not None:
                continue
            parsed = parse_wikitext(page.text, lang, page.title)
            if parsed.is_disambiguation:
                continue
            articles += 1
            paragraphs += [p.strip() for p in parsed.text.split("\n") if len(p.strip()) >= min_chars]
    return articles, paragraphs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", action="append", required=True, metavar="LANG=PATH")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--min_chars", type=int, default=40, help="shorter paragraphs (captions, list items) are left out")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    for spec in args.dump:
        lang, sep, path = spec.partition("=")
        if not sep or not Path(path).is_file():
            parser.error(f"--dump {spec}: give LANG=PATH of an existing dump file")
        articles, paragraphs = article_paragraphs(path, lang, args.min_chars)
        (args.output / f"{lang}.txt").write_text("".join(p + "\n" for p in paragraphs), encoding="utf-8")
        print(f"{lang}: {articles:,} articles -> {len(paragraphs):,} lines in {args.output / (lang + '.txt')}")


if __name__ == "__main__":
    main()
