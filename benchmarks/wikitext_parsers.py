"""Which wikitext parser for corpora/wikitext/parse.py: speed and link recall of each candidate, one core.

    python benchmarks/wikitext_parsers.py [--repeats 3] [DUMP.xml.bz2 ...]

Default dumps: the enwiki excerpt (106 articles) and the table-heavy excerpt from ../shared. For every
namespace-0 article (redirects skipped) each candidate turns wikitext into plain text plus anchors
(start, end, target) with exact offsets, and is scored on:

  MB/s      wikitext characters (millions) per CPU-second of this process (time.process_time, so
            other jobs on the machine barely matter); best of --repeats for the fast candidates;
  anchors   anchors produced;
  recall    share of the article links found by `reference_article_links` (an independent, slow,
            regex-only reading of the same wikitext) that come back as an anchor with the same
            target and the same visible text.

Candidates:
  hand-written   corpora.wikitext.parse.parse_wikitext, the single-pass scanner this project ships;
  mwparserfromhell  its full parse tree, walked to build text and offsets (its strip_code() would
                 lose the offsets);
  wikitextparser spans of templates, comments, tags, tables and links, text built between them;
  wikiextractor  the mPMR reference (`wikiextractor.extract.Extractor(..., keepLinks=True)`), the
                 speed to beat; its <a href> links are read back as anchors for the recall column.
"""
from __future__ import annotations

import argparse
import bz2
import html
import io
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpora.wikitext.parse import WIKIPEDIA_LANGUAGES, parse_wikitext  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "wikipedia"
DEFAULT_DUMPS = [SHARED / "enwiki-excerpt.xml.bz2", SHARED / "enwiki-table-markup.xml.bz2"]
NS = "{http://www.mediawiki.org/xml/export-0.10/}"


def read_articles(path: Path) -> list[tuple[str, str]]:
    """(title, wikitext) of the namespace-0 non-redirect pages of a dump."""
    articles = []
    with bz2.open(path) as stream:
        for _, element in ET.iterparse(stream):
            if element.tag != NS + "page":
                continue
            if element.findtext(NS + "ns") == "0" and element.find(NS + "redirect") is None:
                text = element.findtext(f"{NS}revision/{NS}text") or ""
                articles.append((element.findtext(NS + "title"), text))
            element.clear()
    return articles


# ───────────────────────── the reference: which links should survive ─────────────────────────
# Deliberately naive and independent of corpora.wikitext.parse: innermost-first regex deletion, repeated
# until nothing changes. Quadratic on bad input, fine on real articles.

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_SELF_CLOSED = re.compile(r"<(?:ref|references)\b[^<>]*/>", re.I)
_PAIRED = re.compile(r"<(ref|references|math|gallery|timeline|syntaxhighlight|source|pre|score|imagemap)\b[^<>]*>.*?</\1\s*>", re.I | re.S)
_INNER_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_INNER_LINK = re.compile(r"\[\[([^\[\]]*)\]\]")
_DROPPED_NAMESPACES = {"file", "image", "category"} | set(WIKIPEDIA_LANGUAGES)
_OTHER_NAMESPACES = {"wikt", "wiktionary", "wikipedia", "wp", "help", "portal", "template", "user", "talk", "special",
                     "commons", "wikisource", "s", "q", "wikiquote", "b", "n", "v", "voy", "species", "d", "m", "meta", "mw", "media", "draft", "w"}
_PLACEHOLDER = re.compile("\x00([0-9]+)\x00([a-z]*)")


def _drop_tables(text: str) -> str:
    kept, depth = [], 0
    for line in text.split("\n"):
        stripped = line.lstrip(" :")
        if stripped.startswith("{|"):
            depth += 1
        elif depth and line.lstrip().startswith("|}"):
            depth -= 1
        elif not depth:
            kept.append(line)
    return "\n".join(kept)


def _visible(label: str) -> str:
    label = re.sub(r"'{2,}", "", label)
    label = re.sub(r"<[^<>]*>", "", label)
    label = html.unescape(label).replace("\xa0", " ")
    return " ".join(label.split())


def _target(raw: str) -> str:
    title = " ".join(html.unescape(raw).split("#")[0].replace("_", " ").split())
    return title[:1].upper() + title[1:]


def _names_section_page(shown: str, page: str) -> bool:
    """A link to a section counts only when its text is the page's name (with or without its
    qualifier): "[[Paris#History|Paris]]" does, "[[KDE#Plasma|KDE Plasma Desktop]]" does not."""
    shown = _visible(shown).casefold()
    return shown in (page.casefold(), re.sub(r"\s*\([^()]*\)$", "", page).casefold())


