"""corpora.wikitext.parse: plain text with exact anchors, bold lead names and the disambiguation flag,
rule by rule on hand-written snippets (malformed input: test_wikitext_robustness.py; the real
excerpts: test_wikitext_real.py; MediaWiki's parser-test cases: test_wikitext_mediawiki_cases.py)."""
import pytest

from corpora.wikitext.parse import Anchor, parse_wikitext
from wikitext_checks import links, parse


# ─────────────────────────────── links ───────────────────────────────


def test_plain_piped_and_trailed_links():
    page = parse("A [[political philosophy]] of [[self-governance|self-governed]] [[bus]]es, [[bus]]'s.")
    assert page.text == "A political philosophy of self-governed buses, bus's."
    assert links(page) == [
        ("political philosophy", "Political philosophy"),
        ("self-governed", "Self-governance"),
        ("buses", "Bus"),
        ("bus", "Bus"),
    ]


def test_anchor_offsets():
    page = parse("x [[B|bee]]s y [[C]]")
    assert page.text == "x bees y C"
    assert page.anchors == (Anchor(2, 6, "B"), Anchor(9, 10, "C"))


def test_link_text_is_kept_between_adjacent_links():
    page = parse("[[A]] [[B]]{{x}} [[C]]<ref>r</ref> and [[D|d]]/[[E]]")
    assert page.text == "A B C and d/E"
    assert [t for _, t in links(page)] == ["A", "B", "C", "D", "E"]


def test_link_targets_are_normalised_and_fragments_dropped():
    page = parse("[[paris#History|Paris]] [[New_York&nbsp;City]] [[#Early life|below]] [[ foo ]]")
    assert links(page) == [("Paris", "Paris"), ("New_York City", "New York City"), ("foo", "Foo")]
    assert "below" in page.text  # a same-page link keeps its text, without an anchor
    # A link to a section is a mention of the page only when its text names the page
    page = parse("[[KDE#KDE Plasma|KDE Plasma Desktop]], [[Mercury (planet)#Orbit|mercury]], [[Anarchism in France#Today|France]]")
    assert links(page) == [("mercury", "Mercury (planet)")] and page.text == "KDE Plasma Desktop, mercury, France"
    # ... and its "#" at a line's start, which is not a numbered-list marker there (MediaWiki's test)
    assert parse("[[#Space between Text]]\n* [[#B]] y").text == "#Space between Text\n#B y"


def test_link_trail_follows_the_language():
    assert links(parse("[[café]]s [[Foo]]é"))[1] == ("Foo", "Foo")
    assert links(parse("[[café]]s", "fr")) == [("cafés", "Café")]
    assert links(parse("[[北京]]市", "zh")) == [("北京", "北京")]
    assert links(parse("[[Москва]]ой", "ru")) == [("Москваой", "Москва")]
    assert links(parse("[[bus]]<nowiki/>es")) == [("bus", "Bus")]


def test_pipe_trick():
    assert links(parse("[[Mercury (planet)|]] and [[Paris, Texas|]]")) == [
        ("Mercury", "Mercury (planet)"),
        ("Paris", "Paris, Texas"),
    ]


def test_markup_inside_link_text():
    page = parse("[[Foo|''The'' '''Foo''']] [[Bar|AT&amp;T <small>Inc</small>]] [[Baz|a<br/>b]]")
    assert links(page) == [("The Foo", "Foo"), ("AT&T Inc", "Bar"), ("a b", "Baz")]


def test_spaces_inside_link_text_are_not_collapsed():
    page = parse("x   [[Foo|a  b]]   y")
    assert page.text == "x a  b y"
    assert links(page) == [("a  b", "Foo")]


def test_entities_keep_offsets_exact():
    page = parse("AT&amp;T&nbsp;&mdash; [[AT&amp;T Corporation|AT&amp;T]] &#91;1&#93; caf&eacute; [[Zoë|Zo&euml;]]")
    assert page.text == "AT&T — AT&T [1] café Zoë"
    assert links(page) == [("AT&T", "AT&T Corporation"), ("Zoë", "Zoë")]


