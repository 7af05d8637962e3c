"""French Wikipedia's inline templates that carry words of the sentence.

fr.wikipedia writes numbers with units, centuries, ordinals and dates through templates: "{{unité|
891.8|km|2}}", "au {{s-|XX}}", "{{Ier}} arrondissement", "né le {{date de naissance|11|novembre|1866}}".
Dropped like other templates (and by WikiExtractor, which the paper used), the sentence loses
them: a real frwiki page read "compte environ d'habitants, sur .", "des premières décennies du.",
"né le à Moulins". Counted on two real frwiki samples (9 articles): 98 {{unité}}, 45 {{nobr}}
(already rendered), 35 {{date}}/{{date-}}, 15 {{nombre}}, 9 centuries, 7 ordinals.

Rendered from the arguments, as the templates show them but with numbers as written in the call
(no locale formatting: "891.8 km2", as corpora/wikitext/templates/inline.py does for {{convert}}). Only on
fr.wikipedia: other wikis use some of these names for other templates (uk {{s}}, bn {{es}}, ja {{De}}).
"""
from __future__ import annotations

import re
from collections.abc import Callable

# "Ier", "IIe", "1er", "2e", "1re", "XIXe", "XXe siècle": the template's name is what it shows. Upper-case numerals
# only: {{de}} (a reference's language mark) and {{le}} are other templates.
_ORDINAL_RE = re.compile(r"(?:[IVXLCDM]+|[0-9]+)(?:er|re|e|ers|res|es|nd|nde)(?: siècles?| millénaire)?")
_BARE_SUFFIXES = frozenset({"er", "re", "e", "ers", "res", "es"})


def is_ordinal(name: str, positional: list[str]) -> bool:
    """A bare suffix with an argument is another template: en.wikipedia's {{e|3}} shows "×10³"."""
    name = name.strip()
    return bool(_ORDINAL_RE.fullmatch(name)) or (name in _BARE_SUFFIXES and not positional)


def render_ordinal(name: str, positional: list[str]) -> str:
    """{{Ier}} -> "Ier", {{XIXe}} -> "XIXe"; the case of the call is kept ("Ier", not "ier")."""
    return " ".join([name.strip(), *(p for p in positional[:1] if p)])


def with_units(positional, named) -> str:
    """{{unité|891.8|km|2}} -> "891.8 km2", {{nombre|71|sièges}} -> "71 sièges": value, then pairs of
    unit and exponent (an exponent of 1 or none is not shown)."""
    if not positional:
        return ""
    value, rest = positional[0], positional[1:]
    units = []
    for k in range(0, len(rest), 2):
        unit = rest[k]
        exponent = rest[k + 1] if k + 1 < len(rest) else ""
        if unit:
            units.append(unit + (exponent if exponent not in ("", "1") else ""))
    return " ".join([value, *units]).strip()


def _century(suffix: str = "", plural: bool = False) -> Callable[[list[str], dict[str, str]], str]:
    """{{s-|XX}} -> "XXe siècle", {{s-|I}} -> "Ier siècle", {{-s-|III}} -> "IIIe siècle av. J.-C.",
    {{s2-|XV|XVI}} -> "XVe et XVIe siècles"."""
    def ordinal(roman: str) -> str:
        roman = roman.strip()
        return roman + ("er" if roman.upper() == "I" else "e") if roman else ""

    def render(positional, named) -> str:
        numerals = [ordinal(p) for p in positional[: 2 if plural else 1] if p.strip()]
        if not numerals:
            return ""
        words = " et ".join(numerals) + (" siècles" if len(numerals) > 1 else " siècle")
        return words + suffix

    return render


def _incise(positional, named) -> str:
    return f"– {positional[0]} –" if positional and positional[0] else ""


def _hour(positional, named) -> str:
    """{{heure|4|30}} -> "4 h 30", {{heure|1}} -> "1 h"."""
    parts = [p for p in positional[:3] if p]
    return " h ".join(parts[:2]) + (" h" if len(parts) == 1 else "") if parts else ""


def _euro(positional, named) -> str:
    return f"{positional[0]} €" if positional and positional[0] else ""


def _flag_and_name(positional, named) -> str:
    """{{drapeau2|France}} shows the flag and the name; {{drapeau|France}}, only the flag (dropped)."""
    return named.get("nom") or (positional[0] if positional else "")


RENDERERS = {
    "unité": with_units, "nombre": with_units, "nb": with_units, "tmp": with_units,  # {{tmp|2|°C}}
    "s": _century(), "s-": _century(), "siècle": _century(), "-s": _century(" av. J.-C."),
    "-s-": _century(" av. J.-C."), "s2": _century(plural=True), "s2-": _century(plural=True),
    # "propose de {{citation|diviser chacune des difficultés …}}": an inline quotation, in guillemets
    # (on fr only: on en.wikipedia {{citation}} is a reference's template)
    "citation": lambda positional, named: f"« {positional[0]} »" if positional and positional[0] else "",
    "incise": _incise, "heure": _hour, "euro": _euro,
    "drapeau2": _flag_and_name, "drapeau3": _flag_and_name,
    # "XIX{{e}} siècle": the bare suffix; other wikis' {{e|24}} is "×10²⁴" (corpora/wikitext/templates/inline.py)
    "e": lambda positional, named: "" if positional else "e",
}  # not {{,}}: it separates two footnote marks ("</ref>{{,}}<ref>"), and goes with them
