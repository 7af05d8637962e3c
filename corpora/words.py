"""Word tokenisation for the 24 mPMR languages.

The mPMR paper (§3.1): "Word tokenization is performed using spaCy if the language is supported,
otherwise, we utilize PyThaiNLP for Thai and Sacremoses for remaining languages." This module
follows that, with the choices spaCy itself leaves open made explicit (see TOKENISER_TABLE and
docs/tokenisers.md):

* most languages: a blank spaCy pipeline's rule-based tokenizer (no pipeline components);
* zh: jieba words, the segmenter spaCy's zh uses when configured with ``segmenter: jieba``
  (spaCy's default for zh is one token per character, which is useless for word-level spans);
* ja: SudachiPy split mode A, what spaCy's ja tokenizer runs (called directly: spaCy's wrapper
  also computes POS tags, readings and lemmas that we would throw away);
* ko: MeCab-ko morphemes, what spaCy's ko tokenizer runs (spaCy reaches MeCab through natto-py and
  a system-wide MeCab install; python-mecab-ko ships both MeCab and the dictionary as wheels);
* th: PyThaiNLP newmm, as in the paper (spaCy's th wraps the same call);
* vi: syllables, from spaCy's generic rule-based tokenizer (no pyvi), see _build_spacy;
* sw: Sacremoses, spaCy has no Swahili.

Every tokenizer returns words that are surface substrings of the input, in order, with no
whitespace inside any word and no empty words: ``"".join(words)`` equals the input with its
whitespace and its invisible direction controls (LRM, RLM, ...) removed (Sacremoses additionally
drops ASCII control characters). Languages written without spaces between words (zh, ja, th) have
``joins_with_space = False``.

Backends are loaded once per process (``get_tokenizer`` is cached). Beam runs several DoFn threads
per worker process, and a Sudachi tokenizer shared between threads raises "Tokenizer is already in
use", so Sudachi keeps one tokenizer per thread over the one shared dictionary. (MeCab's
Tagger::parse(Lattice*) is documented thread-safe, and python-mecab-ko makes a lattice per call.)
"""
from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from corpora.spacy_tokenizers import blank_spacy_tokenizer, import_spacy

SUPPORTED_LANGS: tuple[str, ...] = (
    "ar", "bn", "de", "el", "en", "es", "fi", "fr", "hi", "id", "it", "ja",
    "ko", "nl", "pl", "pt", "ru", "sv", "sw", "te", "th", "tr", "vi", "zh",
)  # fmt: skip

# Scripts written without spaces between words: words are joined back with "" rather than " ".
_NO_SPACE_LANGS = frozenset({"zh", "ja", "th"})

# Languages whose blank spaCy pipeline tokenizes offline with no extra package.
_SPACY_RULE_LANGS = frozenset(
    {"ar", "bn", "de", "el", "en", "es", "fi", "fr", "hi", "id", "it", "nl", "pl", "pt", "ru", "sv", "te", "tr"}
)  # fmt: skip

TOKENISER_TABLE: dict[str, str] = {
    **{lang: "spacy" for lang in sorted(_SPACY_RULE_LANGS)},
    "ja": "sudachipy mode A",  # what spaCy's ja runs
    "ko": "mecab-ko",  # what spaCy's ko runs
    "sw": "sacremoses",
    "th": "pythainlp newmm-safe",
    "vi": "spacy (syllables, no pyvi)",
    "zh": "jieba",  # spaCy's zh with segmenter: jieba
}
assert set(TOKENISER_TABLE) == set(SUPPORTED_LANGS)

# Sudachi refuses inputs over 49,149 bytes of UTF-8; 12,000 characters are at most 48,000 bytes.
SUDACHI_MAX_CHARS = 12_000

# Sudachi split mode: A (shortest units) is what spaCy's ja tokenizer uses by default; finer units
# can only make more entity-name spans expressible.
SUDACHI_MODE = "A"

# spaCy tokenizer.pipe batch size; the texts are short windows, so a large batch is cheap.
_SPACY_BATCH = 256


@runtime_checkable
class WordTokenizer(Protocol):
    lang: str
    joins_with_space: bool

    def tokenize(self, text: str) -> list[str]: ...

    def tokenize_many(self, texts: list[str]) -> list[list[str]]: ...


