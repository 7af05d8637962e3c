"""Pass 3b of corpora/wikitext/parse.py: ";term : definition" on one line becomes two lines, as MediaWiki
shows the term and the definition as two blocks (13 of the 193 ja excerpt pages write them).

MediaWiki splits at the first colon outside a link, an external link, a URL, an HTML element and
bold or italic text (BlockLevelPass::findColonNoLinks, which sees the links and quotes already
turned into tags). This runs on the wikitext, before links are rendered, so it tracks those
constructs itself; templates and comments are gone by then.
"""
from __future__ import annotations

import re

from corpora.wikitext.lines import URL_START_RE

_TERM_LINE_RE = re.compile(r"\n[*#:]*;[^\n]*")
_TOKEN_RE = re.compile(r"\[\[|\]\]|\[|\]|<|'{2,}|:")
_TAG_RE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*?(/?)>")
_VOID_TAGS = frozenset({"br", "hr", "img", "wbr"})
_SCHEME_BEFORE_COLON_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*$")
_URL_END_RE = re.compile(r"[\s\[\]<>\"]")


def split_definition_terms(text: str) -> str:
    if ";" not in text:
        return text
    return _TERM_LINE_RE.sub(_split_line, text)


def _split_line(match: re.Match) -> str:
    line = match.group(0)
    colon = _term_colon(line, line.index(";") + 1)
    return line if colon < 0 else line[:colon] + "\n" + line[colon + 1 :]


def _term_colon(line: str, start: int) -> int:
    """Index of the colon that ends the term, or -1."""
    links = elements = 0
    in_external = italic = bold = False
    pos = start
    while True:
        token = _TOKEN_RE.search(line, pos)
        if token is None:
            return -1
        kind, pos = token.group(), token.end()
        if kind == "[[":
            links += 1
        elif kind == "]]":
            links = max(0, links - 1)
        elif kind == "[":
            in_external = in_external or bool(URL_START_RE.match(line, pos))
        elif kind == "]":
            in_external = False
        elif kind == "<":
            tag = _TAG_RE.match(line, token.start())
            if tag:
                pos = tag.end()
                if tag.group(1):
                    elements = max(0, elements - 1)
                elif not tag.group(3) and tag.group(2).lower() not in _VOID_TAGS:
                    elements += 1
        elif kind != ":":  # a run of apostrophes: 2 italic, 3 bold, 5 both (longer runs: the rest is text)
            run = len(kind)
            if run in (2, 5) or run > 5:
                italic = not italic
            if run >= 3:
                bold = not bold
        elif links or in_external or elements or italic or bold:
            continue
        else:
            scheme = _SCHEME_BEFORE_COLON_RE.search(line, start, token.start())
            if scheme and URL_START_RE.match(line, scheme.start()):  # "news:alt.x", "http://…": a URL's colon
                end = _URL_END_RE.search(line, pos)
                pos = end.start() if end else len(line)
                continue
            return token.start()
