"""The few inline templates whose output is part of the sentence, rendered as plain text.

A dump holds template *calls*, not their bodies, so wikitext.py drops templates with their output.
For most (citations, infoboxes, navboxes, maintenance tags, IPA) that is right. For a few, the
sentence needs what they show: "1775{{ndash}}1783" must not become "17751783", "an area of
{{convert|5|km2}}" not "an area of", "({{lang|grc|Ἀπόλλων}}, Apollōn)" not "(, Apollōn)". This
module renders those from their arguments alone, the way the template shows them in running text
(units as written in the call, dates as ISO numbers: no template body, no locale tables).

Names are compared lower-case with "_" as space, without a "Template:" prefix; the table holds the
English names, which most wikis keep as redirects, and the local names seen on the 24 wikis. A
template not in the table is dropped (wikitext.py then repairs the cut: no empty brackets, no stray
separators, no glued numbers).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from corpora.wikitext.templates import french as french_templates
from corpora.wikitext.templates.local import ORDINAL_WIKIS, RENDERERS_OF_WIKI
from corpora.wikitext.templates.numbers import convert_with_symbols, currency, frac, times_ten_to, val
from corpora.wikitext.templates.arguments import Renderer, arg, const, first, last, second
from corpora.wikitext.lines import HTML_TAG_RE


def split_arguments(body: str) -> tuple[str, list[str], dict[str, str]]:
    """"name|a|k=v|b" -> ("name", ["a", "b"], {"k": "v"}); pipes inside nested [[..]] or {{..}} do
    not split. `body` is the text between the outer braces. A numbered argument is the positional
    one it names, as in MediaWiki: "{{nowrap|1=(2 + 3) = 5}}" (real bn, el, mr: an "=" in the text
    needs the number) is "{{nowrap|(2 + 3) = 5}}"."""
    parts, depth_links, depth_braces, start = [], 0, 0, 0
    if "[[" not in body and "{{" not in body:
        parts = body.split("|")  # nothing nests: every pipe splits
    else:
        # Only brackets, braces and pipes matter, so the scan jumps from one to the next. A closer
        # with nothing open is passed over as a character would be: neither of its characters
        # could open or close anything either.
        for token in _ARGUMENT_TOKEN_RE.finditer(body):
            mark = token.group()
            if mark == "[[":
                depth_links += 1
            elif mark == "{{":
                depth_braces += 1
            elif mark == "]]":
                depth_links -= depth_links > 0
            elif mark == "}}":
                depth_braces -= depth_braces > 0
            elif not depth_links and not depth_braces:
                parts.append(body[start : token.start()])
                start = token.end()
        parts.append(body[start:])
    name = parts[0]
    positional, named = [], {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if eq and key.strip() and "[[" not in key and "{{" not in key and "<" not in key:
            named[key.strip()] = value.strip()
        else:
            positional.append(part.strip())
    for key in [key for key in named if key.isdigit() and 0 < int(key) <= 20]:
        index = int(key) - 1
        positional.extend([""] * (index + 1 - len(positional)))
        positional[index] = named.pop(key)
    return name, positional, named


_ARGUMENT_TOKEN_RE = re.compile(r"\[\[|\]\]|\{\{|\}\}|\|")


@lru_cache(maxsize=65536)  # every template of a page asks up to three times; names repeat across pages
def template_key(name: str) -> str:
    key = " ".join(name.replace("_", " ").split()).lower()
    colon = key.find(":")
    if colon > 0 and key[:colon] in ("template", "vorlage", "πρότυπο", "bản mẫu", "テンプレート", "模板", "plantilla", "modèle", "шаблон", "قالب", "แม่แบบ"):
        key = key[colon + 1 :].lstrip()
    return key


def _lang(positional, named) -> str:
    """{{lang|fr|texte}}: the text is the second argument (or text=; fr {{langue|de|texte=…}})."""
    return named.get("text") or named.get("texte") or arg(positional, 1)


def _lang_x(positional, named) -> str:
    """{{lang-fr|texte}} / {{langx|fr|texte}}: the text without the "French:" label, which the
    surrounding sentence usually states."""
    return named.get("text") or arg(positional, 0)


def _langx(positional, named) -> str:
    return named.get("text") or arg(positional, 1)


def _date(positional, named) -> str:
    """{{start date|1990|5|3}} -> "1990-05-03": an ISO date, the one form that needs no locale. A date
    written with its month as a word ({{date|11|novembre|1866}} on fr.wikipedia, {{date-|19 janvier}})
    is shown as written: read as numbers it gave "11-1866"."""
    written = [p.strip() for p in positional[:3] if p.strip()]
    if written and not all(p.lstrip("-").isdigit() for p in written):
        return " ".join(written)
    numbers = [p for p in positional if p.strip().lstrip("-").isdigit()][:3]
    if not numbers:
        return ""
    year, *rest = numbers
    # Digits of another script stay as written: bn "{{জন্ম তারিখ|১৯২০|৩|১৭}}" -> "১৯২০-৩-১৭", not "১৯২০-03-17".
    return "-".join([year] + [f"{int(x):02d}" if x.isascii() else x for x in rest])


def _age_dates(positional, named) -> str:
    """{{birth date and age|1952|3|11}}: the date (the age changes daily and is not text)."""
    return _date(positional, named)


def _circa(positional, named) -> str:
    return ("c. " + arg(positional, 0)).strip()


_MONTH_NAMES = ("January February March April May June July August September October November December").split()


def _as_of(positional, named) -> str:
    """en {{As of|2015|6|30|lc=y}} -> "as of 30 June 2015"; alt= replaces the whole text. Other wikis
    that use the English name get the English words too (their own wording is not known here)."""
    if named.get("alt"):
        return named["alt"]
    year, month, day = (arg(positional, k).strip() for k in range(3))
    if month.isdigit() and 1 <= int(month) <= 12:
        month = _MONTH_NAMES[int(month) - 1]
    words = " ".join(p for p in (day.lstrip("0"), month, year) if p)
    lead = "as of" if named.get("lc", "").strip().lower() in ("y", "yes", "on", "true", "1") else "As of"
    return f"{lead} {words}" if words else lead


def _quotation(positional, named) -> str:
    """{{quote|text=…}}, {{cquote|quote=…}} or the first argument: the quotation, without its author."""
    return named.get("text") or named.get("quote") or arg(positional, 0)


def _chemical_formula(positional, named) -> str:
    """{{chem|H|2|O}} -> "H2O", {{chem|4|He}} -> "4He": the pieces joined (subscripts and
    superscripts become plain digits, as in the rest of the text)."""
    return "".join(positional)


def _chinese(positional, named) -> str:
    """vi/en {{zh|c=西南中沙群岛办事处|v=Tây Nam …}}: the Chinese characters (traditional, simplified or
    either), as {{lang}} shows its text; the transcriptions are left out."""
    return named.get("t") or named.get("s") or named.get("c") or arg(positional, 0)


def _ship(prefix: str) -> Renderer:
    """{{USS|Missouri|BB-63}} -> "USS Missouri (BB-63)"."""
    def render_ship(positional, named) -> str:
        name, hull = arg(positional, 0), arg(positional, 1)
        return f"{prefix} {name}" + (f" ({hull})" if hull else "") if name else ""
    return render_ship


def _nihongo(positional, named) -> str:
    """{{nihongo|English|漢字|rōmaji}} -> "English (漢字, rōmaji)"."""
    english, kanji, romaji = arg(positional, 0), arg(positional, 1), arg(positional, 2)
    inner = ", ".join(x for x in (kanji, romaji) if x)
    return f"{english} ({inner})" if english and inner else english or inner


def _yomigana(positional, named) -> str:
    """ja {{読み仮名|'''医学'''|いがく}} -> 医学（いがく）: the lead's bold name is often inside it,
    and dropping the template started the query mid-sentence ("また は と は 、 生体 …")."""
    word, reading = arg(positional, 0), arg(positional, 1)
    return f"{word}（{reading}）" if reading else word


def _interlanguage_link(positional, named) -> str:
    """{{ill|Local title|de|Fremdtitel}}, {{仮リンク|日本語名|en|English}}: the local text
    (lt= when given)."""
    return named.get("lt") or named.get("表示名") or arg(positional, 0)


def _tsl(positional, named) -> str:
    """zh {{tsl|en|Foreign|本地}}: the local title, third argument."""
    return arg(positional, 2) or arg(positional, 1)


def _sort(positional, named) -> str:
    """de {{SortKey|key|shown}} / {{Sort|key|shown}}: what is shown."""
    return arg(positional, 1) or arg(positional, 0)


# What {{audio|file|text}} shows when the text is only an invitation to listen (seen in the real dumps),
# not a name: those go, as IPA and file names do.
_LISTEN_WORDS = frozenset({
    "listen", "pronunciation", "play", "help", "nghe", "শুনুন", "উচ্চারণ", "উচ্চারণ শুনুন", "արտասանություն",
    "լսել", "उच्चार", "उच्चारण", "उच्चारण ऐका", "発音", "聞く", "ascolta", "écouter", "anhören", "escuchar",
    "ouvir", "слушать", "послухати", "произношение", "вимова", "слухати", "άκου", "ακούστε", "προφορά",
})


def _audio_text(positional, named) -> str:
    """{{audio|Tr-Türkiye.ogg|''Türkiye Cumhuriyeti''}}: the text it links, when that is a name or a
    phrase (hy, bn and el leads lost "Türkiye Cumhuriyeti", "Estados Unidos Mexicanos", "Saluton");
    not "listen" and its kin, an IPA transcription or a file name."""
    shown = HTML_TAG_RE.sub("", arg(positional, 1)).strip()
    if shown.endswith(")") and "(" in shown and shown[shown.rfind("(") + 1 : -1].strip().casefold() in _LISTEN_WORDS:
        shown = shown[: shown.rfind("(")].rstrip()  # "Estados Unidos Mexicanos (উচ্চারণ)"
    bare = shown.strip("'").strip()
    if (not bare or bare.casefold() in _LISTEN_WORDS or bare[0] in "/[" or "." in bare[-5:]
            and bare.rsplit(".", 1)[-1].lower() in ("ogg", "oga", "wav", "mp3", "flac", "opus", "webm")):
        return ""
    return shown


_DASHES = {
    "ndash": "–", "–": "–", "en dash": "–", "dash": "–", "snd": " – ", "spnd": " – ", "spaced ndash": " – ",
    "spaced en dash": " – ", "sndash": " – ", "mdash": "—", "—": "—", "em dash": "—", "spaced mdash": " — ",
    "spd": " — ", "emdash": "—", "mdashb": "—", "bis": "–", "-": "–",
}
_SYMBOLS = {
    "nbsp": " ", "nbs": " ", "thinsp": " ", "sp": " ", "space": " ", "·": " · ", "dot": " · ", "middot": "·",
    "bull": " • ", "•": " • ", "'": "'", "\"'": "\"'", "'\"": "'\"", "okina": "ʻ", "pi": "π", "পাই": "π", "esd": " ", "=": "=",
    "'s": "'s", "slash": "/", "spaced slash": " / ", "times": "×", "degree": "°", "deg": "°", "minus": "−",
    "0": "",  # de {{0}}: an invisible padding digit
}
_CONTENT_FIRST = (
    "nowrap", "nobr", "nobreak", "no wrap", "small", "smaller", "big", "larger", "large", "sc", "smallcaps",
    "small caps", "em", "strong", "sic", "sup", "sub", "nowrap begin", "noitalic", "nonitalic", "nobold",
    "visible anchor", "vanchor", "text", "plain", "tooltip", "abbrlink", "keypress", "mono", "code",
    "serif", "polytonisch", "polytonic", "unicode", "unicode2", "ipa-text", "linktext", "lang-rtl",
    "語中改行", "nowrap2", "inline-block", "resize", "font", "italic", "bold", "ruby", "ruby-ja", "transl-only",
    "\"", "„", "«", "angbr", "angle bracket", "math", "mvar",
    "smallsup", "iast", "key", "num",
    # maintenance tags that wrap the sentence they question: the sentence is the article's text
    "citation needed span", "cn span", "fact span", "clarify span", "when span", "dubious span",
    "better source needed span", "disputed inline span", "original research inline span",
    "要出典範囲", "いつ範囲", "独自研究範囲", "疑問点範囲", "信頼性要検証範囲", "要検証範囲", "要説明範囲",
)
_DATE_TEMPLATES = (
    "start date", "end date", "birth date", "death date", "film date", "dts", "date", "start-date",
    "birth date and age", "death date and age", "birth year and age", "death year and age", "birth-date",
    "start date and age", "end date and age", "dob", "dod", "ngày sinh", "ngày mất", "ngày sinh và tuổi",
    "ngày mất và tuổi", "生年月日と年齢", "没年齢",
    "date-", "date de naissance", "date de décès", "date de naissance-", "date de décès-", "дата",
    "জন্ম তারিখ", "জন্ম তারিখ ও বয়স", "মৃত্যু তারিখ", "মৃত্যু তারিখ ও বয়স",  # bn birth and death dates
)

# Quotations set apart from the text: rendered in the body of an article (their text=, quote= or first
# argument), dropped at its very start, where they are an epigraph (it "Abbie Hoffman" and "Antoine de
# Saint-Exupéry" open with one, and the mPMR query is the page's first words).
_BLOCK_QUOTATIONS = frozenset({"quote", "quotation", "cquote", "blockquote"})

RENDERERS: dict[str, Renderer] = {
    **{name: const(text) for name, text in _DASHES.items()},
    **{name: const(text) for name, text in _SYMBOLS.items()},
    **{name: first for name in _CONTENT_FIRST},
    **{name: _age_dates for name in _DATE_TEMPLATES},
    "lang": _lang, "language": _lang, "langue": _lang, "lang-en-short": _lang_x, "langx": _langx,
    "transl": last, "transliteration": last, "translit": last, "rtl-lang": _lang, "ltr-lang": _lang,
    "langwithname": last, "lang2": _lang, "en langue": _lang,
    # range words as symbols ("4000–4500 m"); en and simple keep {{convert}}'s English words (local_templates)
    "convert": convert_with_symbols, "cvt": convert_with_symbols, "convert2": convert_with_symbols,
    "chuyển đổi": convert_with_symbols, "μετατροπή": convert_with_symbols,
    "রূপান্তর": convert_with_symbols, "μονάδα": convert_with_symbols,  # bn "convert" (319 calls in the bn dump), el "unit"
    "unité": french_templates.with_units,  # French pages copied to other wikis (ja "Paris")
    "langi": _lang,
    "रुपया": const("₹"), "zh": _chinese, "jis2004フォント": first,
    "fontsize": last, **{name: _ship(name.upper()) for name in ("uss", "hms", "hmas", "hmcs", "usns")},
    **{name: _quotation for name in _BLOCK_QUOTATIONS},
    "chem": _chemical_formula, "chem2": first, "e": times_ten_to,
    "ietf rfc": lambda positional, named: f"RFC {arg(positional, 0)}".strip(), "tex": const("TeX"),
    "latex": const("LaTeX"),
    "val": val, "frac": frac, "fraction": frac, "sfrac": frac,
    "circa": _circa, "c.": _circa, "ca.": _circa, "khoảng": _circa,
    "as of": _as_of,
    "us$": currency("US$"), "usd": currency("US$"), "€": currency("€"), "eur": currency("€"),
    "cad": currency("CA$"), "£": currency("£"), "gbp": currency("£"), "¥": currency("¥"), "jpy": currency("¥"),
    "nihongo": _nihongo, "նիհոնգո": _nihongo, "nihongo2": first, "nihongo3": _nihongo, "nihongo foot": _nihongo,
    "読み仮名": _yomigana, "読み仮名 ruby不使用": _yomigana, "読み仮名 ruby使用": _yomigana,
    "ill": _interlanguage_link, "interlanguage link": _interlanguage_link, "interlanguage link multi": _interlanguage_link,
    "仮リンク": _interlanguage_link, "illm": _interlanguage_link, "le": _interlanguage_link, "ill2": _interlanguage_link,
    "link-interwiki": _interlanguage_link, "lien": _interlanguage_link, "internlink": _interlanguage_link,
    "interlang": lambda positional, named: arg(positional, 2) or arg(positional, 1),  # ja {{Interlang|en|Title}}
    "tsl": _tsl, "link-en": first, "link-ja": first, "link-de": first, "link-fr": first,  # zh {{link-en|本地|Foreign}}
    "sort": _sort, "sortkey": _sort, "sortname": lambda p, n: " ".join(x for x in p[:2] if x), "abbr": first,
    "audio": _audio_text, "অডিও": _audio_text, "audio-nohelp": _audio_text,
    "script": second, "color": second, "colour": second, "font color": last, "lang-ar": _lang_x,
}


def is_block_quotation(body: str) -> bool:
    bar = body.find("|")
    return template_key(body if bar < 0 else body[:bar]) in _BLOCK_QUOTATIONS


# MediaWiki's own functions that show their argument: "di {{formatnum:290678}} abitanti" (the number as
# written, as {{convert}} shows it), "{{ucfirst:paris}}". Every wiki has them (ja's excerpt: 558 formatnum).
_PARSER_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "formatnum": lambda text: text, "uc": str.upper, "lc": str.lower,
    "ucfirst": lambda text: text[:1].upper() + text[1:], "lcfirst": lambda text: text[:1].lower() + text[1:],
}



def render(body: str, render_nested: Callable[[str], str], lang: str = "") -> str | None:
    """The text a template shows in running text, or None if it is not one of ours (then dropped).

    `body` is the text between the outer braces; `render_nested` turns an argument holding
    templates of its own into text (wikitext.py passes its template pass)."""
    bar = body.find("|")
    name = body if bar < 0 else body[:bar]
    if "{" in name or "\n" in name.strip():
        return None
    function, colon, argument = name.partition(":")
    if colon and function.strip().lower() in _PARSER_FUNCTIONS:
        return _PARSER_FUNCTIONS[function.strip().lower()](argument.strip())
    key = template_key(name)
    renderer = RENDERERS_OF_WIKI.get(lang, {}).get(key) or RENDERERS.get(key)
    if renderer is None:
        if key.startswith(("lang-", "langx-")):
            renderer = _lang_x
        elif lang in ORDINAL_WIKIS:  # {{Ier}}, {{XIXe}}: the name is the text
            positional = split_arguments(body)[1] if bar >= 0 else []
            return french_templates.render_ordinal(name, positional) if french_templates.is_ordinal(name, positional) else None
        else:
            return None
    _, positional, named = split_arguments(body)
    if "{{" in body[len(name) :]:
        positional = [render_nested(p) if "{{" in p else p for p in positional]
        named = {k: (render_nested(v) if "{{" in v else v) for k, v in named.items()}
    text = renderer(positional, named)
    return text.replace("\n", " ") if "\n" in text else text
