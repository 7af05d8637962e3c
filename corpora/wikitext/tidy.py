"""The end of pass 5 of corpora/wikitext/parse.py: spaces collapsed, lines stripped, empty lines, headings
and tail sections dropped, what removed markup left inside brackets and between separators repaired.
Most of its steps have compiled twins (corpora/wikitext/compiled/tidy.pyx)."""
from __future__ import annotations

import re

from corpora.wikitext.passes import chosen
from corpora.wiki.languages import WikiLanguage
from corpora.wikitext.markers import CATEGORY_LINK, HEADING, MARKER_CHARS, NOWIKI_PIPE

_SPACES_RE = re.compile("  +")
_WORD_RE = re.compile(r"\w")
_EMPTY_MARKUP_RE = re.compile("\x01[0-9]+\x1f\x02|\x04\x05|\x06\x06")


# What dropped templates leave inside brackets and between separators: "( )", "(; ;)", "(, born",
# "Greek: , Apollōn". Marker characters are never matched, so no anchor is touched.
# \x06 (a nowiki edge) may sit inside: "(''{{x}}'')" keeps one between its two italic toggles.
# One pass: brackets holding only separators go, a separator just inside a bracket goes. The space
# a removal leaves before it is collapsed afterwards.
# The pattern opens with one character class, the union of the alternatives' first characters, and
# each alternative checks with a lookbehind which character that was: `re` then skips in C to the
# next bracket or separator (it cannot when a pattern opens with a lookahead or with a choice
# between classes). Same matches as the three alternatives side by side, and faster
# (benchmarks/README.md).
_RESIDUE_RE = re.compile(
    r"(?P<first>[(\[（［;,、，；])(?:"
    r"(?<=[(\[（［])[\s\x06]*(?:[;,:、，；：/–—-][\s\x06]*)*[)\]）］]"  # not ".": "(...)" elides, "(.)" names a stop
    r"|(?<=[(（])(?P<opening>)[\s\x06]*(?:[;,、，；][\s\x06]*)+"
    r"|(?<=[;,、，；])(?:\s?[;,、，；]){0,7}\s?(?P<closing>[)）])"  # bounded: linear on ", , , ..."
    r")"
)
_DOUBLED_SEPARATOR_RE = re.compile(r"([,;:，；：、])(?:\s*[,;，；、])+")
# One space, not " +": it runs after runs of spaces are collapsed, and a pattern that opens with a
# repeat is tried at every space.
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r" ([,;.:)])(?=\s|$)")


def tidy(text: str, language: WikiLanguage) -> str:
    """Collapse spaces, strip lines, drop empty lines, headings and tail sections, repair residue."""
    text = _without_empty_markup_and_spaces_pass(text)
    if _has_residue_pair_pass(text):
        text = _repair_brackets(text)
    text = _without_doubled_separators_pass(text)
    lines = _worded_lines_pass(text)
    if CATEGORY_LINK in text:
        lines = [line for line in map(_without_category_navigation, lines) if line]
    if "|" in text or NOWIKI_PIPE in text:
        lines = [language.image_remnant_re.sub("", line) if "|" in line else line for line in lines]
        if language.types_pipe_as_danda:
            danda_re = _danda_pipe_re(language.danda_script)
            lines = [line for line in lines if _pipes_are_dandas(line, danda_re) and (
                not _is_pipe_separated(line) or line.endswith("|"))]  # short sentences, each ended
        else:
            lines = [line for line in lines if "|" not in line and NOWIKI_PIPE not in line]
    if "•" in text:
        lines = [line for line in lines if not _is_separated(line, "•")]
    if "=" in text and ("==" in text or "= =" in text):  # one character: found at memchr speed
        lines = [line for line in lines if line.startswith(HEADING) or not _HEADING_REMNANT_RE.search(line)]
    if HEADING in text:
        lines = _without_headings(lines, language)
    return "\n".join(line for line in lines if line)


