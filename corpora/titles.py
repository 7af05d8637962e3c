"""Page titles in MediaWiki's canonical form.

`normalise_title` is called for every link of every article, so its common case (a plain title with
nothing to decode) is a handful of `in` tests and one split/join.
"""
from __future__ import annotations

import html
import re
from urllib.parse import unquote

# Characters MediaWiki deletes from titles (MediaWikiTitleCodec): bidi marks that editors paste in.
_BIDI_MARKS = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202b\u202c\u202d\u202e"))
_BIDI_RE = re.compile("[\u200e\u200f\u202a-\u202e]")


def upper_first(title: str) -> str:
    """$wgCapitalLinks: upper-case the first character, as MediaWiki's Language::ucfirst does."""
    first = title[0]
    if first.isascii():
        return first.upper() + title[1:] if "a" <= first <= "z" else title
    # Georgian Mkhedruli has upper-case forms since Unicode 11, but MediaWiki keeps it as written.
    if "\u10d0" <= first <= "\u10ff":
        return title
    upper = first.upper()
    # Python expands some letters ("ß" -> "SS", "ŉ" -> "ʼN"); MediaWiki leaves those alone.
    if len(upper) != 1 or upper == first:
        return title
    return upper + title[1:]


def normalise_title(raw: str) -> str:
    """A link target or page title in canonical form; "" for a same-page link ("#Section") or nothing.

    Entities are decoded, "%xx" escapes too (MediaWiki url-decodes targets containing "%"), the
    "#fragment" dropped, "_" and any run of whitespace become one space, a leading ":" (the escape in
    "[[:Category:X]]") is dropped, and the first letter is upper-cased.
    """
    title = raw
    if "&" in title:
        title = html.unescape(title)
    if "%" in title:
        title = unquote(title)
    hash_at = title.find("#")
    if hash_at >= 0:
        title = title[:hash_at]
    if "_" in title:
        title = title.replace("_", " ")
    if not title.isascii() and _BIDI_RE.search(title):
        title = title.translate(_BIDI_MARKS)
    # str.split() also splits on NBSP and the other Unicode spaces MediaWiki folds into "_".
    title = " ".join(title.split())
    if title.startswith(":"):
        title = title[1:].lstrip()
    return upper_first(title) if title else title


def has_fragment(raw: str) -> bool:
    """Whether a link target names a section ("KDE#Plasma", "KDE&#35;Plasma"), not a whole page."""
    title = html.unescape(raw) if "&" in raw else raw
    if "%" in title:
        title = unquote(title)
    return "#" in title


def names_page(text: str, title: str) -> bool:
    """Whether a link's text is the page's name: its title or the title without its "(qualifier)",
    up to case, underscores and runs of spaces."""
    folded = " ".join(text.replace("_", " ").split()).casefold()
    return folded == title.casefold() or folded == strip_qualifier(title).casefold()


_QUALIFIER_RE = re.compile(r"\s*\([^()]*\)\s*$")


def strip_qualifier(title: str) -> str:
    """Drop a trailing disambiguating "(qualifier)": "Mercury (planet)" -> "Mercury".

    A comma is not a qualifier here ("Paris, Texas" is the town's name). A title that is only a
    parenthesis ("(Untitled)") is kept whole.
    """
    stripped = _QUALIFIER_RE.sub("", title)
    return stripped if stripped else title
