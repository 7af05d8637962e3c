"""Where authors type "|" for the danda (bn, hi, mr …), a pipe is kept only between sentences of prose;
broken links, table residue and heading remnants go as they do in every language."""
import pytest

from corpora.mrc.audit import _markup_re
from corpora.wiki.languages import wiki_language
from corpora.wikitext.parse import parse_wikitext

NEXT = "दुसऱ्या ओळीत पुढील माहिती दिलेली आहे."


def text(wikitext: str, lang: str = "mr") -> str:
    return parse_wikitext(wikitext, wiki_language(lang), "X").text


@pytest.mark.parametrize(
    "lang, line",
    [
        ("mr", "पुढे [ गांधार|गांधारच्या राजाने अनेक युद्धे केली आणि राज्य वाढवले"),  # a link's brackets broken
        ("mr", "|खंडोबाचा मंदिर जेजुरी येथे असून ते फार प्रसिद्ध आहे"),  # a table cell's pipe at the line's start
        ("mr", "पर्यटन = = बाह्य दुवे=="),  # the external-links heading run into prose
        ("mr", "पुण्यातील पर्यटन स्थळे == बाह्य दुवे =="),
        ("hi", "यह शहर [[गंगा नदी|गंगा के किनारे बसा है और यहाँ अनेक मंदिर हैं"),  # "[[" never closed
        ("hi", "भारत की राजधानी नई दिल्ली है|style=\"color:red\" और यह एक बड़ा शहर है"),  # no space after
        ("bn", "ঢাকা বাংলাদেশের রাজধানী |১৯৭১ সালে স্বাধীনতার পর থেকে এটি দেশের প্রধান শহর"),  # a digit after
        ("bn", "শহরটি নদীর তীরে অবস্থিত { ঢাকা | রাজধানী } এবং এর ইতিহাস অনেক পুরনো ও সমৃদ্ধ"),  # in braces
    ],
)
def test_pipes_and_headings_that_are_no_dandas_drop_their_line(lang, line):
    assert text(f"{line}\n{NEXT}", lang) == NEXT


@pytest.mark.parametrize(
    "lang, line",
    [
        ("hi", "भारत की राजधानी नई दिल्ली है| यह देश का सबसे बड़ा महानगर और प्रशासनिक केंद्र है|"),
        ("mr", "पुणे हे महाराष्ट्रातील एक महत्त्वाचे शहर आहे | येथे अनेक शैक्षणिक संस्था आणि उद्योग आहेत"),
        ("bn", "ঢাকা বাংলাদেশের রাজধানী এবং বৃহত্তম শহর | এটি দক্ষিণ এশিয়ার একটি প্রধান বাণিজ্য কেন্দ্র"),
        # A link right before the danda: its text is the script's letters.
        ("hi", "गंगा भारत की सबसे पवित्र नदी मानी जाती है और यह [[हिमालय]]| यहाँ से निकलकर बंगाल तक बहती है"),
    ],
)
def test_a_pipe_between_sentences_of_prose_is_kept(lang, line):
    out = text(f"{line}\n{NEXT}", lang)
    assert out.split("\n")[0] == line.replace("[[", "").replace("]]", "")


def test_the_audit_flags_what_the_rule_removes_and_not_a_danda():
    flags = _markup_re("mr")
    for remnant in ("[ गांधार | गांधारच्या", "आहे . | खंडोबाचा", "पर्यटन = = बाह्य दुवे = =", "{ ढाका | राजधानी }"):
        assert flags.search(remnant), remnant
    assert not flags.search("पुणे हे शहर आहे | येथे अनेक संस्था आहेत")


def test_other_languages_still_drop_every_line_with_a_pipe():
    assert text("Paris is a city | It is large and old and full of people\nNext line.", "en") == "Next line."


def test_heading_signs_glued_after_a_full_stop_drop_their_line():
    # Real mrwiki: "…गहन जंगलही असते.= = जगप्रसिद्ध दरी" (a heading run into the sentence before it).
    assert text(f"कोठे - कोठे यात गहन जंगलही असते.= = जगप्रसिद्ध दरी\n{NEXT}") == NEXT


def test_a_heading_never_closed_drops_its_line():
    # Real mrwiki: "===प" on a line of its own, above the section's "===आरोग्य पर्यटन===".
    assert text(f"===प\n{NEXT}") == NEXT


@pytest.mark.parametrize("lang", ["en", "mr"])
def test_a_line_an_image_remnant_empties_is_no_crash_beside_a_heading_remnant(lang):
    # "thumb|200px|" loses all of itself to the image-option rule; the heading-remnant rule then reads
    # the empty line.
    from corpora.wikitext.tidy import tidy

    assert tidy("Some prose == x.\nthumb|200px|\nMore prose.", wiki_language(lang)).splitlines()[-1] == "More prose."
