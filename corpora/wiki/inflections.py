"""How a name is inflected in running text, per language: the endings, clitics and prefixes that make
a word a *mention* of a name ("ঢাকার" of ঢাকা, "Κρήτης" of Κρήτη, "Ankara'da" of Ankara), and the
adjective and demonym suffixes that make it a *derivation* ("Angolan" of Angola, "ελληνικός",
"российский"), which names something else and is no mention.

No maintained package ships case endings for these 24 languages (morphological analysers such as
pymorphy2 cover one or two, with dictionaries of tens of megabytes), so the tables are curated from
the grammars cited per language. They hold what a *name* takes: nouns' case endings of the
declensions names follow, case markers and clitics written against the word, not verb morphology.

A rule is (the end of the name it replaces, the endings that replace it): "" appends ("ভারত" +
"ের"), "ος" → "ου" replaces ("Πειραιάς"… "Κάστρος" → "Κάστρου"). Entries are written as the grammar
writes them and folded as names are (corpora/name_folding.py), so Greek accents and final sigma
need no second spelling. A stem left by removing an ending keeps at least two letters.

Languages written without spaces (ja, zh, th) match names by characters and need no table. A
language with no entry here is not known to inflect or not to: callers fall back to a spelling
heuristic for queries (corpora/mrc/entity_masking.py) and to exact matches for answers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from corpora.name_folding import fold_word
from corpora.titles import strip_qualifier

_ZWNJ = "\u200c"


def _with(markers, *stems):
    """Every stem vowel (oblique form) followed by every marker."""
    return tuple(s + m for s in stems for m in markers)


@dataclass(frozen=True)
class Inflection:
    """One language's inflection of names: `endings` maps the end of a name to what replaces it."""

    code: str
    endings: dict = field(default_factory=dict)  # {name tail ("" = nothing): (ending, ...)}
    prefixes: tuple = ()  # clitics written before the name (Arabic "و", "ب", "ال" …)
    apostrophe_suffixes: bool = False  # Turkish: any suffix after an apostrophe ("Ankara'da")
    adjective_suffixes: tuple = ()  # derivations: a word naming something else made from the name
    # Names decline with stem changes no table lists (fi "Helsingin" of Helsinki): a word sharing the
    # name's first letters may be a form of it, so only the adjective suffixes tell a derivation.
    declines: bool = False
    source: str = ""


# Marathi case markers and postpositions written against the oblique stem (Dhongde & Wali, *Marathi*,
# 2009, ch. 3 "Nominal morphology"; Wikipedia "Marathi grammar", §Cases).
_MR_MARKERS = ("चा", "ची", "चे", "च्या", "ला", "ना", "ने", "नी", "त", "तील", "तून", "मध्ये", "मधील", "मधून", "वर",
               "वरील", "कडे", "कडून", "पासून", "साठी", "शी", "ही", "च", "पर्यंत", "विषयी", "सारखा",
               "पेक्षा", "पेक्षाही", "मुळे", "सोबत", "प्रमाणे", "बद्दल", "जवळ", "कडील", "तही", "लाही", "नेही", "चाही",
               "चीही", "चेही", "च्याही", "तच", "लाच", "चाच", "चीच", "चेच", "च्याच")
# Bengali case endings and clitics (Thompson, *Bengali: A Comprehensive Grammar*, 2010, ch. 5 "Nouns:
# case"; Wikipedia "Bengali grammar", §Nouns): genitive -র/-এর, objective -কে, locative -এ/-তে/-য়,
# plural -রা/-দের, classifiers -টি/-টা, emphatic -ই and inclusive -ও. After a consonant "এ" is the
# vowel sign "ে".
_BN_CASES = ("র", "ের", "এর", "য়ের", "কে", "ে", "এ", "তে", "য়", "েরা", "রা", "দের", "টি", "টা", "টির", "টার")
_BN_ENDINGS = _BN_CASES + tuple(c + k for c in _BN_CASES for k in ("ই", "ও")) + ("ই", "ও")
# Telugu case suffixes (Krishnamurti & Gwynn, *A Grammar of Modern Telugu*, 1985, ch. 8; Wikipedia
# "Telugu grammar", §Nouns), after the name directly, after its -u stem vowel, or after a ZWNJ
# ("హైదరాబాద్‌లో").
_TE_CASES = ("లో", "లోని", "కు", "కి", "ని", "ను", "తో", "నుంచి", "నుండి", "పై", "యొక్క", "గా", "లోకి", "వద్ద")
# Korean particles (Sohn, *The Korean Language*, 1999, §7.3; Wikipedia "Korean particles").
_KO_PARTICLES = ("은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "로", "으로", "와", "과", "도", "만",
                 "까지", "부터", "에는", "에서는", "으로는", "와의", "과의", "에도", "에서의", "이다", "이며", "처럼")
