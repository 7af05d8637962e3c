"""The stages of wiki_mrc after reading (pipelines/wiki_dump_reading.py): parsing and the examples here,
the entity stages in pipelines/wiki_mrc_entities.py; all text logic is in `corpora/`.

Data flow (keys in brackets), each join a grouping by key so that it scales to the full dumps
(English has ~10M redirects and ~100M links: no side-input dictionaries of that size). Pages and
links meet in title buckets (pipelines/wiki_mrc_entities.py: a bundle's links grouped by target,
one element per bucket and bundle; each bucket joined in memory):

  pages ─► ParsePages ─► articles ─┬─► [lang,title bucket] pages ─┐
                                   ├─► [lang,title bucket] links ─┴─► ResolveLinks (one redirect hop,
                                   │                                    as MediaWiki) ─► SelectMentions
                                   │                                    (count, threshold, seeded top-N)
                                   └─► [lang,page_id] text ────► BuildQueriesAndContexts
                                       ─► [lang,entity] AssembleExamples ─► answerable rows
                                       ─► [lang,bucket] PairUnanswerable  ─► unanswerable rows
"""
from __future__ import annotations

import logging
from typing import Any, NamedTuple

import apache_beam as beam
import pyarrow as pa

from corpora.wiki.languages import WikiLanguage, wiki_language
from corpora.mrc.entity_masking import collect_surface_forms, mask_lead
from corpora.mrc.examples import answer_spans, build_context, lead_located, pick_unanswerable, window_spaces
from corpora.mrc.query_sentences import masked_without_longer_name_sentences
from corpora.wiki.inflections import name_inflection
from corpora.name_folding import fold_words
from corpora.seeding import keyed_rng, stable_hash
from corpora.titles import normalise_title, strip_qualifier
from corpora.wikitext.parse import parse_wikitext
from corpora.words import get_tokenizer, is_word_like, stop_words
from pipelines import progress
from pipelines.beam_outputs import TallyingDoFn, dead_letter

PROGRESS = logging.getLogger("xlu.progress")


class Article(NamedTuple):
    lang: str
    page_id: int
    title: str
    text: str
    anchors: tuple  # ((start, end, target), ...) char offsets into text
    bold_names: tuple
    is_disambiguation: bool


# The query reads at most Q words (plus a name's length) of the lead; links further on never matter
# to it. 8 KB of text is well over 50 words in every script.
_LEAD_CHARS = 8192


# zstd at level 1 through pyarrow (already loaded for Parquet): on article texts it is faster than
# zlib at level 1 and smaller (benchmarks/README.md). What the job compresses to cross a shuffle:
# article texts here, the links' numbers in pipelines/wiki_mrc_entities.py.
SHUFFLE_CODEC = pa.Codec("zstd", 1)


class StoredText(NamedTuple):
    """What the text join needs of an article; the text compressed (to less than half), because every
    article crosses that shuffle while only definition and mention pages are read back."""

    page_id: int
    title: str
    compressed_text: bytes
    text_bytes: int  # the UTF-8 length, which zstd's decompression is given
    bold_names: tuple
    lead_anchors: tuple = ()  # ((start, end), ...) of the links in the first _LEAD_CHARS characters

    @classmethod
    def of(cls, article: Article) -> "StoredText":
        lead = tuple((s, e) for s, e, _ in article.anchors if s < _LEAD_CHARS)
        encoded = article.text.encode("utf-8")
        compressed = SHUFFLE_CODEC.compress(encoded, asbytes=True)
        return cls(article.page_id, article.title, compressed, len(encoded), article.bold_names, lead)

    @property
    def text(self) -> str:
        return SHUFFLE_CODEC.decompress(self.compressed_text, self.text_bytes, asbytes=True).decode("utf-8")


class PageInfo(NamedTuple):
    page_id: int
    redirect_target: str | None  # None for an article
    is_disambiguation: bool


class Mention(NamedTuple):
    page_id: int
    anchor_index: int
    start: int
    end: int
    text: str


class EntityRequest(NamedTuple):
    title: str
    redirect_titles: tuple
    anchor_texts: tuple
    mentions: int


class SelectedMention(NamedTuple):
    entity: str
    definition_page: int
    anchor_index: int
    start: int
    end: int
    # The texts of every link to the entity on the mention's page, this one's included ("চাঁদের",
    # "চাঁদে" for চাঁদ): each is the entity's name there, so spans equal to any of them are answers.
    page_anchor_texts: tuple = ()