def test_external_links_keep_only_their_label():
    page = parse("See [http://example.org the site] and [https://x.org] or http://bare.org/x now.")
    assert page.text == "See the site and or http://bare.org/x now."
    assert page.anchors == ()


# ─────────────────────────── dropped markup ───────────────────────────


def test_nested_templates_and_parameters_are_dropped():
    page = parse("A {{outer|x={{inner|[[Hidden]]}}|y={{{1|z}}}}} B {{a|{{{b}}}}} C")
    assert page.text == "A B C"
    assert page.anchors == ()


def test_multiline_infobox_closed_by_a_line_starting_with_a_bar():
    page = parse("{{Infobox country\n| name = [[France]]\n| capital = {{lang|fr|Paris}}\n|}}\n'''France''' is a [[country]].")
    assert page.text == "France is a country."
    assert links(page) == [("country", "Country")]


def test_tables_are_dropped_nested_and_indented():
    wikitext = (
        "Before [[A]].\n{| class=wikitable\n|-\n| [[In table]] || {{flag|X}}\n|-\n|\n{|\n| [[Nested]]\n|}\n|}\n"
        "Middle [[B]].\n:{| \n| [[Indented]]\n|}\nAfter [[C]]."
    )
    page = parse(wikitext)
    assert page.text == "Before A.\nMiddle B.\nAfter C."
    assert [t for _, t in links(page)] == ["A", "B", "C"]


def test_references_in_every_form_are_dropped():
    wikitext = (
        'Fact.<ref>Plain [[Cited]] {{cite web|url=x}}</ref> Named<ref name="a">x</ref> again<ref name=a/> '
        "spaced<ref name = 'b' /> upper<REF>y</REF>.\n== References ==\n<references>\n<ref name=c>z</ref>\n</references>\n"
    )
    page = parse(wikitext)
    assert page.text == "Fact. Named again spaced upper."
    assert page.anchors == ()


def test_comments_and_opaque_tags_are_dropped():
    wikitext = (
        "a<!-- [[Hidden]] {{x}} --> b <math>\\begin{matrix}x\\end{matrix}</math> c <gallery>\nFile:X.jpg|[[Cap]]\n</gallery> d "
        '<syntaxhighlight lang="python">[[x]]</syntaxhighlight> e <source>y</source> f <pre>{{z}}</pre> g '
        "<timeline>t</timeline> h __TOC__ __NOTOC__ i"
    )
    assert parse(wikitext).text == "a b c d e f g h i"


def test_nowiki_content_is_literal():
    page = parse("Write <nowiki>[[not a link]] {{nor this}} '''x'''</nowiki> here.")
    assert page.text == "Write [[not a link]] {{nor this}} '''x''' here."
    assert page.anchors == ()


def test_nowiki_quotes_read_as_a_quotation_mark():
    # Real elwiki: two apostrophes escaped so that they do not italicise are a quotation mark.
    page = parse("the airport <nowiki>''Makedonia''</nowiki> of [[Thessaloniki]].")
    assert page.text == 'the airport "Makedonia" of Thessaloniki.'
    assert parse("<nowiki>''</nowiki>Thriller<nowiki>''</nowiki> sold").text == '"Thriller" sold'


@pytest.mark.parametrize(
    "line",
    [
        "the feast of the [[[Greek War of Independence|National Uprising]].",  # one "[" too many
        "under the ]]House of Agilolfing|Agilolfings]] until 788",  # "]]" typed for "[["
        "small distilleries [[Distillation|distilleries] , of which",  # one "]" missing
        "GDP per capita|per capita reached 36.6 million",  # brackets forgotten
        "a smooth [[Connection [(principal bundle)|linear connection]] on it",  # "[" in the target
        "the restriction f|S of f to S, with f|S(s) = f(s)",  # notation
        "expression ::= atom | list",  # a BNF grammar
        "the line characters <nowiki>\\|</nowiki> and /",  # a nowiki'd pipe is shown all the same
    ],
)
def test_lines_still_holding_a_pipe_are_dropped(line):
    """MediaWiki shows these pipes literally; in a context they read as markup, not prose."""
    page = parse(f"Before [[Alpha]].\n{line}\nAfter [[Beta]].")
    assert page.text == "Before Alpha.\nAfter Beta."
    assert links(page) == [("Alpha", "Alpha"), ("Beta", "Beta")]