# Finnish cases (Karlsson, *Finnish: An Essential Grammar*, 2nd ed., 2008, ch. 9-13; Wikipedia "Finnish
# noun cases"): genitive, partitive, the six locatives, essive, translative, abessive, illative.
_FI_CASES = ("n", "a", "ä", "ta", "tä", "ssa", "ssä", "sta", "stä", "lla", "llä", "lta", "ltä", "lle", "na", "nä",
             "ksi", "tta", "ttä", "seen", "hin", "han", "hen", "hon", "an", "en", "in", "on", "un", "yn", "än", "ön")
_FI_CLITICS = ("kin", "kaan", "kään")
# Armenian (Dum-Tragut, *Armenian: Modern Eastern Armenian*, 2009, ch. 2.1 "Nouns: declension";
# Wikipedia "Armenian grammar"): genitive/dative -ի, ablative -ից, instrumental -ով, locative -ում,
# the article -ը/-ն, and names in -ա/-իա taking -այի, -այում ….
_HY_CASES = ("ի", "ից", "ով", "ում", "ը", "ն", "ին", "ու", "ից", "ում", "ով", "ն")

_TABLES = (
    Inflection("en", endings={"": ("s", "es"), "y": ("ies",), "s": ("",), "us": ("i",), "a": ("ae",), "um": ("a",),
                              "is": ("es",), "ix": ("ices",), "ex": ("ices",), "on": ("a",)},
               adjective_suffixes=("an", "ian", "ean", "ese", "ish", "i", "ic", "ite", "er", "ers", "ans", "ians",
                                   "ic", "ical"),
               source="English marks case on names only by the possessive 's, which the tokeniser splits off, "
               "and number on common nouns by -s/-es/-ies (Quirk et al., A Comprehensive Grammar of the English "
               "Language, 1985, §5.74-5.86 and §5.112-5.126)"),
    Inflection("de", endings={"": ("s", "es", "'", "en", "n"), "e": ("es", "en")},
               adjective_suffixes=("isch", "ische", "ischen", "ischer", "isches", "er", "erin", "ern", "ische"),
               source="Duden. Die Grammatik, 9th ed., 2016, §317-330 (genitive -s/-es/apostrophe of proper nouns)"),
    Inflection("nl", endings={"": ("'s", "s", "en")}, adjective_suffixes=("se", "isch", "ische", "er", "ers"),
               source="Algemene Nederlandse Spraakkunst (ANS), §3.6 (genitive 's of names), §3.2 (plurals)"),
    Inflection("sv", endings={"": ("s", ":s")}, adjective_suffixes=("sk", "ska", "isk", "iska", "are"),
               source="Svenska Akademiens grammatik, 1999, vol. 2 (genitive -s, -:s after abbreviations)"),
    Inflection("fr", endings={"": ("s", "x")}, source="Grevisse & Goosse, Le Bon usage, §505-515 (plurals)",
               adjective_suffixes=("ais", "aise", "aises", "ien", "ienne", "iens", "ois", "oise", "ain", "aine",
                                         "ique", "iques", "éen", "éenne", "in", "ine")),
    Inflection("es", endings={"": ("s", "es")}, source="RAE, Nueva gramática, §3.2 (plurals)",
               adjective_suffixes=("ano", "ana", "anos", "anas", "ense", "és", "esa", "eño", "eña", "ico", "ica",
                                         "ino", "ina")),
    Inflection("it", endings={"o": ("i",), "a": ("e",), "e": ("i",)},
               source="Maiden & Robustelli, A Reference Grammar of Modern Italian, 2007, §3.2 (plurals)",
               adjective_suffixes=("ano", "ana", "ani", "ane", "ese", "esi", "ico", "ica", "ino", "ina", "ense")),
    Inflection("pt", endings={"": ("s", "es")}, source="Cunha & Cintra, Nova gramática do português "
               "contemporâneo, ch. 9 (plurals)",
               adjective_suffixes=("ano", "ana", "anos", "ense", "ês", "esa", "ico", "ica", "eiro", "eira")),
    Inflection("vi", endings={"": ("s", "es")},
               source="Vietnamese inflects no word (Thompson, A Vietnamese Reference Grammar, 1965, ch. 5); "
               "no native syllable ends in -s, so a word in -s is a foreign plural written in Vietnamese text"),
    Inflection("sw", source="Swahili names take no case endings (Ashton, Swahili Grammar, 1944, ch. 2)"),
    Inflection("id", endings={"": ("nya", "lah", "kah", "pun")},
               source="Sneddon et al., Indonesian: A Comprehensive Grammar, 2nd ed., 2010, §4.5 (clitics)"),
    Inflection("tr", declines=True, apostrophe_suffixes=True, adjective_suffixes=("lı", "li", "lu", "lü", "ca", "ce"),
               source="Göksel & Kerslake, Turkish: A Comprehensive Grammar, 2005, §1.2.4 (the apostrophe before "
               "suffixes of proper names) and ch. 14 (case)"),
    Inflection("el", declines=True, endings={
        "ος": ("ου", "ο", "ε", "οι", "ων", "ους", "η"), "ός": ("ού", "ό", "έ", "οί", "ών", "ούς"),
        "ας": ("α", "ες", "ων", "άδες"), "ης": ("η", "ες", "ών", "ηδες"), "α": ("ας", "ες", "ων", "ών"),
        "η": ("ης", "ες", "εις", "ων"), "ο": ("ου", "α", "ων"), "ι": ("ιου", "ια", "ιών"), "ον": ("ου", "α"),
        "ων": ("ωνα", "ωνος", "ωνες"), "ού": ("ούς", "ούδες"), "ες": ("ων",), "": ("ς",)},
        adjective_suffixes=("ικός", "ική", "ικό", "ικοί", "ικές", "ικά", "ικού", "ικής", "ιακός", "ιακή", "ιανός",
                            "ιανή", "αίος", "αία", "ινός", "ινή", "ίτης", "ίτισσα", "έζος", "ώτης", "ιάτης", "ικών"),
        source="Holton, Mackridge & Philippaki-Warburton, Greek: A Comprehensive Grammar of the Modern Language, "
        "1997, ch. 2 (noun declensions)"),
    Inflection("ru", declines=True, endings={
        "": ("а", "у", "ом", "е", "ы", "ов", "ам", "ами", "ах", "ого"), "а": ("ы", "и", "е", "у", "ой", "ою"),
        "я": ("и", "е", "ю", "ей", "ею", "ям"), "ия": ("ии", "ию", "ией"), "ь": ("и", "ю", "ью", "я", "ем", "ей", "е"),
        "й": ("я", "ю", "ем", "е"), "о": ("а", "у", "ом", "е"), "е": ("я", "ю", "ем"),
        "ий": ("ого", "ому", "им", "ом"), "ый": ("ого", "ому", "ым", "ом"), "ая": ("ой", "ую"), "ое": ("ого", "ому", "ым")},
        adjective_suffixes=("ский", "ская", "ское", "ские", "ского", "ской", "скому", "ским", "ском", "цкий", "цкая",
                            "анин", "янин", "ане", "яне", "ец", "цы"),
        source="Wade, A Comprehensive Russian Grammar, 3rd ed., 2011, ch. 2 (noun declension)"),
    Inflection("uk", declines=True, endings={
        "": ("а", "у", "ом", "і", "ові", "и", "ів", "ам", "ах"), "а": ("и", "і", "у", "ою", "о"),
        "я": ("і", "ю", "ею", "ї"), "ія": ("ії", "ію", "ією"), "ь": ("я", "ю", "ем", "і", "ю"),
        "о": ("а", "у", "ом", "і"), "ий": ("ого", "ому", "им", "ім")},
        adjective_suffixes=("ський", "ська", "ське", "ські", "цький", "цька", "анин", "янин", "ець"),
        source="Pugh & Press, Ukrainian: A Comprehensive Grammar, 1999, ch. 5 (noun declension)"),
    Inflection("pl", declines=True, endings={
        "": ("a", "u", "owi", "em", "ie", "y", "ów", "ach", "ami", "om"), "a": ("y", "i", "ie", "ę", "ą", "o"),
        "ia": ("ii", "ię", "ią"), "ja": ("ji", "ję", "ją"), "o": ("a", "u", "em", "ie"),
        "ska": ("ski", "sce", "skę", "ską"), "cka": ("ckiej", "cką", "cką"), "ek": ("ka", "ku", "kiem")},
        adjective_suffixes=("ski", "ska", "skie", "skiego", "skiej", "cki", "cka", "anin", "czyk"),
        source="Swan, A Grammar of Contemporary Polish, 2002, ch. 2 (noun declension)"),
    Inflection("fi", declines=True, endings={
        "": _FI_CASES + _with(_FI_CLITICS, "", "n", "ssa", "ssä", "sta", "stä"),
        "i": _with(("n", "ssa", "ssä", "sta", "stä", "lla", "llä", "lta", "ltä", "lle", "ksi", "en", "na", "nä"), "e"),
        "nen": ("sen", "sessa", "sessä", "sesta", "sestä", "seen", "sta", "stä", "set")},
        adjective_suffixes=("lainen", "läinen", "laiset", "läiset", "laisen", "läisen", "lais", "läis", "inen"),
        source="Karlsson, Finnish: An Essential Grammar, 2nd ed., 2008, ch. 9-13 (cases), ch. 4 (stem types)"),
    Inflection("hy", declines=True, endings={"": _HY_CASES, "ա": ("այի", "այում", "այից", "այով", "ան", "ային", "այի", "ան"),
                              "ի": ("իի", "իում", "իից", "իով", "ին")},
               adjective_suffixes=("յան", "ական", "ացի", "եցի", "ցի", "ային"),
               source="Dum-Tragut, Armenian: Modern Eastern Armenian, 2009, ch. 2.1 (declension)"),
    Inflection("ar", declines=True, prefixes=("و", "ف", "ب", "ك", "ل", "ال", "وال", "بال", "فال", "كال", "وب", "ول", "فب", "فل", "وك"),
               adjective_suffixes=("ي", "ية", "يون", "يين", "يات"),
               source="Ryding, A Reference Grammar of Modern Standard Arabic, 2005, ch. 6 (proclitics) and §8.2 "
               "(nisba adjectives); ل before the article drops its alif (\"للقاهرة\")"),
    Inflection("bn", declines=True, endings={"": _BN_ENDINGS},
               adjective_suffixes=("ীয়", "ীয়", "ি", "ী", "িয়া"),
               source="Thompson, Bengali: A Comprehensive Grammar, 2010, ch. 5 (case endings and classifiers)"),
    Inflection("hi", declines=True, endings={"ा": ("े", "ों"), "": ("ों",)},
               adjective_suffixes=("ीय", "ी", "वी", "ाई"),
               source="Kachru, Hindi, 2006, ch. 4: case markers (का, की, के, ने, को, में, से, पर) are written as "
               "separate words; names in -आ take the oblique -ए"),
    Inflection("mr", declines=True, endings={"": _with(_MR_MARKERS, "", "ा", "ां"), "ा": _with(_MR_MARKERS, "े", "्या", "ा"),
                              "े": _with(_MR_MARKERS, "्या"), "ी": _with(_MR_MARKERS, "ी", "ीं")},
               adjective_suffixes=("ीय", "ी", "कर", "ियन"),
               source="Dhongde & Wali, Marathi, 2009, ch. 3 (case markers on the oblique stem)"),
    Inflection("te", declines=True, endings={"": _TE_CASES + _with(_TE_CASES, _ZWNJ, "ు", "ు" + _ZWNJ), "ు": _TE_CASES},
               source="Krishnamurti & Gwynn, A Grammar of Modern Telugu, 1985, ch. 8 (case suffixes)"),
    Inflection("ko", declines=True, endings={"": _KO_PARTICLES},
               source="Sohn, The Korean Language, 1999, §7.3 (particles written against the noun)"),
)
_BY_CODE = {table.code: table for table in _TABLES}
# Written without spaces: names are matched by characters (corpora/mrc/entity_masking.py).
_UNSPACED = frozenset({"ja", "zh", "th"})


