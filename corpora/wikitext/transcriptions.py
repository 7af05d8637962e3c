"""IPA templates in running text: "the sign to represent the vowel {{IPA|/a/}}, and" keeps "/a/".

A transcription in brackets after a name ("Albedo ({{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}})", "Paris
({{lang-fr|Paris}}, {{IPA-fr|paʁi}})") is a pronunciation aside and stays dropped, as before. One that
follows a word is what the sentence is about: phonetics and writing-system articles are full of them
(real excerpts: ja 183, hy 31, en 21, el 16, bn 12, it 11 such calls), and dropped they leave
"the vowel , and", "του ήχου σε" ("the sound to"). The caller (corpora/wikitext/blocks.py) decides
by the character before the call; this module knows the templates and what they show.
"""
from __future__ import annotations

import re

from corpora.wikitext.templates.inline import split_arguments, template_key

# {{IPA}} and its numbered forms, {{IPA-xx}} (a language's), {{IPAc-xx}} (segmented), and local names:
# el ΔΦΑ, ru/uk/be МФА, and fr API (on frwiki only: elsewhere the name may mean something else).
_TRANSCRIPTION_RE = re.compile(r"(?:ipa[23]?|ipa-[a-z-]+|ipac-[a-z-]+|δφα|мфа[23]?)")
# Leading arguments of {{IPAc-en}} and kin that name a label, not a segment.
_LABELS = frozenset({"lang", "pron", "local", "us", "uk", "also", "or", "cc", "ipa"})


def is_transcription(name: str, lang: str) -> bool:
    key = template_key(name)
    return bool(_TRANSCRIPTION_RE.fullmatch(key)) or (key == "api" and lang == "fr")


def transcription(body: str) -> str | None:
    """What the call shows: {{IPA|/w/}} as written, {{IPA-fr|paʁi}} "[paʁi]", {{IPAc-en|æ|l|ˈ|b}}
    "/ælˈb/"; None when it holds nothing to show."""
    name, positional, _ = split_arguments(body)
    key = template_key(name)
    if key.startswith("ipac-"):
        segments = [p.strip() for p in positional if p.strip()]
        while segments and segments[0].lower() in _LABELS:
            segments = segments[1:]
        return "/" + "".join(segments) + "/" if segments else None
    shown = positional[0].strip() if positional else ""
    if not shown:
        return None
    if key.startswith("ipa-") and shown[0] not in "/[":
        return f"[{shown}]"  # a language's IPA template shows its transcription in square brackets
    return shown