def test_danda_pipes_between_sentences_are_kept():
    sentences = ("ঢাকা বাংলাদেশের রাজধানী এবং বৃহত্তম শহর | এটি দক্ষিণ এশিয়ার একটি প্রধান শহর এবং বাণিজ্য কেন্দ্র | "
                 "শহরটি বুড়িগঙ্গা নদীর তীরে অবস্থিত এবং এর ইতিহাস অনেক পুরনো।")
    assert parse(sentences, "bn").text == sentences
    assert parse("[[a]] | [[b]] | [[c]] | [[d]]", "bn").text == ""  # a navigation bar still goes


def test_apostrophes_left_by_quote_runs_are_one():
    # Real elwiki "''Historia e Skënderbeut''''": MediaWiki shows "Skënderbeut''" (four quotes are an
    # apostrophe and bold; the odd bold is then read as an apostrophe and italic).
    text = parse("''Η ιστορία'' (''Historia e Skënderbeut''''), όπου", "el").text
    assert "''" not in text and text.startswith("Η ιστορία (Historia e Skënderbeut'")
    assert parse("l'''amour'' est", "fr").text == "l'amour est"


def test_a_heading_run_into_its_text_is_still_a_heading():
    page = parse("Intro [[Alpha]].\n\n== Economy ==Fishing and [[whaling]] lead.\n\n== Education ==\nSchools.")
    assert page.text == "Intro Alpha.\nFishing and whaling lead.\nSchools."
    assert parse("x\n= a =b").text == "x\n= a =b"  # one "=" is too weak a sign to cut a line on


def test_files_with_nested_links_in_captions_are_dropped():
    wikitext = (
        "A [[File:X.jpg|thumb|A [[caption link]] and [[Other|more]] [http://x y]]] B "
        "[[Image:Y.png]] C [[file:z.svg|left|[[Deep|[[er]]]]]] D [[Media:Z.ogg|sound]] E"
    )
    page = parse(wikitext)
    assert page.text == "A B C D sound E"
    assert page.anchors == ()


@pytest.mark.parametrize(
    "lang, file_ns, category_ns",
    [
        ("en", "File", "Category"),
        ("en", "Image", "Category"),
        ("de", "Datei", "Kategorie"),
        ("de", "Bild", "Kategorie"),
        ("fr", "Fichier", "Catégorie"),
        ("es", "Archivo", "Categoría"),
        ("ru", "Файл", "Категория"),
        ("zh", "文件", "分类"),
        ("zh", "檔案", "分類"),
        ("ja", "ファイル", "カテゴリ"),
        ("th", "ไฟล์", "หมวดหมู่"),
        ("ar", "ملف", "تصنيف"),
        ("hi", "चित्र", "श्रेणी"),
    ],
)
def test_localised_file_and_category_namespaces(lang, file_ns, category_ns):
    wikitext = f"x [[{file_ns}:A b.jpg|thumb|[[Caption]]]] y [[{category_ns}:Things|*]] z [[File:C.png]] w"
    assert parse(wikitext, lang).text == "x y z w"
    # case-insensitive, "_" and spaces tolerated
    wikitext = f"x [[{file_ns.lower()}_:A.jpg]] [[ {category_ns.upper()} :T]] y"
    assert parse(wikitext, lang).text == "x y"


def test_escaped_category_and_file_links_show_their_text():
    page = parse("See [[:Category:Cities]] and [[:File:X.jpg|this image]].")
    assert page.text == "See Category:Cities and this image."
    assert page.anchors == ()


