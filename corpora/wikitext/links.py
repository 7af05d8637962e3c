"""Pass 4 of corpora/wikitext/parse.py: [[internal links]]. Article links become anchor markers with an
index into the list of targets; files, categories and interlanguage links vanish; other namespaces
keep their text."""
from __future__ import annotations

import re

from corpora.wiki.languages import WikiLanguage
from corpora.titles import has_fragment, names_page, normalise_title, strip_qualifier
from corpora.wikitext.lines import HTML_TAG_RE, URL_START_RE
from corpora.wikitext.markers import (
    ANCHOR_CLOSE,
    ANCHOR_INDEX_END,
    ANCHOR_OPEN,
    CATEGORY_LINK,
    KEPT_SPACE,
    NOWIKI_EDGE,
    append_after_cut,
)

# ── 4. internal links ──

# "]]]" is one token: either a link closing after a single "]" of its own text (an external link at
# the end of a caption: "[[File:x|see [http://y z]]]") or a link followed by a literal "]".
_LINK_SPLIT_RE = re.compile(r"(\[\[|\]\]\](?!\])|\]\])")
# Characters that make "[[...]]" not a link in MediaWiki (it is shown literally).
_INVALID_TARGET_RE = re.compile(r"[<>\[\]{}\n]")
_MULTI_SPACE_RE = re.compile(r" {2,}")
_LIST_MARKER_CHARS = "*#:;"


def _prefix_key(prefix: str) -> str:
    key = prefix.lower()
    if "_" in key:
        key = key.replace("_", " ")
    key = key.strip()
    if "  " in key:
        key = " ".join(key.split())
    return key


def render_internal_links(text: str, language: WikiLanguage) -> tuple[str, list[str]]:
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
            append_after_cut(out, parts[k + 1] if parts[k] != "]]]" else "]" + parts[k + 1])
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
        used = render_link(body, nested, following, out, targets, language, depth)
        if len(out) == emitted:  # the link vanished (file, category, ...): repair the cut
            append_after_cut(out, following[used:])
        else:
            out.append(following[used:] if used else following)
        k = close + 2


def render_link(body: str, nested: bool, following: str, out: list[str], targets: list[str], language, depth: int) -> int:
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
        elif kind is None and URL_START_RE.match(title):  # "[[http://x label]]": no article;
            out.append("[" + body + "]")  # an external link in brackets, whose label that pass keeps
            return 0
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
    if kind == "category" and not bar:
        # "[[:Категорія:Народились 1815]]" shows its title with the namespace: ukwiki's year pages hold
        # "''Дивись також [[:Категорія:Народились 1815]]''" lines, in 27% of the uk rows. Marked, so
        # that tidy can drop such a line whole (a labelled link is prose: "[[:Категорія:X|поетів]]").
        out.append(CATEGORY_LINK + shown + CATEGORY_LINK)
        return used
    if not normalised:  # another namespace, another wiki, or a same-page "#Section" link
        # "[[#Section]]" at a line's start shows "#Section"; the mark keeps the list pass off its "#"
        out.append(NOWIKI_EDGE + shown if shown and shown[0] in _LIST_MARKER_CHARS else shown)
        return used
    core = shown.strip(" ")
    if not core:
        out.append(shown)
        return used
    if "#" in title and has_fragment(title) and not names_page(core, normalised):
        # A link to a section whose text names the section's topic, not the page ("[[KDE#Plasma|KDE
        # Plasma Desktop]]", "[[Anarchism in France#Today|France]]"): no mention of the page. (The
        # paper's WikiExtractor links kept the fragment in the target, so they matched no article.)
        out.append(shown)
        return used
    if "  " in core:  # internal double spaces are the link's own text: protect them from collapsing
        core = _MULTI_SPACE_RE.sub(lambda m: KEPT_SPACE * len(m.group()), core)
    # Edge spaces ("[[ foo ]]") go outside the anchor, where they collapse with their neighbours.
    before = " " if shown[0] == " " else ""
    after = " " if shown[-1] == " " else ""
    out.append("%s%s%d%s%s%s%s" % (before, ANCHOR_OPEN, len(targets), ANCHOR_INDEX_END, core, ANCHOR_CLOSE, after))
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
        shown = HTML_TAG_RE.sub(_tag_in_link_text, shown)
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
