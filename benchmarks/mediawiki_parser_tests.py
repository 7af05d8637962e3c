"""corpora.wikitext.parse.parse_wikitext against MediaWiki's own parser tests: is our text what a reader sees?

    python benchmarks/mediawiki_parser_tests.py --tests DIR [--files quotes wikiLinks ...] [--listing OUT.txt]

DIR holds MediaWiki's parser test files, tests/parser/*.txt of a checkout of wikimedia/mediawiki
(wikimedia/mediawiki-services-parsoid carries synced copies). Each test is a piece of wikitext and
the HTML MediaWiki's legacy parser makes of it. A usable test (selection below) is run through
`parse_wikitext(wikitext, "en")` and compared with the reader-visible text of that HTML:

  text          the word-and-punctuation token sequence of our text equals that of MediaWiki's
                visible text (whitespace and line breaks ignored);
  text+anchors  and the visible texts of our anchors equal, in order, those of MediaWiki's links
                to main-namespace pages.

A mismatching test is counted under each kind it shows: markup leak (we print text MediaWiki does
not, and it holds wiki or HTML markup), extra text (the same without markup), lost text (MediaWiki
shows text we drop), anchors; error if the parser raised. --listing writes every mismatching test
(wikitext, our text, MediaWiki's visible text, the differences) to a file. No network; a few seconds.
The last line printed is `usable=N text_match=M text_and_anchor_match=K`. The figures in docs/wiki_mrc.md
(582 / 574 of 673) are for the files of wikimedia/mediawiki-services-parsoid at 0cd1430c (August 2026), which carries
synced copies of core's; other versions add and change tests.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora.wiki.languages import wiki_language  # noqa: E402
from corpora.wikitext.parse import parse_wikitext  # noqa: E402

DEFAULT_FILES = [
    "quotes", "wikiLinks", "extLinks", "comments", "headings", "definitionLists", "magicLinks",
    "preTags", "pWrapping", "sanitizer", "interwikiLinks", "catAndLangLinks", "parserTests",
]
EN = wiki_language("en")
KINDS = ("markup leak", "lost text", "extra text", "anchors", "error")

# ─── Reading the test files ───


def read_tests(path: Path) -> list[dict[str, str]]:
    """Tests as {section: text}, "name" included. `!! article` blocks (pages the tests link to) are
    skipped; a repeated section replaces the earlier one, as in MediaWiki's reader."""
    tests, current, section, in_article = [], None, None, False
    for line in path.read_text(encoding="utf-8").split("\n"):
        header = re.match(r"^!!\s*(\S+)", line)
        if not header:
            if current is not None and not in_article:
                current[section].append(line)
            continue
        name = header.group(1).lower()
        if name == "article":
            in_article, current = True, None
        elif in_article:
            in_article = name not in ("endarticle", "end")
        elif name == "test":
            current, section = {"name": []}, "name"
        elif current is not None and name == "end":
            test = {key: "\n".join(lines) for key, lines in current.items()}
            test["name"] = test["name"].strip()
            tests.append(test)
            current = None
        elif current is not None:
            section = name
            current[section] = []
    return tests


# Options whose output is not the plain page HTML (pre-save transform, one section, messages, the
# title or TOC data printed...), that need a page title or state we do not give, or that turn off the
# test.
SKIP_OPTIONS = {
    "disabled", "pst", "msg", "section", "replace", "preload", "nohtml", "showtitle", "showflags",
    "showindicators", "showtocdata", "subpage", "title", "comment", "local", "styletag", "htmlvariantlanguage",
    "variant", "onlypst", "wgrawhtml", "special", "maxtemplatedepth", "maxincludesize",
}
# Site settings Wikipedia does not use (raw HTML, external images, Pig Latin, DISPLAYTITLE changes).
SKIP_CONFIG = {"wgrawhtml", "wgallowexternalimages", "wgusepiglatinvariant", "wgallowdisplaytitle"}
# Extension tags that core's test wiki does not load (its HTML shows them as escaped text) but that
# our parser handles as Wikipedia's extensions would: the expected HTML is not Wikipedia's.
NON_CORE_EXT = re.compile(
    r"<(ref|references|math|chem|ce|syntaxhighlight|source|timeline|score|graph|mapframe|maplink|templatedata|"
    r"templatestyles|imagemap|hiero|inputbox|categorytree|charinsert|dynamicpagelist|rss|section|poem|translate|"
    r"tvar|languages)\b", re.I)