def test_interlanguage_links_are_dropped_and_inline_interwiki_keep_text():
    page = parse("Text.\n[[fr:Paris]]\n[[zh-min-nan:Pa-lê]]\n[[simple:Paris]] [[de:Paris]]\nSee [[:fr:Paris|the French article]].")
    assert page.text == "Text.\nSee the French article."
    assert page.anchors == ()


def test_own_language_prefix_is_a_local_link():
    assert links(parse("[[en:Paris|the city]]")) == [("the city", "Paris")]


def test_other_namespaces_keep_text_without_anchor():
    page = parse(
        "[[Wikipedia:Neutral point of view|neutral]] [[wikt:anarchism|anarchism]] [[Help:Contents]] "
        "[[WP:NPOV]] [[Template:Foo|foo]] [[Portal:Art|art]] [[Star Wars: Episode IV|film]]"
    )
    assert page.text == "neutral anarchism Help:Contents WP:NPOV foo art film"
    assert links(page) == [("film", "Star Wars: Episode IV")]  # not a namespace: an article
    assert links(parse("[[Benutzer:X|jemand]] [[Hilfe:Y|Hilfe]]", "de")) == []
    assert links(parse("[[Utilisateur:X|quelqu'un]]", "fr")) == []


def test_html_tags_are_removed_and_their_text_kept():
    page = parse('a <span style="color:red">red</span> <small>small</small> b<br>c<br />d <sup>2</sup> <div>block</div> e')
    assert page.text == "a red small b c d 2\nblock\ne"


def test_a_numbers_superscript_exponent_keeps_a_caret():
    # real uk "«гіга» (10<sup>9</sup>)" read "(109)", hy "3.08568 * 10<sup>16</sup> մ" "3.08568 * 1016 մ"
    assert parse("«гіга» (10<sup>9</sup>), a 1,2×10<sup>−10</sup> m, 2<sup>&minus;3</sup>", "uk").text \
        == "«гіга» (10^9), a 1,2×10^−10 m, 2^−3"
    assert parse("the density <math>|\\Psi|</math><sup>2</sup> is").text == "the density ∣Ψ∣^2 is"  # a formula's power
    assert parse("a 10<Sup>9</Sup> b").text == "a 10^9 b"  # tag names ignore case
    assert parse("a 10<sUP>9</SuP> b").text == "a 10^9 b"  # in any mix
    # after a letter it stays glued, as plain text writes units; words stay glued too
    assert parse("5 km<sup>2</sup>, the 2<sup>nd</sup>, Ca<sup>2+</sup>").text == "5 km2, the 2nd, Ca2+"


# ───────────────────────── lines, quotes, headings ─────────────────────────


def test_headings_are_dropped_and_tail_sections_go_whole():
    wikitext = (
        "Lead.\n== History ==\nOld.\n=== Early ===\nEarlier [[Rome]].\n== See also ==\n* [[Foo]]\n"
        "== References ==\n{{reflist}}\n== External links ==\n{{commons}}\n[[Category:X]]"
    )
    page = parse(wikitext)
    # Headings are not prose (no context may glue one to the text after it); tail sections go whole.
    assert page.text == "Lead.\nOld.\nEarlier Rome."
    assert [t for _, t in links(page)] == ["Rome"]


def test_sections_keep_their_text_without_the_headings():
    page = parse("Lead.\n== Parent ==\n=== Child ===\nText.\n== Empty ==\n=== Empty child ===\n{{x}}")
    assert page.text == "Lead.\nText."


def test_list_markers_and_rules_are_dropped():
    page = parse("* one\n** two [[Link]]\n# three\n#: four\n; term\n: def\n----\nafter")
    assert page.text == "one\ntwo Link\nthree\nfour\nterm\ndef\nafter"
    assert links(page) == [("Link", "Link")]


def test_bold_and_italic_quotes():
    page = parse("''italic'' '''bold''' '''''both''''' l'''amour'' L''''arc''' x")
    assert page.text == "italic bold both l'amour L'arc x"


