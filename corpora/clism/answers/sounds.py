"""Does a name's answer in Bengali or Devanagari script begin with the English name's sound?

Names are transliterated into these scripts letter by sound ("Munich" -> মিউনিখ, "Sterling" ->
স্টার্লিং, "Ilfracombe" -> इलफ्राकोम्ब), and Unicode names every letter of them by its sound (BENGALI
LETTER MA, DEVANAGARI LETTER PHA). Where the aligner linked a name to another word, the first
consonants differ: "Munich" -> দাঁড়াতো ("would stand"), "Sterling" -> পেল ("got"), "Ilfracombe"
-> गोलियां चलाईं ("fired shots"). On real NTREX pairs this is the largest kind of wrong answer in bn,
and the answers a first-consonant check removes are nearly all wrong (docs/clism_pairs.md,
"Answers"): the right ones lost are names the language calls otherwise (India -> ভারত, Greece ->
यूनान), and common nouns translated (Government -> সরকারের), which the caller leaves out.
"""
from __future__ import annotations

import unicodedata

_SCRIPTS = ("BENGALI ", "DEVANAGARI ")
# Sounds heard as one at a name's start: "Ph"/প, "G"/জ (George), "Ch"/চ or ক (Charles, Christopher).
_CLASSES = ("bpfvw", "kgq", "cjsz", "td", "l", "r", "m", "n", "y", "h")
# Optional at a name's start on either side: "William" -> উইলিয়াম, "Harry" -> হ্যারি.
_SOFT = frozenset("wvyh")
_ENGLISH_ONSETS = (("ph", "f"), ("sh", "s"), ("th", "t"), ("wh", "w"), ("kn", "n"), ("wr", "r"), ("ps", "s"),
                   ("gn", "n"), ("qu", "k"), ("x", "s"))


def in_sound_script(word: str) -> bool:
    """The word is written in a script whose letters this module reads (Bengali, Devanagari)."""
    return bool(word) and unicodedata.name(word[0], "").startswith(_SCRIPTS)


def first_sound_differs(english: str, target: str) -> bool:
    """True when the target word's first consonants are of another kind than the English word's.
    False when either has none to read (a vowel alone, a letter the tables do not know)."""
    mine, theirs = _english_onsets(english), _target_onsets(target)
    if not mine or not theirs:
        return False
    return not any(_same_class(a, b) for a in mine for b in theirs)


def _english_onsets(word: str) -> set[str]:
    word = word.lower()
    for written, sound in _ENGLISH_ONSETS:
        if word.startswith(written):
            word = sound + word[len(written):]
            break
    consonants = []
    for k, ch in enumerate(word):
        if not ch.isalpha() or ch in "aeiou":
            continue
        if ch == "c":
            following = word[k + 1 : k + 2]
            consonants.append("s" if following in ("e", "i", "y") else "k")
            if following == "h":
                consonants[-1] = "c"  # "ch": as চ or as ক, see _same_class
        else:
            consonants.append(ch)
        if len(consonants) == 2:
            break
    return _options(consonants)


def _target_onsets(word: str) -> set[str]:
    consonants = []
    for ch in word:
        name = unicodedata.name(ch, "")
        if not name.startswith(_SCRIPTS):
            return set()  # another script inside the word: nothing to read
        if "ANUSVARA" in name or "CANDRABINDU" in name:
            consonants.append("n")  # a nasal: इंडोनेशिया is "Indonesia"
        elif "LETTER " not in name:
            continue  # vowel signs, virama, nukta
        else:
            letter = name.split("LETTER ", 1)[1]
            if letter[0] in "AEIOU" or letter.startswith("VOCALIC"):
                continue  # an independent vowel
            consonants.append(letter[0].lower())
        if len(consonants) == 2:
            break
    return _options(consonants)


def _options(consonants: list[str]) -> set[str]:
    """The first consonant, and the next one while the first is soft."""
    options = set(consonants[:1])
    for consonant in consonants:
        options.add(consonant)
        if consonant not in _SOFT:
            break
    return options


def _same_class(a: str, b: str) -> bool:
    if a == b or {a, b} <= set("gj") or {a, b} <= set("ck"):
        return True
    return any(a in group and b in group for group in _CLASSES)
