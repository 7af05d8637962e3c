"""Query anonymisation: every surface form of the entity becomes one [MASK], whole words only."""
import pytest

from corpora.mrc.entity_masking import MASK, collect_surface_forms, leaked_forms, mask_lead
from corpora.wiki.languages import wiki_language
from corpora.words import get_tokenizer, is_word_like, stop_words


def forms_for(lang, title, bold=(), redirects=(), anchors=()):
    return collect_surface_forms(
        get_tokenizer(lang), title, list(bold), list(redirects), list(anchors), stop_words(lang), is_word_like,
        wiki_language(lang).fold_diacritics, lang,
    )


def masked(lang, text, forms, q=50):
    tok = get_tokenizer(lang)
    return mask_lead(tok.tokenize(text), forms, q, tok.joins_with_space).words


def test_title_is_masked_whole_word_and_a_derivation_is_not():
    forms = forms_for("en", "Paris")
    query = masked("en", "Paris is the capital of France. A Parisian lives in Paris. Parisianism is older.", forms)
    # "Parisian" names a person or a style, not the city: English inflects no name (the possessive
    # is split off by the tokeniser), so only the name itself is masked.
    assert query.count(MASK) == 2
    assert "Parisian" in query and "Parisianism" in query
    assert leaked_forms(query, forms, True) == []


@pytest.mark.parametrize(
    "lang, title, text, masked_words",
    [
        ("el", "Κρήτη", "Η Κρήτη είναι νησί. Η ιστορία της Κρήτης είναι μακρά.", 2),  # genitive
        ("el", "Σοσιαλισμός", "Ο σοσιαλισμός είναι ιδεολογία. Για τον σοσιαλισμό γράφτηκαν πολλά.", 2),
        ("en", "Aristotle", "Aristotle (Greek: Aristotélēs) was a philosopher.", 2),  # transliteration
        ("en", "Afghanistan", "Afghanistan (Afġānistān) is a country.", 2),
        ("en", "Iran", "Iran and Iraq are neighbours.", 1),  # names under 5 letters never vary
        # A date's number with an ordinal ending (real elwiki day pages, whose leads bold nothing);
        # another number is not the date's.
        ("el", "15 Μαρτίου", "Η 15η Μαρτίου είναι η 74η ημέρα του έτους. Η 16η Μαρτίου ακολουθεί.", 1),
        ("en", "March 15", "March 15th is the 74th day of the year.", 1),
        ("en", "1990", "1990 began the 1990s.", 1),
    ],
)
def test_inflected_and_transliterated_forms_are_masked(lang, title, text, masked_words):
    query = masked(lang, text, forms_for(lang, title))
    assert query.count(MASK) == masked_words, query


def test_accents_fold_except_where_they_tell_words_apart():
    assert masked("en", "Los Ángeles is a city.", forms_for("en", "Los Angeles")).count(MASK) == 1
    # vi: tones are phonemic, so "Hà" is not "Ha" (a different syllable, a different name).
    assert masked("vi", "Hà Nội và Ha Noi", forms_for("vi", "Hà Nội")).count(MASK) == 1


def test_a_variant_never_reaches_into_another_entitys_link():
    tok = get_tokenizer("en")
    words = tok.tokenize("India borders Indiana and the Indian Ocean.")
    forms = forms_for("en", "India")
    # "Indiana" (word 2) and "Indian Ocean" (words 4-5) are links to other entities.
    query = mask_lead(words, forms, 50, True, other_names=[(2, 2), (4, 5)]).words
    assert query == [MASK, "borders", "Indiana", "and", "the", "Indian", "Ocean", "."]


def test_qualifier_bold_names_redirects_and_naming_anchors():
    forms = forms_for(
        "en", "Barack Obama", bold=["Barack Hussein Obama II"], redirects=["Obama (politician)"],
        anchors=["Obama", "President Obama", "the president", "he"],
    )
    text = "Barack Hussein Obama II is an American politician. Obama was the president. Barack Obama and President Obama."
    query = masked("en", text, forms)
    assert query[0] == MASK and query[1] == "is"  # the four-word bold name is one mask
    assert query.count(MASK) == 4
    assert "president" in query  # the generic anchor "the president" shares no name word: kept
    assert leaked_forms(query, forms, True) == []


def test_title_without_qualifier_is_a_form():
    forms = forms_for("en", "Mercury (planet)")
    query = masked("en", "Mercury is the smallest planet. The planet Mercury orbits the Sun.", forms)
    assert query.count(MASK) == 2 and "planet" in query


def test_generic_link_text_is_not_a_surface_form():
    forms = forms_for("en", "Paris", anchors=["the city", "French capital"])
    query = masked("en", "The city of Paris is a French city.", forms)
    assert query.count(MASK) == 1
    assert "city" in query and "French" in query


def test_name_crossing_the_query_limit_is_masked_whole():
    forms = forms_for("en", "Rio de Janeiro")
    tok = get_tokenizer("en")
    words = tok.tokenize("one two three Rio de Janeiro four")
    query = mask_lead(words, forms, 4, True).words  # the 4th word starts the name
    assert query == ["one", "two", "three", MASK]


