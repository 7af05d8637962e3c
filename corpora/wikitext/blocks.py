"""Passes 1-3 of corpora/wikitext/parse.py, which remove whole constructs: comments and extension tags,
templates and tables (the disambiguation check reads the template names first), and zh-style
language conversion."""
from __future__ import annotations

import re

from corpora.wikitext.passes import chosen
from corpora.wiki.languages import WikiLanguage
from corpora.wikitext.tex_text import tex_to_text
from corpora.wikitext.transcriptions import is_transcription, transcription
from corpora.wikitext.templates.inline import is_block_quotation, render as render_template
from corpora.wikitext.lines import decode_entities
from corpora.wikitext.markers import NOWIKI_EDGE, NOWIKI_PROTECT, append_after_cut

# Extension tags whose content is not text: removed with it, and opaque to template/link matching
# (MediaWiki's preprocessor skips them whole). "nowiki" is opaque but its content is kept.
_OPAQUE_TAGS = (
    "references|ref|gallery|math|chem|ce|syntaxhighlight|source|pre|timeline|score|graph|mapframe|"
    "maplink|templatedata|templatestyles|imagemap|hiero|inputbox|categorytree|charinsert|indicator|"
    "includeonly|section|dynamicpagelist|rss|nowiki"
)
OPAQUE_TAG_NAMES = frozenset(_OPAQUE_TAGS.split("|"))



# ── 1. comments and extension tags ──

_OPAQUE_OPEN_RE = re.compile(r"<!--|<(%s)(?=[\s/>])[^<>]*>" % _OPAQUE_TAGS, re.IGNORECASE)
_CLOSE_TAG_RES: dict[str, re.Pattern] = {}


def _close_tag_re(name: str) -> re.Pattern:
    pattern = _CLOSE_TAG_RES.get(name)
    if pattern is None:
        pattern = _CLOSE_TAG_RES[name] = re.compile(r"</%s\s*>" % name, re.IGNORECASE)
    return pattern


def drop_comments_and_extension_tags(text: str) -> tuple[str, bool]:
    """Remove comments and opaque extension tags in one left-to-right scan (the first opener wins, as
    in MediaWiki: a comment inside <ref> is part of the ref, a <ref> inside a comment is comment).
    corpora/wikitext/compiled/blocks.pyx has a twin."""
    if "<" not in text:
        return text, False
    pieces: list[str] = []
    pos = 0
    had_nowiki = False
    for start, open_end, content_end, end, name in _opaque_spans(text):
        append_after_cut(pieces, text[pos:start])
        if name == "math" or name == "nowiki":
            replacement = shown_opaque_content(text, start, open_end, content_end, end, name)
            if replacement:
                pieces.append(replacement)
                had_nowiki = True
        pos = end
    if pos == 0:
        return text, False
    append_after_cut(pieces, text[pos:])
    return "".join(pieces), had_nowiki


_NOWIKI_QUOTE_RE = re.compile(r"(?<!')''(?!')")


def _opaque_spans(text: str):
    """(start, opener's end, content's end, end, lower-case tag name) of each comment ("" its name) and
    extension tag, in text order. A self-closed or unclosed tag has no content: its content ends
    where its opener does."""
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
            yield start, open_end, open_end, end, ""
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
        yield start, open_end, content_end, end, name
        search_from = end


def shown_opaque_content(text: str, start: int, open_end: int, content_end: int, end: int, name: str) -> str:
    """What an extension tag whose content shows leaves in the text: a <math> formula inside a
    sentence as its words, <nowiki>'s content literally; "" for anything else."""
    replacement = ""
    if name == "math" and content_end > open_end and _is_inline(text, start, end, text[start:open_end]):
        tex = decode_entities(text[open_end:content_end])
        shown = tex_to_text(tex)
        if shown:  # a formula in a sentence is part of it (corpora/wikitext/tex_text.py); shown, not parsed
            replacement = NOWIKI_EDGE + shown.translate(NOWIKI_PROTECT) + NOWIKI_EDGE
            # "<math>~n~</math>photon": a tie at an edge keeps the formula apart from a word
            if tex.rstrip().endswith("~") and text[end : end + 1].isalnum():
                replacement += " "
            if tex.lstrip().startswith("~") and text[start - 1 : start].isalnum():
                replacement = " " + replacement
    elif name == "nowiki":
        # Content kept literally; the edges also stop a link trail ("[[bus]]<nowiki/>es").
        content = text[open_end:content_end]
        if "''" in content:
            # "<nowiki>''</nowiki>Thriller<nowiki>''</nowiki>", "<nowiki>''Μακεδονία''</nowiki>":
            # two apostrophes typed as a quotation mark, escaped so they do not italicise; they
            # read as one.
            content = _NOWIKI_QUOTE_RE.sub('"', content)
        if "&" in content:  # "<nowiki>&lt;br&gt;</nowiki>" shows "<br>": entities are decoded
            content = decode_entities(content)  # before the protection hides their ";"
        content = content.translate(NOWIKI_PROTECT)
        replacement = NOWIKI_EDGE + content + NOWIKI_EDGE
    return replacement


