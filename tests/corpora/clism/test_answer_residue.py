"""CLISM answers as an annotator writes them: dates, counted nouns, countries, repeated names and common
nouns the English NER calls names. Every sentence is a real NTREX-128 pair (line n of en.txt and the
target file), tokenised as the job tokenises it, with the links fast_align gave the span's words."""
from __future__ import annotations

import pytest

from corpora.clism.answers.places import name_occurrences, place_code
from corpora.clism.answers.repeats import pair_answers
from corpora.clism.answers.spans import answer_words, project_answer
from corpora.clism.ner_spans import informative_spans, load_ner_pipeline, ner_pipeline_available
from corpora.words import get_tokenizer, stop_words


def answer(english: str, target: str, span: tuple[int, int, str], lang: str, links):
    src, tgt = english.split(), target.split()
    result = project_answer(links, src, tgt, span[0], span[1], span[2], 2, stop_words("en"), answer_words(lang))
    return result if isinstance(result, str) else " ".join(tgt[result.start : result.end + 1])


# NTREX line 616 (en-de): fast_align linked "Netherlands" to UN-Organ and "Chilean" to Territorium.
NETHERLANDS_EN = ("The Netherlands - based UN body has no power to award Chilean territory , and has stipulated that it "
                  "will not determine the outcome of possible talks .")
NETHERLANDS_DE = ("Das UN-Organ mit Sitz in den Niederlanden ist nicht befugt , chilenisches Territorium zuzusprechen , "
                  "und hat festgelegt , dass es nicht über das Ergebnis möglicher Gespräche entscheiden wird .")


def test_a_country_and_its_adjective_are_answered_by_their_spelling_in_the_target():
    assert answer(NETHERLANDS_EN, NETHERLANDS_DE, (1, 1, "GPE"), "de", [(1, 1)]) == "Niederlanden"
    assert answer(NETHERLANDS_EN, NETHERLANDS_DE, (11, 11, "NORP"), "de", [(11, 12)]) == "chilenisches"
    # The UN is no country: its answer is the aligner's, as before.
    assert answer(NETHERLANDS_EN, NETHERLANDS_DE, (4, 4, "ORG"), "de", [(4, 1)]) == "UN-Organ"
    # The table: countryinfo's English names and demonyms, CLDR's spellings ("Dutch" is the language).
    assert place_code(["the", "Netherlands"], "GPE") == place_code(["Dutch"], "NORP") == "NL"
    assert place_code(["Chileans"], "NORP") == "CL" and place_code(["Chilean"], "GPE") is None


def test_an_answer_running_past_a_country_is_cut_to_it():
    # NTREX line 760 (en-de): "Denuklearisierung Nordkoreas" for "North Korea".
    english = "North Korea"
    assert answer(english, "die Denuklearisierung Nordkoreas", (0, 1, "GPE"), "de", [(0, 1), (1, 2)]) == "Nordkoreas"


def test_in_japanese_a_country_before_a_noun_is_its_adjective():
    # NTREX line 1279 (en-ja): "The Japanese carmaker" -> 日本 の 自動車 メーカー; fast_align linked
    # "Japanese" to 日本 and 自動車 ("car"). ja writes the adjective as the name: the answer is 日本.
    english = ("The Japanese carmaker said the impact of border delays in the event of a no - deal Brexit could "
               "cost jobs .")
    japanese = ("日本 の 自動車 メーカー で ある 同社 は 、 合意 なし で ブレグジット が 成立 し た 場合 、 国境 で 生じる "
                "遅れ は 事業 に 損失 を もたらす だろう 、 と し て いる 。")
    assert answer(english, japanese, (1, 1, "NORP"), "ja", [(1, 0), (1, 2)]) == "日本"
    # A people is not the bare name ("Germans" is ドイツ 人): an answer elsewhere is not moved to it.
    assert answer("the Germans", "ドイツ が 使用 し た 船", (1, 1, "NORP"), "ja", [(1, 5)]) == "船"


