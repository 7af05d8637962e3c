"""Tests for corpora.words: one real sentence per language, plus the per-language properties the
pipeline relies on (zh/ja/th words rather than characters, ko morphemes inside eojeol, ...).

Backends load once per process (get_tokenizer is cached), so the whole module loads each of them
once. Run as a script for words/s per language: ``python tests/test_words.py``.
"""
from __future__ import annotations

import importlib
import re
import threading
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from corpora.words import (
    SUPPORTED_LANGS,
    TOKENISER_TABLE,
    WordTokenizer,
    get_tokenizer,
    is_word_like,
    stop_words,
)

NTREX_JA = SHARED_DATA / "parallel" / "ntrex128" / "ja.txt"

# spaCy has no example sentences for these two; these are ordinary encyclopedic sentences.
_TH_SENTENCES = [
    "ประเทศไทยมีชื่ออย่างเป็นทางการว่าราชอาณาจักรไทย เป็นรัฐชาติที่ตั้งอยู่ในภูมิภาคเอเชียตะวันออกเฉียงใต้",
    "กรุงเทพมหานครเป็นเมืองหลวงและนครที่มีประชากรมากที่สุดของประเทศ",
    "แม่น้ำเจ้าพระยาไหลผ่านกรุงเทพมหานครก่อนออกสู่อ่าวไทย",
    "ภาษาไทยเป็นภาษาราชการของประเทศไทย และมีผู้พูดเป็นภาษาแม่ประมาณ 20 ล้านคน",
]
_SW_SENTENCES = [
    "Kiswahili ni lugha ya Kibantu inayozungumzwa hasa katika Afrika Mashariki.",
    "Tanzania ni nchi iliyoko Afrika Mashariki, na mji mkuu wake ni Dodoma.",
    "Mlima Kilimanjaro ndio mlima mrefu zaidi barani Afrika, wenye urefu wa mita 5,895.",
    "Julius Nyerere alikuwa Rais wa kwanza wa Tanzania kuanzia mwaka 1964 hadi 1985.",
    "Ziwa Viktoria ni ziwa kubwa kuliko yote barani Afrika & lina visiwa vingi.",
]


def real_sentences(lang: str) -> list[str]:
    """spaCy's shipped example sentences for lang, or the ones above for th and sw."""
    if lang == "th":
        return _TH_SENTENCES
    if lang == "sw":
        return _SW_SENTENCES
    return list(importlib.import_module(f"spacy.lang.{lang}.examples").sentences)


def _no_ws(text: str) -> str:
    return "".join(text.split())


def assert_surface_words(words: list[str], text: str) -> None:
    """The contract: non-empty surface substrings, in order, no whitespace or markers inside."""
    assert all(w and w.split() == [w] for w in words), words
    assert not any("▁" in w for w in words), words
    assert "".join(words) == _no_ws(text)


def assert_within_spaces(words: list[str], text: str) -> None:
    """No word crosses a space: every space-separated chunk of text is a run of whole words."""
    it = iter(words)
    for chunk in text.split():
        built = ""
        while built != chunk:
            built += next(it)
            assert chunk.startswith(built), (chunk, built)
    assert next(it, None) is None


def test_tables_cover_the_24_languages():
    assert len(SUPPORTED_LANGS) == 24
    assert set(TOKENISER_TABLE) == set(SUPPORTED_LANGS)


@pytest.mark.parametrize("lang", SUPPORTED_LANGS)
def test_real_sentence(lang):
    tok = get_tokenizer(lang)
    assert isinstance(tok, WordTokenizer)
    assert tok.lang == lang
    sentences = real_sentences(lang)
    for text in sentences:
        words = tok.tokenize(text)
        assert len(words) >= 2, (text, words)
        assert_surface_words(words, text)
    # Batched tokenisation agrees with one-by-one, also on empty and whitespace-only texts.
    texts = [*sentences, "", "  \n\t "]
    assert tok.tokenize_many(texts) == [tok.tokenize(t) for t in texts]
    assert tok.tokenize_many(texts)[-2:] == [[], []]


@pytest.mark.parametrize("lang", SUPPORTED_LANGS)
def test_whitespace_runs_and_odd_spaces_are_not_words(lang):
    tok = get_tokenizer(lang)
    text = real_sentences(lang)[0]
    messy = "  " + text.replace(" ", "  \n", 1) + "\u00a0\u3000\n\n" + text + " \t"
    assert_surface_words(tok.tokenize(messy), messy)


def test_get_tokenizer_is_cached():
    assert get_tokenizer("en") is get_tokenizer("en")


