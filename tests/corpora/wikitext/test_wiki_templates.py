"""Inline templates that carry text of the sentence are rendered; the rest leave no residue."""
import pytest

from corpora.wikitext.templates.inline import render, split_arguments
from corpora.wikitext.parse import parse_wikitext


def text(wikitext: str, lang: str = "en") -> str:
    return parse_wikitext(wikitext, lang).text


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        ("The war (1775{{ndash}}1783) ended.", "The war (1775–1783) ended."),
        ("Rome{{snd}}the city.", "Rome – the city."),
        ("An area of {{convert|105|km2|sqmi}}, the city is old.", "An area of 105 km2, the city is old."),
        ("From {{convert|5|to|10|km|mi}} long.", "From 5 to 10 km long."),
        # unit codes as {{convert}} spells them: real bn "150 e6km", "−89.2 C"
        ("Far: {{convert|150|e6km|e6mi}}, cold: {{cvt|−89.2|C}}.", "Far: 150000000 km, cold: −89.2 °C."),
        ("Apollo ({{lang|grc|Ἀπόλλων}}, Apollōn) is a god.", "Apollo (Ἀπόλλων, Apollōn) is a god."),
        ("Algeria ({{lang-ar|الجزائر}}) is big.", "Algeria (الجزائر) is big."),
        ("It is {{nowrap|5 km}} long.", "It is 5 km long."),
        ("Born {{birth date|1952|3|11}} in Rome.", "Born 1952-03-11 in Rome."),
        ("About {{circa|1500}} it fell.", "About c. 1500 it fell."),
        ("{{nihongo|Tokyo|東京|Tōkyō}} is a city.", "Tokyo (東京, Tōkyō) is a city."),
        ("{{仮リンク|ジョン・スミス|en|John Smith}}は作家である。", "ジョン・スミスは作家である。"),
        ("{{読み仮名_ruby不使用|医学|いがく}}は、学問である。", "医学（いがく）は、学問である。"),
        ("A {{nowrap|1{{ndash}}2}} range.", "A 1–2 range."),  # nested
        ("Half is {{frac|1|2}}.", "Half is 1/2."),
        ("KDE, {{As of|2015|2|lc=yes}}, has two.", "KDE, as of February 2015, has two."),
        ("{{as of|2015|6|30}} it had 5.", "As of 30 June 2015 it had 5."),
        ("Tính {{As of|2010|alt=vào năm 2010}}, có 5.", "Tính vào năm 2010, có 5."),
        # a maintenance tag around a sentence keeps the sentence (real jawiki: 45 in the excerpt)
        ("語は{{要出典範囲|孤立した言語だ|date=2021年5月}}。", "語は孤立した言語だ。"),
        ("It {{citation needed span|was the first|date=May 2020}}.", "It was the first."),
    ],
)
def test_text_bearing_templates_are_rendered(wikitext, expected):
    lang = "ja" if "仮リンク" in wikitext or "読み仮名" in wikitext or "範囲" in wikitext else "en"
    assert text(wikitext, lang) == expected


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        ("Paris ({{IPA-fr|paʁi}}) is big.", "Paris is big."),
        ("[[Apollo]] ({{IPA|x}}; {{audio|a.ogg}}; {{respell|x}}) is a god.", "Apollo is a god."),
        ("Ho ({{IPAc-en|x}}; born 1950) wrote.", "Ho (born 1950) wrote."),
        ("Greek: {{lang|grc|}}, Apollōn.", "Greek: Apollōn."),
        ("A 1775{{unknown template}}1783 date.", "A 1775 1783 date."),  # never glued
        ("Tên ({{chú thích web|url=x}}; {{cn}}; {{x}}) là.", "Tên là."),
        ("東京（{{lang-en|}}、{{IPA|x}}）は都市。", "東京は都市。"),
    ],
)
def test_dropped_templates_leave_no_empty_brackets_or_separators(wikitext, expected):
    lang = "ja" if "東京" in wikitext else "en"
    assert text(wikitext, lang) == expected


