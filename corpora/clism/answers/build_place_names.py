"""Writes corpora/clism/answers/place_names.json, the table `corpora.clism.answers.places` reads.

    pip install babel countryinfo        # only to rebuild the table; the job reads the JSON
    python -m corpora.clism.answers.build_place_names

Sources, both maintained PyPI packages: Babel's copy of Unicode CLDR (the name of every territory in
each language, and of every language, as the locale writes it: NL -> Niederlande, 荷兰, هولندا,
नीदरलैंड, オランダ; nl -> Niederländisch) and countryinfo (each country's English name, its other
English spellings and its demonym: Chilean, Dutch). English keys are lower-cased; a country's
adjective in the target language is taken from the name of the country's first language when the
English demonym is that language's English name (Dutch -> nl -> niederländisch, 荷兰语), and
otherwise found through the stem the country's own name gives (Chile -> chilenisches).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from corpora.words import SUPPORTED_LANGS

OUT = Path(__file__).with_name("place_names.json")
# A language-name suffix that is not part of the adjective's stem (荷兰语 "Dutch language").
_LANGUAGE_SUFFIXES = ("语", "語", "어")


def _english_keys(info: dict, cldr_english: str | None) -> set[str]:
    keys = {info["name"], *(s for s in info.get("altSpellings", ()) if len(s) > 3 and s.isascii())}
    if cldr_english:
        keys.add(cldr_english)
    return {re.sub(r"^the ", "", k.strip().lower()) for k in keys}


def build() -> dict:
    import countryinfo
    from babel import Locale

    data = Path(countryinfo.__file__).with_name("data")
    english = Locale.parse("en")
    places: dict[str, str] = {}
    demonyms: dict[str, str] = {}
    names: dict[str, dict[str, list[str]]] = {lang: {} for lang in SUPPORTED_LANGS if lang != "en"}
    # The most populous country first: "American" is also the demonym of American Samoa.
    infos = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(data.glob("*.json"))]
    for info in sorted(infos, key=lambda i: -(i.get("population") or 0)):
        code = (info.get("ISO") or {}).get("alpha2")
        if not code or code not in english.territories:
            continue
        for key in _english_keys(info, english.territories.get(code)):
            places.setdefault(key, code)
        demonym = (info.get("demonym") or "").strip()
        language = next(iter(info.get("languages") or ()), None)
        for word in demonym.split(","):  # "Antiguan,Barbudan"
            if word.strip() and " " not in word.strip():
                demonyms.setdefault(word.strip().lower(), code)
        for lang in names:
            locale = Locale.parse(lang)
            forms = [locale.territories[code]] if code in locale.territories else []
            if language and demonym and english.languages.get(language, "").lower() == demonym.lower():
                spoken = locale.languages.get(language)
                if spoken:
                    for suffix in _LANGUAGE_SUFFIXES:
                        spoken = spoken.removesuffix(suffix)
                    forms.append(spoken)
            if forms:
                names[lang][code] = sorted(set(forms), key=forms.index)
    return {"source": "Unicode CLDR via Babel (territory and language names), countryinfo (English names, demonyms)",
            "places": dict(sorted(places.items())), "demonyms": dict(sorted(demonyms.items())), "names": names}


if __name__ == "__main__":
    table = build()
    OUT.write_text(json.dumps(table, ensure_ascii=False, sort_keys=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(table['places'])} English place names, {len(table['demonyms'])} demonyms, "
          f"{len(table['names'])} languages")
