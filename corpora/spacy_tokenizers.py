"""spaCy's rule-based tokenizers as corpora/words.py uses them: spaCy imported without torch, and
a blank pipeline's tokenizer with the affixes that spaCy's own rules lack for some scripts."""
from __future__ import annotations

import re


def import_spacy():
    """spaCy, imported without torch. thinc (under spaCy) imports torch whenever it is installed, to
    offer torch models; a blank pipeline's rule-based tokenizer never uses it, and the import costs
    seconds of CPU per worker process (benchmarks/README.md). torch is hidden only while spaCy loads
    and only if nothing imported it before, so a later `import torch` in the same process works as
    usual (thinc then offers no torch models in that process, which no tokenizer here needs)."""
    import sys

    if "spacy" in sys.modules or "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # makes "import torch" raise ImportError, which thinc expects
    try:
        import spacy
    finally:
        del sys.modules["torch"]
    return spacy


# spaCy's rule that splits a final "." asks for a letter of its ALPHA class before it, and that class
# has no Armenian, Gujarati, Malayalam, Tibetan or Georgian letters: "Երևան." and "ગુજરાત." stay one
# word. Nor does it know these scripts' own sentence marks: the Armenian full stop and comma ("։",
# "՝"), the Tibetan shad ("།", "༎") and the double danda ("॥"). Such a word never equals the same
# name elsewhere (an anchor, the other mentions of an entity), so both are added as suffixes.
_SCRIPTS_MISSING_FROM_SPACY_ALPHA = "\u0531-\u058f\u0a80-\u0aff\u0d00-\u0d7f\u0f00-\u0fff\u10a0-\u10ff"
_SCRIPT_SENTENCE_MARKS = "\u0589\u055d\u0f0d\u0f0e\u0965"
# Marks that are never inside a word: those above, the danda, CJK full-width ones, and the Arabic
# comma, semicolon and question mark.
_WORD_SEPARATING_MARKS = _SCRIPT_SENTENCE_MARKS + "\u0964。，、！？；：\u060c\u061b\u061f"
_EXTRA_SPACY_SUFFIXES = (rf"(?<=[{_SCRIPTS_MISSING_FROM_SPACY_ALPHA}])\.", f"[{_SCRIPT_SENTENCE_MARKS}]")


# spaCy's Arabic and Persian suffix rules split a final "." only after an upper-case letter (their own
# list replaces the default one), so "سبتمبر 2009." kept "2009." and "عامًا." its dot (the tanwin is
# a mark). These scripts write no ordinal "3.", unlike German, whose "3. Oktober" spaCy keeps whole.
_ARABIC_SCRIPT_FINAL_DOT = "(?<=[0-9\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff\")\\]»”])\\."
_ARABIC_SCRIPT_LANGS = frozenset({"ar", "fa", "ur", "ps", "ckb", "sd", "ug", "arz", "ary", "azb", "mzn", "pnb", "glk", "ks"})


def blank_spacy_tokenizer(lang: str, config: dict | None = None):
    """A blank pipeline's tokenizer with the extra affixes above. They go into a subclass of the
    language's Defaults, so the tokenizer is built once: setting them on a built tokenizer reloads
    every special case per setter (id has ~30,000 of them: 1.1 s each)."""
    spacy = import_spacy()
    base = spacy.util.get_lang_class(lang)
    defaults = base.Defaults
    suffixes = list(defaults.suffixes or ()) + list(_EXTRA_SPACY_SUFFIXES)
    if lang in _ARABIC_SCRIPT_LANGS:
        suffixes.append(_ARABIC_SCRIPT_FINAL_DOT)
    prefixes = list(defaults.prefixes or ()) + [f"[{_SCRIPT_SENTENCE_MARKS}]"]  # verse numbers: "॥२८॥"
    # Authors often leave out the space after these marks ("দিবস।বাংলাদেশে", "Սանտյագոն։Հյուսիսից",
    # ar "سنوات،وذلك" in NTREX), and CJK ones need none (a vi page quoting classical Chinese in Latin
    # letters: "canh。phó").
    infixes = list(defaults.infixes or ()) + [f"[{_WORD_SEPARATING_MARKS}]", *_GLUED_BRACKETS]
    overrides = {"suffixes": suffixes, "prefixes": prefixes, "infixes": infixes,
                 "token_match": staticmethod(_chained(defaults.token_match, _NATIVE_DIGIT_NUMBER_RE.match))}
    if defaults.url_match is not None:
        overrides["url_match"] = staticmethod(_url_match_without_sentence_marks(defaults.url_match))
    extended = type("Defaults", (defaults,), overrides)
    language = type(base.__name__, (base,), {"Defaults": extended})
    return language.from_config(config or {}).tokenizer


# A bracket written against a word of these scripts, the space left out: hy "Բուլղարիա(բուլղարերեն",
# bn "চেক প্রজাতন্ত্র,(সংক্ষিপ্ত", mr "यशवंत देव(१ नोव्हेंबर" kept the name and the bracket one word,
# so the query showed the name unmasked (about 80 rows of the real bn, hy, mr dumps). Not for Latin,
# Greek or Cyrillic letters, where "type(s)" and "UTC(NPL)" are notation.
_GLUED_SCRIPTS = "\u0530-\u058f\u0900-\u0dff\u10a0-\u10ff"
_GLUED_BRACKETS = (
    rf"(?<=[{_GLUED_SCRIPTS}])[(\[]",  # "Բուլղարիա(բուլղարերեն"
    rf"(?<=[{_GLUED_SCRIPTS}])[,;:](?=[(\[])",  # "প্রজাতন্ত্র,(সংক্ষিপ্ত"
    rf"(?<=[(\[,;:])[(\[](?=[{_GLUED_SCRIPTS}])",  # "সংখ্যা((ইংরেজি", ",(সংক্ষিপ্ত"
    rf"[)\]](?=[{_GLUED_SCRIPTS}])",
)


# A number written with a script's own digits and separators stays one word, as "21,27,42,631" does:
# spaCy's ALPHA class holds the whole Bengali and Devanagari blocks, digits included, so its rules for
# letters split "২১,২৭,৪২,৬৩১" into seven words and "३.५" into three, and a row read "২১ , ২৭ , ৪২ , ৬৩১"
# (mPMR rows of real bnwiki and mrwiki dumps with a number so split: 22.5% and 29.0%; now 5.8% and
# 7.4%, lists the authors spaced: "১৯৭১, ১৯৭২"). "১০:৩০" is a time as "10:30" is;
# the Arabic decimal and thousands separators (٫ ٬) join as "." and "," do.
_NATIVE_DIGIT_NUMBER_RE = re.compile(r"\d+(?:[.,:٫٬]\d+)+\Z")


def _chained(first, second):
    """A token_match that accepts what either accepts (spaCy's defaults have none for these languages)."""
    if first is None:
        return second
    return lambda text: first(text) or second(text)


_SENTENCE_MARKS_RE = re.compile(f"[{_WORD_SEPARATING_MARKS}]")


def _url_match_without_sentence_marks(url_match):
    """spaCy's URL rule accepts any letter from U+00A1 on in a top-level domain, so "কি.মি।এটি" ("km.
    This", the space after the danda left out) was one URL-like word, which no infix splits; no
    address holds a sentence mark."""
    def match(text: str):
        return None if _SENTENCE_MARKS_RE.search(text) else url_match(text)

    return match