def test_a_dropped_template_in_italics_inside_brackets_leaves_no_brackets():
    # "(''{{x}}'')" keeps a nowiki edge between the italic toggles; the page's quick check for
    # residue missed it, and "d’autoroutes () et" reached the rows.
    assert text("Les autoroutes (''{{unknown|de}}'') et [''{{unknown}}''] voies.", "fr") == "Les autoroutes et voies."


def test_a_bold_name_inside_a_reading_template_is_the_leads_name():
    """Real ja leads open "{{読み仮名|'''医学'''|いがく}}は、…" (14 uses in the ja excerpt). The
    template was dropped, the name with it, and the query began "また は と は"."""
    page = parse_wikitext("{{読み仮名|'''医学'''|いがく}}は、生体の構造を研究する学問である。", "ja")
    assert page.text == "医学（いがく）は、生体の構造を研究する学問である。" and page.bold_names == ("医学",)


def test_a_numbered_argument_is_the_positional_one_and_quotations_take_text_or_quote():
    # Real bn "উদাহরণস্বরূপ : {{nowrap|1=(2 + 3) + 4 = 2 + (3 + 4)}}।" read "উদাহরণস্বরূপ: ।", en "the famous
    # {{math|1=''E'' = ''mc''<sup>2</sup>}} formula" lost it, bn "{{Cquote|quote=…}}" lost the quotation.
    assert split_arguments("nowrap|1=(2 + 3) = 5") == ("nowrap", ["(2 + 3) = 5"], {})
    assert text("উদাহরণস্বরূপ : {{nowrap|1=(2 + 3) + 4 = 2 + (3 + 4)}}।", "bn") == "উদাহরণস্বরূপ : (2 + 3) + 4 = 2 + (3 + 4)।"
    assert render("Cquote|quote=কুশারীরা হলেন", str, "bn") == "কুশারীরা হলেন" and render("quote|text=Hi|author=X", str) == "Hi"


def test_audio_shows_the_name_it_links_not_an_invitation_to_listen():
    # Real hy "Թուրքիա ({{Audio|Tr-Türkiye.ogg|''Türkiye Cumhuriyeti''}})" read "( թուրք․ ՝ )"; bn, ru
    # and vi calls link "শুনুন", "произношение", "listen" or an IPA transcription, which go.
    assert text("Թուրքիա (թուրք․՝ {{Audio|Tr-Türkiye.ogg|''Türkiye Cumhuriyeti''}})", "hy") == "Թուրքիա (թուրք․՝ Türkiye Cumhuriyeti)"
    for call in ("অডিও|Bn.oga|<small>শুনুন</small>|help=no", "audio|x.ogg|произношение", "audio|x.ogg|/lɔːs ˈændʒələs/",
                 "audio|x.ogg"):
        assert not render(call, str), call
    assert render("audio|x.ogg|Estados Unidos Mexicanos (উচ্চারণ)", str, "bn") == "Estados Unidos Mexicanos"


def test_arguments_split_at_top_level_pipes_only():
    name, positional, named = split_arguments("lang|fr|[[Paris|la ville]] {{nowrap|a|b}}|text=x")
    assert name == "lang" and positional == ["fr", "[[Paris|la ville]] {{nowrap|a|b}}"] and named == {"text": "x"}


def test_links_inside_rendered_templates_become_anchors():
    page = parse_wikitext("Paris ({{lang|fr|[[Paris|la ville]]}}) is big.", "en")
    assert page.text == "Paris (la ville) is big."
    assert [(page.text[a.start : a.end], a.target) for a in page.anchors] == [("la ville", "Paris")]


def test_unknown_templates_are_not_rendered():
    assert render("cite web|url=x|title=y", lambda s: s) is None
    assert render("Infobox country|name=x", lambda s: s) is None