def without_empty_markup_and_spaces(text: str) -> str:
    """Markup left empty (a link with no text, a bold run with nothing in it) goes, tabs become
    spaces and runs of spaces one."""
    if "\x1f\x02" in text or "\x04\x05" in text or "\x06\x06" in text:
        text = _EMPTY_MARKUP_RE.sub("", text)
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACES_RE.sub(" ", text)
    return text


def without_doubled_separators(text: str) -> str:
    """", ," and ";;" that removals left: the first separator stays."""
    return _DOUBLED_SEPARATOR_RE.sub(r"\1", text)


def worded_lines(text: str) -> list[str]:
    """The lines, stripped of spaces, that hold a letter or digit. A line without one is what removed
    markup left ("." after "* {{DMOZ|..}}."); such lines are short, so only short lines pay for the
    regex."""
    return [line for line in (line.strip(" ") for line in text.split("\n")) if len(line) > 8 or _WORD_RE.search(line)]


_CATEGORY_LINK_RE = re.compile(f"{CATEGORY_LINK}[^{CATEGORY_LINK}\n]*{CATEGORY_LINK}")
_NAVIGATION_WORDS = 3


def _without_category_navigation(line: str) -> str:
    """A line of category links and at most three other words ("Дивись також Категорія:Народились
    1815", "See also Category:X") is navigation and goes; in a longer line the link's text stays."""
    if CATEGORY_LINK not in line:
        return line
    rest = _CATEGORY_LINK_RE.sub(" ", line)
    if sum(1 for word in rest.split() if _WORD_RE.search(word)) <= _NAVIGATION_WORDS:
        return ""
    return line.replace(CATEGORY_LINK, "")


# A line that still holds a pipe once every link, template, table and file is gone is not prose:
# on the five real excerpts (26 lines in 16 MB of text) it is a link whose brackets the author broke
# ("[[X|Y]", "]]X|Y]]", "X|Y" with none, "[[[X|Y]]", "[[X [(y)|Y]]"; MediaWiki shows them literally),
# notation ("f|S", "{τα| α στο A}", BNF "atom | list", ASCII's "\\|"), or a navigation bar. The line
# goes, as a <math> formula does; a nowiki'd pipe too (it is shown, and reads as markup all the same).


# A heading's equals signs left in prose, which MediaWiki shows literally: a heading written after text
# on its line ("पर्यटन = = बाह्य दुवे==", "असते.= = जगप्रसिद्ध दरी"), one never closed ("===प"), or one
# whose signs a space split.
# Code's "a == b" neither ends its line with "==" nor spaces the signs.
_HEADING_REMNANT_RE = re.compile(r"^==|==\s*$|=\s=")
_LINK_INDEX_RE = re.compile("\x01[0-9]+\x1f")
_MARKERS_TABLE = dict.fromkeys(map(ord, MARKER_CHARS))


def _danda_pipe_re(script: str) -> re.Pattern:
    """A pipe typed for the danda: a letter or mark of the script (a digit of it, a closing bracket
    or quote) before it, at most one space between, and a space and a letter after it or the line's
    end after it."""
    return re.compile(rf"(?<=[{script}\)\"”’]) ?\|(?: (?=[^\W\d_])|$)")


def _pipes_are_dandas(line: str, danda_re: re.Pattern) -> bool:
    """Whether every pipe of the line stands for a danda between sentences of prose. A pipe at the line's
    start ("|खंडोबाचा"), after anything but the script's letters ("[ गांधार|गांधारच्या" holds an
    open bracket), before anything but a space and prose, or a nowiki'd one, is what a broken link or
    table left: the line goes, as it would in any language."""
    if NOWIKI_PIPE in line:
        return False
    plain = _LINK_INDEX_RE.sub("", line).translate(_MARKERS_TABLE)
    pipes = plain.count("|")
    if not pipes or plain.lstrip().startswith("|"):
        return not pipes
    if len(danda_re.findall(plain)) != pipes:
        return False
    depth = 0
    for ch in plain:  # never inside a bracket
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "|" and depth:
            return False
    return True


def _is_pipe_separated(line: str) -> bool:
    """Where authors type "|" for the danda "।" between whole sentences (Bengali, Hindi, Marathi …),
    only a line of short items between pipes is dropped: a navigation bar ("[[4 March]] | 5 March |
    [[6 March]]") or table residue (items of a navigation bar are a few words; sentences are longer)."""
    return _is_separated(line, "|")


