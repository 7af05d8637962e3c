"""The clism_pairs job end to end on DirectRunner: the bundled sample and bad input.

Every rule is checked on the output files, not only on the functions that enforce it.
"""
from __future__ import annotations

import collections
import importlib.util
from pathlib import Path

import pytest

from corpora.clism.answers.spans import REJECTION_REASONS
from corpora.clism.ner_spans import Span, check_span_rules, load_ner_pipeline, ner_pipeline_available
from corpora.schemas import CLISM_SCHEMA
from corpora.words import stop_words
from pipelines import clism_pairs

from job_files import assert_rows_in_mixed_order, dead_letters, read_checked

pytestmark = [
    pytest.mark.skipif(not ner_pipeline_available("en_core_web_sm"), reason="en_core_web_sm not installed"),
]
needs_eflomal = pytest.mark.skipif(__import__("importlib").util.find_spec("eflomal") is None,
                                   reason="eflomal not installed")
SAMPLE = Path(clism_pairs.sample_dir())


def run_job(out: Path, *args: str) -> dict[tuple[str, str], int]:
    table = clism_pairs.run(["--runner", "DirectRunner", "--output", str(out), *args])
    return {(r["lang"], r["metric"]): r["value"] for r in table.to_pylist()}


def rows(out: Path) -> list[dict]:
    return read_checked(out / "data", "train-*.parquet", CLISM_SCHEMA)


def assert_rows_follow_the_rules(rows_, max_span_words=10):
    """The CLISM rules on output rows: informative source spans, valid contiguous target spans."""
    en_stop = stop_words("en")
    assert rows_, "no rows"
    assert len({r["id"] for r in rows_}) == len(rows_)
    for r in rows_:
        assert r["src_lang"] == "en" and r["spans"], r["id"]
        src, tgt = r["src_words"], r["tgt_words"]
        assert all(w and not any(c.isspace() for c in w) for w in src + tgt)
        previous_end = -1
        for s in r["spans"]:
            span = Span(s["src_start"], s["src_end"], s["label"])
            assert check_span_rules(src, span, en_stop, max_span_words) == [], (r["id"], s, src)
            assert s["src_start"] > previous_end, "source spans overlap or are unsorted"
            previous_end = s["src_end"]
            assert 0 <= s["tgt_start"] <= s["tgt_end"] < len(tgt), (r["id"], s)
            assert s["label"]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    return out, run_job(out)


def test_sample_rows_follow_the_rules(sample_run):
    out, _ = sample_run
    found = rows(out)
    assert_rows_follow_the_rules(found)
    assert {r["tgt_lang"] for r in found} == {"ar", "fr", "hi", "vi"}


def test_sample_spans_are_spacy_entities(sample_run):
    """Independently of the job: each source span lies inside an entity spaCy finds in that sentence."""
    out, _ = sample_run
    nlp = load_ner_pipeline("en_core_web_sm")
    found = [r for r in rows(out) if r["tgt_lang"] == "fr"]
    docs = nlp.pipe([" ".join(r["src_words"]) for r in found])
    for r, doc in zip(found, docs):
        assert [t.text for t in doc] == r["src_words"]
        ents = [(e.start, e.end - 1, e.label_) for e in doc.ents]
        for s in r["spans"]:
            assert any(a <= s["src_start"] <= s["src_end"] <= b and lab == s["label"] for a, b, lab in ents), (r["id"], s)


def test_sample_known_entities_project_to_their_translation(sample_run):
    """Names written identically in both languages are the easy case any aligner must get right."""
    out, _ = sample_run
    by_id = {r["id"]: r for r in rows(out)}
    hits = total = 0
    for r in by_id.values():
        if r["tgt_lang"] not in ("fr", "vi"):
            continue
        for s in r["spans"]:
            words = r["src_words"][s["src_start"]:s["src_end"] + 1]
            if s["label"] == "PERSON" and all(w in r["tgt_words"] for w in words):
                total += 1
                hits += r["tgt_words"][s["tgt_start"]:s["tgt_end"] + 1] == words
    assert total >= 15 and hits / total >= 0.8, (hits, total)