def reference_article_links(wikitext: str) -> Counter:
    """(target, visible text) of every article link outside comments, references, templates, tables,
    files, categories and interlanguage links, counted; a link to a section only when its text names
    the page."""
    text = _PAIRED.sub("", _SELF_CLOSED.sub("", _COMMENT.sub("", wikitext)))
    count = 1
    while count:
        text, count = _INNER_TEMPLATE.subn("", text)
    text = _drop_tables(text)
    links: list[tuple[str, str]] = []

    def replace(match: re.Match) -> str:
        target, bar, label = match.group(1).partition("|")
        target = target.strip()
        if ":" in target:
            prefix = target.split(":", 1)[0].strip().lower()
            if prefix in _DROPPED_NAMESPACES:
                return ""
            if prefix in _OTHER_NAMESPACES or prefix == "":
                return label if bar else target
        if not _target(target) or "\n" in target:
            return label if bar else target
        shown = label if bar and label else target
        if "#" in html.unescape(target) and not _names_section_page(shown, _target(target)):
            return shown
        links.append((_target(target), label if bar and label else target))
        return "\x00%d\x00" % (len(links) - 1)

    count = 1
    while count:
        text, count = _INNER_LINK.subn(replace, text)
    found = Counter()
    for match in _PLACEHOLDER.finditer(text):
        target, label = links[int(match.group(1))]
        visible = _visible(label + match.group(2))
        if visible:
            found[(target, visible)] += 1
    return found


# ───────────────────────────── candidates ─────────────────────────────
# Each takes (title, wikitext) and returns (text, [(start, end, target), ...]).


def hand_written(title: str, wikitext: str):
    page = parse_wikitext(wikitext, "en")
    return page.text, [(a.start, a.end, a.target) for a in page.anchors]


_TRAIL = re.compile(r"[a-z]+")  # en's link trail: "[[bus]]es" shows "buses"
_SKIPPED_TAGS = {"ref", "references", "table", "math", "gallery", "timeline", "syntaxhighlight", "source", "pre",
                 "score", "imagemap", "templatestyles", "li", "dt", "dd", "hr"}


def _link_kind(title: str):
    if ":" not in title:
        return None
    prefix = title.split(":", 1)[0].strip().lower()
    if prefix in _DROPPED_NAMESPACES:
        return "drop"
    return "other" if prefix in _OTHER_NAMESPACES or not prefix else None


def mwparserfromhell_walk(title: str, wikitext: str):
    import mwparserfromhell
    from mwparserfromhell.nodes import ExternalLink, Heading, HTMLEntity, Tag, Text, Wikilink

    from corpora.titles import normalise_title

    out: list[str] = []
    anchors = []
    length = 0

    def emit(piece: str) -> None:
        nonlocal length
        out.append(piece)
        length += len(piece)

    def render(code, in_link: bool) -> None:
        trail_taken = 0  # letters of the next Text node already emitted as a link trail
        nodes = code.nodes
        for position, node in enumerate(nodes):
            kind = type(node)
            if kind is Text:
                emit(node.value[trail_taken:])
                trail_taken = 0
            elif kind is Wikilink:
                target = str(node.title).strip()
                link_kind = _link_kind(target)
                if link_kind == "drop":
                    continue
                start = length
                if node.text is not None:
                    render(node.text, True)
                else:
                    emit(target)
                following = nodes[position + 1] if position + 1 < len(nodes) else None
                if type(following) is Text:
                    trail = _TRAIL.match(following.value)
                    if trail:
                        emit(trail.group())
                        trail_taken = trail.end()
                if link_kind is None and not in_link and normalise_title(target):
                    anchors.append((start, length, normalise_title(target)))
            elif kind is Tag:
                if str(node.tag).lower() in _SKIPPED_TAGS:
                    continue
                if node.contents is not None:
                    render(node.contents, in_link)
                if str(node.tag).lower() == "br":
                    emit(" ")
            elif kind is Heading:
                emit("\n")
                render(node.title, in_link)
                emit("\n")
            elif kind is HTMLEntity:
                emit(node.normalize())
            elif kind is ExternalLink and node.title is not None:
                render(node.title, in_link)
            # Template, Comment, Argument, bare ExternalLink: dropped

    render(mwparserfromhell.parse(wikitext), False)
    return "".join(out), anchors


_WTP_OPAQUE = {"ref", "references", "math", "gallery", "timeline", "syntaxhighlight", "source", "pre", "score", "imagemap"}
_WTP_MARKUP = re.compile(r"'{2,}|<[^<>]*>|^[*#:;]+|^=+|=+$", re.M)