def test_unknown_language():
    with pytest.raises(ValueError) as err:
        get_tokenizer("xx")
    msg = str(err.value)
    assert "'xx'" in msg and "\n" not in msg and "Wikipedia language code" in msg
    with pytest.raises(ValueError):
        stop_words("xx")


@pytest.mark.parametrize("lang, backend", [("ca", "_SpacyTokenizer"), ("uk", "_SpacyTokenizer"), ("ceb", "_FunctionTokenizer")])
def test_other_wikipedia_languages_get_the_papers_rule(lang, backend):
    """Outside the 24: spaCy's rule-based tokenizer where spaCy has the language, else Sacremoses."""
    tokenizer = get_tokenizer(lang)
    assert type(tokenizer).__name__ == backend
    words = tokenizer.tokenize("Una frase, amb puntuació.")
    assert "".join(words) == "Unafrase,ambpuntuació." and "," in words


@pytest.mark.parametrize(
    "lang, text, words",
    [
        ("hy", "Երևան։ Երևան՝ (մղոն)։", ["Երևան", "։", "Երևան", "՝", "(", "մղոն", ")", "։"]),
        ("gu", "ગુજરાતમાં છે. અમદાવાદ.", ["ગુજરાતમાં", "છે", ".", "અમદાવાદ", "."]),
        ("ml", "കേരളം. ഇന്ത്യ,", ["കേരളം", ".", "ഇന്ത്യ", ","]),
        ("bo", "བོད། ལྷ་ས།", ["བོད", "།", "ལྷ་ས", "།"]),
        ("sa", "नगरम्॥ भारतम्।", ["नगरम्", "॥", "भारतम्", "।"]),
        ("mr", "सण॥ ॥२८॥", ["सण", "॥", "॥", "२८", "॥"]),
        ("bn", "দিবস।বাংলাদেশে", ["দিবস", "।", "বাংলাদেশে"]),  # no space after the danda
        # spaCy's URL rule took "কি.মি।এটি" (a real bnwiki sentence end) for an address; real ones stay whole
        ("bn", "১৫ কোটি কি.মি।এটি", ["১৫", "কোটি", "কি.মি", "।", "এটি"]),
        ("bn", "দেখুন www.example.com।", ["দেখুন", "www.example.com", "।"]),
        ("hy", "Սանտյագոն։Հյուսիսից", ["Սանտյագոն", "։", "Հյուսիսից"]),
        ("vi", "nhị canh。phó Giao，kỳ", ["nhị", "canh", "。", "phó", "Giao", "，", "kỳ"]),
        ("en", "Dr. Smith of the U.S. left.", ["Dr.", "Smith", "of", "the", "U.S.", "left", "."]),
        # spaCy's ar and fa split a final "." only after an upper-case letter (real NTREX: "سبتمبر 2009.")
        ("ar", "في سبتمبر 2009. عمره 40 عامًا.", ["في", "سبتمبر", "2009", ".", "عمره", "40", "عامًا", "."]),
        ("de", "am 3. Oktober", ["am", "3.", "Oktober"]),  # a German ordinal keeps its dot
    ],
)
def test_sentence_marks_spacys_rules_miss_are_split(lang, text, words):
    """spaCy's final-"." rule needs a letter of its ALPHA class (no Armenian, Gujarati, Malayalam,
    Tibetan) and it does not know "։ ՝ ། ॥"; an English abbreviation still keeps its dot."""
    assert get_tokenizer(lang).tokenize(text) == words


@pytest.mark.parametrize(
    "lang, text, words",
    [
        ("my", "မြန်မာ။ ရန်ကုန်၊ မြန်မာ နိုင်ငံ", ["မြန်မာ", "။", "ရန်ကုန်", "၊", "မြန်မာ", "နိုင်ငံ"]),
        ("km", "កម្ពុជា។ ភ្នំពេញ", ["កម្ពុជា", "។", "ភ្នំពេញ"]),
        ("sw", "Cafe\u0301 ya Dar, Tanzania.", ["Cafe\u0301", "ya", "Dar", ",", "Tanzania", "."]),
    ],
)
def test_sacremoses_does_not_split_words_at_combining_marks(lang, text, words):
    """Sacremoses splits off the marks outside Perl's \\p{Alnum} (the Myanmar asat, the Khmer coeng,
    a decomposed accent); the pieces are one word again, and a space still separates words."""
    got = get_tokenizer(lang).tokenize(text)
    assert got == words
    assert_surface_words(got, text)