def _is_inline(text: str, start: int, end: int, opener: str) -> bool:
    """A formula inside a sentence, not a display one: no display="block", and not alone on its line
    (":<math>…</math>" indented, "* <math>…</math>" a list item of formulas, or a line of its own,
    with at most punctuation after it)."""
    if "display" in opener and "block" in opener.lower():
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[line_start:start]
    after = text[end : len(text) if line_end < 0 else line_end]
    return bool(before.strip(" \t:*#;")) or bool(after.strip(" \t.,;"))


# ── 2. disambiguation ──

_TEMPLATE_NAME_RE = re.compile(r"\{\{\s*([^{}|\n<>\[\]]{1,120}?)\s*(?:\||\}\})")


def has_disambiguation_template(text: str, language: WikiLanguage) -> bool:
    if language.has_disambiguation_switch(text):
        return True
    if "{{" not in text:
        return False
    # Each name once: a page calls {{cite web}} and its kin dozens of times.
    return any(language.is_disambiguation_template(name) for name in set(_TEMPLATE_NAME_RE.findall(text)))


# ── 3. templates and tables ──

# Brace runs ("{{{" of a parameter counts 3, so "{{a|{{{b}}}}}" balances), and table delimiters,
# which MediaWiki only sees at a line start ("{|" may follow indentation colons). "|}}" at a line start
# closes a template, not a table. Each alternative opens with a literal character outside its group:
# `re` then skips to the next "{", "}" or line break at C speed instead of trying every alternative
# at every position (several times faster on real pages). The groups
# only tell the kinds apart; spans are the whole match.
# HTML <table> … </table> (kinds 5 and 6) are tables too: 6 of the 532 Greek and 2 of the 292
# Vietnamese excerpt pages write one (a periodic table, year grids, bus routes), whose cells would
# otherwise become lines of prose with hundreds of links. Only those pages pay for stopping at "<".
_BRACE_TOKEN_RE = re.compile(r"\{(\{+)|\}(\}+)|\n([ \t:]*\{\|)|\n([ \t]*\|\}(?!\}))")
_BRACE_OR_HTML_TABLE_TOKEN_RE = re.compile(_BRACE_TOKEN_RE.pattern + r"|<((?i:table)\b)[^<>]*>|<(/(?i:table))\s*>")
_HTML_TABLE_OPEN_RE = re.compile(r"<(?i:table)")  # one scan that skips to each "<", faster than 3 `in` tests


def _has_html_table(text: str) -> bool:
    return "<" in text and _HTML_TABLE_OPEN_RE.search(text) is not None  # most pages have no "<" left


def drop_templates_and_tables(text: str, lang: str = "") -> str:
    """Templates and tables removed; the templates that carry words of the sentence on wiki `lang`
    (corpora/wikitext/templates/inline.py) replaced by their text."""
    html_tables = _has_html_table(text)
    if "{" not in text and "|}" not in text and not html_tables:
        return text
    if html_tables:
        spans = _template_and_table_spans(text, _BRACE_OR_HTML_TABLE_TOKEN_RE)
    else:
        spans = _template_and_table_spans_pass(text)
    return _cut_spans(text, spans, lang) if spans else text


