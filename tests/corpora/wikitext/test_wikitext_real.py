"""corpora.wikitext.parse on the real enwiki excerpts (read from shared/, skipped where absent): the
invariants on every article, the link recall against an independent regex reading of the same
wikitext (benchmarks/wikitext_parsers.reference_article_links), bold names, WikiExtractor's words."""
import bz2
import importlib.util
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from corpora.wiki.languages import wiki_language
from corpora.wikitext.parse import parse_wikitext
from wikitext_checks import REPO, SHARED, check_invariants

EXCERPT = SHARED / "enwiki-excerpt.xml.bz2"
TABLES = SHARED / "enwiki-table-markup.xml.bz2"
NS = "{http://www.mediawiki.org/xml/export-0.10/}"


# ─────────────────────────── the real excerpts ───────────────────────────


def read_articles(path: Path) -> list[tuple[str, str]]:
    articles = []
    with bz2.open(path) as stream:
        for _, element in ET.iterparse(stream):
            if element.tag == NS + "page":
                if element.findtext(NS + "ns") == "0" and element.find(NS + "redirect") is None:
                    articles.append((element.findtext(NS + "title"), element.findtext(f"{NS}revision/{NS}text") or ""))
                element.clear()
    return articles


def load_reference():
    """The benchmark's independent, regex-only reading of a page's article links (benchmarks/ is
    not a package, so it is loaded from its file)."""
    spec = importlib.util.spec_from_file_location("wikitext_parsers", REPO / "benchmarks" / "wikitext_parsers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference_article_links


@pytest.fixture(scope="module", params=[EXCERPT, TABLES], ids=["excerpt", "tables"])
def real(request):
    if not request.param.exists():
        pytest.skip(f"{request.param} not present")
    articles = read_articles(request.param)
    return request.param.name, articles, [parse_wikitext(text, "en") for _, text in articles]


# The excerpt's disambiguation pages ({{Disambiguation}} and {{geodis}}), checked by hand.
EXPECTED_DISAMBIGUATION = {
    "enwiki-excerpt.xml.bz2": {
        "Alien", "Austin (disambiguation)", "Ada", "Aberdeen (disambiguation)", "Argument (disambiguation)",
        "Animal (disambiguation)", "Asia Minor (disambiguation)", "Aa River",
    },
}


def test_real_articles_keep_the_invariants(real):
    name, articles, pages = real
    for (title, _), page in zip(articles, pages):
        check_invariants(page)
        for leftover in ("{{", "}}", "[[", "]]", "<ref", "</ref", "{|", "<!--", "__TOC__"):
            assert leftover not in page.text, (title, leftover)
    assert all(page.text for page in pages)
    disambiguation = {title for (title, _), page in zip(articles, pages) if page.is_disambiguation}
    assert disambiguation == EXPECTED_DISAMBIGUATION.get(name, set())


_HEADING_LINE_RE = re.compile(r"^(=+)\s*(.*?)\s*\1\s*$")


def prose_wikitext(text: str) -> str:
    """The wikitext without heading lines and without tail sections (See also, References, ...),
    which the parser drops: a line-based reading independent of the parser."""
    english = wiki_language("en")
    kept, tail_level = [], 0
    for line in text.split("\n"):
        heading = _HEADING_LINE_RE.match(line)
        if heading:
            level = len(heading.group(1))
            if tail_level and level > tail_level:
                continue
            tail_level = level if english.is_tail_section(heading.group(2)) else 0
            continue
        if not tail_level:
            kept.append(line)
    return "\n".join(kept)


def test_real_articles_link_recall(real):
    """Every article link outside templates/refs/files/tables, headings and tail sections, as read
    by a naive independent regex, comes back with the same target and text. Measured: 21,556
    anchors and 99.9% of the reference links on the excerpt, 398 on the table excerpt (links to a
    section whose text does not name the page are no anchors, in both); the misses are the
    reference's own errors (file captions holding single brackets, "ß" upper-cased to "SS")."""
    name, articles, pages = real
    reference_article_links = load_reference()
    minimum_anchors = {"enwiki-excerpt.xml.bz2": 21_500, "enwiki-table-markup.xml.bz2": 395}[name]
    expected = recovered = 0
    for (_, text), page in zip(articles, pages):
        reference = reference_article_links(prose_wikitext(text))
        got = Counter((a.target, " ".join(page.text[a.start : a.end].split())) for a in page.anchors)
        expected += sum(reference.values())
        recovered += sum((reference & got).values())
    assert sum(len(page.anchors) for page in pages) >= minimum_anchors
    assert recovered >= 0.995 * expected, f"{recovered}/{expected}"


def test_real_articles_bold_names(real):
    """Measured: 102 of 106 excerpt articles and 4 of 5 table articles have bold lead names; the rest
    are lists without one, or have it inside a dropped template ({{Nihongo|...}} in "Aikido")."""
    name, articles, pages = real
    minimum = {"enwiki-excerpt.xml.bz2": 100, "enwiki-table-markup.xml.bz2": 4}[name]
    assert sum(1 for page in pages if page.bold_names) >= minimum
    for (title, _), page in zip(articles, pages):
        for bold in page.bold_names:
            assert bold == bold.strip() and bold in page.text, (title, bold)
    if name == "enwiki-excerpt.xml.bz2":
        by_title = {title: page for (title, _), page in zip(articles, pages)}
        assert by_title["Anarchism"].bold_names[0] == "Anarchism"
        assert by_title["Anarchism"].text.startswith("Anarchism is a political philosophy that advocates self-governed")


def test_real_text_covers_wikiextractor_words(real):
    """Same kind of text as WikiExtractor (what the mPMR paper used): most of its words are ours."""
    pytest.importorskip("wikiextractor")
    import io

    from wikiextractor.extract import Extractor

    _, articles, pages = real
    theirs_total = shared = 0
    for (title, text), page in zip(articles[:40], pages[:40]):
        out = io.StringIO()
        Extractor("1", "1", "", title, [text]).extract(out, html_safe=False)
        theirs = Counter(out.getvalue().split("\n", 2)[-1].split())
        ours = Counter(page.text.split())
        theirs_total += sum(theirs.values())
        shared += sum((theirs & ours).values())
    assert shared >= 0.9 * theirs_total, f"{shared}/{theirs_total}"


def test_a_line_of_category_links_is_navigation_and_goes():
    """ukwiki's year pages: "''Дивись також [[:Категорія:Народились 1815]]''" showed "Дивись також
    Категорія:Народились 1815" in 27% of the real uk rows (the year pages are much-linked entities). A
    labelled category link is prose; an unlabelled one in a longer sentence keeps its text."""
    uk = wiki_language("uk").with_siteinfo({14: "Категорія", 6: "Файл"})
    wikitext = ("'''1815''' — невисокосний рік.\n''Дивись також [[:Категорія:Народились 1815]]''\n\n"
                "[[:Категорія:1810-ті]]\nЗ руки численних [[:Категорія:Есперанто поети|есперанто-поетів]].")
    assert parse_wikitext(wikitext, uk).text == "1815 — невисокосний рік.\nЗ руки численних есперанто-поетів."
    long_line = "The list in [[:Category:Cities in France]] holds every town of the country."
    assert parse_wikitext(long_line, "en").text == "The list in Category:Cities in France holds every town of the country."


def test_an_armenian_label_left_without_its_value_goes():
    """hywiki's country leads: "(IPA արտասանությամբ՝ {{IPA|…}})" and "(բիրմ․՝ [[Պատկեր:…]])" kept their label
    (the Armenian comma ends a label as ":" does) with nothing after it; "(՝)" naming the mark stays."""
    lead = "'''Ղրղզստան''' (IPA արտասանությամբ՝ {{IPA|kɨrʁɨˈzstɑn}}), պաշտոնապես՝ Ղրղզական Հանրապետություն"
    assert parse_wikitext(lead, "hy").text == "Ղրղզստան, պաշտոնապես՝ Ղրղզական Հանրապետություն"
    burma = "'''Մյանմա''' (բիրմ․՝ [[Պատկեր:Myanmar long form.svg|200px]]), պետություն"
    assert parse_wikitext(burma, wiki_language("hy").with_siteinfo({6: "Պատկեր"})).text == "Մյանմա, պետություն"
    assert parse_wikitext("բութը (՝), առոգանության", "hy").text == "բութը (՝), առոգանության"


def test_a_line_of_short_items_between_bullets_is_navigation_and_goes():
    """ukwiki's year pages open with "[[Промислова революція]]{{•}} [[Російська імперія]]{{•}} …", which
    led 512 of the 4,770 real uk rows' queries; bnwiki's and mrwiki's topic bars are the same. On the 30
    real dumps these are the only lines that go (uk 168, bn 9, mr 9). A bulleted list item, one bullet
    in a line, and sentences between bullets stay."""
    nav = "[[Промислова революція]]{{•}} [[Російська імперія]]{{•}} [[Наполеонівські війни]]\n'''1815''' — рік."
    assert parse_wikitext(nav, "uk").text == "1815 — рік."
    assert parse_wikitext("कनाट प्लेस • संसद मार्ग • चाणक्य पुरी\nदिल्ली।", "mr").text == "दिल्ली।"
    kept = "• One item of a list written with the character.\nThe first long sentence of this paragraph runs on • " \
           "and a second long sentence follows it here • with a third one as long as the others."
    assert parse_wikitext(kept, "en").text == kept
