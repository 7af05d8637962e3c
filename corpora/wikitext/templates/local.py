"""Templates rendered on one wiki only, because other wikis use their names for other templates
({{s}}, {{,}}, {{De}}, {{m}}, {{en}} …); corpora/wikitext/templates/inline.py looks here first."""
from __future__ import annotations

from corpora.wikitext.templates import french as french_templates
from corpora.wikitext.templates import italian as italian_templates
from corpora.wiki.languages import WIKIPEDIA_LANGUAGES
from corpora.wikitext.templates.numbers import convert
from corpora.wikitext.templates.arguments import Renderer, arg, first


def _untranslated_link(positional, named) -> str:
    """ru {{нп5|Баварский квартал|Баварский квартал|de|Bayerisches Viertel}}: a link to an article the
    wiki lacks yet; it shows its second argument, else its first. uk also names them: "текст=" (the
    text), "треба=" (the title wanted: "{{не перекладено|є=Chinese contemporary classical opera|мова=en|
    треба=сучасна китайська опера}}")."""
    return arg(positional, 1) or arg(positional, 0) or named.get("текст") or named.get("треба") or ""


def _day_month_year(positional, named) -> str:
    """uk {{ДН|27|8|1856}} / {{ДС|21|3|1908|8}} (birth, death; a Julian-calendar offset may follow):
    the date as ISO numbers, as {{birth date}} is shown ("1856-08-27"); {{ДС|||2003}} is "2003"."""
    day, month, year = (arg(positional, k).strip() for k in range(3))
    if not year.isdigit():
        return ""
    if not month.isdigit():
        return year
    return f"{year}-{int(month):02d}" + (f"-{int(day):02d}" if day.isdigit() else "")


def _flag_and_name(positional, named) -> str:
    """{{flag|Azores}}, {{flag|Georgia (U.S. state)|name=Georgia}}: the flag's icon and the name; the name.
    A country code ({{flag|USA}}, {{flag|UN}}) shows a name the call does not hold: dropped."""
    name = named.get("name") or arg(positional, 0)
    return "" if 2 <= len(name) <= 3 and name.isupper() and name.isascii() else name


def _bracketed_first(positional, named) -> str:
    return f"({positional[0]})" if positional and positional[0] else ""


# {{flag}} shows the flag and the country's name on en and vi ("# {{flag|Phần Lan}} (153,620)"); elsewhere
# it is written as an icon beside a name the author also writes (hy "{{flag|Christmas Island}} [[Սուրբ
# ծննդյան կղզի]]ն"), and mrwiki's {{flagcountry|Australia}} shows the name in Marathi, not "Australia".
_FLAGS = {"flag": _flag_and_name, "flagcountry": _flag_and_name}

# English Wikipedia's {{convert}} shows its English range words ("5 to 10 km"); every other wiki's
# translates them, so the global renderer (corpora/wikitext/templates/inline.py) writes symbols instead.
_ENGLISH_CONVERT = {"convert": convert, "cvt": convert, "convert2": convert}

RENDERERS_OF_WIKI: dict[str, dict[str, Renderer]] = {
    "en": {**_FLAGS, **_ENGLISH_CONVERT},
    "simple": _ENGLISH_CONVERT,
    "vi": _FLAGS,
    "bn": {"পতাকা": _flag_and_name},  # bn's own: "{{পতাকা|বাহরাইন}} ৬.২৫%"
    "fr": french_templates.RENDERERS,
    "it": italian_templates.RENDERERS,
    # "no {{séc|XIII}}" shows "no século XIII"; "{{fmtn|90000}} habitantes", the number
    "pt": {"séc": lambda positional, named: f"século {arg(positional, 0)}".strip(), "fmtn": first},
    "ru": {
        **{name: _untranslated_link for name in ("нп5", "нп3", "нп4", "нп", "не переведено 5", "не переведено 3", "iw")},
        # "Население составляет {{число|3054000}} человек" (real ruwiki, Литва): the number, then a unit
        # when one is given ({{число|65300|км²}}); dropped, it left "составляет человек"
        "число": lambda positional, named: " ".join(a for a in (arg(positional, 0), arg(positional, 1)) if a),
    },
    # uk {{не перекладено|Благородний пансіон|Благородному пансіоні|ru|…}} (24 calls in the uk dump), its
    # short names {{нп}} (32) and {{iw}} (12): the same arguments as ru's
    "uk": {
        **{name: _untranslated_link for name in ("не перекладено", "нп", "iw", "нп3", "нп5")},
        "s": first,  # "зареєстровано {{s|390 197}} імен": a number kept on one line
        # "'''Іва́н Франко́''' ({{ДН|27|8|1856}}, [[Нагуєвичі]] … — {{ДС|28|5|1916}}, [[Львів]])": 10 uk leads
        "дн": _day_month_year, "дс": _day_month_year,
    },
    # fi "12 hallintoalueeseen ({{k-de|Bezirk}})": the foreign word, as {{lang-de}} shows it here
    "fi": {f"k-{code}": first for code in WIKIPEDIA_LANGUAGES},
    # ar "'''برلين''' {{لغة-أل|Berlin}} هي", "نهر شبريه {{ألمانية|Spree}} يخترق" (41 in the ar minidump's
    # Berlin): a gloss in another language, which the template sets in brackets
    "ar": {name: _bracketed_first for name in ("لغة-أل", "ألمانية", "إنجليزية", "فرنسية", "لاتينية", "إيطالية", "إسبانية")},
    # ja {{en|I am a president.}}, {{fr|Europa}}, {{la|…}}: a language's code names a template that shows
    # its text (135 {{en|…}} in the ja excerpt: "「」「」と同じ調子で「」と誤った作文" without it). Not
    # elsewhere: fr {{en}} marks a reference's language. Not {{tl}}: the template-link template.
    "ja": {
        **{code: first for code in WIKIPEDIA_LANGUAGES | {"grc"} if code != "tl"},
        # an inline quotation: "マッカートニーは、{{ilq|あまりに自然に…}}と" (20 in the ja excerpt)
        "ilq": lambda positional, named: f"「{arg(positional, 0)}」" if positional else "",
    },
}
ORDINAL_WIKIS = frozenset({"fr"})
