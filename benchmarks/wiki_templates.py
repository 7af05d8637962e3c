"""How the parser treats templates on real dumps: rendered, dropped, and residue left in the text.

    python benchmarks/wiki_templates.py [--dump LANG=PATH ...]     # default: ../shared/data/wikipedia

For each article: every outermost template call is either rendered (corpora/wikitext/templates/inline.py:
text of the sentence) or dropped; what dropping may leave behind is then searched in the final
text with the audit's patterns (empty brackets, doubled separators, glued numbers). A count, not a
timing: it answers "does the text read as MediaWiki shows it".
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpora.dumps import pages as dumps  # noqa: E402
from corpora.wikitext import parse as wikitext  # noqa: E402
from corpora.wikitext import blocks as wikitext_blocks  # noqa: E402
from corpora.wiki.languages import wiki_language  # noqa: E402
from corpora.mrc.audit import _EMPTY_BRACKETS_RE, is_glued_years  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "wikipedia"
DEFAULT = {lang: SHARED / f"{lang}wiki-excerpt.xml.bz2" for lang in ("en", "de", "el", "ja", "vi")}
_DOUBLED_RE = re.compile(r"[,;:，；：、]\s*[,;，；、]")
_WORD_RE = re.compile(r"\S+")


def count(lang: str, path: str) -> Counter:
    counts: Counter = Counter()
    original = wikitext_blocks.render_template

    def counting_render(body, nested, lang=""):
        shown = original(body, nested, lang)
        counts["rendered" if shown else "dropped"] += 1
        if shown:
            counts["rendered:" + body.split("|", 1)[0].strip().lower()] += 1
        return shown

    wikitext_blocks.render_template = counting_render
    language = wiki_language(lang)
    try:
        with open(path, "rb") as f:
            for page in dumps.iter_pages_from_file(f, path, dumps.compression_for(path)):
                if not isinstance(page, dumps.RawPage) or page.ns != 0 or page.redirect is not None:
                    continue
                text = wikitext.parse_wikitext(page.text, language).text
                counts["articles"] += 1
                counts["empty_brackets"] += len(_EMPTY_BRACKETS_RE.findall(text))
                counts["doubled_separators"] += len(_DOUBLED_RE.findall(text))
                counts["glued_numbers"] += sum(1 for w in _WORD_RE.findall(text) if is_glued_years(w.strip(".,;:()")))
    finally:
        wikitext_blocks.render_template = original
    return counts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", action="append", default=[], metavar="LANG=PATH")
    args = parser.parse_args(argv)
    dumps_by_lang = dict(spec.split("=", 1) for spec in args.dump) or {k: str(v) for k, v in DEFAULT.items() if v.exists()}
    print(f"{'lang':<5}{'articles':>9}{'templates':>10}{'rendered':>9}{'dropped':>9}{'residue':>8}  top rendered")
    for lang, path in dumps_by_lang.items():
        c = count(lang, path)
        residue = c["empty_brackets"] + c["doubled_separators"] + c["glued_numbers"]
        top = sorted(((n, k[9:]) for k, n in c.items() if k.startswith("rendered:")), reverse=True)[:5]
        print(
            f"{lang:<5}{c['articles']:>9,}{c['rendered'] + c['dropped']:>10,}{c['rendered']:>9,}{c['dropped']:>9,}"
            f"{residue:>8,}  " + ", ".join(f"{name} {n}" for n, name in top)
        )


if __name__ == "__main__":
    main()
