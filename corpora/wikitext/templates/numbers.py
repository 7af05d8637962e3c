"""Templates that write numbers and units: {{convert}} (and its local names), {{val}}, {{frac}},
{{e}}, currencies. Numbers are shown as written in the call; corpora/wikitext/templates/inline.py maps the
template names to these."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from corpora.wikitext.templates.arguments import Renderer, arg


_RANGE_WORDS = frozenset({"to", "-", "–", "and", "or", "by", "x", "×", "+", "&", "and(-)", "to(-)", "-to-", "~"})
_NUMBER_RE = re.compile(r"^[-+−]?[0-9][0-9.,]*(?:e[0-9]+)?$|^[-+−]?\.[0-9]+$")


# What a range word becomes outside English Wikipedia: {{convert}}'s words are English ("from 10 to 20
# °C"), and each wiki's own Module:Convert translates them, which the dump does not hold. A symbol
# reads in any language, where an English word in a Bengali or Vietnamese sentence ("এর গভীরতা 4000
# and 4500 m", "khoảng 5 to 8 km/h" in the real dumps) is noise in the text and the context words.
# A dash joins its numbers ("10–20 °C", as English Wikipedia writes a range) unless the second is
# negative ("−5 – −2"); a product keeps its spaces ("210 × 297 mm").
_RANGE_SYMBOLS = {
    "to": "–", "-": "–", "–": "–", "and": "–", "and(-)": "–", "to(-)": "–", "-to-": "–",
    "or": "/", "by": " × ", "x": " × ", "×": " × ", "+": " + ", "&": " & ", "~": "~",
}


def convert_with_symbols(positional, named) -> str:
    """{{convert}} on a wiki other than English: "{{convert|4000|and|4500|m}}" -> "4000–4500 m"."""
    return convert(positional, named, _RANGE_SYMBOLS)


def convert(positional, named, range_words: dict[str, str] | None = None) -> str:
    """{{convert|5|km|mi}} -> "5 km"; {{convert|5|to|10|km}} -> "5 to 10 km" (the first unit as
    written; the converted value is left out, it needs the unit tables). A unit code that is not a
    unit's name is spelt as {{convert}} shows it: "C" -> "°C", and a power-of-ten prefix scales the
    number ({{convert|150|e6km}} -> "150000000 km"; real bn text read "150 e6km", "4 e9mi")."""
    if not positional:
        return ""
    value = positional[0]
    rest = positional[1:]
    pieces = [value]
    while len(rest) >= 2 and rest[0].lower() in _RANGE_WORDS and _NUMBER_RE.match(rest[1].replace(",", "")):
        if range_words is None:
            word = rest[0] if rest[0] != "-" else "–"
        else:
            word = range_words[rest[0].lower()]
            if word == "–" and rest[1][:1] in "-−":
                word = " – "
        pieces += [word, rest[1]]
        rest = rest[2:]
    unit = rest[0] if rest else ""
    power = _POWER_PREFIX_RE.match(unit)
    if power:
        unit = unit[power.end() :]
        pieces = [_scaled(piece, int(power.group(1))) if k % 2 == 0 else piece for k, piece in enumerate(pieces)]
    unit = _UNIT_CODES.get(unit, unit)
    numbers = " ".join(pieces) if range_words is None else "".join(pieces)
    return numbers + (" " + unit if unit and not _NUMBER_RE.match(unit) else "")


_POWER_PREFIX_RE = re.compile(r"e(3|6|9|12|15)(?=[^\W\d])")
_UNIT_CODES = {"C": "°C", "F": "°F", "C-change": "°C", "F-change": "°F", "K-change": "K"}


def _scaled(number: str, power: int) -> str:
    """"1.35" scaled by 10**6 -> "1350000"; a number written otherwise gets "×10^6"."""
    try:
        scaled = Decimal(number.replace(",", "").replace("−", "-")) * (Decimal(10) ** power)
    except InvalidOperation:
        return number + power_of_ten(str(power))
    return format(scaled.normalize(), "f")


def val(positional, named) -> str:
    """{{val|6.241|e=18}} -> "6.241×10^18" (the exponent was lost: en "roughly 6.241 times the
    elementary charge"); {{val|1.00794|(7)}} -> "1.00794(7)", {{val|0.00589|0.00015}} -> "0.00589±0.00015",
    {{val|1.2|+0.1|-0.2}} -> "1.2+0.1−0.2"; the unit (u=, ul=) after it."""
    number = arg(positional, 0)
    uncertainty = [p.strip() for p in positional[1:3] if p.strip()]
    if len(uncertainty) == 1:
        number += uncertainty[0] if uncertainty[0].startswith("(") else "±" + uncertainty[0]
    elif len(uncertainty) == 2:
        plus, minus = uncertainty
        number += ("" if plus[0] in "+-−" else "+") + plus + ("" if minus[0] in "+-−" else "−") + minus.replace("-", "−", 1)
    exponent = (named.get("e") or "").strip()
    if exponent:
        number += power_of_ten(exponent)
    unit = (named.get("u") or named.get("ul") or "").strip()
    if unit in ("°", "′", "″", "%"):
        return number + unit  # as {{val}} shows them: "5.65°"
    return f"{number} {unit}".strip()


def frac(positional, named) -> str:
    if len(positional) >= 3:
        return f"{positional[0]} {positional[1]}/{positional[2]}"
    if len(positional) == 2:
        return f"{positional[0]}/{positional[1]}"
    return f"1/{positional[0]}" if positional else ""


def power_of_ten(exponent: str) -> str:
    """"×10^24": the caret stands for the superscript, as "×1024" would read as a different number."""
    return "×10^" + exponent


def times_ten_to(positional, named) -> str:
    """{{e|24}} after a number: "4,868 5{{e|24}} kg" -> "4,868 5×10^24 kg" (vi, mr, en)."""
    exponent = arg(positional, 0)
    return power_of_ten(exponent) if exponent else ""


def currency(symbol: str) -> Renderer:
    return lambda positional, named: symbol + arg(positional, 0)
