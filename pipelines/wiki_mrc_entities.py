"""The entity stages of wiki_mrc: every link resolved through one redirect hop, mentions counted per
entity, the paper's threshold applied and a seeded top-N of mentions kept (pipelines/wiki_mrc_transforms.py
has the data flow and the other stages)."""
from __future__ import annotations

import heapq
import zlib
from collections import Counter
from itertools import chain

import apache_beam as beam

from corpora.seeding import stable_hash
from corpora.wiki.inflections import is_derived_link
from corpora.wiki.languages import wiki_language
from pipelines.beam_outputs import TallyingDoFn, dead_letter, in_global_window
from pipelines.wiki_mrc_transforms import Article, EntityRequest, Mention, PageInfo, SelectedMention


# The two entity joins meet pages, links and aliases in buckets of titles, not per title. Beam's cost
# in a join is per element (encoding, grouping, each stage's call) and most targets have a handful of
# links, so one element per target and bundle made that cost most of the join's. A bucket's values are
# joined in memory: a bucket is the unit of memory of the join, 1/1024 of a language's links
# (English: ~100M links, so ~100k links, ~25 MB, per bucket).
TITLE_BUCKETS = 1024

# Values in a bucket are tagged with the input they come from; the join is a Flatten and a GroupByKey.
PAGE, MENTIONS, ALIAS = 0, 1, 2


def title_bucket(lang: str, title: str) -> tuple[str, int]:
    """The join key of a title: crc32, not hash(), so that every worker process agrees."""
    return lang, zlib.crc32(title.encode("utf-8")) % TITLE_BUCKETS


def article_page_info(article: Article):
    # PageInfo's fields as a plain tuple, which Beam's coder writes without pickling the class.
    info = (article.page_id, None, article.is_disambiguation)
    return title_bucket(article.lang, article.title), (PAGE, (article.title, info))


def redirect_page_info(redirect):
    (lang, title), info = redirect
    return title_bucket(lang, title), (PAGE, (title, tuple(info)))


def by_title(tagged_values) -> tuple[dict, dict, dict]:
    """A bucket's (tag, value) pairs -> pages, mention groups and aliases, each by title in arrival order."""
    pages: dict[str, list] = {}
    mentions: dict[str, list] = {}
    aliases: dict[str, list] = {}
    for tag, value in tagged_values:
        if tag == PAGE:
            title, info = value
            pages.setdefault(title, []).append(PageInfo._make(info))
        elif tag == MENTIONS:
            for title, group in value:
                mentions.setdefault(title, []).append(group)
        else:
            for title, alias in value:
                aliases.setdefault(title, []).append(alias)
    return pages, mentions, aliases


def bucketed(lang: str, tag: int, by_key: dict) -> list:
    """{title: [value, ...]} -> one (bucket, (tag, ((title, value), ...))) element per bucket."""
    buckets: dict[tuple, list] = {}
    for title, values in by_key.items():
        items = buckets.setdefault(title_bucket(lang, title), [])
        items.extend((title, value) for value in values)
    return [(bucket, (tag, tuple(items))) for bucket, items in buckets.items()]


# Links buffered per bundle before they are emitted grouped by target: ~250 bytes each in memory, so
# a bundle's buffer stays near 25 MB whatever size the runner makes a bundle.
LINK_BUFFER_MENTIONS = 100_000


class LinksByTargetFn(beam.DoFn):
    """Articles -> ((lang, bucket), (MENTIONS, ((target, (mention, ...)), ...))): the links of a
    bundle grouped by target, and the targets by title bucket, before the first join, as Beam's
    combiner lifting does for CombinePerKey.

    A mention is a plain tuple in Mention's field order: Beam's fast coder writes tuples of ints and
    strings natively but pickles a NamedTuple with its class. No stage depends on the order of the
    mentions of a target (SelectMentionsFn orders them by seeded hash), so the output is the same
    for any bundling."""

    def start_bundle(self):
        self._by_target: dict[tuple, list] = {}
        self._buffered = 0

    def process(self, article: Article):
        by_target = self._by_target
        for i, (start, end, target) in enumerate(article.anchors):
            mention = (article.page_id, i, start, end, article.text[start:end])
            group = by_target.get((article.lang, target))
            if group is None:
                by_target[(article.lang, target)] = [mention]
            else:
                group.append(mention)
        self._buffered += len(article.anchors)
        if self._buffered >= LINK_BUFFER_MENTIONS:
            yield from self._drain()

    def finish_bundle(self):
        for bucket_and_links in self._drain():
            yield in_global_window(bucket_and_links)

    def _drain(self):
        by_target, self._by_target, self._buffered = self._by_target, {}, 0
        by_lang: dict[str, dict] = {}
        for (lang, target), mentions in by_target.items():
            by_lang.setdefault(lang, {})[target] = [tuple(mentions)]
        for lang, groups in by_lang.items():
            yield from bucketed(lang, MENTIONS, groups)


def _first_page(pages):
    """Two pages with one title only happen in damaged dumps; the lowest page id wins."""
    pages = sorted(pages)
    return (pages[0] if pages else None), len(pages)