def test_arabic_clitics_stay_on_the_word_but_do_not_hide_the_country():
    # NTREX line 624 (en-ar): "لبوليفيا", li- (to) + Bolivia, one word of the tokeniser; answers are
    # whole words, so the clitic stays in (docs/clism_pairs.md).
    english = ('Monday will bring Bolivia " an extraordinary opportunity to open a new era of relations with Chile " '
               'and a chance to " put an end to 139 years of disagreements with mutual benefits , " he said .')
    arabic = ('وعلى حد قوله ، سيجلب يوم الاثنين لبوليفيا " فرصة غير عادية لفتح حقبة جديدة من العلاقات مع تشيلي " '
              'وفرصة " لإنهاء 139 عامًا من الخلافات وإبراز المنفعة المتبادلة " .')
    assert answer(english, arabic, (3, 3, "GPE"), "ar", [(3, 2), (3, 3)]) == "لبوليفيا"
    # An adjective is not its country's name: "الصينية" (Chinese) does not answer "China" elsewhere.
    assert name_occurrences("تعهدت الصين و الشركات الصينية".split(), "CN", "ar") == [(1, 1), (4, 4)]


def test_a_peoples_adjective_is_not_moved_to_its_countrys_bare_name():
    # NTREX line 274 (en-hi): "मैक्सिको के नागरिकों" (citizens of Mexico) for "Mexicans", which fast_align
    # linked to को: rejected as before, not moved to मैक्सिको, a country, not its people.
    english = ("The National Center for Disaster Prevention warned Mexicans on Saturday to stay away from the volcano "
               "after activity picked up in the crater and it registered 183 emissions of gas and ash over 24 hours .")
    hindi = ("ज्वालामुखी पहाड के मुख की गतिविधि को देखकर शनिवार को नेशनल सेंटर फ़ॉर डिज़ास्टर प्रिवेंशन ने मैक्सिको के "
             "नागरिकों को यह चेतावनी दी थी कि वे ज्वालामुखी से दूर रहे और बताया कि 24 घंटे में 183 बार गैस और राख "
             "निकलने का क्रम दर्ज़ किया गया है ।")
    assert answer(english, hindi, (7, 7, "NORP"), "hi", [(7, 9)]) == "target_only_stop_words"
    # The bare count keeps its number alone: "183" is not "183 बार" (183 times).
    assert answer(english, hindi, (26, 26, "CARDINAL"), "hi", [(26, 36)]) == "183"
    assert answer(english, hindi, (33, 34, "TIME"), "hi", [(33, 33)]) == "24 घंटे"


def test_a_cjk_date_holds_its_day_and_month_units():
    # NTREX line 610 (en-ja): "1 October" -> 10 月 1, with 日 left out, under all three aligners.
    english = ("Those hopes are perhaps at their highest in decades , as Bolivia awaits a ruling by the international "
               "court of justice on 1 October after five years of deliberations .")
    japanese = ("10 月 1 日 に ボリビア は 5 年間 の 審議 の 後 、 国際 司法 裁判 所 の 判決 を 待つ ため 、 これ ら の "
                "希望 は おそらく 数十 年 で 最高 の もの だ 。")
    assert get_tokenizer("ja").tokenize("10月1日にボリビアは")[:4] == ["10", "月", "1", "日"]
    assert answer(english, japanese, (22, 23, "DATE"), "ja", [(22, 2), (23, 0), (23, 1)]) == "10 月 1 日"
    # NTREX line 285 (en-zh): only "1" linked; the month before it joins too.
    chinese = "一年 前 的 10 月 1 日 全民 公投 被 西班牙政府 视为 非法"
    assert answer("a year after the October 1 referendum", chinese, (4, 5, "DATE"), "zh", [(5, 5)]) == "10 月 1 日"
    # An age is no date: "32" stays 32, not 32 歳 ("years old" is not in the English).
    assert answer("Smith , 32 ,", "スミス 32 歳", (2, 2, "DATE"), "ja", [(2, 1)]) == "32"


def test_a_counted_noun_follows_its_number():
    # NTREX line 56 (en-hi): "48 hours" -> 48, घंटे (hours) unlinked.
    english = ("Officials shut down beach access from Ponto Beach in Casablad to Swami 's in Ecinitas for 48 hours for "
               "investigation and safety purposes .")
    hindi = ("जांच और सुरक्षा उद्देश्य से अधिकारियों ने 48 घंटे के लिए कैसब्लाड के पोंटो बीच से लेकर एसिनिटास के "
             "स्वामिस बीच तक बीच एक्सेस को रोक दिया है ।")
    assert answer(english, hindi, (16, 17, "TIME"), "hi", [(16, 7)]) == "48 घंटे"
    # NTREX line 1868: "15 years" -> 15 साल.
    english = ("Ms Humphreys , who has been friends with Ms Davies for years , lost Mark , her partner of 15 years , "
               "not long after the death of his mother .")
    hindi = ("सुश्री हंफरीज़ , जो वर्षों से सुश्री डेविस की मित्र है , उन्होंने 15 साल के अपने दोस्त मार्क को खो दिया , "
             "अपनी माँ की मृत्यु के कुछ समय बाद ही ।")
    assert answer(english, hindi, (19, 20, "DATE"), "hi", [(19, 13)]) == "15 साल"
    # A noun linked to another English word is that word's ("के" is a stop word anyway): an
    # adjective "13-year-old" is not a count.
    assert answer(english, hindi, (19, 20, "DATE"), "hi", [(19, 13), (14, 14)]) == "15"
    assert answer("13 - year - old", "13 वर्षीय किशोर", (0, 4, "DATE"), "hi", [(0, 0), (2, 1)]) == "13 वर्षीय"