def test_sample_stats_account_for_every_line_and_row(sample_run):
    out, stats = sample_run
    found = rows(out)
    kept = collections.Counter(f"en-{r['tgt_lang']}" for r in found)
    spans = collections.Counter()
    for r in found:
        spans[f"en-{r['tgt_lang']}"] += len(r["spans"])
    for lang in ("en-ar", "en-fr", "en-hi", "en-vi"):
        assert stats[(lang, "read/lines")] == 42
        assert stats[(lang, "pairs/kept")] == kept[lang]
        assert stats[(lang, "spans/kept")] == spans[lang]
        assert stats[(lang, "align/pairs")] == 42  # fast_align learns from every pair, spanless ones too
        dropped = stats.get((lang, "pairs/no_span"), 0) + stats.get((lang, "pairs/no_span_projected"), 0)
        assert kept[lang] + dropped == 42
        projected_away = sum(stats.get((lang, f"project/{reason}"), 0) for reason in (*REJECTION_REASONS, "overlapping_answers"))
        assert stats[(lang, "ner/informative_spans")] == spans[lang] + projected_away


@needs_eflomal
def test_eflomal_is_still_an_option(tmp_path):
    """The default is fast_align (reproducible); eflomal stays available for its better alignments."""
    stats = run_job(tmp_path, "--aligner", "eflomal", "--pairs", f"fr={SAMPLE}/en-fr.en,{SAMPLE}/en-fr.fr",
                    "--eflomal_samplers", "1")
    assert stats[("en-fr", "align/pairs")] == 42
    assert_rows_follow_the_rules(rows(tmp_path))


def test_bad_lines_are_counted_and_dead_lettered(tmp_path):
    data = tmp_path / "bad.txt"
    good = "Angela Merkel visited Paris . ||| Angela Merkel a visité Paris .\n"
    data.write_bytes((good * 3 + "\n" + "no separator\n" + " ||| vide\n").encode() + b"Caf\xe9 ||| Caf\xe9\n"
                     + ("word " * 20 + "||| mot\n").encode())
    stats = run_job(tmp_path / "out", "--pairs", f"fr={data}", "--pretokenized", "--max_words", "10")
    assert stats[("en-fr", "read/lines")] == 8
    expected = {"read/empty": 2, "read/no_separator": 1, "read/not_utf8": 1, "read/too_long": 1}
    assert {m: stats.get(("en-fr", m), 0) for m in expected} == expected
    reasons = collections.Counter(d["reason"] for d in dead_letters(tmp_path / "out"))
    assert reasons == {"empty": 2, "no_separator": 1, "not_utf8": 1, "too_long": 1}
    assert_rows_follow_the_rules(rows(tmp_path / "out"))


def test_line_count_mismatch_fails_fast_naming_both_counts(tmp_path):
    (tmp_path / "a.en").write_text("Paris\nRome\nOslo\n")
    (tmp_path / "a.fr").write_text("Paris\nRome\n")
    with pytest.raises(SystemExit, match=r"has 3 lines, .* has 2"):
        clism_pairs.run(["--output", str(tmp_path / "o"), "--pairs", f"fr={tmp_path}/a.en,{tmp_path}/a.fr"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args,message", [
    (["--pairs", "fr=/no/such/file.tsv"], "file not found"),
    (["--pairs", "xx=FILE"], "no word tokenizer for 'xx'"),
    (["--pairs", "de-fr=FILE"], "the key must be"),
    (["--max_gap", "-1"], "--max_gap"),
    (["--ner_cache_entries", "-1"], "--ner_cache_entries"),
    (["--spacy_model", "no_such_pipeline"], "not installed"),
    (["--aligner", "simalign", "--aligner_model", "/no/such/model"], "--aligner"),
    # one language's file alone: every line would be dead-lettered and the job end with no rows
    (["--pairs", "de=ONE_SIDE"], "holds one side only; .* de=EN_FILE,DE_FILE"),
])
def test_usage_errors_are_one_line(tmp_path, args, message):
    (tmp_path / "f.tsv").write_text("a\tb\n")
    (tmp_path / "de.txt").write_text("Guten Tag.\nDanke.\n")
    args = [a.replace("FILE", str(tmp_path / "f.tsv")).replace("ONE_SIDE", str(tmp_path / "de.txt")) for a in args]
    with pytest.raises(SystemExit, match=message) as error:
        clism_pairs.run(["--output", str(tmp_path / "o"), *args])
    assert "\n" not in str(error.value)