class Query(NamedTuple):
    definition_page: int
    words: tuple
    forms: tuple  # case-folded word tuples naming the entity
    spaces: tuple = ()  # per word, whether whitespace follows it (a [MASK]: after the last word it hides)


# ───────────────────────────── parsing ─────────────────────────────


@beam.typehints.with_output_types(Any)  # not inferred from the parser's bytecode (row_checks.CheckRowFn)
class ParsePagesFn(TallyingDoFn):
    """Pages -> articles (main) and redirects; every page lands in exactly one `pages/*` metric."""

    def __init__(self, languages: dict[str, WikiLanguage], progress_mode=None):
        self.languages, self.progress_mode = languages, progress_mode

    def process(self, element):
        lang, page = element
        language = self.languages.get(lang) or wiki_language(lang)
        # Dumps before export schema 0.5 / 0.6 (about 2010) give no <ns> and no <redirect title=...> (at
        # most a bare <redirect/>): the title's prefix and the text's "#REDIRECT [[...]]" tell.
        ns = page.ns if page.ns is not None else language.namespace_of_title(page.title)
        if ns != 0:
            self.tally("pages", "other_namespace", lang)
            return
        title = normalise_title(page.title)
        redirect = page.redirect
        if not redirect and (page.ns is None or redirect == ""):
            redirect = language.redirect_in_text(page.text) or redirect
        if redirect is not None:
            target = normalise_title(redirect)
            if not target:
                self.tally("pages", "dead_letter", lang)
                yield dead_letter(lang, str(page.page_id), "parse", "empty_redirect_target", page.title)
                return
            self.tally("pages", "redirect", lang)
            yield beam.pvalue.TaggedOutput("redirects", ((lang, title), PageInfo(page.page_id, target, False)))
            return
        try:
            parsed = parse_wikitext(page.text, language, page.title)
        except Exception as error:  # a parser bug on one page must not stop the job
            self.tally("pages", "dead_letter", lang)
            yield dead_letter(lang, str(page.page_id), "parse", f"parser_error:{type(error).__name__}", page.title)
            return
        self.tally("pages", "disambiguation" if parsed.is_disambiguation else "article", lang)
        anchors = parsed.anchors  # (start, end, target) tuples
        self.tally("mentions", "links", lang, len(anchors))
        if parsed.is_disambiguation and anchors:
            # A disambiguation page is a list of meanings ("X may refer to: X, a river ..."), not prose:
            # its links would give contexts of list items, which the audit flags.
            self.tally("mentions", "on_disambiguation_page", lang, len(anchors))
            anchors = ()
        progress.note(self.progress_mode, "articles")
        yield Article(lang, page.page_id, title, parsed.text, anchors, tuple(parsed.bold_names), parsed.is_disambiguation)


# ──────────────────────────── examples ─────────────────────────────


