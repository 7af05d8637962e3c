"""{{PAGENAME}} and its local names show the page's title (real mrwiki leads open with one)."""
from corpora.wiki.page_name_words import PAGE_NAME_WORDS
from corpora.wikitext.parse import parse_wikitext


def test_a_lead_written_with_the_local_pagename_keeps_its_bold_name():
    # mrwiki "शरद तळवलकर": "'''{{लेखनाव}}''' ([[नोव्हेंबर १]], [[इ.स. १९१८|१९१८]] - ...)"
    page = parse_wikitext("'''{{लेखनाव}}''' ([[नोव्हेंबर १]], [[इ.स. १९१८|१९१८]]) हे अभिनेते होते.", "mr", "शरद तळवलकर")
    assert page.text == "शरद तळवलकर (नोव्हेंबर १, १९१८) हे अभिनेते होते."
    assert page.bold_names == ("शरद तळवलकर",)


def test_english_names_work_on_every_wiki_and_local_ones_on_their_own():
    assert parse_wikitext("{{PAGENAME}} ist {{SEITENNAME}}.", "de", "Berlin").text == "Berlin ist Berlin."
    assert parse_wikitext("{{PAGENAME}} is {{SEITENNAME}}.", "en", "Berlin").text == "Berlin is."
    assert parse_wikitext("{{FULLPAGENAME:Other page}} here", "en", "Berlin").text == "Other page here"
    assert parse_wikitext("{{pagename}} here", "en", "Berlin").text == "here"  # magic words are case-sensitive
    assert parse_wikitext("{{PAGENAME}} here", "en").text == "here"  # no title given: dropped as before


def test_the_table_holds_each_languages_own_names_and_its_fallbacks():
    assert "लेखनाव" in PAGE_NAME_WORDS["mr"] and "SEITENNAME" in PAGE_NAME_WORDS["de"]
    assert "НАЗВАНИЕ_СТРАНИЦЫ" in PAGE_NAME_WORDS["ba"]  # Bashkir falls back to Russian
    assert "PAGENAME" not in PAGE_NAME_WORDS["de"] and "sw" not in PAGE_NAME_WORDS  # English is implied