def test_french_templates_carry_the_words_of_the_sentence_on_fr_only():
    # Real frwiki phrases ("compte environ {{unité|3.8|millions}} d'habitants, sur {{unité|891.8|km|2}}",
    # "au {{s-|XX}}", "né le {{date de naissance|11|novembre|1866}}") lost their numbers, centuries, dates.
    from corpora.wikitext.parse import parse_wikitext

    fr = parse_wikitext("Berlin compte {{unité|3.8|millions}} d'habitants, sur {{unité|891.8|km|2}}. Né le "
                        "{{date de naissance|11|novembre|1866}} au {{s-|XIX}}, mort au {{-s-|I}}, le {{Ier}} "
                        "arrondissement {{incise|dit-on}} à {{heure|4|30}} pour {{euro|5}}.", "fr").text
    assert fr == ("Berlin compte 3.8 millions d'habitants, sur 891.8 km2. Né le 11 novembre 1866 au XIXe siècle, "
                  "mort au Ier siècle av. J.-C., le Ier arrondissement – dit-on – à 4 h 30 pour 5 €.")
    # The same names mean other templates elsewhere: uk {{s}}, bn {{es}}, en {{e|3}}; ja's {{De|…}} shows
    # its German text ("ドイツ語圏では“{{De|Religionswissenschaft}}”"), not the French ordinal "De …".
    assert render("s|XIX", str, "uk") == "XIX" and render("es", str, "bn") is None
    assert render("De|Religionswissenschaft", str, "ja") == "Religionswissenschaft"
    assert not render("e|3", str, "fr")  # a bare suffix with an argument is another template
    assert render("e", str, "fr") == "e" and render("e|24", str, "vi") == "×10^24"


def test_a_date_with_its_month_as_a_word_is_shown_as_written():
    # Read as numbers, {{date|11|novembre|1866}} gave "11-1866"; an ISO date stays ISO.
    assert render("date|11|novembre|1866", str) == "11 novembre 1866"
    assert render("start date|1990|5|3", str) == "1990-05-03"
    # bn's own names (real "( {{জন্ম তারিখ|…}} – {{death date|1912|7|17}} )" read "( – 1912-07-17 )"); its digits as written
    assert render("জন্ম তারিখ|df=yes|১৯২০|৩|১৭", str, "bn") == "১৯২০-৩-১৭"
    assert render("মৃত্যু তারিখ ও বয়স|1957|2|8|1903|12|28", str, "bn") == "1957-02-08"


def test_portuguese_and_russian_templates_seen_in_real_sentences():
    # ptwiki "documentada pela primeira vez no {{séc|XIII}}", "os {{fmtn|90000}} habitantes";
    # ruwiki "{{нп5|Баварский квартал|Баварский квартал|de|Bayerisches Viertel}} в районе".
    assert render("séc|XIII", str, "pt") == "século XIII" and render("fmtn|90000", str, "pt") == "90000"
    assert render("нп5|Баварский квартал|Баварский квартал|de|Bayerisches Viertel", str, "ru") == "Баварский квартал"
    assert render("нп5|Amerika-Gedenkbibliothek", str, "ru") == "Amerika-Gedenkbibliothek"
    # ruwiki "Население составляет {{число|3054000}} человек" read "составляет человек"
    assert render("число|3054000", str, "ru") == "3054000" and render("число|65300|км²", str, "ru") == "65300 км²"
    assert render("séc|XIII", str, "es") is None


def test_italian_population_template_shows_its_number():
    # "un comune italiano di {{TA|103 379}} abitanti" read "di abitanti" in 40 queries of a real itwiki sample
    assert render("TA|103 379", str, "it") == "103 379" and render("TA|103 379", str, "en") is None
    assert render("numero|188520", str, "it") == "188520"  # Brescia: "un comune italiano di {{numero|188520}} abitanti"


@pytest.mark.parametrize(
    "call, expected",
    [
        ("val|6.241|e=18", "6.241×10^18"),  # en "roughly 6.241 times the elementary charge" lost ×10^18
        ("val|144,37|e=6|u=km2", "144,37×10^6 km2"),  # vi
        ("val|1|e=-3|ul=км", "1×10^-3 км"),  # uk
        ("val|1.00794|(7)", "1.00794(7)"),
        ("val|0,00589|0,00015", "0,00589±0,00015"),
        ("val|1.2|+0.1|-0.2", "1.2+0.1−0.2"),
        ("val|5.65|u=°", "5.65°"),
        ("val|30000|u=C", "30000 C"),
    ],
)
def test_val_keeps_exponent_uncertainty_and_unit(call, expected):
    assert render(call, str, "en") == expected


