"""Per-language inflection of names: inflected forms are mentions, derivations are not."""
import pytest

from corpora.name_folding import fold_word
from corpora.wiki.inflections import covered_languages, is_derived_link, name_inflection
from corpora.wiki.languages import wiki_language

PAPER_LANGUAGES = "ar bn de el en es fi fr hi id it ja ko nl pl pt ru sv sw te th tr vi zh".split()


def folded(lang, word):
    return fold_word(word, wiki_language(lang).fold_diacritics)


@pytest.mark.parametrize(
    "lang, word, name",
    [
        ("bn", "ঢাকার", "ঢাকা"),  # genitive -র: "ঢাকার জিডিপি" (Dhaka's GDP)
        ("bn", "ভারতের", "ভারত"),  # genitive -এর after a consonant
        ("bn", "ঢাকায়", "ঢাকা"),  # locative
        ("mr", "भारताचा", "भारत"),  # oblique -आ + genitive -चा
        ("mr", "पुण्याचा", "पुणे"),  # -ए → -्या
        ("mr", "गांधारच्या", "गांधार"),
        ("hi", "कलकत्ते", "कलकत्ता"),  # oblique of a name in -आ
        ("el", "Κρήτης", "Κρήτη"),
        ("el", "Παρισινής", "Παρισινή"),  # "Παρισινής Κομμούνας" (of the Paris Commune)
        ("el", "Δανίας", "Δανία"),  # "του Βασιλείου της Δανίας"
        ("el", "Πειραιά", "Πειραιάς"),  # -ας → -α: the ending replaced, not appended
        ("el", "σοσιαλισμό", "σοσιαλισμός"),
        ("ru", "Москвы", "Москва"),
        ("ru", "Франции", "Франция"),
        ("uk", "України", "Україна"),
        ("pl", "Polsce", "Polska"),
        ("fi", "Suomessa", "Suomi"),
        ("tr", "Ankara'da", "Ankara"),
        ("de", "Deutschlands", "Deutschland"),
        ("sv", "Sveriges", "Sverige"),
        ("hy", "Հայաստանի", "Հայաստան"),
        ("ar", "بمصر", "مصر"),
        ("ar", "للقاهرة", "القاهرة"),
        ("te", "హైదరాబాద్\u200cలో", "హైదరాబాద్"),
        ("ko", "서울에서", "서울"),
    ],
)
def test_an_inflected_form_names_the_name(lang, word, name):
    inflection = name_inflection(lang, wiki_language(lang).fold_diacritics)
    assert inflection.is_inflection(folded(lang, word), folded(lang, name))
    assert not inflection.is_derivation(folded(lang, word), folded(lang, name))


@pytest.mark.parametrize(
    "lang, word, name",
    [
        ("en", "Angolan", "Angola"),  # "the Angolan economy", "Angolan troops"
        ("en", "Italian", "Italy"),
        ("en", "Greek", "Greece"),
        ("en", "Afghan", "Afghanistan"),
        ("en", "Parisian", "Paris"),
        ("de", "Berliner", "Berlin"),
        ("de", "italienische", "Italien"),
        ("ru", "российский", "Россия"),
        ("bn", "ভারতীয়", "ভারত"),
        ("hi", "पाकिस्तानी", "पाकिस्तान"),
        ("tr", "Ankaralı", "Ankara"),
        ("ar", "مصري", "مصر"),
        ("fr", "parisien", "Paris"),
    ],
)
def test_a_derivation_is_no_inflection(lang, word, name):
    inflection = name_inflection(lang, wiki_language(lang).fold_diacritics)
    assert not inflection.is_inflection(folded(lang, word), folded(lang, name))
    assert inflection.is_derivation(folded(lang, word), folded(lang, name))


def test_english_inflects_number_only():
    en = name_inflection("en")
    assert "angola" not in en.bases("angolan")  # the possessive is split off by the tokeniser
    assert en.is_inflection("planets", "planet") and en.is_inflection("radii", "radius")
    assert en.is_inflection("berber", "berbers")  # the singular of a plural title
    assert not en.is_inflection("1990s", "1990")  # the decade


def test_a_link_whose_text_derives_from_its_target_is_no_mention():
    assert is_derived_link("Angolan", "Angola", "en")
    assert is_derived_link("Ancient Greek", "Ancient Greece", "en")
    assert is_derived_link("ελληνικός", "Ελλάδα", "el") is False  # another stem: not caught, and harmless
    assert not is_derived_link("Angola", "Angola", "en")
    assert not is_derived_link("Κρήτης", "Κρήτη", "el")
    assert not is_derived_link("the country", "Angola", "en")
    assert not is_derived_link("Paris", "Paris (France)", "en")
    assert not is_derived_link("アンゴラ人", "アンゴラ", "ja")  # character matching: no table


def test_every_paper_language_has_a_rule():
    assert set(PAPER_LANGUAGES) <= set(covered_languages())
    for lang in ("ja", "zh", "th"):
        assert name_inflection(lang) is None  # matched by characters
    assert name_inflection("xx") is None  # unknown: the callers' fallback
