"""Contexts with a stochastic answer position, answers, and unanswerable pairing."""
import random

from corpora.mrc.examples import Context, build_context, contains_any, find_spans, lead_words, pick_unanswerable
from corpora.words import get_tokenizer

EN = get_tokenizer("en")


def article(n_before: int, anchor: str, n_after: int) -> tuple[str, int, int]:
    before = " ".join(f"b{i}" for i in range(n_before))
    after = " ".join(f"a{i}" for i in range(n_after))
    text = (before + " " if before else "") + anchor + (" " + after if after else "")
    start = len(before) + (1 if before else 0)
    return text, start, start + len(anchor)


def ctx(text, s, e, c=200, seed=0):
    return build_context(EN, text, s, e, c, random.Random(seed), "1:0", "E", 1)


def test_find_spans_finds_every_identical_span_up_to_case():
    words = "the New York Times bought New York land in new york".split()
    assert find_spans(words, ["New", "York"]) == [(1, 2), (5, 6), (9, 10)]
    assert find_spans(words, ["new", "york"]) == [(1, 2), (5, 6), (9, 10)]
    assert find_spans(words, ["York", "land"]) == [(6, 7)]
    assert find_spans(words, []) == []


def test_find_spans_compares_characters_where_words_join_without_spaces():
    # jieba may cut 成都 alone and 成都市 differently; any run of whole words spelling it counts.
    assert find_spans(["成", "都", "是", "成都"], ["成都"], joins_with_space=False) == [(0, 1), (3, 3)]
    assert find_spans(["成都平原"], ["成都"], joins_with_space=False) == []


def test_answers_are_the_anchor_and_the_title_up_to_case():
    # The link said "farming"; "Agriculture" opening a sentence is the entity too.
    text = "Farming is old. agriculture and Agriculture grew; farming spread."
    start = text.index("farming")
    context = build_context(EN, text, start, start + len("farming"), 200, random.Random(0), "1:0",
                            "Agriculture", 1, [["Agriculture"]])
    marked = {" ".join(context.words[s : e + 1]) for s, e in context.answers}
    assert marked == {"Farming", "farming", "agriculture", "Agriculture"}
    assert len(context.answers) == 4


def test_context_has_c_words_and_the_anchor_at_a_random_position():
    text, s, e = article(500, "New York City", 500)
    positions = set()
    for seed in range(300):
        c = ctx(text, s, e, seed=seed)
        assert len(c.words) == 200
        assert c.anchor_words == ("New", "York", "City")
        (start, end), = c.answers
        assert c.words[start:end + 1] == c.anchor_words
        positions.add(start)
    # xi ~ U[0, C - len(anchor)]: both extremes and most of the range are reached.
    assert min(positions) <= 3 and max(positions) >= 194 and len(positions) > 120


def test_window_slides_inward_at_article_edges():
    text, s, e = article(0, "Alpha", 500)
    for seed in range(20):
        c = ctx(text, s, e, seed=seed)
        assert len(c.words) == 200 and c.answers[0] == (0, 0)
    text, s, e = article(500, "Omega", 0)
    for seed in range(20):
        c = ctx(text, s, e, seed=seed)
        assert len(c.words) == 200 and c.answers[-1] == (199, 199)
    # Near (not at) the end: a ξ that leaves more than 30 words after the anchor slides the window
    # to the article's last 200 words; every window is 200 consecutive words holding the anchor.
    text, s, e = article(500, "Omega", 30)
    words = text.split()
    slid = 0
    for seed in range(40):
        c = ctx(text, s, e, seed=seed)
        first = words.index(c.words[0])
        assert c.words == tuple(words[first : first + 200]) and "Omega" in c.words
        slid += c.words[-1] == words[-1]
    assert slid > 30


class CountingTokenizer:
    def __init__(self, inner):
        self.inner, self.joins_with_space, self.chars = inner, inner.joins_with_space, 0

    def tokenize(self, text):
        self.chars += len(text)
        return self.inner.tokenize(text)


