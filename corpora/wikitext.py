"""Wikitext -> plain text with exact link anchors, the bold names of the lead, and a disambiguation flag.

The text is the kind WikiExtractor gives (what the mPMR paper used): templates, tables, references,
files, categories and interlanguage links gone; link, bold/italic, list, heading and HTML-tag text
kept. Unlike WikiExtractor, every article link comes back as an `Anchor` whose offsets index the
final text exactly.

Why a hand-written scanner: this is the hot spot of the whole job, and neither library reaches
WikiExtractor's speed (~4-5 MB of wikitext per CPU-second), the target. Measured on the enwiki excerpt
by `benchmarks/wikitext_parsers.py` (one core, text and exact anchors built from each one's output):
mwparserfromhell ~1.2 MB/s (its tokenizer alone is ~1.7), wikitextparser ~3.4-4.5 MB/s, this module
~10-12 MB/s, with the best link recall of the three (99.96% of an independent regex reading).

How it works: a few passes over the whole page, each a C-speed regex or `str.find` scan with Python
work only per construct (per template, per link, per line holding quotes), never per character:

  1. comments and opaque extension tags (<ref>, <math>, <gallery>, ...) removed, <nowiki> protected;
  2. the disambiguation check, on the template names;
  3. templates and tables removed by brace/line-token matching (nesting, unclosed, stray closers);
  4. [[links]] paired with a stack; article links become  \\x01<index>\\x1f visible text \\x02 ,
     files, categories and interlanguage links vanish, other namespaces keep their text;
  5. external links, HTML tags, headings, list markers, magic words, quotes (bold runs of the lead
     become \\x04 ... \\x05), entities, whitespace;
  6. one last scan removes the markers and turns them into offsets.

Markers are control characters that cannot occur in a dump (XML 1.0 forbids them; they are deleted
from the input anyway), so every intermediate pass can edit the text freely without tracking offsets:
an anchor's offsets are fixed only once the final text exists. The passes never delete half of an
anchor (their patterns exclude the marker characters), and an anchor carries its index, so dropping a
whole anchor (an empty section's heading) cannot shift the others.

Choices where MediaWiki's output is not plain text:
  * headings are kept, as their text on a line of their own; a heading with no text under it
    (before the next heading of the same or a higher level, e.g. "References") is dropped;
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
from functools import lru_cache
from html.entities import html5

from corpora.languages import WIKIPEDIA_LANGUAGES, WikiLanguage, wiki_language
from corpora.titles import normalise_title, strip_qualifier
from corpora.wiki_templates import render as render_template

__all__ = ["Anchor", "ParsedPage", "parse_wikitext", "WIKIPEDIA_LANGUAGES"]


@dataclass(frozen=True)
class Anchor:
    start: int  # char offset into ParsedPage.text, inclusive
    end: int  # exclusive; text[start:end] is exactly the visible link text
    target: str  # normalise_title(link target); never empty


@dataclass(frozen=True)
class ParsedPage:
    text: str  # plain text, paragraphs separated by "\n"
    anchors: tuple[Anchor, ...]  # in text order, non-overlapping
    bold_names: tuple[str, ...]  # plain text of '''bold''' runs in the lead (before the first heading)
    is_disambiguation: bool


# ───────────────────────────── tables ─────────────────────────────

# Extension tags whose content is not text: removed with it, and opaque to template/link matching
# (MediaWiki's preprocessor skips them whole). "nowiki" is opaque but its content is kept.
_OPAQUE_TAGS = (
    "references|ref|gallery|math|chem|ce|syntaxhighlight|source|pre|timeline|score|graph|mapframe|"
    "maplink|templatedata|templatestyles|imagemap|hiero|inputbox|categorytree|charinsert|indicator|"
    "includeonly|section|dynamicpagelist|rss|nowiki"
)
# HTML tags MediaWiki accepts (Sanitizer) plus extension tags whose content is text: unwrapped.
_BLOCK_TAGS = "p|div|blockquote|center|ul|ol|li|dl|dt|dd|table|caption|tr|td|th|h[1-6]|hr"
_INLINE_TAGS = (
    "abbr|bdi|bdo|big|b|cite|code|data|del|dfn|em|font|ins|i|kbd|mark|q|rb|rp|rtc|rt|ruby|samp|small|"
    "span|strike|strong|sub|sup|s|time|tt|u|var|wbr|poem|noinclude|onlyinclude|translate|tvar|"
    "languages|nowiki"
)

# ───────────────────────────── markers ─────────────────────────────
# See the module docstring. \x03 stands for a space inside link text that must survive collapsing.
_ANCHOR_OPEN, _ANCHOR_INDEX_END, _ANCHOR_CLOSE = "\x01", "\x1f", "\x02"
_KEPT_SPACE, _BOLD_OPEN, _BOLD_CLOSE, _NOWIKI_EDGE, _HEADING = "\x03", "\x04", "\x05", "\x06", "\x07"
_MARKER_CHARS = "\x01\x02\x03\x04\x05\x06\x07\x1f"

# <nowiki> content: markup characters moved to Supplementary Private Use Area-A so no pass sees them,
# moved back at the very end (one character for one, so offsets are unaffected).
_NOWIKI_CHARS = "[]{}<>'|=*#:;_~-!"
_NOWIKI_PROTECT = {ord(c): 0xF0000 + ord(c) for c in _NOWIKI_CHARS}
_NOWIKI_RESTORE = {0xF0000 + ord(c): ord(c) for c in _NOWIKI_CHARS}


# ───────────────────────────── the parser ─────────────────────────────


def parse_wikitext(wikitext: str, lang: str | WikiLanguage) -> ParsedPage:
    """Parse one page's wikitext. Never raises on malformed markup; linear-ish in the page size.

    `lang` is a language code (its table profile) or a `WikiLanguage` that also holds the dump's
    <siteinfo> namespaces (what the job passes)."""
    language = lang if isinstance(lang, WikiLanguage) else wiki_language(lang)
    # The leading "\n" lets every line-start pattern be a "\n..." search, which `re` runs much faster
    # than a MULTILINE "^" (it can skip ahead to the literal); the final strip drops it again.
    text = "\n" + _without_marker_characters(wikitext)
    text, had_nowiki = _drop_comments_and_extension_tags(text)
    is_disambiguation = _has_disambiguation_template(text, language)
    text = _drop_templates_and_tables(text)
    if "-{" in text and language.code in _CONVERTER_LANGS:
        text = _LANGUAGE_CONVERSION_RE.sub(_language_conversion, text)
    text, targets = _render_internal_links(text, language)
    if "[" in text:
        text = _EXTERNAL_LINK_RE.sub(_external_link_label, text)
    if "<" in text:
        text = _HTML_TAG_RE.sub(_html_tag_replacement, text)
    text = _render_lines(text, language)
    text = _render_quotes(text)
    if "&" in text:
        text = _ENTITY_RE.sub(_decode_entity, text)
    text = _tidy(text, language)
    return _extract_markers(text, targets, is_disambiguation, had_nowiki)


def _without_marker_characters(text: str) -> str:
    """Delete the control characters used as markers (and "\\r"). A dump cannot hold them (XML 1.0),
    so this is a few fast `in` tests."""
    for char in _MARKER_CHARS + "\r":
        if char in text:
            text = text.replace(char, "")
    return text


def _append_after_cut(pieces: list[str], piece: str) -> None:
    """Append the text that follows removed markup, repairing what the removal left behind: a doubled
    space ("a {{x}} b"), a space before punctuation ("a {{citation needed}}."), and parentheses
    emptied of their content ("Paris ({{IPA|..}}) is", "Paris ({{lang|fr|Paris}}, born ...").

    Done at the cuts rather than by regexes over the whole text, which would also touch text the
    author wrote that way and cost a full scan each."""
    if not piece:
        return
    if pieces and pieces[-1][-1:] == "'" and piece[0] == "'":
        # "''{{transl|ar|..}}''" is two italic toggles around a template; joined, the quotes would
        # read as one run of four (apostrophe + bold) and shift every bold run after it.
        piece = _NOWIKI_EDGE + piece
    if pieces:
        prev = pieces[-1]
        last = prev[-1:]
        first = piece[0]
        if last == " ":
            if first == " ":
                piece = piece.lstrip(" ")
                first = piece[:1]
            if first in (",", ".", ")") and piece[:2] != "..":
                prev = prev.rstrip(" ")
                last = prev[-1:]
        elif last == ";" and first in (",", ".", ")") and prev.endswith("&nbsp;"):  # "3500&nbsp;{{sc|bc}}."
            prev = prev[:-6].rstrip(" ")
            last = prev[-1:]
        if last == "(":
            if first in (" ", ",", ";"):
                piece = piece.lstrip(" ,;")
                first = piece[:1]
            if first == ")":
                prev = prev[:-1].rstrip(" ")
                piece = piece[1:]
        pieces[-1] = prev
    pieces.append(piece)


# ── 1. comments and extension tags ──

_OPAQUE_OPEN_RE = re.compile(r"<!--|<(%s)(?=[\s/>])[^<>]*>" % _OPAQUE_TAGS, re.IGNORECASE)
_CLOSE_TAG_RES: dict[str, re.Pattern] = {}


def _close_tag_re(name: str) -> re.Pattern:
    pattern = _CLOSE_TAG_RES.get(name)
    if pattern is None:
        pattern = _CLOSE_TAG_RES[name] = re.compile(r"</%s\s*>" % name, re.IGNORECASE)
    return pattern


def _drop_comments_and_extension_tags(text: str) -> tuple[str, bool]:
    """Remove comments and opaque extension tags in one left-to-right scan (the first opener wins, as
    in MediaWiki: a comment inside <ref> is part of the ref, a <ref> inside a comment is comment)."""
    if "<" not in text:
        return text, False
    pieces: list[str] = []
    pos = 0
    had_nowiki = False
    for start, end, replacement in _iter_opaque(text):
        _append_after_cut(pieces, text[pos:start])
        if replacement:
            pieces.append(replacement)
            had_nowiki = True
        pos = end
    if pos == 0:
        return text, False
    _append_after_cut(pieces, text[pos:])
    return "".join(pieces), had_nowiki


_NOWIKI_QUOTE_RE = re.compile(r"(?<!')''(?!')")


def _iter_opaque(text: str):
    """Yield (start, end, replacement) for each comment/extension tag, in text order."""
    unclosed: set[str] = set()  # tag names with no closer left: their later openers need no search
    search_from = 0
    while True:
        match = _OPAQUE_OPEN_RE.search(text, search_from)
        if match is None:
            return
        start, open_end = match.span()
        name = match.group(1)
        if name is None:  # "<!--": an unclosed comment runs to the end, as in MediaWiki
            close = text.find("-->", open_end)
            end = len(text) if close < 0 else close + 3
            yield start, end, ""
            search_from = end
            continue
        name = name.lower()
        content_end = end = open_end
        if not match.group(0).endswith("/>") and name not in unclosed:
            close = _close_tag_re(name).search(text, open_end)
            if close is None:
                unclosed.add(name)  # the opener is dropped alone; the text after it is kept
            else:
                content_end, end = close.span()
        replacement = ""
        if name == "nowiki":
            # Content kept literally; the edges also stop a link trail ("[[bus]]<nowiki/>es").
            content = text[open_end:content_end]
            if "''" in content:
                # "<nowiki>''</nowiki>Thriller<nowiki>''</nowiki>", "<nowiki>''Μακεδονία''</nowiki>":
                # two apostrophes typed as a quotation mark, escaped so they do not italicise; they
                # read as one.
                content = _NOWIKI_QUOTE_RE.sub('"', content)
            content = content.translate(_NOWIKI_PROTECT)
            replacement = _NOWIKI_EDGE + content + _NOWIKI_EDGE
        yield start, end, replacement
        search_from = end


# ── 2. disambiguation ──

_TEMPLATE_NAME_RE = re.compile(r"\{\{\s*([^{}|\n<>\[\]]{1,120}?)\s*(?:\||\}\})")


def _has_disambiguation_template(text: str, language: WikiLanguage) -> bool:
    if language.has_disambiguation_switch(text):
        return True
    if "{{" not in text:
        return False
    return any(language.is_disambiguation_template(m.group(1)) for m in _TEMPLATE_NAME_RE.finditer(text))


# ── 3. templates and tables ──

# Brace runs ("{{{" of a parameter counts 3, so "{{a|{{{b}}}}}" balances), and table delimiters,
# which MediaWiki only sees at a line start ("{|" may follow indentation colons). "|}}" at a line start
# closes a template, not a table. Each alternative opens with a literal character outside its group:
# `re` then skips to the next "{", "}" or line break at C speed instead of trying every alternative
# at every position (7x faster on the English excerpt, 0.04 s instead of 0.31 per copy). The groups
# only tell the kinds apart; spans are the whole match.
_BRACE_TOKEN_RE = re.compile(r"\{(\{+)|\}(\}+)|\n([ \t:]*\{\|)|\n([ \t]*\|\}(?!\}))")


def _drop_templates_and_tables(text: str) -> str:
    if "{" not in text and "|}" not in text:
        return text
    spans = _template_and_table_spans(text)
    return _cut_spans(text, spans) if spans else text


def _template_and_table_spans(text: str) -> list[tuple[int, int]]:
    """Spans (possibly nested or overlapping) to delete.

    Braces are matched as characters: a closing run takes braces from the innermost open run, so a
    run can close several templates or part of one. Inside a template, table tokens are ignored (the
    template is dropped whole anyway). An unclosed "{{" loses only its braces; an unclosed table runs
    to the end of the page.
    """
    spans = []
    stack: list[list[int]] = []  # [position of an open brace run, braces still open in it]
    table_depth = 0
    table_start = 0
    for match in _BRACE_TOKEN_RE.finditer(text):
        kind = match.lastindex
        start, end = match.span()
        if kind == 1:
            stack.append([start, end - start])
        elif kind == 2:
            pos = start
            while pos < end and stack:
                top = stack[-1]
                taken = min(end - pos, top[1])
                top[1] -= taken
                pos += taken
                spans.append((top[0] + top[1], pos))  # the rightmost braces of the run close first
                if top[1] == 0:
                    stack.pop()
            if pos < end and not table_depth:
                spans.append((pos, end))  # stray closing braces
        elif stack:
            continue
        elif kind == 3:  # the match starts at the "\n" before the line, which is kept
            if table_depth == 0:
                table_start = start + 1
            table_depth += 1
        elif table_depth:
            table_depth -= 1
            if table_depth == 0:
                spans.append((table_start, end))
        else:
            spans.append((start + 1, end))  # stray "|}"
    for position, still_open in stack:
        spans.append((position, position + still_open))
    if table_depth:
        spans.append((table_start, len(text)))
    return spans


def _cut_spans(text: str, spans: list[tuple[int, int]], depth: int = 0) -> str:
    """Delete the spans, except the outermost templates that carry text of the sentence
    (corpora/wiki_templates.py), which are replaced by that text."""
    spans.sort()
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue
        if start > pos:
            _append_after_cut(pieces, text[pos:start])
        shown = None
        if text.startswith("{{", start) and text[start + 2 : start + 3] != "{" and text.endswith("}}", 0, end):
            shown = render_template(text[start + 2 : end - 2], _nested_renderer(depth))
        if shown:
            pieces.append(shown)
        elif (
            pieces and end < len(text) and text[end].isdigit() and pieces[-1][-1:].isdigit()
        ):
            pieces.append(" ")  # "1775{{x}}1783": two numbers, never one
        pos = end
    _append_after_cut(pieces, text[pos:])
    return "".join(pieces)


def _nested_renderer(depth: int):
    """Arguments holding templates of their own ({{nowrap|5{{ndash}}6}}); real calls nest a level or
    two, deeper ones are dropped, which keeps the work bounded."""
    def render_argument(argument: str) -> str:
        if depth >= 3:
            return ""
        spans = _template_and_table_spans(argument)
        return _cut_spans(argument, spans, depth + 1) if spans else argument

    return render_argument


# ── language conversion (zh and the other wikis with script variants) ──

_CONVERTER_LANGS = frozenset(("zh", "gan", "wuu", "sr", "kk", "ku", "tg", "uz", "shi", "iu", "crh", "ban"))
_LANGUAGE_CONVERSION_RE = re.compile(r"-\{([^{}]*)\}-")
_VARIANT_RE = re.compile(r"\s*[a-z]{2,3}(?:-[a-z]+)?\s*:")
_VARIANT_PREFERENCE = ("zh-hans", "zh-cn", "zh", "zh-sg", "zh-my", "zh-hant", "zh-tw", "zh-hk", "zh-mo")


def _language_conversion(match: re.Match) -> str:
    """-{text}- shows text; -{zh-hans:A;zh-hant:B}- shows one variant (simplified first);
    -{H|rule}-, -{T|title}- and -{-|rule}- show nothing; -{R|text}- shows text."""
    content = match.group(1)
    if "|" in content:
        flags, rest = content.split("|", 1)
        flags = flags.strip()
        if flags and len(flags) <= 4 and (flags.isalpha() or flags == "-"):
            if set(flags) & set("HT-"):
                return ""
            content = rest
    if not _VARIANT_RE.match(content):
        return content
    variants = {}
    for part in content.split(";"):
        code, colon, shown = part.partition(":")
        if colon:
            variants.setdefault(code.strip().lower(), shown)
    for code in _VARIANT_PREFERENCE:
        if code in variants:
            return variants[code]
    return next(iter(variants.values()), content)


# ── 4. internal links ──

# "]]]" is one token: either a link closing after a single "]" of its own text (an external link at
# the end of a caption: "[[File:x|see [http://y z]]]") or a link followed by a literal "]".
_LINK_SPLIT_RE = re.compile(r"(\[\[|\]\]\](?!\])|\]\])")
# Characters that make "[[...]]" not a link in MediaWiki (it is shown literally).
_INVALID_TARGET_RE = re.compile(r"[<>\[\]{}\n]")
_MULTI_SPACE_RE = re.compile(r" {2,}")


def _prefix_key(prefix: str) -> str:
    key = prefix.lower()
    if "_" in key:
        key = key.replace("_", " ")
    key = key.strip()
    if "  " in key:
        key = " ".join(key.split())
    return key


def _render_internal_links(text: str, language: WikiLanguage) -> tuple[str, list[str]]:
    """Render [[links]]; article links become \\x01<index>\\x1f text \\x02 with targets[index]."""
    targets: list[str] = []
    if "[[" not in text:
        return (text.replace("]]", "") if "]]" in text else text), targets
    out: list[str] = []
    _render_links_into(text, out, targets, language)
    return "".join(out), targets


def _render_links_into(text: str, out: list[str], targets: list[str], language, depth: int = 0) -> None:
    """Append `text` to `out` with its links rendered. Brackets are paired with a stack, so a file's
    caption may hold links; an unpaired "[[" or "]]" is dropped alone (no "[[" survives)."""
    parts = _LINK_SPLIT_RE.split(text)  # text, token, text, token, ..., text
    count = len(parts)
    partner = [0] * count  # for an opening token: index of its closing token; 0 if unclosed
    stack = []
    for k in range(1, count, 2):
        if parts[k] == "[[":
            stack.append(k)
        elif stack:
            partner[stack.pop()] = k
    out.append(parts[0])
    k = 1
    while k < count:
        close = partner[k]
        if not close:  # a stray "]]" or an unclosed "[["
            _append_after_cut(out, parts[k + 1] if parts[k] != "]]]" else "]" + parts[k + 1])
            k += 2
            continue
        nested = close != k + 2
        body = "".join(parts[k + 1 : close]) if nested else parts[k + 1]
        following = parts[close + 1]
        if parts[close] == "]]]":
            if body.count("[") > body.count("]"):
                body += "]"
            else:
                following = "]" + following
        emitted = len(out)
        used = _render_link(body, nested, following, out, targets, language, depth)
        if len(out) == emitted:  # the link vanished (file, category, ...): repair the cut
            _append_after_cut(out, following[used:])
        else:
            out.append(following[used:] if used else following)
        k = close + 2


def _render_link(body: str, nested: bool, following: str, out: list[str], targets: list[str], language, depth: int) -> int:
    """Render one link to `out`; return how many characters of `following` its link trail took."""
    kinds, trail_re = language.prefix_kinds, language.linktrail_re
    target, bar, label = body.partition("|")
    if _INVALID_TARGET_RE.search(target):  # not a link: its text, without brackets
        _render_nested(body, nested, out, targets, language, depth)
        return 0
    written = target.strip()
    escaped = written.startswith(":")  # "[[:Category:X]]" links to the page instead of tagging
    title = written[1:].lstrip() if escaped else written
    kind = None
    colon = title.find(":")
    if colon > 0:
        kind = kinds.get(_prefix_key(title[:colon]))
        if kind == "self":
            title = title[colon + 1 :].lstrip()
            kind = None
        elif kind in ("file", "category", "lang") and not escaped:
            return 0  # dropped whole, caption and nested links included
        elif kind is None and _looks_like_media(title, label, language):
            return 0  # a file under a namespace name neither siteinfo nor the table knows
    if nested:
        # A link inside a link's text is not valid MediaWiki; keep the text and the inner links.
        _render_nested(label if bar else title, True, out, targets, language, depth)
        return 0
    used = 0
    trail = ""
    if trail_re is not None and following:
        match = trail_re.match(following)
        if match:
            trail = match.group()
            used = match.end()
    if not bar:
        shown = target.replace(":", "", 1) if escaped else target
    elif label:
        shown = label
    else:
        shown = _pipe_trick(title, colon if kind else -1)
    shown += trail
    if "\n" in shown or "<" in shown:
        shown = _single_line(shown)
    normalised = normalise_title(title) if kind is None else ""
    if not normalised:  # another namespace, another wiki, or a same-page "#Section" link
        out.append(shown)
        return used
    core = shown.strip(" ")
    if not core:
        out.append(shown)
        return used
    if "  " in core:  # internal double spaces are the link's own text: protect them from collapsing
        core = _MULTI_SPACE_RE.sub(lambda m: _KEPT_SPACE * len(m.group()), core)
    # Edge spaces ("[[ foo ]]") go outside the anchor, where they collapse with their neighbours.
    before = " " if shown[0] == " " else ""
    after = " " if shown[-1] == " " else ""
    out.append("%s%s%d%s%s%s%s" % (before, _ANCHOR_OPEN, len(targets), _ANCHOR_INDEX_END, core, _ANCHOR_CLOSE, after))
    targets.append(normalised)
    return used


def _render_nested(text: str, nested: bool, out: list[str], targets: list[str], language, depth: int) -> None:
    """Text holding links that is not itself a link. Real pages nest a level or two at most; deeper
    (junk) is flattened to its text without anchors, which keeps the work linear and the stack small."""
    if not nested:
        out.append(text)
    elif depth < 2:
        _render_links_into(text, out, targets, language, depth + 1)
    else:
        out.append(_LINK_SPLIT_RE.sub("", text))


_MEDIA_EXTENSION_RE = re.compile(
    r"\.(?:jpe?g|png|gif|svg|tiff?|webp|xcf|bmp|ogg|oga|ogv|webm|mp3|mp4|wav|flac|mid|midi|pdf|djvu|stl)\s*$", re.IGNORECASE
)


def _looks_like_media(title: str, label: str, language: WikiLanguage) -> bool:
    """"[[Xyz:Flag.svg|thumb|...]]" on a wiki whose File namespace is spelt "Xyz": a prefixed title
    naming a media file, or one whose first option is an image option, is a file, never an article."""
    if _MEDIA_EXTENSION_RE.search(title):
        return True
    first_option = label.split("|", 1)[0]
    return "|" in label and language.is_image_option(first_option)


def _single_line(shown: str) -> str:
    """Link text stays on one line, so that no line-based pass can split an anchor."""
    if "<" in shown:
        shown = _HTML_TAG_RE.sub(_tag_in_link_text, shown)
    return shown.replace("\n", " ")


def _tag_in_link_text(match: re.Match) -> str:
    return " " if match.group(2) or match.group(3) else ""


def _pipe_trick(title: str, colon: int) -> str:
    """"[[Paris, Texas|]]" shows "Paris", "[[Mercury (planet)|]]" shows "Mercury" (MediaWiki expands
    this on save, so it is rare in dumps)."""
    if colon > 0:
        title = title[colon + 1 :]
    title = strip_qualifier(title)
    for comma in (", ", "，"):
        title = title.split(comma, 1)[0]
    return title


# ── 5. everything else ──

_URL_START = (
    r"(?:(?:https?|ftps?|irc|ircs|gopher|telnet|nntp|sftp|ssh|svn|git|mms|worldwind)://|//"
    r"|(?:mailto|news|xmpp|sips?|tel|urn|geo|magnet|bitcoin):)"
)
# The label stops at "[" too: with "[http://x" repeated and no "]", each try then stops at the next
# opener instead of scanning to the end of the line (quadratic).
_EXTERNAL_LINK_RE = re.compile(r"\[%s[^\s\[\]<>\"\x00-\x08\x1f]*(?:[ \t]+([^\[\]\n]*))?\]" % _URL_START, re.IGNORECASE)


def _external_link_label(match: re.Match) -> str:
    return match.group(1) or ""


# Attributes may not hold markers: a tag holding half an anchor is left alone rather than cut.
_HTML_TAG_RE = re.compile(
    r"<(/?)(?:(%s)|(br)|(?:%s))\b(?:\s[^<>\x00-\x08\x1f]*)?/?\s*>" % (_BLOCK_TAGS, _INLINE_TAGS), re.IGNORECASE
)


def _html_tag_replacement(match: re.Match) -> str:
    if match.group(2):
        return "\n"
    if match.group(3):
        return " "
    return ""


_HEADING_RE = re.compile(r"\n(={1,6})[ \t]*([^\n]*?)[ \t]*\1[ \t]*(?=\n|\Z)")
_LIST_MARKER_RE = re.compile(r"\n(?:[*#:;]+|-{4,})[ \t]*")


def _heading_line(match: re.Match) -> str:
    return "\n%s%d%s" % (_HEADING, len(match.group(1)), match.group(2))


# "== Economy ==The economy is ..." (a line break lost in the source): MediaWiki shows it literally,
# "==" and all; read as the heading it was meant to be and the text on a line of its own.
_RUN_ON_HEADING_RE = re.compile(r"\n(={2,6})[ \t]*([^=\n]+?)[ \t]*\1(?!=)[ \t]*(?=[^\s=])")


def _run_on_heading(match: re.Match) -> str:
    return _heading_line(match) + "\n"


def _render_lines(text: str, language: WikiLanguage) -> str:
    """Headings -> "\\x07<level>text"; list markers, horizontal rules and behaviour switches dropped."""
    if "\n=" in text:
        text = _HEADING_RE.sub(_heading_line, text)
        if "\n==" in text:
            text = _RUN_ON_HEADING_RE.sub(_run_on_heading, text)
    text = _LIST_MARKER_RE.sub("\n", text)
    if "__" in text:
        text = language.behaviour_switch_re.sub("", text)
    return text


_QUOTE_SPLIT_RE = re.compile(r"('{2,})")


def _render_quotes(text: str) -> str:
    """Strip bold/italic quotes line by line (their state resets at each line end, as in MediaWiki);
    only lines holding "''" are touched. Bold runs before the first heading get \\x04...\\x05."""
    if "''" not in text:
        return text
    lead_end = text.find(_HEADING)
    if lead_end < 0:
        lead_end = len(text)
    pieces = []
    pos = 0
    while True:
        quotes = text.find("''", pos)
        if quotes < 0:
            break
        line_start = text.rfind("\n", pos, quotes) + 1 or pos
        line_end = text.find("\n", quotes)
        if line_end < 0:
            line_end = len(text)
        pieces.append(text[pos:line_start])
        pieces.append(_quotes_in_line(text[line_start:line_end], line_start < lead_end))
        pos = line_end
    pieces.append(text[pos:])
    return "".join(pieces)


def _quotes_in_line(line: str, mark_bold: bool) -> str:
    """MediaWiki's doQuotes: 2 quotes toggle italic, 3 bold, 5 both; 4 are an apostrophe and bold,
    more than 5 are apostrophes and bold-italic; if both counts are odd one bold is read as an
    apostrophe and italic (preferably one after a single-letter word: "l'''amour''")."""
    parts = _QUOTE_SPLIT_RE.split(line)
    italics = bolds = 0
    for k in range(1, len(parts), 2):
        run = len(parts[k])
        if run == 4:
            parts[k - 1] = _with_apostrophe(parts[k - 1])
            parts[k] = "'''"
        elif run > 5:
            parts[k - 1] = _with_apostrophe(parts[k - 1])
            parts[k] = "'''''"
        run = len(parts[k])
        italics += run != 3
        bolds += run != 2
    if italics % 2 and bolds % 2:
        _bold_to_apostrophe_italic(parts)
    out = [parts[0]]
    bold = False
    for k in range(1, len(parts), 2):
        piece = parts[k + 1]
        if len(parts[k]) != 2:
            bold = not bold
            if mark_bold:
                piece = _bold_marker(out, piece, bold)
        out.append(piece)
    if bold and mark_bold:
        _bold_marker(out, "", False)
    return "".join(out)


def _bold_marker(out: list[str], piece: str, opening: bool) -> str:
    """Add a bold marker to `out`, with the spaces at the run's edges moved outside it (so they still
    collapse with their neighbours); return what is left of `piece`."""
    if opening:
        stripped = piece.lstrip(" ")
        out.append(piece[: len(piece) - len(stripped)])
        out.append(_BOLD_OPEN)
        return stripped
    previous = out[-1]
    stripped = previous.rstrip(" ")
    out[-1] = stripped
    out.append(_BOLD_CLOSE)
    out.append(previous[len(stripped) :])
    return piece


def _bold_to_apostrophe_italic(parts: list[str]) -> None:
    single_letter = multi_letter = after_space = -1
    for k in range(1, len(parts), 2):
        if len(parts[k]) != 3:
            continue
        before = parts[k - 1]
        if before[-1:] == " ":
            if after_space < 0:
                after_space = k
        elif before[-2:-1] == " " or len(before) == 1:
            single_letter = k
            break
        elif multi_letter < 0:
            multi_letter = k
    chosen = next((k for k in (single_letter, multi_letter, after_space) if k >= 0), -1)
    if chosen >= 0:
        parts[chosen - 1] = _with_apostrophe(parts[chosen - 1])
        parts[chosen] = "''"


def _with_apostrophe(text: str) -> str:
    """Quotes MediaWiki shows as apostrophes ("l'''amour", a run of four or of six and more) add one
    apostrophe, and none after another: the typo "''Skënderbeut''''" shows "Skënderbeut''",
    which reads as markup, not as text."""
    return text if text[-1:] == "'" else text + "'"


_ENTITY_RE = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));")


def _decode_entity(match: re.Match) -> str:
    name = match.group(3)
    if name is not None:
        if name == "nbsp":
            return " "
        return html5.get(name + ";", match.group(0))
    code = int(match.group(1)) if match.group(1) else int(match.group(2), 16)
    if code in (0x09, 0x0A, 0x0D, 0xA0):  # whitespace in HTML: a space (and never a line break in a link)
        return " "
    # Control characters (which would pass for markers), surrogates and out-of-range stay literal.
    if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code > 0x10FFFF:
        return match.group(0)
    return chr(code)


_SPACES_RE = re.compile("  +")
_WORD_RE = re.compile(r"\w")
_EMPTY_MARKUP_RE = re.compile("\x01[0-9]+\x1f\x02|\x04\x05|\x06\x06")


# What dropped templates leave inside brackets and between separators: "( )", "(; ;)", "(, born",
# "Greek: , Apollōn". Marker characters are never matched, so no anchor is touched.
# \x06 (a nowiki edge) may sit inside: "(''{{x}}'')" keeps one between its two italic toggles.
# One pass, each alternative starting with a character class (which `re` scans for quickly):
# brackets holding only separators go, a separator just inside a bracket goes. The space a removal
# leaves before it is collapsed afterwards.
# The lookahead (the union of the alternatives' first characters) lets each position fail on one
# test instead of three (0.16 s instead of 0.26 per English excerpt).
_RESIDUE_RE = re.compile(
    r"(?=[(\[（［;,、，；])(?:"
    r"[(\[（［][\s\x06]*(?:[;,:、，；：/–—-][\s\x06]*)*[)\]）］]"  # not ".": "(...)" elides, "(.)" names a stop
    r"|(?P<opening>[(（])[\s\x06]*(?:[;,、，；][\s\x06]*)+"
    r"|[;,、，；](?:\s?[;,、，；]){0,7}\s?(?P<closing>[)）])"  # bounded: linear on ", , , ..."
    r")"
)
_DOUBLED_SEPARATOR_RE = re.compile(r"([,;:，；：、])(?:\s*[,;，；、])+")
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r" +([,;.:)])(?=\s|$)")


def _tidy(text: str, language: WikiLanguage) -> str:
    """Collapse spaces, strip lines, drop empty lines, headings and tail sections, repair residue."""
    if "\x1f\x02" in text or "\x04\x05" in text or "\x06\x06" in text:
        text = _EMPTY_MARKUP_RE.sub("", text)
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACES_RE.sub(" ", text)
    if any(pair in text for pair in _RESIDUE_PAIRS):
        text = _repair_brackets(text)
    text = _DOUBLED_SEPARATOR_RE.sub(r"\1", text)
    # A line without a letter or digit is what removed markup left ("." after "* {{DMOZ|..}}.");
    # such lines are short, so only short lines pay for the regex.
    lines = [line for line in (line.strip(" ") for line in text.split("\n")) if len(line) > 8 or _WORD_RE.search(line)]
    if "|" in text or _NOWIKI_PIPE in text:
        lines = [language.image_remnant_re.sub("", line) if "|" in line else line for line in lines]
        if language.types_pipe_as_danda:
            lines = [line for line in lines if not _is_pipe_separated(line)]
        else:
            lines = [line for line in lines if "|" not in line and _NOWIKI_PIPE not in line]
    if _HEADING in text:
        lines = _without_headings(lines, language)
    return "\n".join(line for line in lines if line)


# A line that still holds a pipe once every link, template, table and file is gone is not prose:
# on the five real excerpts (26 lines in 16 MB of text) it is a link whose brackets the author broke
# ("[[X|Y]", "]]X|Y]]", "X|Y" with none, "[[[X|Y]]", "[[X [(y)|Y]]"; MediaWiki shows them literally),
# notation ("f|S", "{τα| α στο A}", BNF "atom | list", ASCII's "\\|"), or a navigation bar. The line
# goes, as a <math> formula does; a nowiki'd pipe too (it is shown, and reads as markup all the same).
_NOWIKI_PIPE = chr(0xF0000 + ord("|"))


def _is_pipe_separated(line: str) -> bool:
    """Where authors type "|" for the danda "।" between whole sentences (Bengali, Hindi, Marathi …),
    only a line of short items between pipes is dropped: a navigation bar ("[[4 March]] | 5 March |
    [[6 March]]") or table residue (items of a navigation bar are a few words; sentences are longer)."""
    bars = line.count("|")
    return bars >= 2 and (len(line) - bars) / (bars + 1) <= _NAVIGATION_ITEM_CHARS


_NAVIGATION_ITEM_CHARS = 30


# Every residue holds one of these pairs; `in` tests (memchr speed) spare most pages the regex, which
# costs ~0.2 s per 5 MB of text.
_RESIDUE_PAIRS = ("( ", "(;", "(,", "(:", "()", " )", ";)", ",)", "[ ", "[]", " ]", "[;", "[,", "（", "［")


def _repair_brackets(text: str) -> str:
    for _ in range(3):  # "((; ))": each pass removes one level
        repaired = _RESIDUE_RE.sub(_residue_replacement, text)
        if repaired == text:
            break
        text = repaired
    while "  " in text:
        text = text.replace("  ", " ")
    if " ," in text or " ;" in text or " )" in text or " :" in text:
        text = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)
    return text