# Tags the test harness registers through hooks; they do not exist on Wikipedia.
TEST_HOOK_TAGS = re.compile(r"<(tag|tåg|statictag|spantag|embedtag|divtag|sealtag|pwraptest|foo|bar|hello|x)\b", re.I)


def option_keys(text: str) -> dict[str, str | None]:
    """Option names (lower case) -> value. Loose: a word inside a value ("title=[[Foo bar]]") shows up
    as a name too, harmless for the names looked up here."""
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"(?:^|\s)([A-Za-z][\w-]*)(?:=(\S+))?", text)}


def expected_section(test: dict[str, str]) -> str | None:
    """The section holding the legacy (PHP) parser's HTML, or None if the test is not usable by the
    rules above."""
    if "wikitext" not in test:
        return None
    section = next((k for k in ("html/php", "html/*", "html", "html/php+tidy") if k in test), None)
    options = option_keys(test.get("options", ""))
    if section is None or set(options) & SKIP_OPTIONS or options.get("language") not in (None, "en"):
        return None  # "language": expected output for another wiki's language and namespaces
    if set(option_keys(test.get("config", ""))) & SKIP_CONFIG:
        return None
    wikitext = test["wikitext"]
    # Templates: the test wiki defines its own (`!! article`), which our parser drops by design.
    if "{{" in wikitext or NON_CORE_EXT.search(wikitext) or TEST_HOOK_TAGS.search(wikitext):
        return None
    return section


# ─── HTML -> visible text, with our parser's by-design drops applied to the HTML too ───

VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "col", "area", "base", "source", "track", "embed", "param"}
BLOCK = {"p", "div", "li", "dd", "dt", "ul", "ol", "dl", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6",
         "tr", "table", "center", "hr", "caption", "figure"}
# Our parser drops tables, files and images, galleries, math, references and the table of contents:
# what MediaWiki renders for them is not in our text either.
DROP_TAGS = {"style", "script", "table", "figure", "math", "audio", "video", "img", "gallery", "figcaption"}
DROP_CLASSES = {"reference", "references", "thumb", "mw-editsection", "toc", "mw-references-wrap", "gallery",
                "mw-file-element", "mw-default-size", "image", "mw-halign-right", "mw-halign-left",
                "mw-halign-center", "mw-halign-none", "toctogglecheckbox", "catlinks", "autonumber"}
# "autonumber": the "[1]" MediaWiki prints for a label-less external link, a footnote-like number
# that our parser drops by design (the URL is not text of the sentence).
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class VisibleText(HTMLParser):
    """Collects the text a reader sees (`pieces`, "\\n" at block edges) and every <a> with its text."""

    def __init__(self, drop_pre: bool):
        super().__init__(convert_charrefs=True)
        self.drop_pre = drop_pre
        self.stack: list[tuple[str, bool]] = []  # open elements: (tag, inside something dropped)
        self.pieces: list[str] = []
        self.links: list[tuple[str, dict] | None] = []  # (text, attributes), in document order
        self.open_links: list[list | None] = []  # [text pieces, attributes, index in links]; None if dropped
        self.heading: list[str] | None = None  # text of the heading being read
        self.heading_level = 0
        self.tail_level = 0  # inside a tail section (References, External links...) under this level

    def dropping(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        typeof = attrs.get("typeof") or ""
        drop = (self.dropping() or tag in DROP_TAGS or bool(classes & DROP_CLASSES) or "mw:File" in typeof
                or "mw:Image" in typeof or attrs.get("id") == "toc" or (tag == "pre" and self.drop_pre))
        if tag in HEADINGS and not drop:
            # Headings are dropped by design; their text is read only to spot a tail section, which
            # our parser drops with everything up to the next heading of the same or a higher level.
            self.heading_level = int(tag[1])
            if self.tail_level and self.heading_level <= self.tail_level:
                self.tail_level = 0
            self.heading, drop = [], True
        drop = drop or bool(self.tail_level)
        if tag in BLOCK:
            self.pieces.append("\n")
        if tag == "br":
            self.pieces.append(" ")
        if tag == "a":
            self.open_links.append(None if drop else [[], attrs, len(self.links)])
            self.links.append(None)
        if tag not in VOID:
            self.stack.append((tag, drop))

    def handle_endtag(self, tag):  # also called for <x/>, after handle_starttag
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching element
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag == "a" and self.open_links:
            link = self.open_links.pop()
            if link is not None:
                self.links[link[2]] = ("".join(link[0]), link[1])
        if tag in HEADINGS and self.heading is not None:
            if EN.is_tail_section(" ".join("".join(self.heading).split())):
                self.tail_level = self.heading_level
            self.heading = None
        if tag in BLOCK:
            self.pieces.append("\n")

    def handle_data(self, data):
        if self.heading is not None:
            self.heading.append(data)
        if self.dropping():
            return
        self.pieces.append(data)
        for link in self.open_links:
            if link is not None:
                link[0].append(data)


def visible_text(html: str, drop_pre: bool) -> tuple[str, list[tuple[str, dict]]]:
    """(text: one line per non-empty block, spaces collapsed; links: (text, attributes))."""
    parser = VisibleText(drop_pre)
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.pieces).replace("\xa0", " ").split("\n"))
    return "\n".join(line for line in lines if line), [link for link in parser.links if link is not None]