def wikitextparser_spans(title: str, wikitext: str):
    import wikitextparser

    from corpora.titles import normalise_title

    parsed = wikitextparser.parse(wikitext)
    drops = [t.span for t in parsed.templates] + [f.span for f in parsed.parser_functions]
    drops += [c.span for c in parsed.comments] + [t.span for t in parsed.tables]
    drops += [t.span for t in parsed.get_tags() if t.name.lower() in _WTP_OPAQUE]
    items = [(start, end, None) for start, end in drops] + [(*link.span, link) for link in parsed.wikilinks]
    items.sort(key=lambda item: (item[0], -item[1]))
    out: list[str] = []
    anchors = []
    length = 0
    pos = 0
    for start, end, link in items:
        if start < pos:
            continue  # inside something already handled
        piece = _WTP_MARKUP.sub("", wikitext[pos:start])
        out.append(piece)
        length += len(piece)
        pos = end
        if link is None:
            continue
        target = link.target.strip()
        link_kind = _link_kind(target)
        if link_kind == "drop":
            continue
        shown = _WTP_MARKUP.sub("", link.text if link.text is not None else target)
        trail = _TRAIL.match(wikitext, end)
        if trail:
            shown += trail.group()
            pos = trail.end()
        if link_kind is None and normalise_title(target) and shown:
            anchors.append((length, length + len(shown), normalise_title(target)))
        out.append(shown)
        length += len(shown)
    out.append(_WTP_MARKUP.sub("", wikitext[pos:]))
    return "".join(out), anchors


_WE_LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>([a-z]*)', re.S)


def wikiextractor_extract(title: str, wikitext: str):
    from wikiextractor.extract import Extractor

    out = io.StringIO()
    Extractor("1", "1", "", title, [wikitext], keepLinks=True).extract(out)
    return out.getvalue(), None


def wikiextractor_links(output: str) -> Counter:
    """WikiExtractor's <a href> links as (target, visible text), to score its recall. It leaves the
    link trail outside the <a> ("<a>bus</a>es"); the letters are put back, as the other candidates
    include them."""
    from corpora.titles import normalise_title

    found = Counter()
    for match in _WE_LINK.finditer(html.unescape(output)):
        visible = _visible(match.group(2) + match.group(3))
        target = normalise_title(unquote(match.group(1)))
        if visible and target:
            found[(target, visible)] += 1
    return found


CANDIDATES = [
    ("hand-written (ours)", hand_written, 3),
    ("mwparserfromhell", mwparserfromhell_walk, 1),
    ("wikitextparser", wikitextparser_spans, 1),
    ("wikiextractor (baseline)", wikiextractor_extract, 2),
]


# ───────────────────────────── measuring ─────────────────────────────


def measure(function, articles, repeats: int):
    """Best CPU time over `repeats` runs, and the last run's outputs."""
    best = float("inf")
    outputs = []
    for _ in range(repeats):
        started = time.process_time()
        outputs = [function(title, text) for title, text in articles]
        best = min(best, time.process_time() - started)
    return best, outputs


def score(outputs, references) -> tuple[int, int]:
    """(anchors produced, reference links recovered with the same target and visible text)."""
    produced = recovered = 0
    for (text, anchors), reference in zip(outputs, references):
        if anchors is None:  # wikiextractor: links read back from its HTML
            got = wikiextractor_links(text)
        else:
            got = Counter((target, " ".join(text[start:end].split())) for start, end, target in anchors)
        produced += sum(got.values())
        recovered += sum((got & reference).values())
    return produced, recovered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dumps", nargs="*", type=Path, default=DEFAULT_DUMPS)
    parser.add_argument("--repeats", type=int, default=3, help="runs of the fast candidates (best is kept)")
    args = parser.parse_args()

    header = f"{'dump':<28} {'candidate':<26} {'MB/s':>6} {'anchors':>8} {'ref links':>9} {'recall':>7}"
    print(header)
    print("-" * len(header))
    for dump in args.dumps:
        articles = read_articles(dump)
        chars = sum(len(text) for _, text in articles)
        references = [reference_article_links(text) for _, text in articles]
        reference_total = sum(sum(r.values()) for r in references)
        label = f"{dump.name} ({len(articles)} art., {chars / 1e6:.2f} M chars)"
        print(label)
        for name, function, repeats in CANDIDATES:
            try:
                seconds, outputs = measure(function, articles, max(1, min(repeats, args.repeats)))
            except ImportError as error:
                print(f"{'':<28} {name:<26} not installed ({error.name})")
                continue
            produced, recovered = score(outputs, references)
            print(f"{'':<28} {name:<26} {chars / seconds / 1e6:>6.2f} {produced:>8} {reference_total:>9} "
                  f"{recovered / max(reference_total, 1):>7.2%}")


if __name__ == "__main__":
    main()
