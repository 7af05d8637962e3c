"""What the job knows of each Wikipedia language, in one place.

A `WikiLanguage` is built in two layers:
  1. the dump's own `<siteinfo>`: the wiki's localised namespace names (File, Category, Template …
     as that wiki spells them today), read before the pipeline starts (`with_siteinfo`);
  2. `corpora/wiki/language_data.py`, one entry per language, for what siteinfo does not carry:
     namespace aliases, the image-option magic words (thumb, right, 250px … localised), the link
     trail, the redirect and behaviour-switch magic words (all extracted from MediaWiki's
     languages/messages/Messages*.php), and the curated site namespaces and link prefixes,
     extra magic words, disambiguation templates, disambiguation phrases and tail-section titles.
English names always work on every wiki, so the `en` entry is a layer of every profile. What stays
here is cross-wiki rules only (interwiki prefixes, language codes, the dab-template suffixes).

Any Wikipedia language code runs: a code outside the paper's 24 gets the English layer, its
siteinfo, and the generic tokeniser (corpora/words.py). Adding a language is one entry in
wiki_language_data.py (and, for a tokeniser of its own, one line in words.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from corpora.wiki.disambiguation import DISAMBIGUATION_TEMPLATES, SEEN_IN_DUMPS
from corpora.wiki.link_trails import LINK_TRAILS
from corpora.wiki.tail_sections import TAIL_SECTIONS_OF_WIKI

try:
    from corpora.wiki.language_data import LANGUAGE_DATA as _DATA
except ImportError:  # pragma: no cover - only while the extract is being written
    _DATA = {}

# MediaWiki namespace ids.
NS_FILE, NS_TEMPLATE, NS_CATEGORY = 6, 10, 14

# Scripts written without spaces between words (the tokeniser decides word boundaries).
UNSPACED = frozenset({"zh", "ja", "th", "lzh", "wuu", "yue", "zh-yue", "zh-classical", "gan", "my", "km", "lo", "bo", "dz"})

# ── rules that hold on every wiki (per-language names are all in wiki_language_data.py) ──

# Wikipedia language codes (and the old aliases still in the interwiki map): "[[fr:Paris]]" is an
# interlanguage link, dropped; "[[:fr:Paris]]" is an inline link to another wiki, text kept.
WIKIPEDIA_LANGUAGES = frozenset(
    """
    aa ab ace ady af ak als alt am ami an ang anp ar arc ary arz as ast atj av avk awa ay az azb ba ban
    bar bat-smg bbc bcl bdr be be-tarask be-x-old bew bg bh bi bjn blk bm bn bo bpy br bs btm bug bxr
    ca cbk-zam cdo ce ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da dag de dga din diq dsb dtp
    dty dv dz ee el eml en eo es et eu ext fa fat ff fi fiu-vro fj fo fon fr frp frr fur fy ga gag gan
    gcr gd gl glk gn gom gor got gpe gsw gu guc gur guw gv ha hak haw he hi hif ho hr hsb ht hu hy hyw
    hz ia iba id ie ig igl ii ik ilo inh io is it iu ja jam jbo jv ka kaa kab kbd kbp kcg kg kge ki kj
    kk kl km kn knc ko koi kr krc ks ksh ku kus kv kw ky la lad lb lbe lez lfn lg li lij lld lmo ln lo
    lrc lt ltg lv lzh mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mo mos mr mrj ms mt mus mwl
    my myv mzn na nah nan nap nb nds nds-nl ne new ng nia nl nn no nov nqo nr nrm nso nup nv ny oc olo
    om or os pa pag pam pap pcd pcm pdc pfl pi pih pl pms pnb pnt ps pt pwn qu rki rm rmy rn ro roa-rup
    roa-tara rsk ru rue rup rw sa sah sat sc scn sco sd se sg sgs sh shi shn si simple sk skr sl sm smn
    sn so sq sr srn ss st stq su sv sw syl szl szy ta tay tcy tdd te tet tg th ti tig tk tl tly tn to
    tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo vro wa war wo wuu xal xh xmf yi
    yo yue za zea zgh zh zh-classical zh-min-nan zh-yue zu
    """.split()
)

# Sister projects and the common external interwikis: text kept, no anchor.
_INTERWIKI = (
    "wikt", "wiktionary", "w", "commons", "c", "meta", "m", "metawikimedia", "s", "wikisource", "q",
    "wikiquote", "b", "wikibooks", "n", "wikinews", "v", "wikiversity", "voy", "wikivoyage", "species",
    "wikispecies", "mw", "mediawikiwiki", "d", "wikidata", "f", "wikifunctions", "foundation", "wmf",
    "outreach", "incubator", "phab", "phabricator", "wikitech", "translatewiki", "doi", "google",
    "iarchive", "imdbname", "imdbtitle", "rfc", "oeis", "arxiv", "gutenberg", "wikia", "wikiwikiweb",
)
_DEFAULT_LINKTRAIL = "[a-z]+"  # MessagesEn.php

# Where dropping Latin/Greek/Cyrillic accents would merge different words *in names*: vi (tones and
# vowel qualities are phonemic: Hà/Hạ/Há), tr (ş/s, ç/c, ğ/g, ö/o, ü/u tell words apart, and "İ"
# casefolds to "i̇"). Everywhere else the accents of a name vary by source ("Aristotélēs",
# "Los Ángeles", "Ё/Е") far more often than two names differ only by them; scripts without those
# accents (ja, th, the Indic ones) are untouched by folding. The table's curated
# `diacritic_folding_safe` is stricter (it also lists de, fi, sv, pl, ru); we measured the leaks it
# would keep, see docs/wiki_mrc.md.
_ACCENTS_TELL_WORDS_APART = frozenset({"vi", "tr"})

# Where authors type "|" for the danda "।" (the sentence end of Devanagari and Bengali script), a pipe
# between sentences is text; elsewhere a pipe left in the text is broken markup (corpora/wikitext/parse.py).
# Each such language with its script's letters and marks, as a character-class body: a pipe is a danda
# only after one of them (corpora/wikitext/tidy.py).
_DEVANAGARI, _BENGALI = "\u0900-\u097f\ua8e0-\ua8ff", "\u0980-\u09ff"
_PIPE_AS_DANDA = {
    "bn": _BENGALI, "as": _BENGALI, "bpy": _BENGALI, "or": "\u0b00-\u0b7f", "pa": "\u0a00-\u0a7f",
    **dict.fromkeys(("hi", "mr", "ne", "sa", "bh", "mai", "new", "anp"), _DEVANAGARI),
}

# Tail sections every wiki shares (English titles are common on all wikis' templates and bots).
_ENGLISH_TAIL_SECTIONS = (
    "see also", "references", "notes", "external links", "further reading", "bibliography", "sources",
    "citations", "footnotes", "works cited", "notes and references", "references and notes", "gallery",
    "literature", "external link", "reference", "note", "related articles",
)
_ENGLISH_DAB_PHRASES = ("may refer to", "may also refer to", "can refer to", "may stand for")

# A template whose name ends with one of these is a disambiguation template on any wiki (en has
# dozens of "X disambiguation" variants; many wikis keep the English name as a redirect). Set index
# articles ({{set index article}}, {{surname}}, ...) are lists of things sharing a name, not
# disambiguation pages, and are deliberately absent from every language's list.
_DAB_SUFFIXES = ("disambiguation", "曖昧さ回避", "homonymie", "消歧义", "消歧義")


@dataclass(frozen=True)
class WikiLanguage:
    code: str
    joins_with_space: bool
    fold_diacritics: bool  # accents may be ignored when comparing names (corpora/name_folding.py)
    file_namespaces: tuple[str, ...]  # lower-case, single spaces
    category_namespaces: tuple[str, ...]
    other_namespaces: tuple[str, ...]
    image_options: tuple[str, ...]  # localised image magic words; "$1" stands for a number
    linktrail: str | None  # a character-class regex for letters glued after "]]"; None: no trail
    redirect_words: tuple[str, ...]
    behaviour_switches: tuple[str, ...]  # "__NOTOC__"-style words, upper- and local-case as written
    disambiguation_templates: frozenset[str] = field(default_factory=frozenset)
    disambiguation_magic_words: tuple[str, ...] = ()
    disambiguation_phrases: tuple[str, ...] = ()
    tail_sections: frozenset[str] = field(default_factory=frozenset)
    in_paper: bool = False  # one of mPMR's 24 languages

    def with_siteinfo(self, namespaces: dict[int, str]) -> "WikiLanguage":
        """This profile plus the namespace names a dump's <siteinfo> declares."""
        files, categories, others = set(self.file_namespaces), set(self.category_namespaces), set(self.other_namespaces)
        for key, name in namespaces.items():
            name = _namespace_key(name)
            if not name or key == 0:
                continue
            if key == NS_FILE:
                files.add(name)
            elif key == NS_CATEGORY:
                categories.add(name)
            else:
                others.add(name)
        others -= files | categories
        return replace(
            self,
            file_namespaces=tuple(sorted(files)),
            category_namespaces=tuple(sorted(categories)),
            other_namespaces=tuple(sorted(others - files - categories)),
        )

    # ── derived lookups, built once per profile per process ──

    @property
    def types_pipe_as_danda(self) -> bool:
        return self.code in _PIPE_AS_DANDA

    @property
    def danda_script(self) -> str:
        """The letters and marks of the script whose sentences a typed "|" may end ("" elsewhere),
        as a regex character-class body."""
        return _PIPE_AS_DANDA.get(self.code, "")

    @cached_property
    def image_option_set(self) -> frozenset[str]:
        return frozenset(o.lower() for o in self.image_options if "$1" not in o)

    @cached_property
    def image_option_res(self) -> tuple[re.Pattern, ...]:
        """Options with a parameter ("upright=$1", "$1px", "$1пкс") as full-match patterns."""
        patterns = []
        for option in self.image_options:
            if "$1" in option:
                body = re.escape(option.lower()).replace(re.escape("$1"), ".*")
                patterns.append(re.compile(body, re.S))
        return tuple(patterns)

    def is_image_option(self, text: str) -> bool:
        key = text.strip().lower()
        if not key:
            return True
        return key in self.image_option_set or any(p.fullmatch(key) for p in self.image_option_res)

    def image_option_words(self) -> frozenset[str]:
        """The option words a reader would recognise as markup in text (for the audit)."""
        return frozenset(
            o.lower() for o in self.image_options
            if "$1" not in o and "=" not in o and len(o) > 2
        )

    def pixel_pattern(self) -> str:
        """A regex for "250px", "200x200px" and the localised pixel suffixes."""
        suffixes = {"px"}
        for option in self.image_options:
            if option.startswith("$1") and "=" not in option and len(option) > 2:
                suffixes.add(re.escape(option[2:].lower()))
        return r"\b[0-9]+(?:x[0-9]+)?\s?(?:%s)\b" % "|".join(sorted(suffixes, key=len, reverse=True))

    @cached_property
    def image_remnant_re(self) -> re.Pattern:
        """What is left of a file link whose "[[File:" was damaged in the source ("xxxxthumb|250px|A
        caption"): options up to a pixel size and its pipe; the caption after it is kept."""
        # Bounded repeats: a line of thousands of pipes ("a|a|a|...") must stay linear.
        return re.compile(r"[^\s|]{0,40}\|(?:[^\s|]{1,40}\|){0,6}?%s\|" % self.pixel_pattern().replace(r"\b", ""))

    @cached_property
    def dab_phrase_re(self) -> re.Pattern | None:
        phrases = [p.lower() for p in self.disambiguation_phrases if p]
        if not phrases:
            return None
        # A disambiguation page's lead ends its phrase with a colon before the list ("may refer to:");
        # the phrase in running prose ("it may refer to the king") is not one.
        alternatives = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
        return re.compile(r"(?:%s)\s?[:：]" % alternatives, re.IGNORECASE)

    def is_disambiguation_template(self, name: str) -> bool:
        key = _namespace_key(name)
        colon = key.find(":")
        if colon > 0 and key[:colon] in self.template_prefixes:
            key = key[colon + 1 :].lstrip()
        return key in self.disambiguation_templates or key.endswith(_DAB_SUFFIXES)

    @cached_property
    def template_prefixes(self) -> frozenset[str]:
        return frozenset({"template"} | {_namespace_key(n) for n in _ns_names(_DATA.get(self.code, {}), NS_TEMPLATE)})

    def namespace_of_title(self, title: str) -> int:
        """0 for an article's title, -1 for one under a namespace prefix ("Catégorie:X", "Talk:Y"): what
        a dump older than export schema 0.5 says only through the title. The key of a namespace other
        than the main one is not needed, only that it is not 0."""
        colon = title.find(":")
        if colon > 0 and self.prefix_kinds.get(_namespace_key(title[:colon])) in ("file", "category", "other"):
            return -1
        return 0

    def redirect_in_text(self, text: str) -> str | None:
        """The target of "#REDIRECT [[Target]]" (or a local synonym: "#WEITERLEITUNG") opening the text:
        dumps older than export schema 0.6 mark a redirect only so (or with a bare <redirect/>)."""
        head = text[:300].lstrip()
        if not head.startswith("#"):
            return None
        lowered = head.lower()
        for word in sorted(self.redirect_words, key=len, reverse=True):  # "#REDIRECTION" before "#REDIRECT"
            if lowered.startswith(word.lower()):
                match = _REDIRECT_LINK_RE.match(head, len(word))
                if match:
                    return match.group(1).strip()
        return None

    @cached_property
    def prefix_kinds(self) -> dict[str, str]:
        """Lower-case link prefix -> "file" | "category" | "lang" | "self" | "other"."""
        kinds = dict.fromkeys(_INTERWIKI, "other")
        kinds.update(dict.fromkeys(WIKIPEDIA_LANGUAGES, "lang"))
        kinds.update(dict.fromkeys(self.other_namespaces, "other"))
        kinds.update(dict.fromkeys(self.category_namespaces, "category"))
        kinds.update(dict.fromkeys(self.file_namespaces, "file"))
        if self.code in WIKIPEDIA_LANGUAGES:
            kinds[self.code] = "self"  # "[[en:Foo]]" on en is a plain link to Foo
        return kinds

    @cached_property
    def linktrail_re(self) -> re.Pattern | None:
        return re.compile(self.linktrail) if self.linktrail else None

    @cached_property
    def behaviour_switch_marks(self) -> tuple[str, ...]:
        """What a page must contain to hold a switch: "_", and "＿" where the language writes "＿＿".
        One character, which `in` finds at memchr speed; a two-character search is ~25x slower, and
        most pages hold no switch, so it would read the whole page."""
        return ("_", "＿") if any(w.startswith("＿＿") for w in self.behaviour_switches) else ("_",)

    @cached_property
    def behaviour_switch_re(self) -> re.Pattern:
        """Switches by name (MediaWiki's tables, any case, as MediaWiki matches most of them; ja also
        writes them with fullwidth "＿＿"), and any all-caps word for the extensions' (__DISAMBIG__,
        __NOGLOBAL__, __EXPECTED_UNCONNECTED_PAGE__). Only all-caps: "__init__" and "__name__" in an
        article about Python are text."""
        names = {w.strip("_＿") for w in self.behaviour_switches if w[:2] in ("__", "＿＿")} - {""}
        alternatives = [r"(?-i:[A-Z]+(?:_[A-Z]+)*)"] + [re.escape(w) for w in sorted(names, key=len, reverse=True)]
        return re.compile("(?:__|＿＿)(?:%s)(?:__|＿＿)" % "|".join(alternatives), re.IGNORECASE)

    def has_disambiguation_switch(self, text: str) -> bool:
        # Most pages hold none of the words' first characters ("_"), which `in` rules out at memchr speed.
        return (any(first in text for first in self._disambiguation_switch_openers)
                and self._disambiguation_switch_re.search(text) is not None)

    @cached_property
    def _disambiguation_switch_openers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(word[0] for word in self.disambiguation_magic_words if word))

    @cached_property
    def _disambiguation_switch_re(self) -> re.Pattern:
        """The magic words as one pattern: one scan of the text, not one per word (they all open
        with "__", which `re` skips to); a pattern that never matches when there are none."""
        words = sorted(self.disambiguation_magic_words, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, words)) if words else "(?!)")

    def is_tail_section(self, heading: str) -> bool:
        key = " ".join(heading.strip(" :.").lower().split())
        return key in self.tail_sections


