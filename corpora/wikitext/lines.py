"""Pass 5 of corpora/wikitext/parse.py, everything inline or per line: external links, HTML tags,
headings and list markers, bold and italic quotes (the lead's bold names marked) and character
entities. The final tidying of spaces, residue and tail sections is corpora/wikitext/tidy.py."""
from __future__ import annotations

import re
from html.entities import html5

from corpora.wikitext.passes import chosen
from corpora.wiki.languages import WikiLanguage
from corpora.wikitext.markers import BOLD_CLOSE, BOLD_OPEN, HEADING

# HTML tags MediaWiki accepts (Sanitizer) plus extension tags whose content is text: unwrapped.
_BLOCK_TAGS = "p|div|blockquote|center|ul|ol|li|dl|dt|dd|table|caption|tr|td|th|h[1-6]|hr"
_INLINE_TAGS = (
    "abbr|bdi|bdo|big|b|cite|code|data|del|dfn|em|font|ins|i|kbd|mark|q|rb|rp|rtc|rt|ruby|samp|small|"
    "span|strike|strong|sub|sup|s|time|tt|u|var|wbr|poem|noinclude|onlyinclude|translate|tvar|"
    "languages|nowiki"
)


# ── 5. everything else ──

URL_START = (
    r"(?:(?:https?|ftps?|irc|ircs|gopher|telnet|nntp|sftp|ssh|svn|git|mms|worldwind)://|//"
    r"|(?:mailto|news|xmpp|sips?|tel|urn|geo|magnet|bitcoin):)"
)
URL_START_RE = re.compile(URL_START, re.IGNORECASE)  # "[[http://…]]" and definition terms test with it
# As MediaWiki's (Parser::handleExternalLinks): the URL runs to the first space of any kind (the
# ideographic space of "[https://…　Amnesty International]" on jawiki too), "<", '"' or "''" (quotes
# are rendered before external links there), and the label follows after any spaces, or none. The
# label stops at "[" too: with "[http://x" repeated and no "]", each try then stops at the next
# opener instead of scanning to the end of the line (quadratic).
_EXTERNAL_LINK_RE = re.compile(
    r"\[%s[^\s\[\]<>\"\x00-\x08\x1f']*(?:'(?!')[^\s\[\]<>\"\x00-\x08\x1f']*)*[^\S\n]*([^\[\]\n]*)\]" % URL_START,
    re.IGNORECASE,
)


def _external_link_label(match: re.Match) -> str:
    return match.group(1) or ""