@pytest.mark.parametrize(
    "lang, call, expected",
    [
        # real sentences: bn "এর গভীরতা 4000 and 4500 m", vi "vận tốc khoảng 5 to 8 km/h", id "-2 to 0 °C"
        ("bn", "রূপান্তর|4000|and|4500|m", "4000–4500 m"),
        ("vi", "convert|5|to|8|km/h", "5–8 km/h"),
        ("id", "convert|-5|to|-2|C", "-5 – -2 °C"),
        ("vi", "convert|210|x|297|mm", "210 × 297 mm"),
        ("hy", "convert|2|or|3|km", "2/3 km"),
        ("vi", "convert|1.35|to|1.5|e6km", "1350000–1500000 km"),
        ("en", "convert|4000|and|4500|m", "4000 and 4500 m"),  # English Wikipedia shows the words
        ("simple", "convert|5|to|8|km", "5 to 8 km"),
    ],
)
def test_convert_ranges_use_symbols_outside_english(lang, call, expected):
    assert render(call, str, lang) == expected


def test_templates_that_wrote_words_of_real_sentences_in_other_languages():
    # Each lost words of real sentences: bn "মোট আয়তন {{রূপান্তর|306|km2|sqmi}}।" ("convert", 319 calls
    # in the bn dump), uk "навчався в {{не перекладено|…|Благородному пансіоні|ru|…}} при", hy
    # "{{Նիհոնգո|[[Էդո]]|江戸}} անվանմամբ", it "tra i 400 e i 2100 {{m s.l.m.}}", vi "{{chem|3|He}}",
    # "{{IETF RFC|1122}} và {{IETF RFC|1123}}", en "(general formula {{chem|C|''n''|H|2''n''}})".
    assert text("মোট আয়তন {{রূপান্তর|306|km2|sqmi|lk=out}}। ঢাকা", "bn") == "মোট আয়তন 306 km2। ঢাকা"
    assert text("навчався в {{не перекладено|Благородний пансіон|Благородному пансіоні|ru|Пансион}} при", "uk") \
        == "навчався в Благородному пансіоні при"
    assert render("iw|Sybase SQL Server", str, "uk") == "Sybase SQL Server" and render("iw|x", str, "en") is None
    assert render("не перекладено|є=Chinese contemporary classical opera|мова=en|треба=сучасна китайська опера", str, "uk") \
        == "сучасна китайська опера"  # the one of the uk dump's 65 calls written with names only
    # uk leads "'''Іва́н Франко́''' ({{ДН|27|8|1856}}, [[Нагуєвичі]] — {{ДС|28|5|1916}}, [[Львів]])" read "(Нагуєвичі —, Львів)"
    assert text("({{ДН|27|8|1856}}, [[Нагуєвичі]] — {{ДС|28|5|1916|13}}, [[Львів]])", "uk") == "(1856-08-27, Нагуєвичі — 1916-05-28, Львів)"
    assert render("ДС|||2003", str, "uk") == "2003" and render("ДН|27|8|1856", str, "ru") is None
    assert text("հայտնի էր {{Նիհոնգո|[[Էդո]]|江戸}} անվանմամբ", "hy") == "հայտնի էր Էդո (江戸) անվանմամբ"
    assert text("tra i 400 e i 2100 {{m s.l.m.}}, trovando", "it") == "tra i 400 e i 2100 m s.l.m., trovando"
    assert render("M|61.000||km/h", str, "it") == "61.000 km/h" and render("M|1|c|m", str, "it") == "1 cm"
    assert render("m|1,12|e=-3|-|Pa", str, "it") == "1,12×10^-3 Pa" and render("m|1|c|m", str, "en") is None
    assert render("M|3986005|e=8|-|-", str, "it") == "3986005×10^8"  # "-": no prefix, no unit
    assert render("maiuscoletto|sì", str, "it") == "sì"
    assert text("nguyên tử {{chem|4|He}} có", "vi") == "nguyên tử 4He có"
    assert text("trong {{IETF RFC|1122}} và {{IETF RFC|1123}}.", "vi") == "trong RFC 1122 và RFC 1123."
    assert text("formula {{chem|C|''n''|H|2''n''}}) here", "en") == "formula CnH2n) here"
    assert text("「{{en|I am a president.}}」「{{en|I am happy.}}」と", "ja") == "「I am a president.」「I am happy.」と"
    assert render("en|Europa", str, "fr") is None and render("tl|コメント依頼", str, "ja") is None
    # en "''Eagle''{{'s}} footpads", "computers{{mdashb}}following", "alongside {{HMS|Ajax|22}}"; vi "#
    # {{flag|Phần Lan}} (153,620)", "({{zh|c=西南中沙群岛办事处|v=…}})"; ja "レノンは{{ilq|そうね。…}}と語った"
    assert text("''Eagle''{{'s}} footpads", "en") == "Eagle's footpads" and text("a{{mdashb}}b", "en") == "a—b"
    assert render("HMS|Ajax|22", str) == "HMS Ajax (22)" and render("flag|Georgia (U.S. state)|name=Georgia", str, "en") == "Georgia"
    assert render("zh|c=西南中沙群岛办事处|v=Tây Nam", str, "vi") == "西南中沙群岛办事处" and render("flag|Phần Lan", str, "vi") == "Phần Lan"
    assert not render("flag|USA", str, "vi")  # a code: the name is not in the call
    # an icon beside a name the author writes too (hy), or a name in the wiki's language (mr): not rendered there
    assert render("flag|Christmas Island", str, "hy") is None and render("flagcountry|Australia", str, "mr") is None
    assert text("レノンは{{ilq|そうね。}}と語った。", "ja") == "レノンは「そうね。」と語った。"
    # it "la {{chiarire|recente}} nascita", "{{Exp|1,9|19}} anni"; uk "депортовано {{num|440000}} євреїв",
    # "клавішу {{key|Alt}}"; bn "({{IAST|purāṇa}})", "২৩{{smallsup|ঘণ্টা}}"; vi "Mao Trạch Đông từng nói: {{cquote|…}}"
    assert text("e la {{chiarire|recente}} nascita", "it") == "e la recente nascita"
    assert render("Exp|1,9|19", str, "it") == "1,9×10^19" and render("colore|navy|Business", str, "it") == "Business"
    assert text("депортовано {{num|440000}} євреїв, клавішу {{key|Alt}}", "uk") == "депортовано 440000 євреїв, клавішу Alt"
    assert render("s|390 197", str, "uk") == "390 197" and render("IAST|purāṇa", str, "bn") == "purāṇa"
    assert text("লিন্ডম্যান প্রমাণ করেন, {{পাই}} একটি", "bn") == "লিন্ডম্যান প্রমাণ করেন, π একটি"  # bn "pi"
    assert text("từng nói: {{cquote|Mục tiêu của chúng ta}}", "vi") == "từng nói: Mục tiêu của chúng ta"
    # fr minidump "Autriche": "d’[[autoroute]]s (''{{langue|de|texte=Autobahnen}}'')", "({{en langue|de|…}})",
    # "{{tmp|2|°C}}", "propose de {{citation|diviser …}}"; es "45{{esd}}km"; fi "({{k-de|Bezirk}})";
    # ar "'''برلين''' {{لغة-أل|Berlin}} هي"; ru "({{iw|Институт имени Отто Гана|||…}})"
    assert text("d’[[autoroute]]s (''{{langue|de|texte=Autobahnen}}'') et", "fr") == "d’autoroutes (Autobahnen) et"
    assert render("en langue|de|Republik Österreich", str, "fr") == "Republik Österreich"
    assert render("tmp|2|°C", str, "fr") == "2 °C" and render("citation|diviser", str, "fr") == "« diviser »"
    assert render("citation|diviser", str, "en") is None and text("45{{esd}}km", "es") == "45 km"
    assert render("k-de|Bezirk", str, "fi") == "Bezirk" and render("لغة-أل|Berlin", str, "ar") == "(Berlin)"
    assert render("iw|Институт имени Отто Гана|||Max Planck", str, "ru") == "Институт имени Отто Гана"
    assert text("7,6{{e|–22}} giây", "vi") == "7,6×10^–22 giây" and render("CAD|84.390", str) == "CA$84.390"