# Invisible bidirectional-text controls (LRM, RLM, ALM, the embeddings, overrides and isolates).
# Editors paste them next to names, mostly where right-to-left and left-to-right text meet (real
# dumps: hy 'Պակիստան' lead "پاکِستان\u202c\u200e", bn, uk), and a backend keeps them inside its
# words, so "پاکِستان\u202c\u200e" never equals the same name written without them. MediaWiki's
# titles drop them (corpora/titles.py). Here they separate words like a space does, and so are not
# part of any word: the words stay surface substrings of the text, in order.
_DIRECTION_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def clean_tokens(words: Iterable[str]) -> list[str]:
    """Drops whitespace-only and empty tokens and splits any token that has whitespace inside.

    spaCy emits tokens for runs of extra spaces and newlines, PyThaiNLP and Sudachi emit spaces,
    and a backend may keep e.g. a no-break space inside a token. Joining on " " and splitting on
    whitespace does all of that in C and keeps order; str.split's notion of whitespace (str.isspace)
    is the one the contract is stated in. A direction control splits a word as a space does.
    """
    joined = " ".join(words)
    if not joined.isascii():
        for control in _DIRECTION_CONTROLS:
            if control in joined:
                joined = joined.replace(control, " ")
    return joined.split()


@dataclass
class _SpacyTokenizer:
    """A blank spaCy pipeline's tokenizer only: no tagger, parser or other components."""

    lang: str
    joins_with_space: bool
    _tokenizer: Callable

    def tokenize(self, text: str) -> list[str]:
        return clean_tokens(t.text for t in self._tokenizer(text))

    def tokenize_many(self, texts: list[str]) -> list[list[str]]:
        return [clean_tokens(t.text for t in doc) for doc in self._tokenizer.pipe(texts, batch_size=_SPACY_BATCH)]


@dataclass
class _FunctionTokenizer:
    """A backend that is a plain text -> words function (no batched API to exploit)."""

    lang: str
    joins_with_space: bool
    _segment: Callable[[str], Iterable[str]]

    def tokenize(self, text: str) -> list[str]:
        if not text or text.isspace():
            return []
        return clean_tokens(self._segment(text))

    def tokenize_many(self, texts: list[str]) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]


class PerThread:
    """Lazily builds one backend object per thread (for backends that are not thread-safe)."""

    def __init__(self, factory: Callable[[], object]):
        self._factory = factory
        self._local = threading.local()

    def get(self):
        obj = getattr(self._local, "obj", None)
        if obj is None:
            obj = self._local.obj = self._factory()
        return obj