def _residue_replacement(match: re.Match) -> str:
    return match.group("opening") or match.group("closing") or ""


_MARKER_STRIP = dict.fromkeys(map(ord, _MARKER_CHARS))


def _without_headings(lines: list[str], language: WikiLanguage) -> list[str]:
    """Headings are not prose: their lines go, so that no context reads "history. Origin of the term
    The noun". Tail sections (See also, References, External links …, localised) go with everything
    under them, up to the next heading of the same or a higher level that is not a tail section."""
    kept = []
    dropping_below = 0  # level of the tail section being dropped; 0 when none
    for line in lines:
        if line[0] != _HEADING:
            if not dropping_below:
                kept.append(line)
            continue
        level = int(line[1]) if line[1:2].isdigit() else 1
        if dropping_below and level > dropping_below:
            continue
        title = _EXTRACT_INDEX_RE.sub("", line[2:]).translate(_MARKER_STRIP)
        dropping_below = level if language.is_tail_section(title) else 0
    return kept


_EXTRACT_INDEX_RE = re.compile("\x01[0-9]+\x1f")


# ── 6. markers -> offsets ──

_MARKER_SPLIT_RE = re.compile("([\x01\x02\x04\x05\x06])")
_RESTORE = {ord(_KEPT_SPACE): " "}
_RESTORE_NOWIKI = {**_RESTORE, **_NOWIKI_RESTORE}


