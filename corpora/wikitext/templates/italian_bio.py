"""Italian Wikipedia's {{Bio}}: the template that writes the first sentence of a biography.

On it.wikipedia a biography does not open with prose: "{{Bio|Nome=Adrien-Marie|Cognome=Legendre|
Sesso=M|LuogoNascita=Parigi|GiornoMeseNascita=18 settembre|AnnoNascita=1752|...|Attività=matematico|
Nazionalità=francese}}" shows "'''Adrien-Marie Legendre''' (Parigi, 18 settembre 1752 – Parigi, 10
gennaio 1833) è stato un matematico francese." Dropped like other templates (and by WikiExtractor,
which the paper used), every such article loses the sentence that defines its entity, and the mPMR
query starts at the second sentence, often without the name: in a real itwiki sample of 573 articles
(55 with {{Bio}}), 8 of the 144 entities with examples had such a query, 6 of them with no [MASK].

Rendered from the arguments, as Modulo:Bio composes the incipit: the bold name (Titolo before it,
PostCognome / PostCognomeVirgola after), the places and dates in brackets (after PreData and "; ",
before PostData), then FineIncipit if given, else "è stato un|uno|una|un'" (alive: "è"; or
PreAttività instead) + activities + nationality + PostNazionalità, and a full stop. Editors give
Attività and Nazionalità in the person's grammatical gender ("scrittrice", "italiana"), so only the
article is chosen here. Places are links there as here; days and years no longer are. Not
rendered, as they are no text: images, captions, categories, sort keys, Epoca.
"""
from __future__ import annotations

import re

_VOWELS = "aeiouàèéìíòóùú"
# "uno" before s + consonant, z, x, y, gn, ps, pn and a semivowel i: "uno scrittore", "uno psicologo".
_UNO_RE = re.compile(rf"(?:s[^{_VOWELS}]|z|x|y|gn|ps|pn|i[{_VOWELS}])", re.IGNORECASE)


def render_bio(positional: list[str], named: dict[str, str]) -> str:
    get = lambda key: named.get(key, "").strip()  # noqa: E731 - one lookup rule for every argument
    name = " ".join(part for part in (get("Nome"), get("Cognome")) if part)
    if not name:
        return ""
    text = f"{get('Titolo')} '''{name}'''" if get("Titolo") else f"'''{name}'''"
    if get("PostCognomeVirgola"):
        text += ", " + get("PostCognomeVirgola")
    elif get("PostCognome"):
        text += " " + get("PostCognome")
    dates = _life_dates(get)
    if dates:
        text += f" ({dates})"
    full_stop = "" if get("Punto").lower() == "no" else "."
    if get("FineIncipit"):
        ending = get("FineIncipit")
        return f"{text} {ending}" + ("" if ending.endswith((".", "!", "?")) else full_stop)
    dead = bool(get("AnnoMorte") or get("GiornoMeseMorte") or get("LuogoMorte"))
    feminine = get("Sesso").upper() == "F"
    verb = ("è stata" if feminine else "è stato") if dead else "è"
    # AttivitàAltre and PostNazionalità follow directly, with the space they write ("{{sp}}e dittatore")
    others = named.get("AttivitàAltre", "").rstrip()  # "{{sp}}e dittatore": the list's "e" is its own
    listed = [get("Attività"), get("Attività2"), get("Attività3")]
    activities = (", ".join(a for a in listed if a) if others.strip() else _joined(listed)) + others
    if not activities:
        return text
    # PreAttività stands for "è stato un": "(...), meglio conosciuto come Caligola, fu il terzo".
    opening = get("PreAttività") or f"{verb} {_indefinite_article(activities, feminine)}"
    gap = "" if opening.endswith("'") else " "
    nationality = " ".join(part for part in (get("Nazionalità"), _naturalised(get, feminine)) if part)
    sentence = f"{text}{'' if opening[:1] in ',;:.' else ' '}{opening}{gap}{activities}"
    if nationality:
        sentence += " " + nationality
    after = named.get("PostNazionalità", "").rstrip()  # ", che ..." follows directly; "attiva nel ..." after a space
    sentence += (" " + after) if after[:1].isalnum() or after[:2] == "[[" else after
    return sentence + full_stop


def _life_dates(get) -> str:
    birth = _place_and_date(get, "Nascita")
    death = _place_and_date(get, "Morte")
    dates = f"{birth} – {death}" if death else birth
    # "(pronuncia tedesca [ˈmoːtsaʁt]; Salisburgo, 27 gennaio 1756 – Vienna, 5 dicembre 1791)"
    before = f"{get('PreData')}; " if get("PreData") and dates else get("PreData")
    return before + " ".join(part for part in (dates, get("PostData")) if part)


def _place_and_date(get, event: str) -> str:
    place, link = get("Luogo" + event), get(f"Luogo{event}Link")
    place = get(f"Luogo{event}Alt") or (f"[[{link}|{place}]]" if link and place else f"[[{place}]]" if place else "")
    # Days and years are not links (it.wikipedia unlinked them: "overlinking giorni e mesi").
    date = " ".join(part for part in (get("GiornoMese" + event), get("Anno" + event)) if part)
    return ", ".join(part for part in (place, date) if part) + get("Note" + event)


def _joined(items: list[str]) -> str:
    """"filosofo, chimico e fisico"; "ed" before a word that starts with e ("filosofo ed economista")."""
    items = [item for item in items if item]
    if len(items) < 2:
        return items[0] if items else ""
    conjunction = " ed " if items[-1][:1].lower() in ("e", "è", "é") else " e "
    return ", ".join(items[:-1]) + conjunction + items[-1]


def _naturalised(get, feminine: bool) -> str:
    country = get("NazionalitàNaturalizzato")
    return f"{'naturalizzata' if feminine else 'naturalizzato'} {country}" if country else ""


def _indefinite_article(word: str, feminine: bool) -> str:
    plain = word.lstrip("[").lower()
    if feminine:
        return "un'" if plain[:1] in _VOWELS else "una"
    return "uno" if _UNO_RE.match(plain) else "un"