def test_mediawikis_own_functions_show_their_argument():
    # Real sentences: uk "населення у Києві становило {{formatnum:2944408}} особи" read "становило особи",
    # en "Mount Tahat ({{formatnum:3003}} m)" read "(m)", it "di {{formatnum:290678}} abitanti".
    assert render("formatnum:2944408", str, "uk") == "2944408" and render("formatnum:3003|R", str) == "3003"
    assert render("ucfirst:paris", str) == "Paris" and render("lc:ABC", str) == "abc"
    assert render("Template:Foo", str) is None


def test_quotes_around_a_dropped_template_stay_separate_toggles():
    # The real lead of "Algeria": an italic template between bold names.
    text = ("'''Algeria''' ({{lang-ar|الجزائر}} ''{{transl|ar|al-Jazā'ir}}''; {{lang-ber|x}} ''Dzayer''), "
            "officially '''People's Democratic Republic of Algeria''', is a [[sovereign state]].")
    page = parse_wikitext(text, "en")
    assert page.bold_names == ("Algeria", "People's Democratic Republic of Algeria")
    # transl carries text (its apostrophe is a letter, not a quote); the italics around it still pair.
    assert page.text.startswith(
        "Algeria (الجزائر al-Jazā'ir; x Dzayer), officially People's Democratic Republic of Algeria, is a sovereign state."
    )