def test_a_name_said_twice_takes_its_places_in_order():
    # NTREX line 721 (en-zh): "Friday" twice; fast_align linked the first to the second 星期五 and the
    # second to 九洞 (nine holes); the target writes 星期五 twice.
    english = ('" Moliwood " were the only pair not to shoot a bogey on Saturday afternoon , but they also avoided '
               'bogeys on Saturday morning , Friday afternoon and the back nine on Friday morning .').split()
    chinese = ("“ Moliwood ” 是 唯一 一组 在 周六 下午 未 发出 一柏忌 的 球员 ， 另外 他们 在 周六 上午 、 星期五 下午 和 "
               "星期五 上午 的 后 九洞 也 未 发出 一柏忌 。").split()
    alignment = [(25, 24), (32, 28)]
    spans = [(25, 25, "DATE"), (32, 32, "DATE")]
    found = pair_answers(alignment, english, chinese, spans, 2, stop_words("en"), answer_words("zh"))
    assert [(a.start, a.end) for a in found] == [(21, 21), (24, 24)]  # 星期五 and 星期五, in order
    # Without the rule the second mention was 九洞; with one mention nothing moves.
    alone = pair_answers(alignment, english, chinese, spans[1:], 2, stop_words("en"), answer_words("zh"))
    assert chinese[alone[0].start] == "九洞"


def test_a_repeated_name_is_not_moved_into_another_names_answer():
    # NTREX line 999 (en-de): "the Trump administration" is "die Regierungsbeamten"; the target's first
    # Trump is Donald Trump's, so the first "Trump" keeps the aligner's (wrong) answer, not a shared one.
    english = ('For that effect , the Trump administration officials , including US President Donald Trump himself , '
               'try to persuade Germany to pull out of the " inappropriate " Nord Stream 2 pipeline project , which '
               'according to Trump , made Berlin Moscow \'s " captive . "').split()
    german = ("Zu diesem Zweck versuchen die Regierungsbeamten , darunter auch US-Präsident Donald Trump selbst , "
              "Deutschland davon zu überzeugen , sich aus dem „ unangemessenen “ Pipeline-Projekt Nord Stream 2 "
              "zurückzuziehen , mit dem laut Trump Berlin zum „ Gefangenen “ Moskaus wurde .").split()
    alignment = [(5, 5), (12, 9), (12, 10), (13, 11), (37, 34)]
    spans = [(5, 5, "ORG"), (12, 13, "PERSON"), (37, 37, "ORG")]
    found = pair_answers(alignment, english, german, spans, 2, stop_words("en"), answer_words("de"))
    assert [" ".join(german[a.start : a.end + 1]) for a in found] == ["Regierungsbeamten", "Donald Trump", "Trump"]


@pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="needs en_core_web_sm")
def test_common_noun_initialisms_are_no_names():
    # NTREX lines 472 and 486, tagged by en_core_web_sm: "AI" is a GPE there; "AI Next" is a programme's name.
    nlp = load_ner_pipeline("en_core_web_sm")
    for text, kept in [
        ("Meanwhile, China introduced its plan last year: it's aiming to be No.1 in AI innovation by 2030.",
         ["China", "last year", "2030"]),
        ("And this month DARPA announced a $2 billion investment in an initiative called AI Next.",
         ["this month", "DARPA", "$ 2 billion", "AI Next"]),
    ]:
        doc = nlp(text)
        words = [t.text for t in doc]
        assert any(e.text == "AI" for e in doc.ents) or "AI Next" in [e.text for e in doc.ents]
        spans, rejected = informative_spans(words, [(e.start, e.end, e.label_) for e in doc.ents], stop_words("en"))
        assert [" ".join(words[s.start : s.end + 1]) for s in spans] == kept
        assert rejected == ({"common_noun_initialism": 1} if "AI innovation" in text else {})