# "#REDIRECT [[Target]]", "#REDIRECT: [[Target|x]]": the word, an optional colon, then the link.
_REDIRECT_LINK_RE = re.compile(r"[ \t]*:?[ \t\n]*\[\[([^\]|\n]+)")


def _namespace_key(name: str) -> str:
    """Namespace names compare lower-case, "_" as space, single spaces."""
    return " ".join(name.replace("_", " ").lower().split())


def _ns_names(entry: dict, key: int) -> list[str]:
    """MediaWiki's names (and aliases) of namespace `key`, then the curated site-specific ones."""
    return [*entry.get("namespace_names", {}).get(key, ()), *(entry.get("site_namespace_names") or {}).get(key, ())]


def _ns_keys(entry: dict) -> set[int]:
    return set(entry.get("namespace_names", {})) | set(entry.get("site_namespace_names") or {})


def _image_options(entry: dict) -> list[str]:
    out = []
    for synonyms in entry.get("image_options", {}).values():
        out.extend(s for s in synonyms if isinstance(s, str))
    return out


@lru_cache(maxsize=None)
def wiki_language(code: str) -> WikiLanguage:
    """The table's profile of a Wikipedia language code (English layer only for codes not in it)."""
    english = _DATA.get("en", {})
    entry = _DATA.get(code, {})
    layers = (english, entry) if code != "en" else (english,)
    # Media: links show their text ("[[Media:X.ogg|sound]]" is "sound"), so it is an "other" namespace.
    files, categories, others = set(), set(), set()
    options, redirects, switches, dab_magic, dab_templates = [], [], [], [], set()
    dab_phrases, tails = list(_ENGLISH_DAB_PHRASES), set(_ENGLISH_TAIL_SECTIONS)
    for layer in layers:
        files.update(_namespace_key(n) for n in _ns_names(layer, NS_FILE))
        categories.update(_namespace_key(n) for n in _ns_names(layer, NS_CATEGORY))
        for key in _ns_keys(layer):
            if key not in (NS_FILE, NS_CATEGORY, 0):
                others.update(_namespace_key(n) for n in _ns_names(layer, key))
        extra = layer.get("extra_link_prefixes", {})
        files.update(_namespace_key(n) for n in extra.get("file", ()))
        categories.update(_namespace_key(n) for n in extra.get("category", ()))
        others.update(_namespace_key(n) for n in extra.get("other", ()))
        options += _image_options(layer)
        redirects += layer.get("redirect", [])
        magic = layer.get("extra_magic_words", {})
        switches += [w for synonyms in layer.get("toc_magic_words", {}).values() for w in synonyms]
        switches += magic.get("behaviour_switches", [])
        dab_magic += layer.get("disambig_magic_words", []) + magic.get("disambiguation", [])
        dab_templates.update(_namespace_key(t) for t in layer.get("disambiguation_templates", []))
        dab_phrases += layer.get("disambiguation_phrases", [])
        tails.update(" ".join(t.lower().split()) for t in layer.get("tail_sections", []))
    tails.update(" ".join(t.lower().split()) for t in TAIL_SECTIONS_OF_WIKI.get(code, ()))
    # Each wiki's own list (DBpedia's copies of MediaWiki:Disambiguationspage), for every wiki, in the
    # table or not: the table's lists are the main names, these the variants pages also use.
    dab_templates.update(
        _namespace_key(t) for t in (*DISAMBIGUATION_TEMPLATES.get(code, ()), *SEEN_IN_DUMPS.get(code, ()))
    )
    files.discard("")
    categories.discard("")
    others -= files | categories | {""}
    return WikiLanguage(
        code=code,
        joins_with_space=code not in UNSPACED,
        fold_diacritics=code not in _ACCENTS_TELL_WORDS_APART,
        file_namespaces=tuple(sorted(files)),
        category_namespaces=tuple(sorted(categories)),
        other_namespaces=tuple(sorted(others)),
        image_options=tuple(dict.fromkeys(options)),
        linktrail=_linktrail(code, entry, english),
        redirect_words=tuple(dict.fromkeys(redirects)),
        behaviour_switches=tuple(dict.fromkeys(switches)),
        disambiguation_templates=frozenset(dab_templates),
        disambiguation_magic_words=tuple(dict.fromkeys(dab_magic)),
        disambiguation_phrases=tuple(dict.fromkeys(dab_phrases)),
        tail_sections=frozenset(tails),
        in_paper=code in _DATA,
    )


def _linktrail(code: str, entry: dict, english: dict) -> str | None:
    """MediaWiki's $linkTrail: the language's own (the paper's 24 from the table, any other Wikipedia
    from corpora/wiki/link_trails.py), else English's "[a-z]+" (harmless where the script is not Latin:
    "[[東京]]都" has no trail, as on jawiki). Without the table, hywiki's "[[Հայաստան]]ի" was cut
    into "Հայաստան ի" in 2 of 3 answerable hy rows."""
    if entry.get("linktrail_defined_in") or "linktrail" in entry:
        return entry.get("linktrail") or None
    if code in LINK_TRAILS:
        return LINK_TRAILS[code]
    return english.get("linktrail", _DEFAULT_LINKTRAIL) or None