def test_bold_names_come_from_the_lead_only():
    wikitext = (
        "{{Infobox|name='''Not me'''}}\n'''Paris''' (also '''Lutetia''', '''''Ville Lumière''''') is the "
        "'''[[capital city|capital]]''' of France. '''Paris''' again.\n== History ==\n'''Later''' bold."
    )
    page = parse(wikitext)
    assert page.bold_names == ("Paris", "Lutetia", "Ville Lumière", "capital")
    assert links(page) == [("capital", "Capital city")]


def test_bold_punctuation_is_no_name_and_names_lose_unpaired_edges():
    # Real leads: el "Η Γεωγραφία''',''' σύμφωνα" masked every comma of the query, bn "''''')'''''"
    # every bracket; hy "'''Հակոբ Մելիք-Հակոբյան)'''" and "'''Բելիզ,'''" masked the mark with the name.
    assert parse("'''Բելիզ,''' պետություն է, '''Հակոբ Մելիք-Հակոբյան)''' x.", "hy").bold_names == ("Բելիզ", "Հակոբ Մելիք-Հակոբյան")
    assert parse("Η Γεωγραφία ''',''' σύμφωνα '''(''' x.", "el").bold_names == ()
    assert parse("The euro ('''€''') and '''Mercury (planet)'''.").bold_names == ("€", "Mercury (planet)")


def test_bold_run_closes_at_line_end():
    page = parse("'''Unclosed bold\nNext line")
    assert page.bold_names == ("Unclosed bold",)
    assert page.text == "Unclosed bold\nNext line"


def test_whitespace_left_by_removed_markup_is_repaired():
    page = parse("Paris ({{IPA|paʁi}}) is {{nowrap|big}} . A {{cn}}, B {{x}}. C ({{lang|fr|x}}, old).\n\n\n  D  ")
    # nowrap and lang carry text of the sentence (corpora/wikitext/templates/inline.py); IPA, cn and x do not.
    assert page.text == "Paris is big . A, B. C (x, old).\nD"  # the author's " ." is kept


@pytest.mark.parametrize("lang, wikitext, text", [
    ("en", "Apollo ({{x}}) was a god.", "Apollo was a god."),
    ("en", "Apollo ({{x}}; {{y}}) was a god.", "Apollo was a god."),  # separators only
    ("en", "Apollo ({{x}}, born 1900) was a god.", "Apollo (born 1900) was a god."),  # just inside "("
    ("en", "Apollo (born 1900, {{x}}) was a god.", "Apollo (born 1900) was a god."),  # just inside ")"
    ("en", "Apollo (({{x}}; )) was a god.", "Apollo was a god."),  # nested: one level per pass
    ("en", "Apollo [{{x}}] was a god.", "Apollo was a god."),
    ("en", "Greek: {{x}}, Apollōn, is a name.", "Greek: Apollōn, is a name."),  # doubled separator
    ("en", "Apollo ({{x}}. ) was a god.", "Apollo (.) was a god."),  # "." is not a separator here
    ("ja", "東京（{{x}}、{{y}}）は都市である。", "東京は都市である。"),
    ("ja", "東京（{{x}}、とうきょう）は都市である。", "東京（とうきょう）は都市である。"),
    # A label whose value was the template goes with it (real itwiki, frwiki and viwiki leads)
    ("it", "Catania ([[Alfabeto fonetico internazionale|IPA]]: {{IPA|[kaˈtanja]}}) è un comune", "Catania è un comune"),
    ("it", "Nobel (pronuncia: {{IPA|x}}; Stoccolma, 1833) è", "Nobel (Stoccolma, 1833) è"),
    ("fr", "Berlin (en allemand : {{Audio|Berlin.ogg}}) est", "Berlin est"),
    ("en", "a (b) c: {{x}}) d", "a (b) c:) d"),  # no bracket opens the label: left as it is
    ("en", "X (Ben &amp; Jerry: {{x}}) y", "X (Ben & Jerry:) y"),  # an entity's ";" opens no label
    # a notation emptied of its template goes with its label; not slashes inside a word, not a label before ","
    ("it", "Bolzano (pronuncia /{{IPA|bolˈtsano}}/, ''Bozen'' in tedesco) è", "Bolzano (Bozen in tedesco) è"),
    ("it", "Bressanone (IPA: {{IPA|x}}, ''Brixen'' in tedesco) è", "Bressanone (Brixen in tedesco) è"),
    ("el", "τον φθόγγο /{{IPA|o}}/, δηλ.", "τον φθόγγο, δηλ."),
    # a formula plain text cannot show is dropped (corpora/wikitext/tex_text.py); the slashes stay
    ("uk", "золот/<math>\\mathring{x}</math>/ий — золото", "золот//ий — золото"),
    ("en", "Afghanistan ([[Pashto]]/[[Dari]]: {{nq|افغانستان}}, ''Afġānistān''), officially",
     "Afghanistan (Pashto/Dari: Afġānistān), officially"),
])
def test_what_dropped_templates_leave_in_brackets_and_between_separators_is_repaired(lang, wikitext, text):
    assert parse_wikitext(wikitext, lang).text == text