def test_unspaced_language_masks_every_overlapped_word():
    forms = forms_for("zh", "巴黎", anchors=["巴黎市"])
    text = "巴黎是法国的首都。巴黎人喜欢咖啡。他住在巴黎市中心。"
    query = masked("zh", text, forms)
    assert query.count(MASK) >= 3
    assert leaked_forms(query, forms, False) == []
    assert "".join(w for w in query if w != MASK).count("巴黎") == 0


def test_thai_title_is_masked():
    forms = forms_for("th", "กรุงเทพมหานคร", anchors=["กรุงเทพฯ"])
    query = masked("th", "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย กรุงเทพฯ มีประชากรมาก", forms)
    assert query.count(MASK) == 2
    assert leaked_forms(query, forms, False) == []


def test_leak_check_sees_an_unmasked_form():
    forms = forms_for("en", "Angola")
    assert leaked_forms(["The", "Angola", "coast"], forms, True) == ["angola"]
    assert leaked_forms(["The", "Angolan", "coast"], forms, True) == []


@pytest.mark.parametrize("lang,title,text", [("ar", "القاهرة", "القاهرة هي عاصمة مصر"), ("hi", "दिल्ली", "दिल्ली भारत की राजधानी है")])
def test_other_scripts(lang, title, text):
    forms = forms_for(lang, title)
    query = masked(lang, text, forms)
    assert query[0] == MASK and leaked_forms(query, forms, True) == []


def test_unspaced_generic_link_text_stays():
    forms = forms_for("zh", "巴黎", anchors=["该市", "法国首都"])
    assert forms.forms == (("巴黎",),)
    forms = forms_for("th", "กรุงเทพมหานคร", anchors=["เมืองหลวง"])
    assert forms.forms == (("กรุงเทพมหานคร",),)


def test_a_lone_short_number_naming_the_entity_does_not_take_an_ordinal():
    # elwiki: [[10 Ιανουαρίου|10]] makes "10" a form of the day page, whose lead reads "η 10η ημέρα".
    forms = forms_for("el", "10 Ιανουαρίου", anchors=["10"])
    query = masked("el", "Η 10 Ιανουαρίου είναι η 10η ημέρα του έτους.", forms)
    assert query.count(MASK) == 1 and "10η" in query, query


# The real viwiki lead of GNU: its last sentence names the GNU Project, a link to another entity.
GNU_LEAD = ("GNU là một hệ điều hành và bộ sưu tập phần mềm máy tính phong phú . GNU bao gồm toàn bộ phần mềm tự do , "
            "hầu hết được cấp phép theo General Public License ( GPL ) của GNU Project . GNU là một từ viết tắt đệ quy .")


def _gnu():
    words = GNU_LEAD.split()
    project = words.index("Project")
    return words, forms_for("vi", "GNU"), [(project - 1, project)]


def test_a_name_inside_a_longer_link_is_kept_whole_masked_whole_or_its_sentence_dropped():
    from corpora.mrc.entity_masking import mask_lead
    from corpora.mrc.query_sentences import without_sentences

    words, forms, other_names = _gnu()
    kept = mask_lead(words, forms, 50, True, other_names, "keep")
    assert "GNU Project" in " ".join(kept.words) and kept.leaks == [] and kept.longer_names == (other_names[0],)
    whole = mask_lead(words, forms, 50, True, other_names, "mask_whole")
    assert "GNU" not in whole.words and "Project" not in whole.words and whole.words.count(MASK) == 4
    shorter, moved, left = without_sentences(words, kept.longer_names, other_names)
    assert [words[i] for i in left] == shorter
    assert " ".join(shorter) == ("GNU là một hệ điều hành và bộ sưu tập phần mềm máy tính phong phú . "
                                 "GNU là một từ viết tắt đệ quy .")
    assert moved == []
    dropped = mask_lead(shorter, forms, 50, True, moved)
    assert dropped.longer_names == () and "GNU" not in dropped.words
    # The job's way: the query's words still point at the words read (their spacing is read there).
    from corpora.mrc.query_sentences import masked_without_longer_name_sentences

    job = masked_without_longer_name_sentences(words, forms, 50, True, other_names, kept)
    assert job.words == dropped.words and len(job.last_sources) == len(job.words)
    assert all(w == MASK or w == words[i] for w, i in zip(job.words, job.last_sources))
    assert job.last_sources == tuple(sorted(job.last_sources)) and max(job.last_sources) > len(shorter)


def test_an_inflected_form_is_masked_where_the_language_inflects_names():
    # bn: "Dhaka's GDP" (the genitive -র on ঢাকা); el: the genitive of a two-word name.
    assert masked("bn", "ঢাকা বাংলাদেশের রাজধানী । ঢাকার জিডিপি ১৬২ বিলিয়ন ডলার ।", forms_for("bn", "ঢাকা")).count(MASK) == 2
    query = masked("el", "Η Παρισινή Κομμούνα ήταν κυβέρνηση . Η ιστορία της Παρισινής Κομμούνας είναι σύντομη .",
                   forms_for("el", "Παρισινή Κομμούνα"))
    assert query.count(MASK) == 2 and "Κομμούνας" not in query
    # en: a demonym is a derivation, not a form of the name.
    assert masked("en", "Angola is a country . The Angolan economy grew .", forms_for("en", "Angola")).count(MASK) == 1
