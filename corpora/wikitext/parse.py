"""Wikitext -> plain text with exact link anchors, the bold names of the lead, and a disambiguation flag.

The text is the kind WikiExtractor gives (what the mPMR paper used): templates, tables, references,
files, categories and interlanguage links gone; link, bold/italic, list, heading and HTML-tag text
kept. Unlike WikiExtractor, every article link comes back as an `Anchor` whose offsets index the
final text exactly.

Why a hand-written scanner: this is the hot spot of the whole job, and neither mwparserfromhell nor
wikitextparser reaches WikiExtractor's speed, the target, once text and exact anchors are built from
its output; this module is faster than all three and keeps the most links
(`benchmarks/wikitext_parsers.py`, figures in benchmarks/README.md).

How it works: a few passes over the whole page, each a C-speed regex or `str.find` scan with Python
work only per construct (per template, per link, per line holding quotes), never per character:

  1. comments and opaque extension tags (<ref>, <gallery>, ...) removed, <nowiki> protected, an
     inline <math> formula shown as text when plain text can show it (corpora/wikitext/tex_text.py);
  2. the disambiguation check, on the template names;
  3. templates and tables removed by brace/line-token matching (nesting, unclosed, stray closers);
  4. [[links]] paired with a stack; article links become  \\x01<index>\\x1f visible text \\x02 ,
     files, categories and interlanguage links vanish, other namespaces keep their text;
  5. external links, HTML tags, headings, list markers, magic words, quotes (bold runs of the lead
     become \\x04 ... \\x05), entities, whitespace;
  6. one last scan removes the markers and turns them into offsets.

Passes 1-3 are corpora/wikitext/blocks.py, 4 corpora/wikitext/links.py, 5 corpora/wikitext/lines.py
and corpora/wikitext/tidy.py,
the markers and the repair at a cut corpora/wikitext/markers.py; 6 is here.

The hottest steps (comment and extension-tag removal, the template and table scan, the link pass,
quotes, list markers, most of tidy, markers to offsets) also exist compiled, in
corpora/wikitext/compiled/, which `pip install` builds with Cython where a C compiler is at
hand: the same output byte for byte (tests/corpora/wikitext/test_wikitext_speedups.py parses every
real page both ways), the parse more than twice as fast. These Python modules stay the
reference, and run when the module is missing or XLU_PURE_PYTHON=1 (corpora/wikitext/passes.py).

Markers are control characters that cannot occur in a dump (XML 1.0 forbids them; they are deleted
from the input anyway), so every intermediate pass can edit the text freely without tracking offsets:
an anchor's offsets are fixed only once the final text exists. The passes never delete half of an
anchor (their patterns exclude the marker characters), and an anchor carries its index, so dropping a
whole anchor (an empty section's heading) cannot shift the others.

Choices where MediaWiki's output is not plain text:
  * headings are dropped (a heading is not prose: no context reads "history. Origin of the term
    The noun"), and a tail section (See also, References, … in the wiki's language) goes with
    everything under it;
  * templates are dropped with their output (no expansion: no template bodies are available), so
    is a bold name written inside one ({{Nihongo|'''Aikido'''|...}});
  * an unclosed "{{" or "[[" or "<ref>" is dropped alone and the text after it kept (MediaWiki shows
    it literally); an unclosed table or comment runs to the end of the page, as in MediaWiki;
  * <br> becomes a space, block tags (<p>, <div>, <li>, ...) a line break;
  * "&nbsp;" becomes a plain space; runs of spaces collapse to one except inside link text; what a
    removal leaves is repaired at the cut ("a {{x}}." -> "a.", "Paris ({{IPA|..}}) is" -> "Paris
    is"), and lines left without a letter or digit ("." after a removed template) are dropped;
  * an anchor covers the link text and its link trail ("[[bus]]es"), never edge spaces;
  * bare URLs are kept as text, an external link's URL is dropped and its label kept;
  * zh (and the other wikis with script variants): -{...}- shows the zh-hans variant if any.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from corpora.wiki.languages import WIKIPEDIA_LANGUAGES, WikiLanguage, wiki_language
from corpora.wikitext.page_names import substitute_page_name
from corpora.wikitext.blocks import (
    CONVERTER_LANGS,
    convert_language_variants,
    drop_comments_and_extension_tags,
    drop_templates_and_tables,
    has_disambiguation_template,
)
from corpora.wikitext.definition_lists import split_definition_terms
from corpora.wikitext.lines import decode_entities, render_external_links, render_html_tags, render_lines, render_quotes
from corpora.wikitext.tidy import tidy
from corpora.wikitext.links import render_internal_links
from corpora.wikitext.passes import chosen
from corpora.wikitext.markers import (
    ANCHOR_CLOSE,
    ANCHOR_INDEX_END,
    ANCHOR_OPEN,
    Anchor,
    BOLD_CLOSE,
    BOLD_OPEN,
    KEPT_SPACE,
    NOWIKI_EDGE,
    NOWIKI_RESTORE,
    without_marker_characters,
)

__all__ = ["Anchor", "ParsedPage", "parse_wikitext", "WIKIPEDIA_LANGUAGES"]



@dataclass(frozen=True)
class ParsedPage:
    text: str  # plain text, paragraphs separated by "\n"
    anchors: tuple[Anchor, ...]  # in text order, non-overlapping
    bold_names: tuple[str, ...]  # plain text of '''bold''' runs in the lead (before the first heading)
    is_disambiguation: bool


# ───────────────────────────── the parser ─────────────────────────────


def parse_wikitext(wikitext: str, lang: str | WikiLanguage, title: str = "") -> ParsedPage:
    """Parse one page's wikitext. Never raises on malformed markup; linear-ish in the page size.

    `lang` is a language code (its table profile) or a `WikiLanguage` that also holds the dump's
    <siteinfo> namespaces (what the job passes); `title`, the page's, is what {{PAGENAME}} shows."""
    language = lang if isinstance(lang, WikiLanguage) else wiki_language(lang)
    # The leading "\n" lets every line-start pattern be a "\n..." search, which `re` runs much faster
    # than a MULTILINE "^" (it can skip ahead to the literal); the final strip drops it again.
    text = "\n" + without_marker_characters(wikitext)
    text, had_nowiki = _drop_comments_and_extension_tags_pass(text)
    if title and "{{" in text:
        text = substitute_page_name(text, title, language.code)
    is_disambiguation = has_disambiguation_template(text, language)
    text = drop_templates_and_tables(text, language.code)
    text = split_definition_terms(text)
    if language.code in CONVERTER_LANGS and "-{" in text:
        text = convert_language_variants(text)
    text, targets = _render_internal_links_pass(text, language)
    if "[" in text:
        text = render_external_links(text)
    if "<" in text:
        text = render_html_tags(text)
    text = render_lines(text, language)
    text = render_quotes(text)
    if "&" in text:
        text = decode_entities(text)
    text = tidy(text, language)
    return _extract_markers(text, targets, is_disambiguation, had_nowiki)