class BuildQueriesAndContextsFn(TallyingDoFn):
    """On each article: the query if it defines a kept entity, the contexts of its selected mentions."""

    def __init__(self, seed: int, query_words: int, context_words: int, languages: dict[str, WikiLanguage] | None = None,
                 progress_mode=None, longer_names: str = "drop_sentence"):
        self.seed, self.query_words, self.context_words = seed, query_words, context_words
        self.languages, self.progress_mode = languages or {}, progress_mode
        self.longer_names = longer_names  # a name inside another entity's longer name: LONGER_NAME_CHOICES

    def process(self, element):
        (lang, page_id), groups = element
        articles, requests, mentions = list(groups["article"]), list(groups["entity"]), list(groups["selected"])
        if articles and self.progress_mode is not None:
            meter = progress.meter(self.progress_mode, "build_examples", "building examples", "articles",
                                   progress.noted("articles"))
            if meter is not None:
                meter.advance(1)
        if len(articles) > 1:
            articles = yield from self._one_article_per_id(lang, page_id, articles)
        # Most articles neither define a kept entity nor hold a chosen mention.
        if not articles or not (requests or mentions):
            return
        article = articles[0]
        text = article.text
        tokenizer = get_tokenizer(lang)
        language = self.languages.get(lang) or wiki_language(lang)
        for request in requests:
            yield from self._query(lang, article, text, request, tokenizer, language)
        # The entity's names on this page: its title (with and without a qualifier) and the texts of
        # its links here, the same for every mention of it on the page, so tokenised once.
        names_on_page: dict[str, list] = {}
        bases = inflection_bases(language.code, language.fold_diacritics, tokenizer.joins_with_space)
        seen: set = set()  # (entity, context words): a page shorter than C gives every mention the same window
        for selected in sorted(mentions, key=lambda m: (m.entity, m.anchor_index)):
            if selected.entity not in names_on_page:
                names = dict.fromkeys((selected.entity, strip_qualifier(selected.entity), *selected.page_anchor_texts))
                names_on_page[selected.entity] = [w for w in tokenizer.tokenize_many(list(names)) if w]
            context = build_context(
                tokenizer, text, selected.start, selected.end, self.context_words,
                keyed_rng(self.seed, "xi", lang, selected.entity, page_id, selected.anchor_index),
                f"{page_id}:{selected.anchor_index}", selected.entity, page_id, names_on_page[selected.entity],
                bases, language.fold_diacritics,
            )
            if context is None:
                self.tally("contexts", "anchor_longer_than_context", lang)
                continue
            if (selected.entity, context.words) in seen:
                self.tally("contexts", "same_window_as_another_mention", lang)
                continue
            seen.add((selected.entity, context.words))
            yield beam.pvalue.TaggedOutput("contexts", ((lang, selected.entity), context))

    def _one_article_per_id(self, lang, page_id, articles):
        """Copies of one page are one page; different pages sharing an id are none: mentions found
        on one would be cut from the other's text, and nothing says which the id names."""
        if len(set(articles)) == 1:
            self.tally("pages", "duplicate_page", lang, len(articles) - 1)
            for article in articles[1:]:
                yield dead_letter(lang, str(page_id), "query", "duplicate_page", f"a copy of the page read: {article.title}")
            return articles[:1]
        self.tally("pages", "duplicate_page_id", lang, len(articles))
        for article in sorted(articles):
            yield dead_letter(lang, str(page_id), "query", "duplicate_page_id",
                              f"{len(articles)} pages share this id: {article.title}")
        return []

    def _query(self, lang, article, text, request, tokenizer, language):
        forms = collect_surface_forms(
            tokenizer, request.title, article.bold_names, request.redirect_titles,
            request.anchor_texts, stop_words(lang), is_word_like, language.fold_diacritics, lang,
        )
        # A few words past Q so that a name crossing the Q-th word is masked whole; twice Q where
        # sentences may be dropped.
        longest = max((len(f) for f in forms.forms), default=1)
        dropping = self.longer_names == "drop_sentence"
        located = lead_located(tokenizer, text, self.query_words * (2 if dropping else 1) + longest)
        words = [w for w, _ in located]
        if not words:
            self.tally("entities", "empty_definition", lang)
            yield dead_letter(lang, str(article.page_id), "query", "empty_definition", request.title)
            return
        other_names = _links_to_other_names(text, words, article.lead_anchors, tokenizer, forms)
        joins = tokenizer.joins_with_space
        masked = mask_lead(words, forms, self.query_words, joins, other_names, self.longer_names)
        if masked.longer_names:
            self.tally("entities", f"query_longer_name_{self.longer_names}", lang)
        if dropping and masked.longer_names:
            masked = masked_without_longer_name_sentences(words, forms, self.query_words, joins, other_names, masked)
            if masked.longer_names:  # every sentence read holds one: the longer names are masked whole
                self.tally("entities", "only_sentences_with_longer_names", lang)
                masked = mask_lead(words, forms, self.query_words, joins, other_names, "mask_whole")
        query, leaks = masked.words, masked.leaks
        if leaks:
            self.tally("entities", "unmaskable", lang)
            yield dead_letter(lang, str(article.page_id), "query", "unmaskable_surface_form", f"{request.title}: {leaks[0]}")
            return
        word_spaces = window_spaces(text, located, joins)
        spaces = tuple(word_spaces[i] for i in masked.last_sources)
        yield (lang, request.title), Query(article.page_id, tuple(query), forms.forms, spaces)


def inflection_bases(lang: str, strip_accents: bool, joins_with_space: bool):
    """Where the language inflects names and writes words apart, word -> the names it inflects
    (corpora/wiki/inflections.py: "ভারতের" -> ভারত), so that an inflected name is a mention and is
    never in another entity's unanswerable context; else None (names match as written)."""
    inflection = name_inflection(lang, strip_accents) if joins_with_space else None
    return inflection.bases if inflection is not None and inflection.inflects else None


def _word_offsets(text: str, words) -> list[int]:
    """Char offset of each word (words are surface substrings of the text, in order); stops at the
    first word it cannot place (a tokeniser that normalised it), which only shortens the list."""
    offsets, pos = [], 0
    for word in words:
        at = text.find(word, pos)
        if at < 0:
            break
        offsets.append(at)
        pos = at + len(word)
    return offsets