def _is_separated(line: str, mark: str) -> bool:
    """A line of short items between two or more `mark`s: a navigation bar. ukwiki's year pages open
    with "[[Реформація]]{{•}} [[Епоха Просвітництва]]{{•}} …" ({{•}} shows " • "), which became the
    start of 512 of the 4,770 uk rows' queries."""
    bars = line.count(mark)
    return bars >= 2 and (len(line) - bars) / (bars + 1) <= _NAVIGATION_ITEM_CHARS


_NAVIGATION_ITEM_CHARS = 30


# Every residue holds one of these pairs: "( ", "(;", "(,", "(:", "()", " )", ";)", ",)", "[ ", "[]",
# " ]", "[;", "[,", "（", "［", or one with a nowiki edge for its space ("(\x06)": "(''{{x}}'')" leaves
# one between its italic toggles; real frwiki writes "(''{{langue|de|texte=…}}'')"). One scan finds
# whether a page has any (it opens at a bracket, rarer than spaces and separators; faster than
# 15 `in` tests), and spares most pages the repair.
_RESIDUE_PAIR_RE = re.compile(r"[(\[（［)\]](?:(?<=\()[ ;,:)\x06]|(?<=\[)[ \];,\x06]|(?<=[ ;,\x06]\))|(?<=[ \x06]\])|(?<=[（［]))")


def has_residue_pair(text: str) -> bool:
    return _RESIDUE_PAIR_RE.search(text) is not None


_without_empty_markup_and_spaces_pass = chosen(without_empty_markup_and_spaces)
_has_residue_pair_pass = chosen(has_residue_pair)
_without_doubled_separators_pass = chosen(without_doubled_separators)
_worded_lines_pass = chosen(worded_lines)


def without_residue(text: str) -> str:
    """One pass of _RESIDUE_RE's repairs."""
    return _RESIDUE_RE.sub(_residue_replacement, text)


_without_residue_pass = chosen(without_residue)


def _repair_brackets(text: str) -> str:
    for _ in range(3):  # "((; ))": each pass removes one level
        repaired = _without_residue_pass(text)
        if repaired == text:
            break
        text = repaired
    return _without_space_before_punctuation_pass(text)


def without_space_before_punctuation(text: str) -> str:
    """Runs of spaces made one, then a space before ",;.:)" that ends a word dropped: what a repair
    that emptied a bracket leaves ("Paris ( ) , born" -> "Paris , born" -> "Paris, born")."""
    while "  " in text:
        text = text.replace("  ", " ")
    if " ," in text or " ;" in text or " )" in text or " :" in text:
        text = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)
    return text


_without_space_before_punctuation_pass = chosen(without_space_before_punctuation)


def _residue_replacement(match: re.Match) -> str:
    if match.group(0) in ("()", "[]") and _is_code_identifier_end(match.string, match.start()):
        return match.group(0)  # "printf()", "call[]": written by the author, not left by a template
    if match.group("opening") is not None:  # "(; x" -> "(x": the bracket stays
        return match.group("first")
    return match.group("closing") or ""


def _is_code_identifier_end(text: str, position: int) -> bool:
    """An ASCII letter, digit or "_" before `position`: a template's residue follows a space ("Paris
    ()") or, in scripts without spaces, a CJK character ("東京（）"), not code."""
    return position > 0 and text[position - 1] in _IDENTIFIER_CHARS


_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_MARKER_STRIP = dict.fromkeys(map(ord, MARKER_CHARS))


def _without_headings(lines: list[str], language: WikiLanguage) -> list[str]:
    """Headings are not prose: their lines go, so that no context reads "history. Origin of the term
    The noun". Tail sections (See also, References, External links …, localised) go with everything
    under them, up to the next heading of the same or a higher level that is not a tail section."""
    kept = []
    dropping_below = 0  # level of the tail section being dropped; 0 when none
    for line in lines:
        if line[0] != HEADING:
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