# ── 6. markers -> offsets ──

_MARKER_SPLIT_RE = re.compile("([\x01\x02\x04\x05])")
# str.translate looks every character up in a dict (~40 ns each, 0.1 s of the excerpts' parse);
# str.replace finds them at memchr speed.
_NOWIKI_RESTORE_PAIRS = tuple((chr(protected), chr(original)) for protected, original in NOWIKI_RESTORE.items())
_FIRST_PROTECTED = min(pair[0] for pair in _NOWIKI_RESTORE_PAIRS)
# A scan in C; max() steps through the text one Python object per character, ten times slower.
_AT_OR_AFTER_FIRST_PROTECTED_RE = re.compile("[%s-\U0010ffff]" % _FIRST_PROTECTED)


def _extract_markers(text: str, targets: list[str], is_disambiguation: bool, had_nowiki: bool) -> ParsedPage:
    """Plain text and offsets from the marked text."""
    plain, anchors, bold_spans = _plain_text_and_anchors_pass(text, targets)
    if had_nowiki and _AT_OR_AFTER_FIRST_PROTECTED_RE.search(plain):
        # One character for one, and none a space: the offsets and the anchors' edges hold.
        for protected, original in _NOWIKI_RESTORE_PAIRS:
            if protected in plain:
                plain = plain.replace(protected, original)
    names = dict.fromkeys(name for name in (_bold_name(plain[s:e]) for s, e in bold_spans) if name)
    return ParsedPage(plain, tuple(anchors), tuple(names), is_disambiguation)