def test_joins_with_space():
    no_space = {lang for lang in SUPPORTED_LANGS if not get_tokenizer(lang).joins_with_space}
    assert no_space == {"zh", "ja", "th"}


def test_zh_words_not_characters():
    words = get_tokenizer("zh").tokenize("北京大学是中华人民共和国的一所大学。")
    assert "北京大学" in words and "中华人民共和国" in words
    for text in real_sentences("zh"):
        words = get_tokenizer("zh").tokenize(text)
        assert sum(len(w) > 1 for w in words) >= len(words) / 3, words


def test_ja_multi_character_words():
    tok = get_tokenizer("ja")
    assert tok.tokenize("東京都に住んでいる") == ["東京", "都", "に", "住ん", "で", "いる"]
    for text in real_sentences("ja"):
        assert any(len(w) > 1 for w in tok.tokenize(text))


def test_ja_numbers_are_one_word_each():
    """Sudachi joins a number's digits only with its POS and normalised fields loaded (spaCy's ja loads
    them): with the surface alone, "1940年代" was 1 9 4 0 年 代 in 868 of the ja excerpt's 1,418 rows."""
    tok = get_tokenizer("ja")
    assert tok.tokenize("1940年代に18歳の1,000人が3.5%") == ["1940", "年", "代", "に", "18", "歳", "の", "1,000", "人", "が", "3.5", "%"]
    if not NTREX_JA.exists():
        pytest.skip(f"no {NTREX_JA}")
    lines = [line for line in NTREX_JA.read_text(encoding="utf-8").splitlines() if re.search("[0-9]{2}", line)]
    assert len(lines) > 300
    for line in lines:
        words = tok.tokenize(line)
        assert_surface_words(words, line)
        at, cuts = 0, []
        for word in words:
            start = line.index(word, at)
            if start == at and start > 0 and line[start - 1] in "0123456789" and word[0] in "0123456789":
                cuts.append(start)  # a word boundary between two digits with nothing between them
            at = start + len(word)
        assert not cuts, (line, words)


def test_ja_long_text_is_chunked():
    # Sudachi rejects inputs over 49,149 bytes; this is ~90 KB.
    text = "東京都に住んでいる外国人について。\n" * 1800
    words = get_tokenizer("ja").tokenize(text)
    assert_surface_words(words, text)
    assert words[:3] == ["東京", "都", "に"]


def test_th_multi_character_words():
    words = get_tokenizer("th").tokenize(_TH_SENTENCES[1])
    assert "กรุงเทพมหานคร" in words
    assert all(len(w) > 1 for w in words), words


def test_th_brackets_and_quotes_are_words_of_their_own():
    """newmm leaves them on Latin words and numbers (real NTREX: "(NRCC)", '"Trump"', "(3.6"), which
    then never equal the same word elsewhere; 112 of the 1,997 NTREX th lines change."""
    tok = get_tokenizer("th")
    text = 'คณะกรรมการ (NRCC) และ "Trump" ราคา (3.6 ล้าน) Children\'s'
    words = tok.tokenize(text)
    assert_surface_words(words, text)
    assert ["(", "NRCC", ")"] == words[1:4] and ['"', "Trump", '"'] == words[5:8]
    assert "(" in words and "3.6" in words and "'s" in words


def test_ko_units_within_eojeol():
    tok = get_tokenizer("ko")
    for text in real_sentences("ko"):
        assert_within_spaces(tok.tokenize(text), text)
    # Morphemes: a particle is split off its noun, so a bare name can be matched as a span.
    words = tok.tokenize("애플이 영국의 스타트업을 인수한다.")
    assert words[:4] == ["애플", "이", "영국", "의"]


def test_ko_matches_mecab_morphs():
    # corpora.words reads MeCab's lattice directly for speed; it must agree with the public API.
    from mecab import MeCab

    mecab = MeCab()
    for text in [*real_sentences("ko"), "서울특별시는\u00a0대한민국의 수도이다.\n\n \u3000(1394년)"]:
        # MeCab keeps a no-break space as a morpheme and glues "\u3000" to what follows; the public
        # contract splits those off, so compare after doing the same to morphs().
        assert get_tokenizer("ko").tokenize(text) == " ".join(mecab.morphs(text)).split()


def test_vi_syllables_with_punctuation_split():
    tok = get_tokenizer("vi")
    text = "Tôi là sinh viên đại học Bách Khoa Hà Nội."
    assert tok.tokenize(text) == "Tôi là sinh viên đại học Bách Khoa Hà Nội .".split()
    for t in real_sentences("vi"):
        assert_within_spaces(tok.tokenize(t), t)