@pytest.mark.parametrize(
    "lang, wikitext, expected",
    [
        # a transcription after a word is the sentence's subject (real en "A", el, it, ja excerpts)
        ("en", "the sign to represent the vowel {{IPA|/a/}}, and called it", "the sign to represent the vowel /a/, and called it"),
        ("el", "μια μετατροπή του ήχου {{ΔΦΑ|/kʰ/}} σε {{ΔΦΑ|/x/}} (οι", "μια μετατροπή του ήχου /kʰ/ σε /x/ (οι"),
        ("it", "''asci'' {{IPA|/ˈaʃʃi/}}, mentre", "asci /ˈaʃʃi/, mentre"),
        ("en", "pronounced {{IPAc-en|lang|p|æ|r|ɪ|s}} in", "pronounced /pærɪs/ in"),
        ("el", "x {{IPA-el|a.pól.lɔːn|pron}} y", "x [a.pól.lɔːn] y"),
        # in brackets or after a label it is a pronunciation aside, dropped as before
        ("en", "'''Albedo''' ({{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}}) or", "Albedo or"),
        ("en", "Paris ({{lang-fr|Paris}}, {{IPA-fr|paʁi}}) is", "Paris (Paris) is"),
        ("it", "Bressanone (IPA: {{IPA|x}}, ''Brixen'' in tedesco) è", "Bressanone (Brixen in tedesco) è"),
        ("en", "an {{API|x}} call", "an call"),  # "API" is IPA on frwiki only
        ("ru", "Берли́н (Berlin {{IPA-de|bɛɐ̯ˈliːn}}) — столица", "Берли́н (Berlin) — столица"),
        ("en", "'''Actinopterygii''' {{IPAc-en|ˌ|æ|k|t}}, or the ray-finned fishes", "Actinopterygii, or the ray-finned fishes"),
    ],
)
def test_transcriptions_in_running_text_are_kept(lang, wikitext, expected):
    assert text(wikitext, lang) == expected