# Namespaces of the test wiki our "en" profile does not know as such (Project is TestWiki:).
OTHER_NAMESPACES = ("user", "user talk", "wikipedia", "wikipedia talk", "parser test", "parser test talk")


def article_link_texts(links: list[tuple[str, dict]]) -> list[str]:
    """Texts of the links our parser should make anchors of: internal links to main-namespace pages,
    existing or not, and self-links (the tests' page is "Parser test")."""
    texts = []
    for text, attrs in links:
        classes = set((attrs.get("class") or "").split())
        href, title = attrs.get("href") or "", attrs.get("title") or ""
        if classes & {"extiw", "external"}:
            continue
        if not classes & {"mw-selflink", "selflink"}:
            if not href.startswith(("/wiki/", "/index.php?title=")):
                continue
            if href.startswith("/wiki/Special:") or title.startswith(("Special:", "TestWiki:")):
                continue  # ISBN and RFC magic links, Project-namespace links
            title = title.removesuffix(" (page does not exist)")
            prefix = title[: max(title.find(":"), 0)]
            if prefix and (" ".join(prefix.lower().replace("_", " ").split()) in EN.prefix_kinds
                           or prefix.lower() in OTHER_NAMESPACES):
                continue
        texts.append(" ".join(text.split()))
    return texts


# Interwiki prefixes of the test wiki's own table. Our parser, knowing Wikimedia's table instead, makes
# anchors of such links; that says nothing about Wikipedia, so those anchors are ignored.
TEST_INTERWIKI = re.compile(r"(?i)(meatball|memoryalpha|local|gerrit|pmid|zh|es|fr|de|hu|mi|sv|uk):")

# ─── Comparison ───

TOKEN_RE = re.compile(r"\w+|[^\w\s]")
MARKUP_RE = re.compile(r"\[\[|\]\]|''|\{\{|\}\}|\||<\/?[A-Za-z][^>]*>|==|&[#\w]+;|__[A-Z]+__|\[|\]|^[*#:;]")


def text_differences(ours: str, expected: str) -> list[tuple[str, str]]:
    """(our text, MediaWiki's text) of each differing stretch of the two token sequences."""
    a = [(m.group(), m.start(), m.end()) for m in TOKEN_RE.finditer(ours)]
    b = [(m.group(), m.start(), m.end()) for m in TOKEN_RE.finditer(expected)]
    matcher = difflib.SequenceMatcher(None, [t[0] for t in a], [t[0] for t in b], autojunk=False)
    return [(ours[a[i1][1]:a[i2 - 1][2]] if i2 > i1 else "", expected[b[j1][1]:b[j2 - 1][2]] if j2 > j1 else "")
            for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]