def test_sw_sacremoses_no_escaping_or_markers():
    words = get_tokenizer("sw").tokenize("Dar es Salaam & Zanzibar: mji-mkuu (zamani) \"Bongo\" <b>")
    assert words == 'Dar es Salaam & Zanzibar : mji-mkuu ( zamani ) " Bongo " < b >'.split()


def test_backends_usable_from_several_threads():
    # Beam runs several DoFn threads per process; a shared Sudachi tokenizer would raise here.
    cases = {lang: real_sentences(lang)[0] * 20 for lang in ("ja", "ko", "zh", "th", "en")}
    expected = {lang: get_tokenizer(lang).tokenize(text) for lang, text in cases.items()}
    errors: list[BaseException] = []

    def work():
        try:
            for _ in range(10):
                for lang, text in cases.items():
                    assert get_tokenizer(lang).tokenize(text) == expected[lang]
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_stop_words():
    assert "the" in stop_words("en")
    assert {"na", "ya", "kwa", "katika"} <= stop_words("sw")
    for lang in SUPPORTED_LANGS:
        words = stop_words(lang)
        assert words, lang
        assert all(w == w.lower() and w.split() == [w] for w in words), lang
    assert "_" not in "".join(stop_words("vi")) and "của" in stop_words("vi")
    assert "的" in stop_words("zh")


@pytest.mark.parametrize("word", ["abc", "北京", "123", "กรุง", "É", "U.K.", "۱۲", "x-y"])
def test_word_like(word):
    assert is_word_like(word)


@pytest.mark.parametrize("word", ["", ",", "—", "...", "«", "。", "(", "$", "%"])
def test_not_word_like(word):
    assert not is_word_like(word)


