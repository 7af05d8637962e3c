"""The entity stages of wiki_mrc: every link resolved through one redirect hop, mentions counted per
entity, the paper's threshold applied and a seeded top-N of mentions kept (pipelines/wiki_mrc_transforms.py
has the data flow and the other stages)."""
from __future__ import annotations

import heapq
import sys
from zlib import crc32
from array import array
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate, chain
from operator import sub

import apache_beam as beam

from corpora.seeding import stable_hash
from corpora.wiki.inflections import is_derived_link
from corpora.wiki.languages import wiki_language
from pipelines.beam_outputs import TallyingDoFn, dead_letter, in_global_window
from pipelines.wiki_mrc_transforms import SHUFFLE_CODEC, Article, EntityRequest, Mention, PageInfo, SelectedMention


# The two entity joins meet pages, links and aliases in buckets of titles, not per title. Beam's cost
# in a join is per element (encoding, grouping, each stage's call) and most targets have a handful of
# links, so one element per target and bundle made that cost most of the join's. A bucket's values are
# joined in memory: a bucket is the unit of memory of the join, 1/1024 of a language's links
# (English: ~100M links, so ~100k links, ~25 MB, per bucket).
TITLE_BUCKETS = 1024

# Values in a bucket are tagged with the input they come from; the join is a Flatten and a GroupByKey.
# LINKS are a bundle's links into the bucket, packed (LinksByTargetFn); MENTIONS are groups of links
# already resolved to their target (ResolveLinksFn).
PAGE, MENTIONS, ALIAS, LINKS = 0, 1, 2, 3

# Mentions travel through both joins packed: their numbers (page id, anchor index, start, end) as
# 64-bit ints in a bytes object and their texts joined in one str, each text end - start characters
# long. A tuple per mention cost the coder a tuple and five objects to decode per mention in each
# join, most of the joins' cost; ResolveLinks only passes groups on and reads their sizes.
_INT = "q"  # 64 bits: page ids are int64 (corpora/dumps/pages.py: MAX_PAGE_ID), offsets and indexes far less
_MENTION_NUMBERS = 4
_GROUP_BYTES_PER_MENTION = array(_INT).itemsize * _MENTION_NUMBERS


def _int_bytes(numbers: list) -> bytes:
    packed = array(_INT, numbers)
    if sys.byteorder == "big":  # little-endian on every worker, whatever their machines
        packed.byteswap()
    return packed.tobytes()


def _ints(data: bytes) -> array:
    numbers = array(_INT)
    numbers.frombytes(data)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def mention_count(group: tuple[bytes, str]) -> int:
    return len(group[0]) // _GROUP_BYTES_PER_MENTION


def unpack_mentions(group: tuple[bytes, str]) -> Iterator[Mention]:
    numbers, texts, at = _ints(group[0]), group[1], 0
    for k in range(0, len(numbers), _MENTION_NUMBERS):
        page_id, anchor_index, start, end = numbers[k : k + _MENTION_NUMBERS]
        yield Mention(page_id, anchor_index, start, end, texts[at : at + end - start])
        at += end - start