def test_language_conversion_markup_in_zh():
    page = parse("-{zh-hans:计算机;zh-hant:電腦;}-与-{[[软件]]}--{H|zh-cn:A;zh-tw:B}-", "zh")
    assert page.text == "计算机与软件"
    assert links(page) == [("软件", "软件")]


# ─────────────────────────── disambiguation ───────────────────────────


@pytest.mark.parametrize(
    "lang, wikitext",
    [
        ("en", "{{disambiguation}}"),
        ("en", "{{Disambiguation|geo|surname}}"),
        ("en", "{{ disambig }}"),
        ("en", "{{Dab}}"),
        ("en", "{{hndis|Smith, John}}"),
        ("en", "{{Geodis}}"),
        ("en", "{{Airport disambiguation}}"),
        ("en", "{{Disambiguation_cleanup|date=May 2020}}"),
        ("en", "{{Template:Disambiguation}}"),
        ("en", "__DISAMBIG__"),
        ("de", "__BEGRIFFSKLÄRUNG__"),  # the local magic words, matched in one scan with the default's
        ("ja", "Text __曖昧さ回避__"),
        ("vi", "__ĐỊNH_HƯỚNG__"),
        ("vi", "__DISAMBIG__"),
        ("zh", "{{消歧义}}"),
        ("zh", "{{消歧義}}"),
        ("zh", "{{Disambig}}"),
        ("ja", "{{aimai}}"),
        ("ja", "{{曖昧さ回避}}"),
        ("ja", "{{人名の曖昧さ回避}}"),
        ("th", "{{แก้ความกำกวม}}"),
        ("ar", "{{توضيح}}"),
        ("hi", "{{बहुविकल्पी}}"),
        ("fr", "{{Homonymie}}"),
        ("de", "{{Begriffsklärung}}"),
        ("es", "{{Desambiguación}}"),
        ("ru", "{{Неоднозначность}}"),
    ],
)
def test_disambiguation_templates(lang, wikitext):
    page = parse(f"'''Mercury''' may refer to:\n* [[Mercury (planet)]]\n{wikitext}\n", lang)
    assert page.is_disambiguation
    assert links(page) == [("Mercury (planet)", "Mercury (planet)")]


@pytest.mark.parametrize(
    "wikitext",
    [
        "{{set index article}}",
        "{{Surname}}",
        "{{Other uses|Mercury (disambiguation)}}",
        "{{Redirect|Merc|other uses|Mercury (disambiguation)}}",
        "{{Disambiguation needed|date=May 2020}}",
        "<!-- {{disambiguation}} -->",
        "<nowiki>{{disambiguation}}</nowiki>",
        "[[Category:Disambiguation pages]]",
        "{{Begriffsklärungshinweis}}",
    ],
)
def test_not_disambiguation(wikitext):
    assert not parse(f"'''Mercury''' is a planet.\n{wikitext}\n").is_disambiguation