def _benchmark(langs=("en", "zh", "th", "ja", "ar", "vi", "sw", "ko"), size=3000, windows=200) -> None:
    """Words/s over `windows` windows of `size` characters, per language, one thread.

    The windows repeat the real sentences above. spaCy caches the analysis of each space-separated
    chunk, so on repeated text it hits far more often than on Wikipedia: for spaCy languages a
    second figure empties that cache before every window (a pessimistic bound; real text lies
    between). The other backends keep no such cache."""
    import time

    for lang in langs:
        t0 = time.perf_counter()
        tok = get_tokenizer(lang)
        load = time.perf_counter() - t0
        sep = " " if tok.joins_with_space else ""
        base = sep.join(real_sentences(lang))
        texts = [((base + sep) * (size // len(base) + 1))[:size]] * windows
        tok.tokenize_many(texts[:1])  # warm up
        t0 = time.perf_counter()
        n = sum(len(w) for w in tok.tokenize_many(texts))
        rate = n / (time.perf_counter() - t0)
        line = f"{lang}: {rate:>10,.0f} words/s  {rate * size * windows / n / 1000:>6,.0f} KB/s"
        spacy_tokenizer = getattr(tok, "_tokenizer", None)
        if hasattr(spacy_tokenizer, "_flush_cache"):
            t0, n = time.perf_counter(), 0
            for text in texts:
                spacy_tokenizer._flush_cache()
                n += len(tok.tokenize(text))
            cold = n / (time.perf_counter() - t0)
            line += f"  (cache emptied per window: {cold:,.0f} words/s)"
        print(f"{line}  load {load:.2f}s  [{TOKENISER_TABLE[lang]}]")


def test_spacy_tokenizers_load_without_torch():
    """thinc imports torch when it is installed (~2 CPU-s per worker); the tokenizers do not need it,
    and a later `import torch` in the same process still works."""
    import subprocess
    import sys

    code = (
        "import sys; from corpora.words import get_tokenizer\n"
        "assert get_tokenizer('en').tokenize('Paris, France.') == ['Paris', ',', 'France', '.']\n"
        "assert 'torch' not in sys.modules, 'spaCy pulled torch in'\n"
        "try:\n    import torch\nexcept ImportError:\n    pass\nelse:\n    assert torch.tensor([1]).item() == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


if __name__ == "__main__":
    _benchmark()


def test_a_bracket_glued_to_an_armenian_or_indic_word_is_split():
    # Real leads: hy "Բուլղարիա(բուլղարերեն", mr "यशवंत देव(१ नोव्हेंबर", bn "চেক প্রজাতন্ত্র,(সংক্ষিপ্ত" kept the
    # name and the bracket one word, and the query showed the name unmasked. Latin notation stays whole.
    assert get_tokenizer("hy").tokenize("Բուլղարիա(բուլղարերեն)")[:3] == ["Բուլղարիա", "(", "բուլղարերեն"]
    assert get_tokenizer("mr").tokenize("यशवंत देव(१ नोव्हेंबर")[:3] == ["यशवंत", "देव", "("]
    assert get_tokenizer("bn").tokenize("চেক প্রজাতন্ত্র,(সংক্ষিপ্ত")[:5] == ["চেক", "প্রজাতন্ত্র", ",", "(", "সংক্ষিপ্ত"]
    assert get_tokenizer("en").tokenize("type(s) UTC(NPL)") == ["type(s", ")", "UTC(NPL", ")"]


def test_direction_controls_are_not_part_of_words():
    # Real wikitext: bn "পাকিস্তান" lead "{{lang-ur|پاکِستان\u202c\u200e}}", uk "Базиліка\u202d \u202cВоздвиження",
    # hy "[[Ֆրանցիսկո Գոյա\u200e|...]]" (in link text too). A word with an invisible mark never
    # equalled the same name without it; the mark now separates words as a space does.
    assert get_tokenizer("ur").tokenize("پاکِستان\u202c\u200e") == ["پاکِستان"]
    assert get_tokenizer("uk").tokenize("Базиліка\u202d \u202cВоздвиження") == ["Базиліка", "Воздвиження"]
    assert get_tokenizer("hy").tokenize("Ֆրանցիսկո Գոյա\u200e,") == ["Ֆրանցիսկո", "Գոյա", ","]
    assert get_tokenizer("ar").tokenize("شطرنج\u200e) x") == ["شطرنج", ")", "x"]
    assert get_tokenizer("sw").tokenize("Afrika\u200f na") == ["Afrika", "na"]
    text = "মুসলমান\u200e ভাষা"
    assert_surface_words(get_tokenizer("bn").tokenize(text), text.replace("\u200e", " "))


def test_arabic_clause_marks_and_thai_trailing_commas_are_words_of_their_own():
    # Real NTREX ar "منذ سبع سنوات،وذلك" (the space after the Arabic comma left out) gave the word
    # "سنوات،وذلك" and CLISM answers such as "seven years ago" -> "منذ سبع سنوات،وذلك".
    assert get_tokenizer("ar").tokenize("منذ سبع سنوات،وذلك حسب") == ["منذ", "سبع", "سنوات", "،", "وذلك", "حسب"]
    assert get_tokenizer("fa").tokenize("سلام،دنیا") == ["سلام", "،", "دنیا"]
    assert get_tokenizer("ur").tokenize("دنیا؟ہاں؛ٹھیک") == ["دنیا", "؟", "ہاں", "؛", "ٹھیک"]
    # newmm kept the comma on a Latin word or bracket in Thai text: "(Paris),".
    assert get_tokenizer("th").tokenize("ที่ (Paris), ในปี 2020, และ") == ["ที่", "(", "Paris", ")", ",", "ใน", "ปี", "2020", ",", "และ"]


def test_numbers_in_a_scripts_own_digits_stay_one_word():
    # Real bnwiki "জনসংখ্যা ২১,২৭,৪২,৬৩১": spaCy's letter rules cover the Bengali and Devanagari blocks,
    # digits included, so a number came out as seven words (22.5% of the real bn rows, 29.0% of mr).
    assert get_tokenizer("bn").tokenize("জনসংখ্যা ২১,২৭,৪২,৬৩১ জন, ৩.৫ কিমি") == ["জনসংখ্যা", "২১,২৭,৪২,৬৩১", "জন", ",", "৩.৫", "কিমি"]
    assert get_tokenizer("mr").tokenize("३.५ किमी १,२३४ लोक (१०:३०).") == ["३.५", "किमी", "१,२३४", "लोक", "(", "१०:३०", ")", "."]
    assert get_tokenizer("ar").tokenize("بلغ ٣٫٥ مليون") == ["بلغ", "٣٫٥", "مليون"]
    # As ASCII numbers always were; an ordinal or a sentence's last number keeps its dot apart as before.
    assert get_tokenizer("en").tokenize("In 2020, 1,234 people at 10:30. Also 3.") == [
        "In", "2020", ",", "1,234", "people", "at", "10:30", ".", "Also", "3", "."]
    assert get_tokenizer("de").tokenize("Am 3. Oktober kamen 1.234 Menschen") == ["Am", "3.", "Oktober", "kamen", "1.234", "Menschen"]
