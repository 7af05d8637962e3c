"""it.wikipedia's templates that write words of the sentence, rendered from their arguments (the
table corpora/wikitext/templates/inline.py looks up on itwiki only: {{m}} and {{TA}} mean other things elsewhere)."""
from __future__ import annotations

from corpora.wikitext.templates.french import with_units
from corpora.wikitext.templates.italian_bio import render_bio
from corpora.wikitext.templates.numbers import power_of_ten
from corpora.wikitext.templates.arguments import const, first, second


def render_measure(positional, named) -> str:
    """{{M|61.000||km/h}} -> "61.000 km/h", {{M|1|c|m}} -> "1 cm", {{m|1,12|e=-3|-|Pa}} -> "1,12×10^-3 Pa":
    value, a power of ten (e=), then an SI prefix ("-" or empty for none) glued to the unit, as
    Template:M shows them (itwiki's excerpt: "un diametro di , un anno luce" without it)."""
    if not positional:
        return ""
    value = positional[0]
    if named.get("e"):
        value += power_of_ten(named["e"])
    prefix = positional[1] if len(positional) > 1 and positional[1] != "-" else ""
    unit = positional[2] if len(positional) > 2 and positional[2] != "-" else ""
    return f"{value} {prefix}{unit}" if unit else value


def _number_times_power_of_ten(positional, named) -> str:
    """{{Exp|1,9|19}} -> "1,9×10^19" (half-lives, molar volumes)."""
    if len(positional) < 2:
        return positional[0] if positional else ""
    return positional[0] + power_of_ten(positional[1])


RENDERERS = {
    # {{Bio}}: the first sentence of a biography (corpora/wikitext/templates/italian_bio.py)
    "bio": render_bio,
    # "un comune di {{TA|103 379}} abitanti": the population, which the template keeps up to date
    "ta": first,
    "numero": with_units,  # {{numero|188520}}
    "m": render_measure,  # names are compared lower-case: {{M}} and {{m}} are one template
    "m s.l.m.": const("m s.l.m."),  # "tra i 400 e i 2100 {{m s.l.m.}}" (70 in the it sample)
    "maiuscoletto": first,  # small capitals: "votando {{maiuscoletto|no}}"
    "tutto attaccato": first,  # kept on one line: "a {{tutto attaccato|620 nm}}"
    "colore": second,  # {{colore|navy|Business}}
    "exp": _number_times_power_of_ten,
    # maintenance tags around the words they question: "la {{chiarire|recente}} nascita",
    # "({{citazione necessaria|che si disse foraggiati …}})"; the words are the article's
    "chiarire": first, "citazione necessaria": first,
}