def _extract_markers(text: str, targets: list[str], is_disambiguation: bool, had_nowiki: bool) -> ParsedPage:
    parts = _MARKER_SPLIT_RE.split(text)  # text, marker, text, marker, ..., text
    spans = []  # (start, end, target index)
    bold_spans = []
    anchor_start = bold_start = -1
    anchor_index = 0
    length = len(parts[0])
    for k in range(1, len(parts), 2):
        marker = parts[k]
        if marker == _ANCHOR_OPEN:
            piece = parts[k + 1]
            index_end = piece.find(_ANCHOR_INDEX_END)
            anchor_index = int(piece[:index_end])
            parts[k + 1] = piece[index_end + 1 :]
            anchor_start = length
        elif marker == _ANCHOR_CLOSE:
            if anchor_start >= 0:
                spans.append((anchor_start, length, anchor_index))
            anchor_start = -1
        elif marker == _BOLD_OPEN:
            bold_start = length
        elif marker == _BOLD_CLOSE:
            if bold_start >= 0:
                bold_spans.append((bold_start, length))
            bold_start = -1
        length += len(parts[k + 1])
    plain = "".join(parts[::2]) if len(parts) > 1 else text
    if had_nowiki:
        plain = plain.translate(_RESTORE_NOWIKI)
    elif _KEPT_SPACE in plain:
        plain = plain.translate(_RESTORE)
    anchors = []
    for start, end, index in spans:
        # Spaces at a link's edges are not part of the name it shows.
        while start < end and plain[start].isspace():
            start += 1
        while end > start and plain[end - 1].isspace():
            end -= 1
        if start < end:
            anchors.append(Anchor(start, end, targets[index]))
    names = dict.fromkeys(name for name in (plain[s:e].strip() for s, e in bold_spans) if name)
    return ParsedPage(plain, tuple(anchors), tuple(names), is_disambiguation)
