"""The entity stages of wiki_mrc: every link resolved through one redirect hop, mentions counted per
entity, the paper's threshold applied and a seeded top-N of mentions kept (pipelines/wiki_mrc_transforms.py
has the data flow and the other stages)."""
from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain

import apache_beam as beam

from corpora.seeding import stable_hash
from corpora.wiki.inflections import is_derived_link
from corpora.wiki.languages import wiki_language
from pipelines.beam_outputs import TallyingDoFn, dead_letter, in_global_window
from pipelines.wiki_mrc_transforms import Article, EntityRequest, Mention, PageInfo, SelectedMention


def article_page_info(article: Article):
    return (article.lang, article.title), PageInfo(article.page_id, None, article.is_disambiguation)


# Links buffered per bundle before they are emitted grouped by target: ~250 bytes each in memory, so
# a bundle's buffer stays near 25 MB whatever size the runner makes a bundle.
LINK_BUFFER_MENTIONS = 100_000


class LinksByTargetFn(beam.DoFn):
    """Articles -> ((lang, target), (mention, ...)): the links of a bundle grouped by target before
    the first join, as Beam's combiner lifting does for CombinePerKey.

    Every link of the dump crosses that join and the next one, and Beam's cost there is per element
    (encoding, the shuffle, each stage's call). Grouping within a bundle makes it one element per
    distinct target: 1.2-3x fewer on the real excerpts (en, ja, vi, el; a full dump's batches of
    100k links, where countries and years recur, are not measured).
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
        for key_and_mentions in self._drain():
            yield in_global_window(key_and_mentions)

    def _drain(self):
        by_target, self._by_target, self._buffered = self._by_target, {}, 0
        for key, mentions in by_target.items():
            yield key, tuple(mentions)


def _first_page(pages):
    """Two pages with one title only happen in damaged dumps; the lowest page id wins."""
    pages = sorted(pages)
    return (pages[0] if pages else None), len(pages)


class ResolveLinksFn(TallyingDoFn):
    """Follow one redirect hop, as MediaWiki does when it renders a link."""

    def process(self, element):
        (lang, title), groups = element
        page, n_pages = _first_page(groups["page"])
        if n_pages > 1:
            self.tally("pages", "duplicate_title", lang, n_pages - 1)
            for other in sorted(groups["page"])[1:]:
                why = "a copy of page" if other == page else "page"
                yield dead_letter(lang, str(other.page_id), "links", "duplicate_title",
                                  f"{title}: {why} {page.page_id} has this title too and is the one read")
        if page is None:
            self.tally("mentions", "missing_target", lang, sum(map(len, groups["mention"])))
            return
        target = page.redirect_target or title
        if page.redirect_target is not None:
            yield beam.pvalue.TaggedOutput("aliases", ((lang, target), title))
        for mentions in groups["mention"]:  # tuples of mentions (LinksByTargetFn), passed on as they are
            yield (lang, target), mentions


class SelectMentionsFn(TallyingDoFn):
    """Count mentions per entity, apply the paper's threshold, keep a seeded top-N of mentions."""

    def __init__(self, seed: int, examples_per_entity: int, min_mentions_en: int, min_mentions: int):
        self.seed, self.n = seed, examples_per_entity
        self.min_en, self.min_other = min_mentions_en, min_mentions

    def process(self, element):
        (lang, title), groups = element
        page, _ = _first_page(groups["page"])
        mentions = groups["mention"]  # tuples of mentions (LinksByTargetFn)
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
        aliases = tuple(sorted(set(groups["alias"])))
        # The most frequent link texts are the names; a long tail of one-off texts adds nothing.
        texts = tuple(t for t, _ in sorted(anchor_texts.items(), key=lambda kv: (-kv[1], kv[0]))[:64])
        yield beam.pvalue.TaggedOutput(
            "entities", ((lang, page.page_id), EntityRequest(title, aliases, texts, count))
        )
        # A second pass over the entity's mentions (a grouped value can be iterated again): the texts of
        # its links on each chosen page, which name it there as the chosen link's text does.
        texts_on_page: dict[int, dict[str, None]] = {m.page_id: {} for _, m in chosen}
        for m in map(Mention._make, chain.from_iterable(mentions)):
            if m.page_id in texts_on_page and not derived.get(m.text, False):
                texts_on_page[m.page_id][m.text] = None
        for _, m in sorted(chosen, key=lambda item: -item[0]):
            texts = tuple(sorted(texts_on_page[m.page_id]))
            yield (lang, m.page_id), SelectedMention(title, page.page_id, m.anchor_index, m.start, m.end, texts)
