"""The task modules of training/tasks on their own: the official SQuAD v1.1 metric and entity-level
F1 against hand-computed values, the readers on small files, the word splitter on the bundled
multilingual samples, sliding windows, and reading spans off S."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from training.tasks import conll, pair_cls, squad
from training.tasks.words import split_words

MONO = Path(__file__).resolve().parents[2] / "corpora" / "samples" / "mono"


# ---- SQuAD v1.1 metric ----

@pytest.mark.parametrize("text, normalised", [
    ("The Pittsburgh Steelers", "pittsburgh steelers"),  # case and the article
    ("  an   apple,\ta day ", "apple day"),  # whitespace runs, tabs, two articles, punctuation
    ("theatre of the absurd", "theatre of absurd"),  # "the" inside a word stays
    ("U.S.A.", "usa"),  # punctuation is deleted, not turned into spaces
    ("don't", "dont"),
    ("A", ""),  # an answer that is only an article normalises to nothing
    ("", ""),
    ("«Lisboa»", "«lisboa»"),  # v1.1 removes ASCII punctuation only (MLQA's script removes all Unicode P*)
    ("23–16", "23–16"),  # the en dash is not ASCII punctuation either
])
def test_normalize_answer(text, normalised):
    assert squad.normalize_answer(text) == normalised


def test_f1_and_exact_match_hand_computed():
    assert squad.exact_match_score("the Pittsburgh Steelers!", "Pittsburgh Steelers")
    assert squad.f1_score("Pittsburgh Steelers", "the Pittsburgh Steelers") == 1.0
    # pred {steelers, in, pittsburgh}, gold {pittsburgh, steelers}: P = 2/3, R = 1, F1 = 0.8
    assert squad.f1_score("Steelers in Pittsburgh", "Pittsburgh Steelers") == pytest.approx(0.8)
    # Repeated tokens count with multiplicity: common = {y: 2}, P = R = 2/3.
    assert squad.f1_score("x y y", "y y z") == pytest.approx(2 / 3)
    assert squad.f1_score("Denver", "Carolina Panthers") == 0.0
    # Empty after normalisation: exact match holds, F1 is 0 (no common token), as in the official script.
    assert squad.exact_match_score("the", "a") and squad.f1_score("the", "a") == 0.0
    assert squad.f1_score("", "Lisbon") == 0.0 and not squad.exact_match_score("", "Lisbon")


def test_squad_evaluate_takes_the_max_over_gold_answers_in_percent():
    examples = [
        squad.SquadExample("q1", "Who won?", "", [{"text": "Denver Broncos", "answer_start": 0},
                                                   {"text": "The Denver Broncos", "answer_start": 0}]),
        squad.SquadExample("q2", "When?", "", [{"text": "in 1910", "answer_start": 0}, {"text": "1910", "answer_start": 3}]),
        squad.SquadExample("q3", "Where?", "", [{"text": "Lisbon", "answer_start": 0}]),
    ]
    # q1: EM 1, F1 1. q2: "fell in 1910" vs "in 1910": P 2/3, R 1 -> F1 0.8; vs "1910": P 1/3 R 1 -> 0.5; max 0.8.
    # q3: no prediction -> 0. EM = 1/3, F1 = 1.8/3.
    scores = squad.squad_evaluate(examples, {"q1": "denver broncos.", "q2": "fell in 1910"})
    assert scores["exact_match"] == pytest.approx(100 / 3)
    assert scores["f1"] == pytest.approx(60.0)


# ---- SQuAD reading and words ----

def test_the_papers_xquad_mean_leaves_out_romanian():
    from training.finetune_loop import mean_metrics, paper_xquad_mean

    by_eval = {f"xquad.{lang}": {"f1": f1, "exact_match": f1 / 2} for lang, f1 in
               [("en", 80.0), ("de", 70.0), ("ro", 10.0), ("zh", 60.0)]}
    assert mean_metrics(by_eval)["f1"] == 55.0
    assert paper_xquad_mean(by_eval) == {"f1": 70.0, "exact_match": 35.0}
    del by_eval["xquad.ro"]
    assert paper_xquad_mean(by_eval) is None  # nothing to leave out
    assert paper_xquad_mean({"mlqa.de": {"f1": 1.0}, "xquad.ro": {"f1": 2.0}}) is None


def test_read_squad_and_map_answers_to_words(tmp_path):
    context = ("The Broncos defeated the Pittsburgh Steelers in the divisional round, 23–16, by scoring "
               "11 points in the final three minutes of the game.")
    data = {"version": "1.1", "data": [{"title": "Super_Bowl_50", "paragraphs": [{"context": context, "qas": [
        {"id": "a1", "question": "Who lost to the Broncos in the divisional round?",
         "answers": [{"text": "Pittsburgh Steelers", "answer_start": 25}]},
        {"id": "a2", "question": "What was the score?", "answers": [{"text": "23–16", "answer_start": 70}]},
    ]}]}]}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    examples = squad.read_squad(path)
    assert [e.id for e in examples] == ["a1", "a2"] and examples[0].context == context
    words = squad.context_words(context)
    first, last = squad.answer_word_span(words, examples[0].answers[0])
    assert [w for w, _, _ in words[first:last + 1]] == ["Pittsburgh", "Steelers"]
    first, last = squad.answer_word_span(words, examples[1].answers[0])
    assert [w for w, _, _ in words[first:last + 1]] == ["23", "–", "16"]
    assert squad.predict_text(examples[1], first, last) == "23–16"  # the context's own text, not re-joined words
    # An answer that ends inside a word is read as the whole word.
    assert squad.answer_word_span(words, {"text": "Steel", "answer_start": 36}) == (5, 5)  # "Steelers"


def test_read_squad_errors_name_the_file(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not JSON"):
        squad.read_squad(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"rows": []}')
    with pytest.raises(ValueError, match="other.json: no top-level 'data'"):
        squad.read_squad(tmp_path / "other.json")
    with pytest.raises(FileNotFoundError, match="missing.json: file not found"):
        squad.read_squad(tmp_path / "missing.json")


@pytest.mark.parametrize("lang", ["en", "ar", "fr", "hi", "ru", "th", "vi", "zh"])
def test_words_are_substrings_at_their_offsets_and_cover_the_text(lang):
    text = (MONO / f"{lang}.txt").read_text(encoding="utf-8")
    words = split_words(text)
    assert all(text[s:e] == w and w.strip() == w and w for w, s, e in words)
    assert all(a[2] <= b[1] for a, b in zip(words, words[1:]))  # in order, no overlap
    assert "".join(w for w, _, _ in words) == "".join(ch for ch in text if not ch.isspace() and ch.isprintable())


@pytest.mark.parametrize("lang", ["en", "th", "zh"])
def test_task_words_carry_the_spacing_of_their_text(lang):
    """SQuAD rows carry query_spaces/context_spaces from the character offsets: the words and flags give
    the text back (whitespace runs one space), Thai phrases keep their spaces, "Steelers," its comma."""
    from corpora.spacing import join_words, normalise_spacing

    text = " ".join((MONO / f"{lang}.txt").read_text(encoding="utf-8").split("\n")[:5])
    words = split_words(text)
    spaces = squad.spaces_of(text, words)
    visible = "".join(ch for ch in text if ch.isspace() or ch.isprintable())
    assert join_words([w for w, _, _ in words], spaces) == normalise_spacing(visible)
    assert squad.spaces_of("Steelers, 23.", split_words("Steelers, 23.")) == [False, True, False, False]


def test_word_split_rules():
    def words(t):
        return [w for w, _, _ in split_words(t)]
    assert words("Steelers, 23–16.") == ["Steelers", ",", "23", "–", "16", "."]
    assert words("हिन्दी भारत की राजभाषा है।") == ["हिन्दी", "भारत", "की", "राजभाषा", "है", "।"]  # vowel signs stay inside
    assert words("四川省，简称川") == ["四", "川", "省", "，", "简", "称", "川"]  # no-space scripts: a character a word
    assert words("รื") == ["รื"]  # a Thai consonant with its combining vowel


def test_windows_overlap_by_the_stride_and_cover_every_word():
    assert squad.windows([1] * 10, room=4, doc_stride=2) == [(0, 4), (2, 6), (4, 8), (6, 10)]
    # A word longer than the room is a window alone; every window moves forward.
    assert squad.windows([1, 9, 1], room=4, doc_stride=2) == [(0, 1), (1, 2), (2, 3)]
    assert squad.windows([2, 2, 2], room=10, doc_stride=4) == [(0, 3)]
    assert squad.windows([], room=10, doc_stride=4) == [(0, 0)]


# ---- CoNLL ----

CONLL_2003 = """-DOCSTART- -X- -X- O

