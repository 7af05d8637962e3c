"""{{PAGENAME}} and its kin, which show the page's own title. Small wikis write an article's first words
with it: mrwiki's biographies open "'''{{लेखनाव}}''' ([[नोव्हेंबर १]], …)" (लेखनाव is Marathi for
PAGENAME; 19 leads of the real mr dump), and dropped like a template the query lost the name it
is about and the lead its bold name."""
from __future__ import annotations

import re
from functools import lru_cache

from corpora.wiki.page_name_words import PAGE_NAME_WORDS

_ENGLISH = ("PAGENAME", "FULLPAGENAME", "BASEPAGENAME", "ROOTPAGENAME", "SUBPAGENAME")


@lru_cache(maxsize=None)
def page_name_re(lang: str) -> re.Pattern:
    """"{{PAGENAME}}" or "{{PAGENAME:Other title}}" under the English or the wiki's own names.
    Magic words are case-sensitive; a "_" in a name may be written as a space."""
    words = sorted({*_ENGLISH, *PAGE_NAME_WORDS.get(lang, ())}, key=len, reverse=True)
    names = "|".join(re.escape(word).replace("_", "[_ ]") for word in words)
    return re.compile(r"\{\{\s*(?:%s)\s*(?::([^{}|]*))?\}\}" % names)


def substitute_page_name(text: str, title: str, lang: str) -> str:
    """The text with each page-name variable replaced by `title` (or by the title it is given).
    In an article (no subpages) the five variables all show the title."""
    return page_name_re(lang).sub(lambda m: m.group(1).strip() if m.group(1) is not None else title, text)