def test_rows_come_in_mixed_language_order(sample_run):
    out, _ = sample_run
    assert_rows_in_mixed_order(out / "data", "train-*.parquet", group=lambda r: r["tgt_lang"])


def test_rows_load_in_pandas_and_datasets_without_stats_or_dead_letters(sample_run, tmp_path):
    pandas = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    out, _ = sample_run
    expected = len(read_checked(out / "data", "train-*.parquet", CLISM_SCHEMA))
    assert len(pandas.read_parquet(out / "data")) == expected
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]
    assert loaded.num_rows == expected and loaded.features == datasets.Features.from_arrow_schema(CLISM_SCHEMA)


def test_batch_size_does_not_change_a_byte(sample_run, tmp_path):
    """Pairs travel in batches from the reader to the aligner (--ner_batch_size); batches that cut
    every file into odd pieces (and nlp.pipe over 7 sentences) write the same files as the default."""
    out, _ = sample_run
    run_job(tmp_path, "--ner_batch_size", "7")

    def outputs(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}

    assert outputs(tmp_path) == outputs(out)


def test_ner_cache_does_not_change_a_byte(sample_run, tmp_path):
    """The sample's four language pairs share their 42 English lines: by default each is tagged once
    (CachedNer); tagging every line again (--ner_cache_entries 0) writes the same files."""
    out, _ = sample_run
    run_job(tmp_path, "--ner_cache_entries", "0")
    assert {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*.parquet"))} == \
        {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


def test_ner_setup_does_not_import_torch():
    """spaCy is imported without torch (corpora.spacy_tokenizers.import_spacy) only if nothing imported it
    before: TagEntitiesFn.setup must load the NER pipeline before anything else touches spaCy."""
    import subprocess
    import sys

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch not installed: nothing to keep out")
    script = ("import sys\nfrom pipelines.clism_transforms import TagEntitiesFn\n"
              "TagEntitiesFn('en_core_web_sm', False, 100, 10, None).setup()\n"
              "print('torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_answers_aligned_to_function_words_are_dropped():
    """Real NTREX misalignments: a name whose answer is only a particle, an article or punctuation is
    dropped (project/target_only_stop_words); a value's answer only when it is punctuation, and a name
    copied as it is ("Die Zeit") is kept whatever the stop list says."""
    from corpora.clism.answers.spans import answer_words, uninformative_answer

    ja, de, el = answer_words("ja"), answer_words("de"), answer_words("el")
    assert uninformative_answer(["Ukip"], ["の"], "ORG", ja)
    assert uninformative_answer(["Madrid"], ["από"], "GPE", el)
    assert uninformative_answer(["Bolivia"], ["،"], "GPE", answer_words("ar"))
    assert not uninformative_answer(["Theresa", "May"], ["メイ"], "PERSON", ja)
    assert not uninformative_answer(["today"], ["heute"], "DATE", de) and uninformative_answer(["today"], [","], "DATE", de)
    assert uninformative_answer(["February"], ["の"], "DATE", ja) and not uninformative_answer(["February"], ["2", "月"], "DATE", ja)
    assert not uninformative_answer(["Die", "Zeit"], ["Die", "Zeit"], "ORG", de)
    # a value of short function words only ("all night" -> το), but not a number word ("six" -> έξι)
    assert uninformative_answer(["all", "night"], ["το"], "TIME", el) and not uninformative_answer(["six"], ["έξι"], "CARDINAL", el)


def test_answers_that_share_target_words_are_dropped():
    from corpora.clism.answers.spans import drop_overlapping

    # real NTREX en-ja (simalign): "U.S." and "South Carolina" both -> サウスカロライナ
    kept, dropped = drop_overlapping([("U.S.", 3, 3), ("South Carolina", 3, 3), ("Trump", 0, 0)])
    assert kept == [("Trump", 0, 0)] and dropped == 2
    kept, dropped = drop_overlapping([("French", 2, 2), ("Turkish", 2, 3), ("EU", 5, 5)])
    assert kept == [("EU", 5, 5)] and dropped == 2
    assert drop_overlapping([("a", 0, 1), ("b", 2, 3)]) == ([("a", 0, 1), ("b", 2, 3)], 0)


def _trimmed(source: str, target: str, links, label: str, lang: str) -> str:
    from corpora.clism.answers.spans import answer_words, trim_answer_edges

    src, tgt = source.split(), target.split()
    start, end = trim_answer_edges(src, tgt, 0, len(tgt) - 1, links, label, stop_words("en"), answer_words(lang))
    return " ".join(tgt[start : end + 1])


def test_answer_edges_drop_what_aligners_attach_to_names():
    """Real NTREX answers (fast_align): articles, particles and prepositions aligned with a name are
    trimmed, as are quotes and commas; the answer keeps what the English span has (its "the"), what
    it copies, a value's words, brackets whose partner is inside, and a stop word that is the only
    translation of its source word."""
    assert _trimmed("Ronaldo", "ο Ρονάλτο", [(0, 0), (0, 1)], "PERSON", "el") == "Ρονάλτο"
    assert _trimmed("Thursday", "am Donnerstag", [(0, 0), (0, 1)], "DATE", "de") == "Donnerstag"
    assert _trimmed("Harvard University", "の ハーバード 大学 の", [(0, 0), (0, 1), (1, 2), (1, 3)], "ORG", "ja") == "ハーバード 大学"
    assert _trimmed("Rosa", "“ 罗莎 ”", [(0, 0), (0, 1), (0, 2)], "PERSON", "zh") == "罗莎"
    assert _trimmed("35 percent", "35 %", [(0, 0), (1, 1)], "PERCENT", "de") == "35 %"
    assert _trimmed("tonight", "heute Abend", [(0, 0), (0, 1)], "TIME", "de") == "heute Abend"
    # German nouns are capitalised; spaCy's German stop list holds "uhr" (real NTREX: "3 p.m.")
    assert _trimmed("3 p.m.", "um 15:00 Uhr", [(0, 0), (0, 1), (0, 2), (1, 1)], "TIME", "de") == "15:00 Uhr"
    assert _trimmed("early Monday", ". Am Montagabend", [(1, 1), (1, 2)], "DATE", "de") == "Montagabend"
    assert _trimmed("The Boston Globe", "ボストン グローブ は", [(0, 2), (1, 0), (2, 1)], "ORG", "ja") == "ボストン グローブ"
    assert _trimmed("Theresa May", "η Τερέζα Μέι", [(0, 0), (0, 1), (1, 2)], "PERSON", "el") == "Τερέζα Μέι"
    assert _trimmed("Manatee County", "Manatee County ,", [(0, 0), (1, 1), (1, 2)], "GPE", "th") == "Manatee County"
    # the source's own article keeps the target's; a copied name keeps its stop words
    assert _trimmed("the Council", "dem Rat", [(0, 0), (1, 1)], "ORG", "de") == "dem Rat"
    assert _trimmed("Die Zeit", "Die Zeit", [(0, 0), (1, 1)], "ORG", "de") == "Die Zeit"
    # a bracket whose partner stays inside is kept
    assert _trimmed("European Union", "สหภาพ ยุโรป ( European Union )", [(0, 0), (1, 1), (0, 3), (1, 4), (1, 5)],
                    "ORG", "th") == "สหภาพ ยุโรป ( European Union )"
    # Lee's only translation is a stop word of Arabic's list: kept; transliterated letters in ar keep theirs
    assert _trimmed("Berners - Lee", "بيرنرز لي", [(0, 0), (2, 1)], "PERSON", "ar") == "بيرنرز لي"
    assert _trimmed("CNN", "سي إن إن", [(0, 0), (0, 1), (0, 2)], "ORG", "ar") == "سي إن إن"
    assert _trimmed("Ronaldo", "Ο", [(0, 0)], "PERSON", "el") == "Ο"  # at least one word is left
    # a quote paired inside stays, a stray one goes
    assert _trimmed("Brexit", "“ 退欧 ” 意味着 “", [(0, 1), (0, 4)], "EVENT", "zh") == "“ 退欧 ” 意味着"
    thai = "เด็ก รา ดี้ (Rady Children 's Hospital )"  # the tokeniser glues "(" to Rady; "'s" is no quote
    assert _trimmed("Rady Children 's Hospital", thai, [(0, 0), (3, 6)], "ORG", "th") == thai


def _answer(source: str, target: str, start: int, end: int, label: str, lang: str) -> str:
    from corpora.clism.answers.spans import answer_words, trim_answer_edges

    tgt = target.split()
    start, end = trim_answer_edges(source.split(), tgt, start, end, [(0, start)], label, stop_words("en"), answer_words(lang))
    return " ".join(tgt[start : end + 1])


def test_names_written_with_a_middle_dot_are_not_cut_at_it():
    """Real NTREX: 9% of zh and ja PERSON answers stopped at "·"/"・", the surname outside."""
    assert _answer("Peter Martin", "彼得 · 马丁 说", 0, 1, "PERSON", "zh") == "彼得 · 马丁"
    assert _answer("Rory McIlroy", "罗里 · 麦克罗伊 赢", 0, 0, "PERSON", "zh") == "罗里 · 麦克罗伊"
    assert _answer("Thomas Bjorn", "トーマス ・ ビョルン は", 0, 1, "PERSON", "ja") == "トーマス ・ ビョルン"
    assert _answer("Brett", "布雷特 · 卡瓦诺", 0, 1, "PERSON", "zh") == "布雷特"  # one English word: one piece


def test_a_dotted_name_grows_on_its_missing_side_and_brackets_close():
    from corpora.clism.answers.spans import answer_words, trim_answer_edges

    def answer(source, target, start, end, links, label, lang):
        tgt = target.split()
        s, e = trim_answer_edges(source.split(), tgt, start, end, links, label, stop_words("en"), answer_words(lang))
        return " ".join(tgt[s : e + 1])

    # real NTREX "Roy Keane": the aligner covered キーン and strayed right; Roy's piece is on the left
    assert answer("Roy Keane", "ロイ ・ キーン 氏 、 グスタボ ・ ポジェ", 2, 5, [(1, 2), (1, 5)], "PERSON", "ja") == \
        "ロイ ・ キーン 氏 、 グスタボ"
    # the missing English word is the first: the piece on the left joins
    assert answer("Peter Martin", "彼得 · 马丁", 2, 2, [(1, 2)], "PERSON", "zh") == "彼得 · 马丁"
    # a lone dot is no answer to grow
    assert answer("John Street", "· 街", 0, 0, [(0, 0)], "PERSON", "zh") == "·"
    assert answer("the EU", "สหภาพ ยุโรป ( EU ) ได้", 0, 3, [(1, 0), (1, 3)], "ORG", "th") == "สหภาพ ยุโรป ( EU )"


def test_sides_swapped_or_in_another_language_are_refused_in_one_line(tmp_path):
    sample = Path(clism_pairs.sample_dir())
    english, french = sample / "en-fr.en", sample / "en-fr.fr"
    with pytest.raises(SystemExit, match=r"the fr side reads as English .* the sides are swapped; give English first"):
        clism_pairs.run(["--output", str(tmp_path / "a"), "--pairs", f"fr={french},{english}"])
    with pytest.raises(SystemExit, match=r"the fr side reads as English too"):
        clism_pairs.run(["--output", str(tmp_path / "b"), "--pairs", f"fr={english},{english}"])
    # Hindi text declared as Arabic: no Arabic function word in it.
    with pytest.raises(SystemExit, match=r"the ar side does not read as ar \(0\.0% .*declare the language it is in"):
        clism_pairs.run(["--output", str(tmp_path / "c"), "--pairs", f"ar={sample / 'en-hi.txt'}"])
    # The user may know better (a text of names and numbers, a language with few function words).
    stats = run_job(tmp_path / "d", "--pairs", f"fr={french},{english}", "--allow_language_mismatch")
    assert stats[("en-fr", "read/lines")] == 42