Portugal NNP B-NP B-LOC
joined VBD B-VP O
the DT B-NP O
European NNP I-NP B-ORG
Economic NNP I-NP I-ORG
Community NNP I-NP I-ORG
. . O O

Luís NNP B-NP B-PER
de NNP I-NP I-PER
Camões NNP I-NP I-PER
wrote VBD B-VP O
Os NNP B-NP B-MISC
Lusíadas NNP I-NP I-MISC
"""


def test_read_conll_four_columns_docstart_and_last_sentence_without_blank_line(tmp_path):
    path = tmp_path / "en.conll"
    path.write_text(CONLL_2003, encoding="utf-8")
    sentences = conll.read_conll(path)
    assert [s.tokens[0] for s in sentences] == ["Portugal", "Luís"]
    assert sentences[0].entities == [(0, 0, "LOC"), (3, 5, "ORG")]
    assert sentences[1].entities == [(0, 2, "PER"), (4, 5, "MISC")]
    assert conll.entity_types(sentences) == ["ORG", "PER", "LOC", "MISC"]


def test_read_conll_two_columns_and_bad_tags(tmp_path):
    path = tmp_path / "wikiann.txt"
    path.write_text("Lisboa B-LOC\né O\na O\ncapital O\n\nFernando B-PER\nPessoa I-PER\n", encoding="utf-8")
    sentences = conll.read_conll(path)
    assert [s.entities for s in sentences] == [[(0, 0, "LOC")], [(0, 1, "PER")]]
    assert conll.entity_types(sentences) == ["PER", "LOC"]
    path.write_text("Lisboa LOC\n")
    with pytest.raises(ValueError, match="wikiann.txt:1: tag 'LOC'"):
        conll.read_conll(path)


def test_bio_and_iob1_entities():
    assert conll.bio_entities(["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]) == [(0, 1, "PER"), (3, 3, "LOC"), (4, 5, "LOC")]
    # IOB1: I- opens an entity when it does not continue one of its type.
    assert conll.bio_entities(["I-ORG", "I-ORG", "I-PER", "O", "I-MISC"]) == [(0, 1, "ORG"), (2, 2, "PER"), (4, 4, "MISC")]


def test_label_description_queries_and_rows():
    assert conll.query_words("LOC")[:4] == ['"', "LOC", '"', "."]
    assert conll.query_words("DATE") == ['"', "DATE", '"', "."]
    sentence = conll.Sentence(["Lisboa", "e", "Porto"], ["B-LOC", "O", "B-LOC"], [(0, 0, "LOC"), (2, 2, "LOC")])
    rows = conll.to_rows([sentence], ["PER", "LOC"])
    assert [r["answerable"] for r in rows] == [False, True]
    assert rows[1]["answers"] == [{"start": 0, "end": 0}, {"start": 2, "end": 2}]


def test_entity_f1_hand_computed():
    gold = [[(0, 0, "LOC"), (3, 5, "ORG")], [(0, 2, "PER")], [(1, 1, "LOC")]]
    predicted = [[(0, 0, "LOC"), (3, 4, "ORG")], [(0, 2, "PER"), (4, 4, "MISC")], [(1, 1, "PER")]]
    # Correct: (0,0,LOC) and (0,2,PER); a wrong boundary or a wrong type is wrong. P = 2/5, R = 2/4.
    scores = conll.entity_f1(gold, predicted)
    assert scores["precision"] == pytest.approx(40.0) and scores["recall"] == pytest.approx(50.0)
    assert scores["f1"] == pytest.approx(100 * 2 * 0.4 * 0.5 / 0.9)
    assert conll.entity_f1([[]], [[]])["f1"] == 0.0


# ---- reading spans off S ----

def test_word_spans_and_greedy_decoding():
    torch = pytest.importorskip("torch")
    from training.tasks.spans import greedy_non_overlapping, word_spans

    # 7 positions: <s> q </s></s> then context words 0 (two subwords), 1, 2, and </s>.
    context_word = torch.tensor([-1, -1, -1, 0, 0, 1, 2, -1])[:7]
    logits = torch.full((7, 7), -5.0)
    logits[0, 0] = 9.0  # [CLS]: never a span
    logits[3, 4] = 4.0  # word 0 (first to last subword)
    logits[3, 3] = 1.0  # also word 0, lower: the same word span counts once, with its best logit
    logits[3, 5] = 2.0  # words 0..1
    logits[5, 6] = 3.0  # words 1..2
    logits[6, 5] = 8.0  # i > j: never a span
    logits[1, 3] = 8.0  # starts in the query: never a span
    assert word_spans(logits, context_word, min_logit=0.0) == [(0, 0, 4.0), (1, 2, 3.0), (0, 1, 2.0)]
    assert word_spans(logits, context_word, top_k=2) == [(0, 0, 4.0), (1, 2, 3.0)]
    # At most 2 subwords: (0,1) spans subwords 3..5, three of them, and is not a candidate.
    assert word_spans(logits, context_word, min_logit=0.0, max_tokens=2) == [(0, 0, 4.0), (1, 2, 3.0)]
    # Greedy by score: (0,0) kept, (1,2) kept, (0,1) overlaps both and is dropped.
    assert greedy_non_overlapping([(0, 0, 4.0), (1, 2, 3.0), (0, 1, 2.0)]) == [(0, 0, 4.0), (1, 2, 3.0)]
    assert greedy_non_overlapping([(0, 1, 2.0), (1, 2, 3.0), (0, 0, 1.0)]) == [(0, 0, 1.0), (1, 2, 3.0)]
    # A 0.5 threshold on sigmoid(S) is a threshold of 0 on the logit.
    assert math.log(0.5 / 0.5) == 0.0


# ---- sentence pairs ----

def test_read_pawsx_and_xnli_layouts(tmp_path):
    paws = tmp_path / "pawsx.tsv"
    paws.write_text('id\tsentence1\tsentence2\tlabel\n1\tHe said "yes.\tHe said yes.\t1\n2\tA is B.\tB is A.\t0\n\n',
                    encoding="utf-8")
    examples = pair_cls.read_pairs(paws)
    assert [(e.id, e.sentence1, e.label) for e in examples] == [("1", 'He said "yes.', "1"), ("2", "A is B.", "0")]
    assert pair_cls.label_set(examples) == {"0": "contradiction", "1": "entailment"}

    xnli = tmp_path / "xnli.tsv"  # the MultiNLI-MT train layout: premise, hypo, label ("contradictory")
    xnli.write_text("premise\thypo\tlabel\nLisbon is a city.\tLisbon is a village.\tcontradictory\n"
                    "Porto is in Portugal.\tPorto is a city.\tneutral\n", encoding="utf-8")
    examples = pair_cls.read_pairs(xnli)
    assert [e.label for e in examples] == ["contradiction", "neutral"]
    assert set(pair_cls.label_set(examples)) == {"entailment", "neutral", "contradiction"}

    dev = tmp_path / "xnli.dev.tsv"  # the XNLI dev/test layout: language, gold_label, sentence1, sentence2, ...
    dev.write_text("language\tgold_label\tsentence1_binary_parse\tsentence1\tsentence2\npt\tentailment\t( x )\tA\tB\n")
    assert pair_cls.read_pairs(dev)[0].sentence2 == "B"

    bad = tmp_path / "bad.tsv"
    bad.write_text("text\tlabel\nx\t1\n")
    with pytest.raises(ValueError, match="bad.tsv: header .*give the file a header line"):
        pair_cls.read_pairs(bad)

    # No header line, rows premise, hypothesis, label: XNLI as the Hugging Face dataset exports it
    # (../shared/data/eval/xnli-de). The first row is an example, not a header.
    headerless = tmp_path / "xnli-de.tsv"
    headerless.write_text("Er sagte es.\tEr schwieg.\tcontradiction\nA ist B.\tB ist A.\tentailment\n", encoding="utf-8")
    examples = pair_cls.read_pairs(headerless)
    assert [(e.id, e.sentence1, e.label) for e in examples] == [("1", "Er sagte es.", "contradiction"),
                                                                 ("2", "A ist B.", "entailment")]
    three_columns = tmp_path / "unknown.tsv"  # three columns whose third is no label: still an error
    three_columns.write_text("a\tb\tc\nx\ty\tz\n")
    with pytest.raises(ValueError, match="unknown.tsv: header"):
        pair_cls.read_pairs(three_columns)


def test_pair_rows_follow_the_paper_template():
    ex = pair_cls.PairExample("7", "The Leurda River is a tributary of the River Tabaci.",
                              "The Tabaci River is a tributary of the River Leurda.", "0")
    labels = {"0": "contradiction", "1": "entailment"}
    rows = pair_cls.to_rows([ex], labels)
    assert " ".join(rows[0]["query_words"]) == pair_cls.DESCRIPTIONS["contradiction"]
    assert " ".join(rows[0]["context_words"]) == ("Hypothesis : The Tabaci River is a tributary of the River Leurda . "
                                                  "Premise : The Leurda River is a tributary of the River Tabaci .")
    assert [r["answerable"] for r in rows] == [True, False] and all(r["answers"] == [] for r in rows)
    first, second = pair_cls.rationale_rows(ex, "contradiction")
    assert first["query_words"][:3] == ["Contradiction", "The", "Leurda"] and first["context_words"][1] == "Tabaci"
    assert second["context_words"][1] == "Leurda"
    assert pair_cls.span_text(ex.sentence2, 1, 2) == "Tabaci River"
    assert pair_cls.accuracy([ex, ex], ["0", "1"]) == {"accuracy": 50.0, "correct": 1, "total": 2}


def test_wikiann_language_prefixes_are_stripped_only_when_every_token_has_one(tmp_path):
    path = tmp_path / "panx.tsv"
    path.write_text("en:Lisbon\tB-LOC\nen:is\tO\nen:big\tO\n\nen:Fernando\tB-PER\nen:Pessoa\tI-PER\n", encoding="utf-8")
    assert [s.tokens for s in conll.read_conll(path)] == [["Lisbon", "is", "big"], ["Fernando", "Pessoa"]]
    path.write_text("re:\tO\nLisbon\tB-LOC\n", encoding="utf-8")
    assert conll.read_conll(path)[0].tokens == ["re:", "Lisbon"]


def test_xnli_test_file_filtered_by_language(tmp_path):
    path = tmp_path / "xnli.test.tsv"
    path.write_text("language\tgold_label\tsentence1\tsentence2\nen\tneutral\tA\tB\nde\tentailment\tC\tD\n"
                    "de\tcontradiction\tE\tF\n", encoding="utf-8")
    assert [e.sentence1 for e in pair_cls.read_pairs(path, "de")] == ["C", "E"]
    assert len(pair_cls.read_pairs(path)) == 3
    (tmp_path / "paws.tsv").write_text("sentence1\tsentence2\tlabel\nA\tB\t1\n")
    with pytest.raises(ValueError, match="no 'language' column"):
        pair_cls.read_pairs(tmp_path / "paws.tsv", "de")


def test_gzipped_conll_and_pair_files_are_read_and_a_misnamed_one_is_named(tmp_path):
    import gzip

    conll_text = "Angela B-PER\nMerkel I-PER\nbesucht O\nParis B-LOC\n\n"
    (tmp_path / "de.train.conll.gz").write_bytes(gzip.compress(conll_text.encode()))
    assert [s.tokens for s in conll.read_conll(tmp_path / "de.train.conll.gz")] == [["Angela", "Merkel", "besucht", "Paris"]]
    pairs_text = "premise\thypothesis\tlabel\nEr kam.\tEr ging.\tcontradiction\n"
    (tmp_path / "xnli.tsv.gz").write_bytes(gzip.compress(pairs_text.encode()))
    assert [p.label for p in pair_cls.read_pairs(tmp_path / "xnli.tsv.gz")] == ["contradiction"]
    # A gzip file under a plain name said only "'utf-8' codec can't decode byte 0x8b in position 1".
    (tmp_path / "de.train.conll").write_bytes(gzip.compress(conll_text.encode()))
    with pytest.raises(ValueError, match=r"de\.train\.conll: not UTF-8 text .*expected CoNLL"):
        conll.read_conll(tmp_path / "de.train.conll")
    (tmp_path / "xnli.tsv").write_bytes(gzip.compress(pairs_text.encode()))
    with pytest.raises(ValueError, match=r"xnli\.tsv: not UTF-8 text .*expected a TSV"):
        pair_cls.read_pairs(tmp_path / "xnli.tsv")