def test_context_tokenises_about_c_words_not_c_on_each_side():
    text, s, e = article(5000, "Gamma", 5000)  # words of 2-5 characters and a space
    for seed in range(30):
        counting = CountingTokenizer(EN)
        c = build_context(counting, text, s, e, 200, random.Random(seed), "1:0", "E", 1)
        assert len(c.words) == 200
        # ξ words' worth of text before and C - ξ after (8 characters a word, 64 at least each
        # side), not C words' worth on each side (3,200 characters).
        assert counting.chars <= 200 * 8 + 2 * 64 + len("Gamma")


def test_short_article_gives_all_its_words():
    text, s, e = article(10, "Beta", 15)
    c = ctx(text, s, e)
    assert len(c.words) == 26 and c.answers == ((10, 10),)


def test_all_identical_spans_are_answers():
    text = "Rome was founded early. Many roads lead to Rome, and Rome grew."
    s = text.index("Rome", 10)
    c = ctx(text, s, s + 4)
    assert [c.words[a] for a, _ in c.answers] == ["Rome", "Rome", "Rome"]


def test_anchor_longer_than_context_is_refused():
    text, s, e = article(5, " ".join(["x"] * 30), 5)
    assert ctx(text, s, e, c=20) is None


def test_a_word_glued_to_the_anchor_is_tokenised_as_plain_text_tokenises_it():
    # "l'[[Allemagne]]", "all'[[agricoltura]]", "Perl/[[PHP]]/Python": the words written against a
    # link are tokenised with it, as in plain text ("l'"), not cut off from it ("l", "'"; "Perl/").
    for lang, text, anchor in [("fr", "Les armées de l'Allemagne et de l'Autriche .", "Allemagne"),
                               ("it", "una comunità dedita all'agricoltura e alla pesca", "agricoltura"),
                               ("vi", "các ngôn ngữ như Perl/PHP/Python và Ruby", "PHP")]:
        tokenizer = get_tokenizer(lang)
        for c in (20, 5, 2):  # the glued word at every position of the window, the anchor at its start
            for seed in range(4):
                s = text.index(anchor)
                context = build_context(tokenizer, text, s, s + len(anchor), c, random.Random(seed), "1:0", "E", 1)
                words = tokenizer.tokenize(text)
                assert " ".join(context.words) in " ".join(words)
                assert context.anchor_words == (anchor,) and context.words[context.answers[0][0]] == anchor
    # A glued run that is not split where the anchor starts keeps the anchor tokenised on its own.
    fr, text = get_tokenizer("fr"), "jusqu'aujourd'hui rien"
    context = build_context(fr, text, text.index("hui"), text.index("hui") + 3, 20, random.Random(0), "1:0", "E", 1)
    assert context.anchor_words == ("hui",) and context.words[context.answers[0][0]] == "hui"


def test_cut_words_at_window_edges_are_dropped():
    text, s, e = article(0, "Start", 0)
    text = "Supercalifragilistic " * 400 + text
    s, e = text.index("Start"), len(text)
    c = ctx(text, s, e, c=50, seed=1)
    assert set(c.words[:-1]) == {"Supercalifragilistic"}


def test_lead_words_tokenises_only_what_it_needs():
    words = lead_words(EN, "word " * 100_000, 50)
    assert words == ["word"] * 50


def mk(cid, entity, page, text):
    return Context(cid, entity, page, tuple(text.split()), (), ())


def test_unanswerable_excludes_own_entity_own_article_and_forms():
    candidates = [
        mk("1:0", "Paris", 1, "the capital Paris is big"),     # its own entity
        mk("2:0", "Lyon", 7, "Lyon is near the Alps"),           # from Paris' own article (page 7)
        mk("3:0", "Lyon", 3, "a trip from paris to Lyon"),      # holds a form, case-folded
        mk("4:0", "Nice", 4, "Nice lies on the coast"),
        mk("5:0", "Lille", 5, "Lille is in the north"),
    ]
    order = lambda cid: cid
    picked = pick_unanswerable("Paris", 7, [("paris",)], candidates, 5, order, True)
    assert [c.context_id for c in picked] == ["4:0", "5:0"]
    assert [c.context_id for c in pick_unanswerable("Paris", 7, [("paris",)], candidates, 1, order, True)] == ["4:0"]


def test_contains_any_is_whole_word_with_spaces_and_substring_without():
    assert contains_any(["Parisian", "cafe"], [("paris",)], True) is False
    assert contains_any(["巴黎人", "喜欢"], [("巴黎",)], False) is True