class NameInflection:
    """One language's table, folded as names are compared, with its lookups."""

    def __init__(self, table: Inflection, strip_accents: bool):
        self.code, self.strip_accents = table.code, strip_accents
        def fold(text: str) -> str:
            return fold_word(text, strip_accents)

        self._rules = tuple(sorted(
            ((fold(tail), tuple(dict.fromkeys(fold(e) for e in endings))) for tail, endings in table.endings.items()),
            key=lambda rule: -len(rule[0]),
        ))
        self._endings = {e for _, endings in self._rules for e in endings if e}
        self._empty_ending_tails = tuple(tail for tail, endings in self._rules if "" in endings and tail)
        self._prefixes = tuple(sorted({fold(p) for p in table.prefixes}, key=len, reverse=True))
        self._apostrophe = table.apostrophe_suffixes
        self._adjective_suffixes = tuple(sorted({fold(s) for s in table.adjective_suffixes}, key=len, reverse=True))
        self._declines = table.declines
        self.bases = lru_cache(maxsize=1 << 16)(self._bases)

    @property
    def inflects(self) -> bool:
        return bool(self._rules or self._prefixes or self._apostrophe)

    def _bases(self, word: str) -> frozenset:
        """The names (folded) of which the folded `word` is an inflected form, the word itself excluded."""
        found = set()
        for stripped in self._without_prefixes(word):
            if stripped != word and len(stripped) >= 2:
                found.add(stripped)
            for base in self._without_endings(stripped):
                found.add(base)
        found.discard(word)
        return frozenset(found)

    def _without_prefixes(self, word: str):
        yield word
        for prefix in self._prefixes:
            if word.startswith(prefix) and len(word) - len(prefix) >= 2:
                yield word[len(prefix):]
                if prefix.endswith("ل") and not word[len(prefix):].startswith("ال"):
                    yield "ا" + word[len(prefix):]  # "للقاهرة": ل + القاهرة without its alif

    def _without_endings(self, word: str):
        for tail in self._empty_ending_tails:  # en "berber" of "berbers": the name's ending dropped
            if len(word) >= 2 and any(ch.isalpha() for ch in word):
                yield word + tail
        if self._apostrophe:
            for mark in ("'", "’"):
                at = word.find(mark)
                if at >= 2 and word[at + 1 :].isalpha():
                    yield word[:at]
        for ending in self._endings:
            if not word.endswith(ending) or len(word) - len(ending) < 2:
                continue
            stem = word[: len(word) - len(ending)]
            if not any(ch.isalpha() for ch in stem):
                continue  # "1990s" is the decade, not the year
            for tail, endings in self._rules:
                if ending in endings:
                    yield stem + tail

    def is_inflection(self, word: str, name: str) -> bool:
        """Whether the folded `word` is an inflected form of the folded `name` (not the name itself)."""
        return word != name and name in self.bases(word)

    def is_derivation(self, word: str, name: str) -> bool:
        """Whether the folded `word` is made from `name` by a derivation: an adjective or demonym suffix
        of the language on the name, or on its first letters ("angolan", "italian", "российский"). Where
        names do not decline, also any other ending on the name's first letters that is
        no inflection nor respelling ("greek" of "greece", "afghan" of "afghanistan"); where they do,
        such a word may be a form the table misses (fi "helsingin" of "helsinki") and is not called a
        derivation."""
        if word == name or len(name) < 3 or len(word) < 3 or self.is_inflection(word, name):
            return False
        for suffix in self._adjective_suffixes:
            stem = word[: len(word) - len(suffix)]
            if word.endswith(suffix) and len(stem) >= 3 and _shared_prefix(stem, name) >= max(3, len(name) - 2):
                return True
        if self._declines or len(word) == len(name) or is_respelling(word, name):
            return False
        shared = _shared_prefix(word, name)
        word_rest, name_rest = word[shared:], name[shared:]
        return (shared >= max(4, min(len(word), len(name)) - 2) and (word_rest.isalpha() or not word_rest)
                and (name_rest.isalpha() or not name_rest))

    def is_derived_name(self, words, name_words) -> bool:
        """Word by word (both folded): every word the name's or an inflection of it, and at least one a
        derivation ("Angolan" of Angola, "Ancient Greek" of Ancient Greece)."""
        if len(words) != len(name_words) or not words:
            return False
        derived = False
        for word, name in zip(words, name_words):
            if word == name or self.is_inflection(word, name):
                continue
            if not self.is_derivation(word, name):
                return False
            derived = True
        return derived


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


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


@lru_cache(maxsize=None)
def name_inflection(code: str, strip_accents: bool = True) -> NameInflection | None:
    """The language's inflection of names; None where it has no table (see the module's docstring)."""
    if code in _UNSPACED:
        return None
    table = _BY_CODE.get(code)
    return NameInflection(table, strip_accents) if table is not None else None


def covered_languages() -> tuple[str, ...]:
    return tuple(sorted(_BY_CODE)) + tuple(sorted(_UNSPACED))


def is_derived_link(anchor_text: str, target_title: str, code: str, strip_accents: bool = True) -> bool:
    """Whether a link's text is a derivation of its target's name ([[Angola|Angolan]],
    [[Ancient Greece|Ancient Greek]]): such a link names something else (the people, the language,
    an adjective) and is no mention of the target. Compared word by word, the target without its
    "(qualifier)"; never in languages written without spaces."""
    inflection = name_inflection(code, strip_accents)
    if inflection is None:
        return False
    words = tuple(fold_word(w, strip_accents) for w in anchor_text.split())
    name = tuple(fold_word(w, strip_accents) for w in strip_qualifier(target_title).split())
    return inflection.is_derived_name(words, name)