def plain_text_and_anchors(text: str, targets: list[str]) -> tuple[str, list[Anchor], list[tuple[int, int]]]:
    """The text without its markers, its anchors, and the spans of its bold runs. A nowiki edge marks
    nothing here and goes first. Bold marks sit in the lead, so only the text up to the last of them
    (and to the link after it) takes the general scan; the rest holds only links and is cut with
    str.split, which finds one character faster than a regular expression finds a class of them (this
    pass is among the parser's most expensive; benchmarks/README.md)."""
    if NOWIKI_EDGE in text:
        text = text.replace(NOWIKI_EDGE, "")
    pieces: list[str] = []
    spans: list[tuple[int, int, int]] = []  # (start, end, target index)
    bold_spans: list[tuple[int, int]] = []
    last_bold = max(text.rfind(BOLD_OPEN), text.rfind(BOLD_CLOSE))
    cut = length = 0
    if last_bold >= 0:
        cut = text.find(ANCHOR_OPEN, last_bold)
        if cut < 0:
            cut = len(text)
        length = _scan_all_markers(text[:cut], pieces, spans, bold_spans)
    if cut < len(text):
        _scan_links(text[cut:] if cut else text, length, pieces, spans)
    plain = "".join(pieces)
    if KEPT_SPACE in plain:
        plain = plain.replace(KEPT_SPACE, " ")
    anchors = []
    for start, end, index in spans:
        # Spaces at a link's edges are not part of the name it shows.
        while start < end and plain[start].isspace():
            start += 1
        while end > start and plain[end - 1].isspace():
            end -= 1
        if start < end:
            anchors.append(Anchor(start, end, targets[index]))
    return plain, anchors, bold_spans


_drop_comments_and_extension_tags_pass = chosen(drop_comments_and_extension_tags)
_render_internal_links_pass = chosen(render_internal_links)
_plain_text_and_anchors_pass = chosen(plain_text_and_anchors)


_PAIRS = {"(": ")", "[": "]", "«": "»", "“": "”", "„": "“", "「": "」", "（": "）"}
_CLOSERS = {closer: opener for opener, closer in _PAIRS.items()}
_EDGE_PUNCTUATION = ",;:、，；："
# A bold run of these alone names nothing; a symbol may be a name ("'''€'''", "'''&'''", "'''©'''").
_SENTENCE_MARKS = frozenset(_EDGE_PUNCTUATION + "()[]{}«»“”„\"'.!?¿¡…-–—/。（）「」！？ ")


def _bold_name(bold: str) -> str:
    """The name a bold run holds, or "". Real leads bold punctuation (el "Η Γεωγραφία''',''' σύμφωνα",
    bn "''''')'''''"), which masked every comma or bracket of the query, and end a bold name with a
    bracket it does not open (hy "'''Հակոբ Մելիք-Հակոբյան)'''"), which masked the bracket with it."""
    name = bold.strip()
    while name:
        if name[-1] in _EDGE_PUNCTUATION or (name[-1] in _CLOSERS and _CLOSERS[name[-1]] not in name[:-1]):
            name = name[:-1].rstrip()
        elif name[0] in _EDGE_PUNCTUATION or (name[0] in _PAIRS and _PAIRS[name[0]] not in name[1:]):
            name = name[1:].lstrip()
        else:
            break
    return "" if all(char in _SENTENCE_MARKS for char in name) else name


def _scan_all_markers(text: str, pieces: list[str], spans: list, bold_spans: list) -> int:
    """Links and bold runs; appends the plain pieces and returns their length."""
    parts = _MARKER_SPLIT_RE.split(text)  # text, marker, text, marker, ..., text
    anchor_start = bold_start = -1
    anchor_index = 0
    length = len(parts[0])
    for k in range(1, len(parts), 2):
        marker = parts[k]
        if marker == ANCHOR_OPEN:
            piece = parts[k + 1]
            index_end = piece.find(ANCHOR_INDEX_END)
            anchor_index = int(piece[:index_end])
            parts[k + 1] = piece[index_end + 1 :]
            anchor_start = length
        elif marker == ANCHOR_CLOSE:
            if anchor_start >= 0:
                spans.append((anchor_start, length, anchor_index))
            anchor_start = -1
        elif marker == BOLD_OPEN:
            bold_start = length
        elif marker == BOLD_CLOSE:
            if bold_start >= 0:
                bold_spans.append((bold_start, length))
            bold_start = -1
        length += len(parts[k + 1])
    pieces.extend(parts[::2])
    return length


def _scan_links(text: str, length: int, pieces: list[str], spans: list) -> None:
    r"""Text with link marks only, from `length` on: "\x01<index>\x1f<link text>\x02<text>"; a close
    without an open, or after the first, is dropped; an open without a close marks nothing."""
    links = text.split(ANCHOR_OPEN)
    first = links[0]
    if ANCHOR_CLOSE in first:
        first = first.replace(ANCHOR_CLOSE, "")
    pieces.append(first)
    length += len(first)
    for link in links[1:]:
        index_end = link.find(ANCHOR_INDEX_END)
        close = link.find(ANCHOR_CLOSE, index_end)
        if close < 0:
            shown = link[index_end + 1 :]
        else:
            spans.append((length, length + close - index_end - 1, int(link[:index_end])))
            after = link[close + 1 :]
            if ANCHOR_CLOSE in after:
                after = after.replace(ANCHOR_CLOSE, "")
            shown = link[index_end + 1 : close] + after
        pieces.append(shown)
        length += len(shown)