class ResolveLinksFn(TallyingDoFn):
    """Follow one redirect hop, as MediaWiki does when it renders a link: a bucket's links -> their
    targets' buckets, with the alias each redirect gives its target."""

    def process(self, element):
        (lang, _), tagged = element
        pages, mentions, _ = by_title(tagged)
        resolved: dict[str, list] = {}
        aliases: dict[str, list] = {}
        for title in sorted(pages.keys() | mentions.keys()):
            page, n_pages = _first_page(pages.get(title, ()))
            if n_pages > 1:
                self.tally("pages", "duplicate_title", lang, n_pages - 1)
                for other in sorted(pages[title])[1:]:
                    why = "a copy of page" if other == page else "page"
                    yield dead_letter(lang, str(other.page_id), "links", "duplicate_title",
                                      f"{title}: {why} {page.page_id} has this title too and is the one read")
            groups = mentions.get(title, ())
            if page is None:
                self.tally("mentions", "missing_target", lang, sum(map(len, groups)))
                continue
            target = page.redirect_target or title
            if page.redirect_target is not None:
                aliases.setdefault(target, []).append(title)
            if groups:  # tuples of mentions (LinksByTargetFn), passed on as they are
                resolved.setdefault(target, []).extend(groups)
        yield from bucketed(lang, MENTIONS, resolved)
        for bucket_and_aliases in bucketed(lang, ALIAS, aliases):
            yield beam.pvalue.TaggedOutput("aliases", bucket_and_aliases)


class SelectMentionsFn(TallyingDoFn):
    """Count mentions per entity, apply the paper's threshold, keep a seeded top-N of mentions."""

    def __init__(self, seed: int, examples_per_entity: int, min_mentions_en: int, min_mentions: int):
        self.seed, self.n = seed, examples_per_entity
        self.min_en, self.min_other = min_mentions_en, min_mentions

    def process(self, element):
        (lang, _), tagged = element
        pages, mentions, aliases = by_title(tagged)
        for title in sorted(pages.keys() | mentions.keys() | aliases.keys()):
            yield from self._entity(lang, title, pages.get(title, ()), mentions.get(title, ()), aliases.get(title, ()))

    def _entity(self, lang: str, title: str, pages, mentions, aliases):
        """One entity: mentions are tuples of mentions (LinksByTargetFn)."""
        page, _ = _first_page(pages)
        if page is None or page.redirect_target is not None or page.is_disambiguation:
            reason = (
                "redirect_to_missing" if page is None
                else "double_redirect_or_loop" if page.redirect_target is not None
                else "to_disambiguation"
            )
            self.tally("mentions", reason, lang, sum(map(len, mentions)))
            return
        count, self_links, derivations = 0, 0, 0
        anchor_texts: Counter = Counter()
        chosen: list = []  # heap of (-order, mention): keeps the N smallest seeded orders
        # A link whose text derives from the target's name ([[Angola|Angolan]]) names the people or an
        # adjective, not the target: no context is cut around it and its text names nothing
        # (corpora/wiki/inflections.py). It still links the entity, so it counts for the threshold.
        strip_accents = wiki_language(lang).fold_diacritics
        derived: dict[str, bool] = {}
        for m in map(Mention._make, chain.from_iterable(mentions)):
            if m.page_id == page.page_id:
                self_links += 1
                continue
            count += 1
            if m.text not in derived:
                derived[m.text] = is_derived_link(m.text, title, lang, strip_accents)
            if derived[m.text]:
                derivations += 1
                continue
            anchor_texts[m.text] += 1
            item = (-stable_hash(self.seed, "mention", lang, title, m.page_id, m.anchor_index), m)
            if len(chosen) < self.n:
                heapq.heappush(chosen, item)
            elif item[0] > chosen[0][0]:
                heapq.heapreplace(chosen, item)
        if self_links:
            self.tally("mentions", "self_link", lang, self_links)
        if derivations:
            self.tally("mentions", "derivation_of_target", lang, derivations)
        threshold = self.min_en if lang == "en" else self.min_other
        if count < threshold:
            if count:
                self.tally("entities", "below_min_mentions", lang)
                self.tally("mentions", "of_rare_entity", lang, count - derivations)
            return
        self.tally("entities", "above_min_mentions", lang)
        self.tally("mentions", "of_kept_entity", lang, count - derivations)
        aliases = tuple(sorted(set(aliases)))
        # The most frequent link texts are the names; a long tail of one-off texts adds nothing.
        texts = tuple(t for t, _ in sorted(anchor_texts.items(), key=lambda kv: (-kv[1], kv[0]))[:64])
        yield beam.pvalue.TaggedOutput(
            "entities", ((lang, page.page_id), EntityRequest(title, aliases, texts, count))
        )
        # A second pass over the entity's mentions: the texts of its links on each chosen page, which
        # name it there as the chosen link's text does.
        texts_on_page: dict[int, dict[str, None]] = {m.page_id: {} for _, m in chosen}
        for m in map(Mention._make, chain.from_iterable(mentions)):
            if m.page_id in texts_on_page and not derived.get(m.text, False):
                texts_on_page[m.page_id][m.text] = None
        for _, m in sorted(chosen, key=lambda item: -item[0]):
            texts = tuple(sorted(texts_on_page[m.page_id]))
            yield (lang, m.page_id), SelectedMention(title, page.page_id, m.anchor_index, m.start, m.end, texts)
