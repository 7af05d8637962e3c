"""BuildMrcExamples alone (pipelines/wiki_mrc.py) on a dozen hand-written English pages: the entities
kept at the mention threshold, answer spans that are the link's own words, unanswerable contexts
that never name the entity, queries with the entity masked, dead letters with their reason, every
page counted, and the same elements for the same input and seed."""
from __future__ import annotations

import types

import apache_beam as beam
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from corpora.dumps.pages import RawPage
from corpora.mrc.entity_masking import MASK
from corpora.wiki.languages import wiki_language
from corpora.words import get_tokenizer
from pipelines.wiki_mrc import BuildMrcExamples

from transform_checks import assert_outputs, check_each, counts_include, summed

PAGES = [
    RawPage(1, "Alpha", 0, None, "'''Alpha''' is the first letter of the Greek script, used for many things."),
    RawPage(2, "Gamma", 0, None, "'''Gamma''' is the third letter of the Greek script, after beta."),
    RawPage(3, "Beta", 0, None, "'''Beta''' is the second letter of the Greek script."),
    RawPage(4, "Alfa", 0, "Alpha", "#REDIRECT [[Alpha]]"),
    RawPage(10, "Greek writing", 0, None, "Greek writing starts with [[Alpha]] and ends with omega."),
    RawPage(11, "Letters", 0, None, "The letter [[Alfa|alfa]] comes before the others in the list."),
    RawPage(12, "Physics", 0, None, "In physics, [[Alpha|alpha particles]] are helium nuclei."),
    RawPage(13, "Photons", 0, None, "A [[Gamma|gamma ray]] is a photon of high energy."),
    RawPage(14, "Radiation", 0, None, "Radiation of the kind called [[Gamma]] passes through walls."),
    RawPage(15, "Sorting", 0, None, "Sorting puts [[Beta]] after the first letter."),
    RawPage(16, "Broken", 0, "", "#REDIRECT [[]]"),
    RawPage(17, "Talk:Alpha", 1, None, "Is [[Alpha]] a letter?"),
]
# The link text on each mention page, and the entity it names (through the redirect Alfa for page 11).
ANCHORS = {10: ("Alpha", "Alpha"), 11: ("Alpha", "alfa"), 12: ("Alpha", "alpha particles"),
           13: ("Gamma", "gamma ray"), 14: ("Gamma", "Gamma"), 15: ("Beta", "Beta")}


def options(seed: int = 0):
    # Alpha (3 links) and Gamma (2) reach the threshold of 2, Beta (1) does not; 2 examples an entity.
    return types.SimpleNamespace(seed=seed, examples_per_entity=2, min_mentions_en=2, min_mentions=2,
                                 query_words=50, context_words=200, entities_per_bucket=64)


def folded(words) -> tuple:
    return tuple(w.casefold() for w in words)


def names_of(entity: str) -> set[tuple]:
    tokenize = get_tokenizer("en").tokenize
    return {folded(tokenize(text)) for e, text in ANCHORS.values() if e == entity} | {folded(tokenize(entity))}


def answer_is_the_link_s_words(row) -> bool:
    entity, anchor = ANCHORS[row["mention_page"]]
    spans = [tuple(row["context_words"][a["start"]: a["end"] + 1]) for a in row["answers"]]
    return entity == row["entity"] and spans == [tuple(get_tokenizer("en").tokenize(anchor))]


def holds_no_name_of_the_entity(row) -> bool:
    context = folded(row["context_words"])
    windows = {context[i: i + n] for n in range(1, 4) for i in range(len(context))}
    return (not row["answers"] and ANCHORS[row["mention_page"]][0] != row["entity"]
            and not windows & names_of(row["entity"]))


def query_masks_the_entity(row) -> bool:
    query = folded(row["query_words"])
    return query[0] == MASK.casefold() and row["entity"].casefold() not in query


EXAMPLES = [  # (id, entity, answerable, mention page) for seed 0: two of Alpha's three links are chosen
    ("en:1:a00", "Alpha", True, 10), ("en:1:a01", "Alpha", True, 12),
    ("en:1:u00", "Alpha", False, 13), ("en:1:u01", "Alpha", False, 14),
    ("en:2:a00", "Gamma", True, 13), ("en:2:a01", "Gamma", True, 14),
    ("en:2:u00", "Gamma", False, 10), ("en:2:u01", "Gamma", False, 12),
]


def examples_follow_the_rules(rows):
    """Which examples are built, and the rules each one follows."""
    equal_to(EXAMPLES)([(r["id"], r["entity"], r["answerable"], r["mention_page"]) for r in rows])
    check_each(query_masks_the_entity, "the query masks the entity")(rows)
    check_each(answer_is_the_link_s_words, "the answer span is the link's words")([r for r in rows if r["answerable"]])
    check_each(holds_no_name_of_the_entity, "an unanswerable context never names the entity")(
        [r for r in rows if not r["answerable"]])


def build(pages, seed: int, label: str):
    return pages | label >> BuildMrcExamples(options(seed), {"en": wiki_language("en")})


def test_entities_at_the_threshold_answers_are_anchors_unanswerable_contexts_never_name_them():
    with test_pipeline.TestPipeline() as p:
        pages = p | beam.Create([("en", page) for page in PAGES])
        rows, bundles, stats, dead = build(pages, 0, "Build")
        assert_outputs({
            "examples": (rows, examples_follow_the_rules),
            "bundles": (bundles | "BundleEntities" >> beam.Map(lambda b: (b.lang, b.entity, b.query.definition_page)),
                        equal_to([("en", "Alpha", 1), ("en", "Gamma", 2)])),
            "dead letters": (dead | "Reasons" >> beam.Map(lambda d: (d["source"], d["record_id"], d["stage"], d["reason"])),
                             equal_to([("en", "16", "parse", "empty_redirect_target")])),
            "stats": (summed(stats), counts_include({
                ("en", "pages/article"): 9, ("en", "pages/redirect"): 1, ("en", "pages/dead_letter"): 1,
                ("en", "pages/other_namespace"): 1, ("en", "mentions/links"): 6, ("en", "mentions/of_kept_entity"): 5,
                ("en", "mentions/of_rare_entity"): 1, ("en", "entities/above_min_mentions"): 2,
                ("en", "entities/below_min_mentions"): 1, ("en", "entities/with_examples"): 2,
                ("en", "examples/answerable"): 4, ("en", "examples/unanswerable"): 4,
            })),
        })


def test_same_pages_in_another_order_and_the_same_seed_give_the_same_examples():
    with test_pipeline.TestPipeline() as p:
        forward = p | "Pages" >> beam.Create([("en", page) for page in PAGES])
        backward = p | "PagesReversed" >> beam.Create([("en", page) for page in PAGES[::-1]])
        first = build(forward, 5, "First")[0] | "KeyFirst" >> beam.Map(lambda r: (r["id"], r))
        second = build(backward, 5, "Second")[0] | "KeySecond" >> beam.Map(lambda r: (r["id"], r))
        joined = {"first": first, "second": second} | beam.CoGroupByKey()
        assert_that(joined, check_each(lambda kv: len(kv[1]["first"]) == 1 and kv[1]["first"] == kv[1]["second"],
                                       "each example is built the same way from either order"))
