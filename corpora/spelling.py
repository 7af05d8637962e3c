"""Two spellings of one name: a transliteration or an accent another source writes differently."""
from __future__ import annotations

from difflib import SequenceMatcher


def is_respelling(word: str, name: str) -> bool:
    """Another spelling of the name (both folded), not another ending: "aristoteles" (aristotle),
    "afganistan" (afghanistan), vi "ibrahimovic" (ibrahimović). A word that extends the name or is
    cut from it is an inflection or a derivation, which the language decides (corpora/wiki/inflections.py:
    "angolan" is no respelling of "angola"). Names under 5 letters never vary: "gran" must not
    catch "grant"."""
    if len(name) < 5 or len(word) < 4 or word[:3] != name[:3] or word == name:
        return False
    if word.startswith(name) or name.startswith(word) or abs(len(word) - len(name)) > 2:
        return False
    return SequenceMatcher(None, word, name, autojunk=False).ratio() >= 0.85