def pack_links(by_title: list) -> tuple:
    """[(title, [page_id, anchor_index, start, end, text, ...]), ...] -> the LINKS value of a bucket:
    the titles, each title's mention count, and all the mentions' numbers and texts in title order
    (cut with slices, which copy in C: no Python step per mention). The numbers are compressed: the
    first join holds every link of the dump until it runs, and they are most of a link's bytes."""
    titles, groups = zip(*by_title)
    flat = list(chain.from_iterable(groups))
    numbers = [0] * (len(flat) // 5 * _MENTION_NUMBERS)
    for field in range(_MENTION_NUMBERS):
        numbers[field::_MENTION_NUMBERS] = flat[field::5]
    counts = [n // 5 for n in map(len, groups)]
    return titles, _int_bytes(counts), SHUFFLE_CODEC.compress(_int_bytes(numbers), asbytes=True), "".join(flat[4::5])


def unpack_links(value: tuple) -> Iterator[tuple[str, tuple[bytes, str]]]:
    """A LINKS value -> (title, packed group) per title."""
    titles, counts, numbers, texts = value
    counts = _ints(counts)
    numbers = SHUFFLE_CODEC.decompress(numbers, sum(counts) * _GROUP_BYTES_PER_MENTION, asbytes=True)
    ints = _ints(numbers)
    text_at = [0, *accumulate(map(sub, ints[3::_MENTION_NUMBERS], ints[2::_MENTION_NUMBERS]))]
    at = 0
    for title, count in zip(titles, counts):
        end = at + count
        yield title, (numbers[at * _GROUP_BYTES_PER_MENTION : end * _GROUP_BYTES_PER_MENTION],
                      texts[text_at[at] : text_at[end]])
        at = end


def title_bucket(lang: str, title: str) -> tuple[str, int]:
    """The join key of a title: crc32, not hash(), so that every worker process agrees."""
    return lang, crc32(title.encode("utf-8")) % TITLE_BUCKETS  # LinksByTargetFn._drain writes it inline


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
        elif tag == MENTIONS or tag == LINKS:
            for title, group in value if tag == MENTIONS else unpack_links(value):
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
    """Articles -> ((lang, bucket), (LINKS, packed links)): the links of a bundle grouped by target,
    and the targets by title bucket, before the first join, as Beam's combiner lifting does for
    CombinePerKey. No stage depends on the order of the mentions of a target (SelectMentionsFn
    orders them by seeded hash), so the output is the same for any bundling."""

    def start_bundle(self):
        self._by_lang: dict[str, dict[str, list]] = {}  # lang -> target -> [page_id, index, start, end, text, ...]
        self._buffered = 0

    def process(self, article: Article):
        by_target = self._by_lang.get(article.lang)
        if by_target is None:
            by_target = self._by_lang[article.lang] = {}
        page_id, text = article.page_id, article.text
        for i, (start, end, target) in enumerate(article.anchors):
            mentions = by_target.get(target)
            if mentions is None:
                by_target[target] = [page_id, i, start, end, text[start:end]]
            else:
                mentions += (page_id, i, start, end, text[start:end])
        self._buffered += len(article.anchors)
        if self._buffered >= LINK_BUFFER_MENTIONS:
            yield from self._drain()

    def finish_bundle(self):
        for bucket_and_links in self._drain():
            yield in_global_window(bucket_and_links)

    def _drain(self) -> list:
        by_lang, self._by_lang, self._buffered = self._by_lang, {}, 0
        out = []
        for lang, by_target in by_lang.items():
            buckets: dict[int, list] = {}
            for item in by_target.items():
                bucket = crc32(item[0].encode("utf-8")) % TITLE_BUCKETS  # title_bucket's, without a call per title
                items = buckets.get(bucket)
                if items is None:
                    buckets[bucket] = [item]
                else:
                    items.append(item)
            out.extend(((lang, bucket), (LINKS, pack_links(items))) for bucket, items in buckets.items())
        return out


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
        # Most link targets of a dump have no page (red links, other namespaces): only their count matters.
        missing = sum(mention_count(group) for title in mentions.keys() - pages.keys() for group in mentions[title])
        if missing:
            self.tally("mentions", "missing_target", lang, missing)
        resolved: dict[str, list] = {}
        aliases: dict[str, list] = {}
        for title in sorted(pages):
            page, n_pages = _first_page(pages[title])
            if n_pages > 1:
                self.tally("pages", "duplicate_title", lang, n_pages - 1)
                for other in sorted(pages[title])[1:]:
                    why = "a copy of page" if other == page else "page"
                    yield dead_letter(lang, str(other.page_id), "links", "duplicate_title",
                                      f"{title}: {why} {page.page_id} has this title too and is the one read")
            target = page.redirect_target or title
            if page.redirect_target is not None:
                aliases.setdefault(target, []).append(title)
            groups = mentions.get(title)
            if groups:  # packed, passed on as they are
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

    def _entity(self, lang: str, title: str, pages, groups, aliases):
        """One entity: its links come as packed groups (LinksByTargetFn)."""
        page, _ = _first_page(pages)
        if page is None or page.redirect_target is not None or page.is_disambiguation:
            reason = (
                "redirect_to_missing" if page is None
                else "double_redirect_or_loop" if page.redirect_target is not None
                else "to_disambiguation"
            )
            self.tally("mentions", reason, lang, sum(map(mention_count, groups)))
            return
        # Unpacked twice, lazily, not held as a list: an entity can have a million links.
        mentions = chain.from_iterable(map(unpack_mentions, groups))
        count, self_links, derivations = 0, 0, 0
        anchor_texts: Counter = Counter()
        chosen: list = []  # heap of (-order, mention): keeps the N smallest seeded orders
        # A link whose text derives from the target's name ([[Angola|Angolan]]) names the people or an
        # adjective, not the target: no context is cut around it and its text names nothing
        # (corpora/wiki/inflections.py). It still links the entity, so it counts for the threshold.
        strip_accents = wiki_language(lang).fold_diacritics
        derived: dict[str, bool] = {}
        for m in mentions:
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
        for m in chain.from_iterable(map(unpack_mentions, groups)):
            if m.page_id in texts_on_page and not derived.get(m.text, False):
                texts_on_page[m.page_id][m.text] = None
        for _, m in sorted(chosen, key=lambda item: -item[0]):
            texts = tuple(sorted(texts_on_page[m.page_id]))
            yield (lang, m.page_id), SelectedMention(title, page.page_id, m.anchor_index, m.start, m.end, texts)