def run_test(test: dict[str, str], section: str) -> dict:
    wikitext = test["wikitext"]
    # A <pre> tag in the wikitext is dropped by design (code, ASCII art); MediaWiki's <pre> from
    # indented lines is kept, as our parser keeps those lines as text.
    expected, links = visible_text(test[section], drop_pre=bool(re.search(r"<pre\b", wikitext, re.I)))
    try:
        page = parse_wikitext(wikitext, "en")
        ours, error = page.text, None
        our_links = [ours[a.start:a.end] for a in page.anchors]
    except Exception as e:  # noqa: BLE001 -- a crash is a result here, not the end of the run
        ours, error, our_links = "", repr(e), []
    differences = text_differences(ours, expected)
    expected_links = article_link_texts(links)
    links_match = our_links == expected_links or \
        [t for t in our_links if not TEST_INTERWIKI.match(t)] == expected_links
    kinds = set()
    for mine, theirs in differences:
        if mine:
            kinds.add("markup leak" if MARKUP_RE.search(mine) else "extra text")
        if theirs:
            kinds.add("lost text")
    if not links_match:
        kinds.add("anchors")
    if error:
        kinds.add("error")
    return dict(name=test["name"], wikitext=wikitext, ours=ours, expected=expected, differences=differences,
                our_links=our_links, expected_links=expected_links, error=error,
                kinds=[k for k in KINDS if k in kinds], text_match=not differences)


def write_listing(path: str, mismatches: list[tuple[str, dict]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{len(mismatches)} mismatching tests. MediaWiki's side is the visible text of its expected"
                " HTML, with our parser's by-design drops applied.\n")
        for file, r in mismatches:
            f.write("=" * 100 + f"\n[{file}] {r['name']}    kinds: {', '.join(r['kinds'])}\n")
            f.write(f"--- wikitext:\n{r['wikitext']}\n--- ours: {r['ours']!r}\n--- MediaWiki: {r['expected']!r}\n")
            for mine, theirs in r["differences"]:
                f.write(f"  * ours={mine!r} MediaWiki={theirs!r}\n")
            if "anchors" in r["kinds"]:
                f.write(f"  * anchors: ours={r['our_links']!r}\n             MediaWiki={r['expected_links']!r}\n")
            if r["error"]:
                f.write(f"  * error: {r['error']}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", required=True, type=Path, help="directory of MediaWiki's tests/parser/*.txt")
    parser.add_argument("--files", nargs="+", default=DEFAULT_FILES,
                        help="test files by name, without .txt (default: %(default)s)")
    parser.add_argument("--listing", help="write every mismatching test to this file")
    args = parser.parse_args()

    if not args.tests.is_dir():
        sys.exit(f"--tests {args.tests}: not a directory; give tests/parser/ of a checkout of wikimedia/mediawiki")
    paths = [args.tests / (name.removesuffix(".txt") + ".txt") for name in args.files]
    if not any(path.exists() for path in paths):
        sys.exit(f"--tests {args.tests}: none of {', '.join(p.name for p in paths)} is there; give tests/parser/"
                 " of a checkout of wikimedia/mediawiki (https://github.com/wikimedia/mediawiki)")
    for path in paths:
        if not path.exists():
            print(f"skipped {path.stem}: no {path}", file=sys.stderr)
    paths = [path for path in paths if path.exists()]

    print(f"{'file':18} {'tests':>6} {'usable':>6} {'text':>6} {'text+anchors':>13}")
    totals, kinds, mismatches = [0, 0, 0, 0], Counter(), []
    for path in paths:
        tests = read_tests(path)
        row = [len(tests), 0, 0, 0]
        for test in tests:
            section = expected_section(test)
            if section is None:
                continue
            result = run_test(test, section)
            row[1] += 1
            row[2] += result["text_match"]
            row[3] += not result["kinds"]
            kinds.update(result["kinds"])
            if result["kinds"]:
                mismatches.append((path.stem, result))
        totals = [t + r for t, r in zip(totals, row)]
        print(f"{path.stem:18} {row[0]:6} {row[1]:6} {row[2]:6} {row[3]:13}")
    print(f"{'TOTAL':18} {totals[0]:6} {totals[1]:6} {totals[2]:6} {totals[3]:13}")
    print("mismatching tests by kind: " + ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k] or k != "error"))
    if args.listing:
        write_listing(args.listing, mismatches)
        print(f"listing of {len(mismatches)} mismatching tests: {args.listing}")
    print(f"usable={totals[1]} text_match={totals[2]} text_and_anchor_match={totals[3]}")


if __name__ == "__main__":
    main()