def _build_spacy(lang: str) -> WordTokenizer:
    # Vietnamese: spaCy's default vi tokenizer runs pyvi, whose words span several syllables *with a
    # space inside* ("sinh viên", "Hà Nội"). That breaks the no-whitespace-in-a-word contract the
    # pipeline relies on, and pyvi's segmentation of a name varies with its context, which hurts
    # matching names between query and context. Syllables are strictly finer than pyvi words, so
    # every span pyvi could express is still expressible. spaCy's vi with ``use_pyvi: false`` only
    # splits on whitespace ("Nội." stays one token), so vi gets spaCy's generic rule-based
    # tokenizer (spacy.Tokenizer.v1 with the vi Defaults), which also splits off punctuation.
    config = {"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}} if lang == "vi" else {}
    return _SpacyTokenizer(lang, lang not in _NO_SPACE_LANGS, blank_spacy_tokenizer(lang, config))


def _build_zh() -> WordTokenizer:
    import jieba

    # jieba logs "Building prefix dict ..." at INFO on first use; that is noise in worker logs.
    jieba.setLogLevel(logging.WARNING)
    seg = jieba.Tokenizer()
    seg.initialize()  # load the dictionary now, not inside the first window
    # cut_all=False, HMM=True: jieba's default accurate mode, as spaCy's zh calls it.
    return _FunctionTokenizer("zh", False, lambda text: seg.cut(text, cut_all=False, HMM=True))


def text_chunks(text: str, max_chars: int) -> Iterable[str]:
    """Splits text into pieces of at most max_chars, cutting after a newline, else after any
    whitespace, else after an ideographic full stop; a hard cut only if there is none of those."""
    start = 0
    while len(text) - start > max_chars:
        end = start + max_chars
        cut = -1
        for sep in ("\n", " ", "\u3000", "。"):
            cut = text.rfind(sep, start, end)
            if cut > start:
                break
        end = cut + 1 if cut > start else end
        yield text[start:end]
        start = end
    yield text[start:]


def _build_ja() -> WordTokenizer:
    from sudachipy import Dictionary, SplitMode

    dictionary = Dictionary()  # sudachidict_core, shipped as a wheel
    mode = getattr(SplitMode, SUDACHI_MODE)
    # All fields, as spaCy's ja builds it: Sudachi's number-joining plugin reads the POS and the
    # normalised form, and without them every digit is a word of its own ("1940年代" -> 1 9 4 0 年 代,
    # "3.5" -> 3 . 5; with POS alone, "1,000" -> 1 , 000). Loading only the surface was ~20% faster.
    per_thread = PerThread(lambda: dictionary.tokenizer(mode=mode))
    per_thread.get()

    def segment(text: str) -> Iterable[str]:
        tok = per_thread.get()
        for chunk in text_chunks(text, SUDACHI_MAX_CHARS):
            for m in tok.tokenize(chunk):
                yield m.surface()

    return _FunctionTokenizer("ja", False, segment)


def _build_ko() -> WordTokenizer:
    from mecab import MeCab  # python-mecab-ko, bundles MeCab and mecab-ko-dic
    from mecab.utils import create_lattice

    tagger = MeCab()

    # The morphemes' surfaces, whitespace skipped: "영국의" -> 영국, 의. This is MeCab.morphs()
    # without building a parsed Feature object per morpheme, which is much slower; the test
    # test_ko_matches_mecab_morphs guards the equivalence across python-mecab-ko versions.
    def segment(text: str) -> list[str]:
        lattice = create_lattice(text)
        if not tagger._tagger.parse(lattice):
            return tagger.morphs(text)  # raises MeCabError with MeCab's message
        # node.surface, not text[span]: python-mecab-ko's spans drift after a no-break space.
        return [node.surface for _span, node in lattice]

    return _FunctionTokenizer("ko", True, segment)


def _build_th() -> WordTokenizer:
    from pythainlp.tokenize import word_tokenize

    # newmm-safe is newmm with a bounded fallback for long runs of ambiguous text, where plain newmm
    # can take very long; on ordinary text the output is the same.
    def segment(text: str) -> list[str]:
        return _split_edge_marks(word_tokenize(text, engine="newmm-safe", keep_whitespace=False))

    segment("ทดสอบ")  # builds the dictionary trie now (~0.5 s), not inside the first window
    return _FunctionTokenizer("th", False, segment)


# newmm leaves brackets and double quotes on the Latin words and numbers of Thai text ("(NRCC)",
# '"Trump"', "(3.6"), where every other tokeniser here splits them off: a word then never equals the
# same word elsewhere (an anchor, an aligned English word). Apostrophes stay ("'s").
# A comma or another clause mark after them goes too ("L'Oreal,", "(Paris),", NTREX th).
_OPENING_MARKS = frozenset('([{"“«「『（［｛')
_CLOSING_MARKS = frozenset(')]}"”»」』）］｝,;:!?')


def _split_edge_marks(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        if len(token) < 2 or (token[0] not in _OPENING_MARKS and token[-1] not in _CLOSING_MARKS):
            out.append(token)
            continue
        start, end = 0, len(token)
        while start < end and token[start] in _OPENING_MARKS:
            start += 1
        while end > start and token[end - 1] in _CLOSING_MARKS:
            end -= 1
        out.extend(token[:start])
        if start < end:
            out.append(token[start:end])
        out.extend(token[end:])
    return out


# Sacremoses splits off every character outside Perl's \p{Alnum}, and ~550 combining marks are
# outside it: the Myanmar asat and the Khmer coeng, which sit inside words ("မြန်မာ" came out as
# မြန / ် / မာ), Arabic and Hebrew vowel points, the accents of decomposed Latin text. A word never
# starts with a combining mark, and a letter glued to a mark in the text belongs to the same word, so
# such pieces are joined again where the text had no space between them.
@functools.lru_cache(maxsize=None)
def _combining_mark_re() -> re.Pattern:
    marks = "".join(chr(c) for c in range(0x300, 0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))
    return re.compile(f"[{re.escape(marks)}]")


def _rejoin_split_marks(words: list[str], text: str) -> list[str]:
    out: list[str] = []
    cursor = 0
    for word in words:
        at = text.find(word, cursor)
        if at < 0:  # Moses changed a word (it does not with escape=False): keep its words unjoined
            return words
        if at == cursor and out and _continues_word(out[-1][-1], word[0]):
            out[-1] += word
        else:
            out.append(word)
        cursor = at + len(word)
    return out


def _continues_word(last: str, first: str) -> bool:
    """A piece that starts with a combining mark, or a letter right after one, is the same word."""
    first_kind = unicodedata.category(first)[0]
    return first_kind == "M" or (first_kind == "L" and unicodedata.category(last)[0] == "M")


def _build_moses(lang: str, joins_with_space: bool = True) -> WordTokenizer:
    from sacremoses import MosesTokenizer

    moses = MosesTokenizer(lang=lang)
    marks = _combining_mark_re()

    # escape=False keeps "&" as "&" (not "&amp;"); aggressive_dash_splits stays off, since it inserts
    # artificial "@-@" tokens.
    def segment(text: str) -> list[str]:
        words = moses.tokenize(text, escape=False, aggressive_dash_splits=False)
        return _rejoin_split_marks(words, text) if marks.search(text) else words

    return _FunctionTokenizer(lang, joins_with_space, segment)


_BUILDERS: dict[str, Callable[[], WordTokenizer]] = {
    **{lang: functools.partial(_build_spacy, lang) for lang in _SPACY_RULE_LANGS | {"vi"}},
    "ja": _build_ja,
    "ko": _build_ko,
    "sw": functools.partial(_build_moses, "sw"),
    "th": _build_th,
    "zh": _build_zh,
}
assert set(_BUILDERS) == set(SUPPORTED_LANGS)


def _check_lang(lang: str) -> None:
    from corpora.wiki.languages import WIKIPEDIA_LANGUAGES

    if lang not in SUPPORTED_LANGS and lang not in WIKIPEDIA_LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: a Wikipedia language code (e.g. {', '.join(SUPPORTED_LANGS[:6])}, ...)")


def _spacy_has(lang: str) -> bool:
    try:
        import_spacy().util.get_lang_class(lang)
    except ImportError:
        return False
    return True


def _build_generic(lang: str) -> WordTokenizer:
    """Outside the paper's 24 the paper's rule still applies: spaCy's rule-based tokenizer where
    spaCy has the language (ca, da, uk, ...), Sacremoses otherwise. Scripts written without spaces
    that spaCy lacks (my, km, lo, bo) get Sacremoses words, which are whole phrases there: such
    wikis run, but their spans are coarse (documented in docs/tokenisers.md)."""
    from corpora.wiki.languages import UNSPACED

    if _spacy_has(lang):
        return _SpacyTokenizer(lang, lang not in UNSPACED, blank_spacy_tokenizer(lang))
    return _build_moses(lang, lang not in UNSPACED)


@functools.lru_cache(maxsize=None)
def get_tokenizer(lang: str) -> WordTokenizer:
    """The word tokenizer for lang, built on first use and shared for the rest of the process."""
    _check_lang(lang)
    builder = _BUILDERS.get(lang)
    return builder() if builder else _build_generic(lang)


# Swahili has no spaCy language. A small hand-written list of its most frequent function words:
# conjunctions, prepositions, the genitive "-a" forms, possessives, demonstratives, pronouns and
# relatives, enough to keep them out of name matching.
_SW_STOP_WORDS = frozenset(
    """
    na ya wa kwa la za cha vya katika ni si kuwa pia lakini au ama kama kwamba ili bila hadi mpaka
    tangu baada kabla kati juu chini ndani nje pamoja kisha tena sasa bado tu sana zaidi kila hata
    huu hii hizi hawa hiyo hizo huo hao ile ule wale yale hapa pale huko hapo
    yake wake zake lake chake vyake yao wao zao lao chao vyao wetu yetu zetu letu chetu vyetu
    mimi wewe yeye sisi ninyi nyinyi ambao ambayo ambaye ambalo ambacho ambavyo ambazo
    je nini nani gani wapi lini vipi ndiyo hapana
    """.split()
)


@functools.lru_cache(maxsize=None)
def stop_words(lang: str) -> frozenset[str]:
    """Lower-cased stop words: spaCy's Language.Defaults.stop_words, or _SW_STOP_WORDS for sw.

    Only entries that a word from get_tokenizer(lang) can equal are kept: spaCy's vi list is mostly
    pyvi compounds joined with "_" ("tại_vì"), which our syllable tokens never match, so those and
    an empty entry are dropped (372 vi entries remain). Reads the class attribute only, so it loads
    none of the tokeniser backends."""
    _check_lang(lang)
    if lang == "sw":
        return _SW_STOP_WORDS
    if lang not in SUPPORTED_LANGS and not _spacy_has(lang):
        return frozenset()
    # Through import_spacy, so that a first spaCy import from here does not pull in torch (seconds of
    # CPU and ~150 MB; benchmarks/README.md): clism_pairs' language check asks for stop words before
    # any tokeniser is loaded.
    words = (w.lower() for w in import_spacy().util.get_lang_class(lang).Defaults.stop_words)
    return frozenset(w for w in words if w.split() == [w] and not (lang == "vi" and "_" in w))


def is_word_like(word: str) -> bool:
    """True if word has a letter or a digit in any script (so punctuation and symbols are not)."""
    return any(ch.isalnum() for ch in word)