def _links_to_other_names(text, words, lead_anchors, tokenizer, forms) -> list[tuple[int, int]]:
    """Word ranges of the lead's links whose text is not a name of the entity (mask none of them
    partly: entity_masking.py)."""
    if not lead_anchors:
        return []
    offsets = _word_offsets(text, words)
    if not offsets:
        return []
    limit = offsets[-1] + len(words[len(offsets) - 1])
    anchors = [(s, e) for s, e in lead_anchors if s < limit]
    names = set(forms.forms)
    ranges = []
    for (start, end), anchor_words in zip(anchors, tokenizer.tokenize_many([text[s:e] for s, e in anchors])):
        if forms.fold(anchor_words) in names or (tokenizer.joins_with_space and forms.names(anchor_words)):
            continue  # the entity's own name, or an inflected form of it: masked
        covered = [i for i, at in enumerate(offsets) if at < end and at + len(words[i]) > start]
        if covered:
            ranges.append((covered[0], covered[-1]))
    return ranges


def example_row(lang, entity, example_id, query: Query, context, answerable: bool) -> dict:
    return {
        "id": example_id,
        "lang": lang,
        "entity": entity,
        "query_words": list(query.words),
        "query_spaces": list(query.spaces),
        "context_words": list(context.words),
        "context_spaces": list(context.spaces),
        "answers": [{"start": s, "end": e} for s, e in context.answers] if answerable else [],
        "answerable": answerable,
        "definition_page": query.definition_page,
        "mention_page": context.mention_page,
    }


class Bundle(NamedTuple):
    """One entity with its query and answerable contexts, handed to unanswerable pairing."""

    lang: str
    entity: str
    query: Query
    forbidden: tuple  # surface forms and anchor word tuples, case-folded
    contexts: tuple


class AssembleExamplesFn(TallyingDoFn):
    def process(self, element):
        (lang, entity), groups = element
        queries = list(groups["query"])
        contexts = sorted(groups["contexts"], key=lambda c: c.context_id)
        if not queries:
            if contexts:
                self.tally("contexts", "entity_without_query", lang, len(contexts))
            return
        if not contexts:
            self.tally("entities", "no_context", lang)
            return
        query = queries[0]
        self.tally("entities", "with_examples", lang)
        self.tally("examples", "answerable", lang, len(contexts))
        for k, context in enumerate(contexts):
            yield example_row(lang, entity, f"{lang}:{query.definition_page}:a{k:02d}", query, context, True)
        strip_accents = wiki_language(lang).fold_diacritics  # as the query's forms were folded
        anchors = {fold_words(c.anchor_words, strip_accents) for c in contexts}
        forbidden = tuple(sorted(set(query.forms) | anchors))
        yield beam.pvalue.TaggedOutput("bundles", Bundle(lang, entity, query, forbidden, tuple(contexts)))


def bucket_key(bundle: Bundle, seed: int, entities_per_bucket: int, entities_per_lang: dict):
    """Entities meet their unanswerable contexts in buckets of ~entities_per_bucket entities."""
    n_buckets = max(1, entities_per_lang[bundle.lang] // entities_per_bucket)
    return (bundle.lang, stable_hash(seed, "bucket", bundle.lang, bundle.entity) % n_buckets), bundle


class PairUnanswerableFn(TallyingDoFn):
    def __init__(self, seed: int):
        self.seed = seed

    def process(self, element):
        (lang, _), bundles = element
        bundles = sorted(bundles, key=lambda b: b.entity)
        pool = [c for b in bundles for c in b.contexts]
        joins_with_space = get_tokenizer(lang).joins_with_space
        strip_accents = wiki_language(lang).fold_diacritics
        bases = inflection_bases(lang, strip_accents, joins_with_space)
        for bundle in bundles:
            wanted = len(bundle.contexts)
            chosen = pick_unanswerable(
                bundle.entity, bundle.query.definition_page, bundle.forbidden, pool, wanted,
                lambda cid, e=bundle.entity: stable_hash(self.seed, "unanswerable", lang, e, cid),
                joins_with_space, strip_accents, bases,
            )
            if len(chosen) < wanted:
                self.tally("examples", "unanswerable_shortfall", lang, wanted - len(chosen))
            self.tally("examples", "unanswerable", lang, len(chosen))
            for k, context in enumerate(chosen):
                yield example_row(
                    lang, bundle.entity, f"{lang}:{bundle.query.definition_page}:u{k:02d}", bundle.query, context, False
                )