# Attributes may not hold markers: a tag holding half an anchor is left alone rather than cut.
HTML_TAG_RE = re.compile(
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
    return "\n%s%d%s" % (HEADING, len(match.group(1)), match.group(2))


# "== Economy ==The economy is ..." (a line break lost in the source): MediaWiki shows it literally,
# "==" and all; read as the heading it was meant to be and the text on a line of its own.
_RUN_ON_HEADING_RE = re.compile(r"\n(={2,6})[ \t]*([^=\n]+?)[ \t]*\1(?!=)[ \t]*(?=[^\s=])")


def _run_on_heading(match: re.Match) -> str:
    return _heading_line(match) + "\n"


def without_list_markers(text: str) -> str:
    """List markers ("*", "#", ":", ";" runs) and horizontal rules ("----") at line starts dropped, with
    the spaces after them; the lines stay."""
    return _LIST_MARKER_RE.sub("\n", text)


_without_list_markers_pass = chosen(without_list_markers)


def render_lines(text: str, language: WikiLanguage) -> str:
    """Headings -> "\\x07<level>text"; list markers, horizontal rules and behaviour switches dropped."""
    if "\n=" in text:
        text = _HEADING_RE.sub(_heading_line, text)
        # Once headings are markers, few pages hold "=" at all: one character, found at memchr speed,
        # where a search for three reads the whole page.
        if "=" in text and "\n==" in text:
            text = _RUN_ON_HEADING_RE.sub(_run_on_heading, text)
    text = _without_list_markers_pass(text)
    if any(mark in text for mark in language.behaviour_switch_marks):
        text = language.behaviour_switch_re.sub("", text)
    return text


_QUOTE_SPLIT_RE = re.compile(r"('{2,})")


def render_quotes(text: str) -> str:
    """Strip bold/italic quotes line by line (their state resets at each line end, as in MediaWiki);
    only lines holding "''" are touched. Bold runs before the first heading get \\x04...\\x05."""
    if "''" not in text:
        return text
    lead_end = text.find(HEADING)
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
        pieces.append(_quotes_in_line_pass(text[line_start:line_end], line_start < lead_end))
        pos = line_end
    pieces.append(text[pos:])
    return "".join(pieces)


def quotes_in_line(line: str, mark_bold: bool) -> str:
    """MediaWiki's doQuotes: 2 quotes toggle italic, 3 bold, 5 both; 4 are an apostrophe and bold,
    more than 5 are apostrophes and bold-italic; if both counts are odd one bold is read as an
    apostrophe and italic (preferably one after a single-letter word: "l'''amour''")."""
    parts = _QUOTE_SPLIT_RE.split(line)
    italics = bolds = 0
    for k in range(1, len(parts), 2):
        run = len(parts[k])
        if run == 4:
            parts[k - 1] = with_apostrophe(parts[k - 1])
            parts[k] = "'''"
        elif run > 5:
            parts[k - 1] = with_apostrophe(parts[k - 1])
            parts[k] = "'''''"
        run = len(parts[k])
        italics += run != 3
        bolds += run != 2
    if italics % 2 and bolds % 2:
        bold_to_apostrophe_italic(parts)
    out = [parts[0]]
    bold = False
    for k in range(1, len(parts), 2):
        piece = parts[k + 1]
        if len(parts[k]) != 2:
            bold = not bold
            if mark_bold:
                piece = bold_marker(out, piece, bold)
        out.append(piece)
    if bold and mark_bold:
        bold_marker(out, "", False)
    return "".join(out)


_quotes_in_line_pass = chosen(quotes_in_line)


def bold_marker(out: list[str], piece: str, opening: bool) -> str:
    """Add a bold marker to `out`, with the spaces at the run's edges moved outside it (so they still
    collapse with their neighbours); return what is left of `piece`."""
    if opening:
        stripped = piece.lstrip(" ")
        out.append(piece[: len(piece) - len(stripped)])
        out.append(BOLD_OPEN)
        return stripped
    previous = out[-1]
    stripped = previous.rstrip(" ")
    out[-1] = stripped
    out.append(BOLD_CLOSE)
    out.append(previous[len(stripped) :])
    return piece


def bold_to_apostrophe_italic(parts: list[str]) -> None:
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
        parts[chosen - 1] = with_apostrophe(parts[chosen - 1])
        parts[chosen] = "''"


def with_apostrophe(text: str) -> str:
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




def render_external_links(text: str) -> str:
    """An external link's label is kept, its URL dropped."""
    return _EXTERNAL_LINK_RE.sub(_external_link_label, text)


# "<h2>Early life</h2>" is a heading as "== Early life ==" is: written as one, so that render_lines
# marks it and its line goes (and a tail section under it) like any other heading.
_HTML_HEADING_RE = re.compile(r"<h([1-6])\b[^<>]*>[ \t]*([^\n<]*(?:<(?!/h\1)[^\n<]*)*?)[ \t]*</h\1\s*>", re.IGNORECASE)
_HTML_HEADING_OPEN_RE = re.compile(r"<[hH][1-6]")


def _html_heading(match: re.Match) -> str:
    marks = "=" * int(match.group(1))
    return "\n%s %s %s\n" % (marks, match.group(2), marks)


# A number's superscript exponent keeps a caret, as {{e}} and <math> do: "10<sup>9</sup>" glued would
# read "109" (uk "«гіга» (109)", "1,2×10−10 м" in the real dumps). After a letter a superscript stays
# glued, as plain text writes units ("km2"). After a formula (its nowiki edge, \x06) it is the
# formula's power: el "∣Ψ(x,y,z,t)∣<sup>2</sup>" is "∣Ψ(x,y,z,t)∣^2", not "…∣2".
# The lookbehind follows the "<" so that `re` skips from "<" to "<" in C: opening the pattern, it
# would be tried at every character.
_NUMERIC_SUPERSCRIPT_RE = re.compile(r"<(?<=[\d\x06]<)sup\s*>\s*((?:[-−+]|&minus;)?\d+)\s*</sup\s*>", re.IGNORECASE)


def render_html_tags(text: str) -> str:
    """HTML headings become wiki headings; block tags a line break, <br> a space; inline tags go."""
    if _HTML_HEADING_OPEN_RE.search(text):
        text = _HTML_HEADING_RE.sub(_html_heading, text)
    # No test for "sup" first: the pattern skips to each "<" in C, faster than `in` reads the page
    # for a three-letter word (once per casing, as the pattern ignores case).
    text = _NUMERIC_SUPERSCRIPT_RE.sub(r"^\1", text)
    return HTML_TAG_RE.sub(_html_tag_replacement, text)


def decode_entities(text: str) -> str:
    return _ENTITY_RE.sub(_decode_entity, text)
