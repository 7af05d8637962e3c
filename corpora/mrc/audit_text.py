"""The audit's checks of text (corpora/mrc/audit.py): wiki markup, brackets left empty, years glued
together, sentence marks glued to words."""
from __future__ import annotations

import re

from corpora.wiki.languages import wiki_language

# Tags: the wikitext-only ones (<ref>, <gallery> …), any tag with attributes, and self-closing
# <br/>. A bare "<s>" or "<font>" is left alone: articles about HTML or letters write them as text
# ("&lt;s&gt; is an HTML tag"), which MediaWiki shows literally.
_WIKI_TAGS = (
    "ref|references|gallery|nowiki|math|chem|ce|timeline|imagemap|templatestyles|templatedata|section|noinclude|"
    "includeonly|onlyinclude|syntaxhighlight|source|score|poem|hiero|mapframe|maplink|graph|inputbox|categorytree"
)
_GENERIC_MARKUP = (
    r"\[\[|\]\]|\{\{|\}\}|\||''|==|__[A-Z]{3,}__|&[a-z]+;"
    r"|<\s*/?\s*(?:%s)\b[^<>]*>|<\s*[a-zA-Z][a-zA-Z0-9]*\s+[a-z]+\s*=[^<>]*>|<\s*br\s*/?\s*/\s*>" % _WIKI_TAGS
)
# "(...)", "(.)" are text, and so is "( )" or "[ ]" after an ASCII identifier: code written by the
# author ("printf()", "call[]"), which the parser keeps (a template's residue follows a space, and
# words joined here lose that difference).
EMPTY_BRACKETS_RE = re.compile(
    r"(?<![A-Za-z0-9_] )(?<![A-Za-z0-9_])[(\[]\s*[)\]]|[(\[（【]\s*(?:[;,:、，；/–—-]\s*)+[)\]）】]|[（【]\s*[)\]）】]"
)
_GLUED_YEARS_RE = re.compile(r"^(?:1[0-9]|20)[0-9]{2}(?:1[0-9]|20)[0-9]{2}$")


def is_glued_years(word: str) -> bool:
    """"17751783": a range of years whose dash went with a template. A range runs forward, so
    "11351000" (hy: an area of 11,351,000 km² written without separators) is a number, not two years."""
    return bool(_GLUED_YEARS_RE.match(word)) and word[:4] <= word[4:]
# Full stops, commas and question marks of scripts whose tokenisers may not know them: Armenian,
# Devanagari and its neighbours, Tibetan, Myanmar, Khmer, Ethiopic, Arabic, CJK (fullwidth). Not
# the marks that belong to a word: Armenian abbreviation dots (մ․թ․ա․), emphasis and question accents.
_SENTENCE_MARKS = "։՝।॥།༎။၊។៕።፣፤،؛؟۔。、，！？；："
GLUED_MARK_RE = re.compile(f"[^\\s{_SENTENCE_MARKS}][{_SENTENCE_MARKS}]|[{_SENTENCE_MARKS}][^\\s{_SENTENCE_MARKS}]")



# A pipe that is no danda: at the start, after anything but a letter or mark of an Indic script, before
# anything but a space and a letter (or the entity's [MASK], or the end of the words), or after an
# opening bracket not closed before it.
_INDIC = "\u0900-\u0DFF"
_NOT_A_DANDA = (rf"(?:^|(?<![{_INDIC}])(?<![{_INDIC}] ))\||\|(?! [^\W\d_])(?! \[MASK\])(?!$)"
                r"|\[[^\]]*\||\{[^}]*\|")
# A heading's equals signs run into prose ("पर्यटन = = बाह्य दुवे==").
_HEADING_REMNANT = r"(?:^|\s)=\s?=(?:\s|$)|=\s=\s?="


def markup_re(lang: str) -> re.Pattern:
    options = wiki_language(lang).image_option_words()
    words = "|".join(re.escape(w) for w in sorted(options, key=len, reverse=True) if w)
    pixel = wiki_language(lang).pixel_pattern()
    # Where authors type "|" for the danda "।" (Devanagari and Bengali script), a pipe between
    # sentences is text: a letter of the script before it and prose after it, outside brackets.
    generic = _GENERIC_MARKUP
    if wiki_language(lang).types_pipe_as_danda:
        generic = _GENERIC_MARKUP.replace(r"|\||", "|") + "|" + _NOT_A_DANDA
    alternatives = [generic, pixel, _HEADING_REMNANT]
    if words:
        # Image options are only markup next to a pipe or as a whole word beside a pixel size.
        alternatives.append(r"(?:^|\s)(?:%s)(?=\s*\|)" % words)
    return re.compile("|".join(alternatives))
