"""Appendix headings ("See also", "Notes", "References", "Further reading", "External links", ...) of
Wikipedias outside the mPMR table, lower-case. The table's 24 languages have theirs in
corpora/wiki/language_data.py; every wiki also gets the English ones.

Without them a wiki's bibliography and link lists were read as prose: on the real ukwiki, hywiki and
mrwiki dumps here, 1.3%, 1.5% and 8.4% of the mPMR contexts sat in such a section (uk "— № 3 ( 522 )
… ISSN 0130 - 5247" under "Література"). A tail section is dropped only up to the next heading of its
level that is not one (corpora/wikitext/tidy.py), so a content section that shares a name
("Література" in an article on a country's culture) costs that one section.

Where the names come from:
  * uk, hy, mr: the headings of real (truncated) dumps of those wikis, 512, 279 and 949 articles:
    the ones whose section holds the page's `<references/>` or reference-list template, and the
    appendix headings among each page's last four; the counts are in the comments.
  * the others: the appendix headings each wiki's manual of style prescribes (its equivalent of
    en's MOS:LAYOUT), with the spelling variants in common use. No dump of these wikis is here, so
    they are unverified against real pages; a missing name only leaves a section in, as before.
"""
from __future__ import annotations

TAIL_SECTIONS_OF_WIKI: dict[str, tuple[str, ...]] = {
    # 512 pages: примітки 149 (reference lists), посилання 129, див. також 214, література 70,
    # джерела 65, джерела та література 11, виноски 5, посилання на джерела 6, коментарі 2
    "uk": (
        "див. також", "дивіться також", "примітки", "виноски", "коментарі", "зауваги", "джерела",
        "посилання", "посилання на джерела", "література", "джерела та література", "література та джерела",
        "джерела інформації", "бібліографія", "додаткова література", "галерея",
    ),
    # 279 pages: ծանոթագրություններ 225, արտաքին հղումներ 151, տես նաև 96, գրականություն 54,
    # աղբյուրներ 37, նշումներ 24, պատկերասրահ 9, հղումներ 5
    "hy": (
        "տես նաև", "ծանոթագրություններ", "ծանոթագրություն", "նշումներ", "աղբյուրներ", "գրականություն",
        "արտաքին հղումներ", "հղումներ", "հղումներ և ծանոթագրություններ", "պատկերասրահ",
    ),
    # 949 pages: बाह्य दुवे 254, संदर्भ 188, हे सुद्धा पहा 55, हेही पहा 34, चित्रदालन 31, संदर्भ आणि
    # नोंदी 19, बाह्यदुवे 18, हेसुद्धा पहा 17, संदर्भ व नोंदी 15, हे ही पहा 15, संदर्भ यादी 7, संदर्भसूची 6
    "mr": (
        "हे सुद्धा पहा", "हेसुद्धा पहा", "हेही पहा", "हे ही पहा", "हे पण पहा", "हे पण् पहा", "संदर्भ", "संदर्भ आणि नोंदी",
        "संदर्भ व नोंदी", "संदर्भ यादी", "संदर्भसूची", "नोंदी", "बाह्य दुवे", "बाह्यदुवे", "बाह्य दुवा", "चित्रदालन",
    ),
    "be": ("гл. таксама", "глядзіце таксама", "зноскі", "заўвагі", "літаратура", "крыніцы", "спасылкі"),
    "bg": ("вижте също", "бележки", "източници", "литература", "външни препратки"),
    "ca": ("vegeu també", "notes", "referències", "bibliografia", "enllaços externs"),
    "cs": ("související články", "odkazy", "poznámky", "reference", "literatura", "externí odkazy"),
    "da": ("se også", "noter", "referencer", "kilder", "litteratur", "eksterne henvisninger"),
    "et": ("vaata ka", "viited", "märkused", "kirjandus", "välislingid"),
    "eu": ("ikus, gainera", "ikus gainera", "erreferentziak", "oharrak", "bibliografia", "kanpo estekak"),
    "fa": ("جستارهای وابسته", "پانویس", "یادداشت‌ها", "منابع", "کتاب‌شناسی", "پیوند به بیرون"),
    "gl": ("véxase tamén", "notas", "referencias", "bibliografía", "ligazóns externas"),
    "he": ("ראו גם", "לקריאה נוספת", "קישורים חיצוניים", "הערות שוליים", "מקורות"),
    "hr": ("vidi još", "vidi i", "bilješke", "izvori", "literatura", "vanjske poveznice"),
    "hu": ("kapcsolódó szócikkek", "jegyzetek", "források", "irodalom", "további információk"),
    "lt": ("taip pat skaitykite", "išnašos", "šaltiniai", "literatūra", "nuorodos"),
    "lv": ("skatīt arī", "atsauces", "piezīmes", "literatūra", "ārējās saites"),
    "ms": ("lihat juga", "nota", "rujukan", "bacaan lanjut", "pautan luar"),
    "no": ("se også", "noter", "referanser", "kilder", "litteratur", "eksterne lenker"),
    "ro": ("vezi și", "note", "referințe", "bibliografie", "legături externe"),
    "sk": ("pozri aj", "poznámky", "referencie", "zdroje", "literatúra", "externé odkazy"),
    "sl": ("glej tudi", "opombe", "sklici", "viri", "literatura", "zunanje povezave"),
    "sr": ("види још", "напомене", "референце", "литература", "спољашње везе"),
}