def _template_and_table_spans(text: str, tokens: re.Pattern = _BRACE_TOKEN_RE) -> list[tuple[int, int]]:
    """Spans (possibly nested or overlapping) to delete.

    Braces are matched as characters: a closing run takes braces from the innermost open run, so a
    run can close several templates or part of one. Inside a template, table tokens are ignored (the
    template is dropped whole anyway). An unclosed "{{" loses only its braces; an unclosed table runs
    to the end of the page; an unclosed <table> loses only its tag (render_html_tags), since
    MediaWiki shows the text after it.
    """
    spans = []
    stack: list[list[int]] = []  # [position of an open brace run, braces still open in it]
    table_depth = 0
    table_start = 0
    html_tables: list[int] = []  # start of each open <table>
    for match in tokens.finditer(text):
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
        elif kind == 5:
            html_tables.append(start)
        elif kind == 6:
            if html_tables:
                opened = html_tables.pop()
                if not html_tables:
                    spans.append((opened, end))
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


def template_and_table_spans(text: str) -> list[tuple[int, int]]:
    """The spans of a text without HTML tables (most pages); corpora/wikitext/compiled/blocks.pyx has a twin."""
    return _template_and_table_spans(text, _BRACE_TOKEN_RE)


_template_and_table_spans_pass = chosen(template_and_table_spans)


_LOOKBACK_CHARS = 400  # enough for the sentence around a transcription; keeps the check linear


def _follows_a_word(pieces: list[str]) -> bool:
    """Whether the text before a cut ends with a word (or its closing quote), outside brackets: a
    transcription there is part of the sentence. After a bracket, a label's colon, a comma or a bold
    name, or anywhere inside brackets ("Берлин (Berlin {{IPA|…}})"), it is a pronunciation aside."""
    line: list[str] = []
    length = 0
    for piece in reversed(pieces):
        newline = piece.rfind("\n", max(0, len(piece) - _LOOKBACK_CHARS))
        line.append(piece[max(newline + 1, len(piece) - _LOOKBACK_CHARS) :])
        length += len(line[-1])
        if newline >= 0 or length >= _LOOKBACK_CHARS:
            break
    before = "".join(reversed(line))[-_LOOKBACK_CHARS:].rstrip()
    if not before or not (before[-1].isalnum() or before[-1] in "'\"»”’」』"):
        return False
    if before.endswith("'''"):  # "'''Actinopterygii''' {{IPAc-en|…}}": the lead's pronunciation
        return False
    return before.count("(") + before.count("（") <= before.count(")") + before.count("）")


def _cut_spans(text: str, spans: list[tuple[int, int]], lang: str, depth: int = 0) -> str:
    """Delete the spans, except the outermost templates that carry text of the sentence
    (corpora/wikitext/templates/inline.py), which are replaced by that text."""
    spans.sort()
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue
        if start > pos:
            append_after_cut(pieces, text[pos:start])
        shown = None
        if text.startswith("{{", start) and text[start + 2 : start + 3] != "{" and text.endswith("}}", 0, end):
            body = text[start + 2 : end - 2]
            # A quotation before any text of the page is its epigraph, not its first sentence.
            if not (depth == 0 and is_block_quotation(body) and not any(piece.strip() for piece in pieces)):
                shown = render_template(body, _nested_renderer(lang, depth), lang)
            if shown is None and is_transcription(body.split("|", 1)[0], lang) and _follows_a_word(pieces):
                shown = transcription(body)  # "the vowel {{IPA|/a/}}": the sentence's subject
        if shown:
            pieces.append(shown)
        elif (
            pieces and end < len(text) and text[end].isdigit() and pieces[-1][-1:].isdigit()
        ):
            pieces.append(" ")  # "1775{{x}}1783": two numbers, never one
        pos = end
    append_after_cut(pieces, text[pos:])
    return "".join(pieces)


def _nested_renderer(lang: str, depth: int):
    """Arguments holding templates of their own ({{nowrap|5{{ndash}}6}}); real calls nest a level or
    two, deeper ones are dropped, which keeps the work bounded."""
    def render_argument(argument: str) -> str:
        if depth >= 3:
            return ""
        spans = _template_and_table_spans_pass(argument)
        return _cut_spans(argument, spans, lang, depth + 1) if spans else argument

    return render_argument


# ── language conversion (zh and the other wikis with script variants) ──

CONVERTER_LANGS = frozenset(("zh", "gan", "wuu", "sr", "kk", "ku", "tg", "uz", "shi", "iu", "crh", "ban"))
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


def convert_language_variants(text: str) -> str:
    return _LANGUAGE_CONVERSION_RE.sub(_language_conversion, text)
