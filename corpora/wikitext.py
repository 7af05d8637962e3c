"""Wikitext -> plain text with exact link anchors, the bold names of the lead, and a disambiguation flag.

The text is the kind WikiExtractor gives (what the mPMR paper used): templates, tables, references,
files, categories and interlanguage links gone; link, bold/italic, list, heading and HTML-tag text
kept. Unlike WikiExtractor, every article link comes back as an `Anchor` whose offsets index the
final text exactly.

Why a hand-written scanner: this is the hot spot of the whole job, and neither library reaches
WikiExtractor's speed (~4-5 MB of wikitext per CPU-second), the target. Measured on the enwiki excerpt
by `benchmarks/wikitext_parsers.py` (one core, text and exact anchors built from each one's output):
mwparserfromhell ~1.2 MB/s (its tokenizer alone is ~1.7), wikitextparser ~3.4-4.5 MB/s, this module
~10-12 MB/s, with the best link recall of the three (99.96% of an independent regex reading).

How it works: a few passes over the whole page, each a C-speed regex or `str.find` scan with Python
work only per construct (per template, per link, per line holding quotes), never per character:

  1. comments and opaque extension tags (<ref>, <math>, <gallery>, ...) removed, <nowiki> protected;
  2. the disambiguation check, on the template names;
  3. templates and tables removed by brace/line-token matching (nesting, unclosed, stray closers);
  4. [[links]] paired with a stack; article links become  \\x01<index>\\x1f visible text \\x02 ,
     files, categories and interlanguage links vanish, other namespaces keep their text;
  5. external links, HTML tags, headings, list markers, magic words, quotes (bold runs of the lead
     become \\x04 ... \\x05), entities, whitespace;
  6. one last scan removes the markers and turns them into offsets.

Markers are control characters that cannot occur in a dump (XML 1.0 forbids them; they are deleted
from the input anyway), so every intermediate pass can edit the text freely without tracking offsets:
an anchor's offsets are fixed only once the final text exists. The passes never delete half of an
anchor (their patterns exclude the marker characters), and an anchor carries its index, so dropping a
whole anchor (an empty section's heading) cannot shift the others.

Choices where MediaWiki's output is not plain text:
  * headings are kept, as their text on a line of their own; a heading with no text under it
    (before the next heading of the same or a higher level, e.g. "References") is dropped;
  * templates are dropped with their output (no expansion: no template bodies are available), so
    is a bold name written inside one ({{Nihongo|'''Aikido'''|...}});
  * an unclosed "{{" or "[[" or "<ref>" is dropped alone and the text after it kept (MediaWiki shows
    it literally); an unclosed table or comment runs to the end of the page, as in MediaWiki;
  * <br> becomes a space, block tags (<p>, <div>, <li>, ...) a line break;
  * "&nbsp;" becomes a plain space; runs of spaces collapse to one except inside link text; what a
    removal leaves is repaired at the cut ("a {{x}}." -> "a.", "Paris ({{IPA|..}}) is" -> "Paris
    is"), and lines left without a letter or digit ("." after a removed template) are dropped;
  * an anchor covers the link text and its link trail ("[[bus]]es"), never edge spaces;
  * bare URLs are kept as text, an external link's URL is dropped and its label kept;
  * zh (and the other wikis with script variants): -{...}- shows the zh-hans variant if any.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from html.entities import html5

from corpora.titles import normalise_title, strip_qualifier

__all__ = ["Anchor", "ParsedPage", "parse_wikitext", "WIKIPEDIA_LANGUAGES"]


@dataclass(frozen=True)
class Anchor:
    start: int  # char offset into ParsedPage.text, inclusive
    end: int  # exclusive; text[start:end] is exactly the visible link text
    target: str  # normalise_title(link target); never empty


@dataclass(frozen=True)
class ParsedPage:
    text: str  # plain text, paragraphs separated by "\n"
    anchors: tuple[Anchor, ...]  # in text order, non-overlapping
    bold_names: tuple[str, ...]  # plain text of '''bold''' runs in the lead (before the first heading)
    is_disambiguation: bool


# ───────────────────────────── tables ─────────────────────────────

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

# Namespace names per wiki: the English canonical names work on every wiki, plus the local ones and
# their common aliases. Keys are lower-case with single spaces (see _prefix_key).
_CANONICAL_FILE = ("file", "image")
_CANONICAL_CATEGORY = ("category",)
_CANONICAL_OTHER = (
    "talk", "user", "user talk", "wikipedia", "wikipedia talk", "project", "project talk", "wp", "wt",
    "file talk", "image talk", "mediawiki", "mediawiki talk", "template", "template talk", "help",
    "help talk", "category talk", "portal", "portal talk", "draft", "draft talk", "timedtext",
    "timedtext talk", "module", "module talk", "special", "media", "book", "book talk",
    "education program", "gadget", "gadget definition", "topic", "mos", "h", "t", "event",
)
# Sister projects and the common external interwikis: text kept, no anchor.
_INTERWIKI = (
    "wikt", "wiktionary", "w", "commons", "c", "meta", "m", "metawikimedia", "s", "wikisource", "q",
    "wikiquote", "b", "wikibooks", "n", "wikinews", "v", "wikiversity", "voy", "wikivoyage", "species",
    "wikispecies", "mw", "mediawikiwiki", "d", "wikidata", "f", "wikifunctions", "foundation", "wmf",
    "outreach", "incubator", "phab", "phabricator", "wikitech", "translatewiki", "doi", "google",
    "iarchive", "imdbname", "imdbtitle", "rfc", "oeis", "arxiv", "gutenberg", "wikia", "wikiwikiweb",
)
_LOCAL_FILE = {
    "zh": ("文件", "檔案", "档案", "图像", "圖像", "媒体文件"),
    "ja": ("ファイル", "画像"),
    "th": ("ไฟล์", "ภาพ"),
    "ar": ("ملف", "صورة"),
    "hi": ("चित्र", "फ़ाइल", "फाइल"),
    "fr": ("fichier", "image"),
    "de": ("datei", "bild"),
    "es": ("archivo", "imagen"),
    "ru": ("файл", "изображение"),
}
_LOCAL_CATEGORY = {
    "zh": ("分类", "分類"),
    "ja": ("カテゴリ",),
    "th": ("หมวดหมู่",),
    "ar": ("تصنيف",),
    "hi": ("श्रेणी",),
    "fr": ("catégorie",),
    "de": ("kategorie",),
    "es": ("categoría",),
    "ru": ("категория",),
}
_LOCAL_OTHER = {
    "zh": ("维基百科", "維基百科", "帮助", "幫助", "模板", "样板", "樣板", "用户", "用戶", "使用者",
           "讨论", "討論", "主题", "主題", "草稿", "特殊", "媒体", "媒體", "模块", "模組", "消歧义"),
    "ja": ("利用者", "ノート", "プロジェクト", "ヘルプ", "テンプレート", "ポータル", "特別", "メディア",
           "モジュール", "利用者‐会話", "ウィキペディア"),
    "th": ("ผู้ใช้", "คุยกับผู้ใช้", "พูดคุย", "วิกิพีเดีย", "วิธีใช้", "แม่แบบ", "สถานีย่อย", "พิเศษ",
           "สื่อ", "มอดูล", "ฉบับร่าง"),
    "ar": ("مستخدم", "مستخدمة", "نقاش", "ويكيبيديا", "مساعدة", "قالب", "بوابة", "خاص", "ميديا", "وحدة",
           "ميدياويكي", "ملحق", "مسودة"),
    "hi": ("सदस्य", "वार्ता", "विकिपीडिया", "सहायता", "साँचा", "सांचा", "प्रवेशद्वार", "विशेष", "मीडिया",
           "मॉड्यूल"),
    "fr": ("utilisateur", "utilisatrice", "discussion", "wikipédia", "aide", "modèle", "portail",
           "spécial", "projet", "média", "module", "référence", "sujet"),
    "de": ("benutzer", "benutzerin", "diskussion", "hilfe", "vorlage", "spezial", "medium", "modul"),
    "es": ("usuario", "usuaria", "discusión", "ayuda", "plantilla", "especial", "anexo",
           "wikiproyecto", "medio", "módulo"),
    "ru": ("участник", "участница", "обсуждение", "википедия", "справка", "шаблон", "портал",
           "служебная", "проект", "медиа", "модуль", "арбитраж", "инкубатор"),
}

# MediaWiki's $linkTrail (languages/messages/Messages*.php): letters glued after "]]" join the link.
# Chinese has none; Thai and Japanese keep the default, since their own letters run on unspaced.
_DEFAULT_LINKTRAIL = "[a-z]+"
_LINKTRAILS = {
    "zh": None,
    "fr": "[a-zàâçéèêîôûäëïöüùÇÉÂÊÎÔÛÄËÏÖÜÀÈÙ]+",
    "de": "[a-zäöüß]+",
    "es": "[a-záéíñóúü]+",
    "ru": "[a-zабвгдеёжзийклмнопрстуфхцчшщъыьэюя]+",
    "ar": "[a-zء-ي]+",
    "hi": "[a-z\u0900-\u0963\u0966-\u097f\ua8e0-\ua8ff]+",
}

# Disambiguation templates. Names are compared lower-case with "_" as space; a name is a
# disambiguation template if it is in _DAB_NAMES or ends with one of _DAB_SUFFIXES (en has dozens of
# "X disambiguation" variants). Set index articles ({{set index article}}, {{surname}}, ...) are
# lists of things sharing a name, not disambiguation pages, and are deliberately absent.
_DAB_NAMES = frozenset(
    """
    disambiguation|disambig|dab|disamb|dis|hndis|geodis|disambig-cleanup|disambiguation cleanup|
    dab cleanup|hndisambig|numberdis|schooldis|roaddis|hospitaldis|mil-unit-dis|
    letter-numbercombdisambig|letter-number combination disambiguation|
    消歧义|消歧義|消除歧义|消除歧義|消歧义页|消歧義頁|地名消歧义|地名消歧義|人名消歧义|人名消歧義|
    aimai|曖昧さ回避|人名の曖昧さ回避|地名の曖昧さ回避|
    แก้ความกำกวม|แก้กำกวม|
    توضيح|صفحة توضيح|
    बहुविकल्पी|बहुविकल्पी शब्द|
    homonymie|
    begriffsklärung|
    desambiguación|desambiguacion|desambig|des|
    неоднозначность|многозначность|неоднозначность/геоназвания
    """.replace("\n", "").split("|")
)
_DAB_NAMES = frozenset(name.strip() for name in _DAB_NAMES if name.strip())
_DAB_SUFFIXES = ("disambiguation", "曖昧さ回避", "homonymie")
_DAB_MAGIC_WORDS = ("__DISAMBIG__", "__消歧义__", "__消歧義__", "__曖昧さ回避__")

# Extension tags whose content is not text: removed with it, and opaque to template/link matching
# (MediaWiki's preprocessor skips them whole). "nowiki" is opaque but its content is kept.
_OPAQUE_TAGS = (
    "references|ref|gallery|math|chem|ce|syntaxhighlight|source|pre|timeline|score|graph|mapframe|"
    "maplink|templatedata|templatestyles|imagemap|hiero|inputbox|categorytree|charinsert|indicator|"
    "includeonly|section|dynamicpagelist|rss|nowiki"
)
# HTML tags MediaWiki accepts (Sanitizer) plus extension tags whose content is text: unwrapped.
_BLOCK_TAGS = "p|div|blockquote|center|ul|ol|li|dl|dt|dd|table|caption|tr|td|th|h[1-6]|hr"
_INLINE_TAGS = (
    "abbr|bdi|bdo|big|b|cite|code|data|del|dfn|em|font|ins|i|kbd|mark|q|rb|rp|rtc|rt|ruby|samp|small|"
    "span|strike|strong|sub|sup|s|time|tt|u|var|wbr|poem|noinclude|onlyinclude|translate|tvar|"
    "languages|nowiki"
)

# Behaviour switches: English ones are all-caps words; the local ones of our languages by name.
_MAGIC_WORD_RE = re.compile(
    r"__(?:[A-Z]+(?:_[A-Z]+)*|目次|目次非表示|目次強制|見出し編集なし|目录|無目錄|无目录|不转换标题|不轉換標題|"
    r"不转换内容|不轉換內容|消歧义|消歧義|曖昧さ回避|НЕТ_ОГЛАВЛЕНИЯ|БЕЗ_ОГЛАВЛЕНИЯ|ОГЛАВЛЕНИЕ|"
    r"ОБЯЗАТЕЛЬНОЕ_ОГЛАВЛЕНИЕ|AUCUNSOMMAIRE|SOMMAIRE|FORCERSOMMAIRE|INHALTSVERZEICHNIS|"
    r"KEIN_INHALTSVERZEICHNIS|INHALTSVERZEICHNIS_ERZWINGEN|TDC|SIN_TDC|NOTDC|FORZAR_TDC)__"
)

# ───────────────────────────── markers ─────────────────────────────
# See the module docstring. \x03 stands for a space inside link text that must survive collapsing.
_ANCHOR_OPEN, _ANCHOR_INDEX_END, _ANCHOR_CLOSE = "\x01", "\x1f", "\x02"
_KEPT_SPACE, _BOLD_OPEN, _BOLD_CLOSE, _NOWIKI_EDGE, _HEADING = "\x03", "\x04", "\x05", "\x06", "\x07"
_MARKER_CHARS = "\x01\x02\x03\x04\x05\x06\x07\x1f"

# <nowiki> content: markup characters moved to Supplementary Private Use Area-A so no pass sees them,
# moved back at the very end (one character for one, so offsets are unaffected).
_NOWIKI_CHARS = "[]{}<>'|=*#:;_~-!"
_NOWIKI_PROTECT = {ord(c): 0xF0000 + ord(c) for c in _NOWIKI_CHARS}
_NOWIKI_RESTORE = {0xF0000 + ord(c): ord(c) for c in _NOWIKI_CHARS}


# ───────────────────────────── the parser ─────────────────────────────


def parse_wikitext(wikitext: str, lang: str) -> ParsedPage:
    """Parse one page's wikitext. Never raises on malformed markup; linear-ish in the page size."""
    # The leading "\n" lets every line-start pattern be a "\n..." search, which `re` runs much faster
    # than a MULTILINE "^" (it can skip ahead to the literal); the final strip drops it again.
    text = "\n" + _without_marker_characters(wikitext)
    text, had_nowiki = _drop_comments_and_extension_tags(text)
    is_disambiguation = _has_disambiguation_template(text)
    text = _drop_templates_and_tables(text)
    if "-{" in text and lang in _CONVERTER_LANGS:
        text = _LANGUAGE_CONVERSION_RE.sub(_language_conversion, text)
    text, targets = _render_internal_links(text, lang)
    if "[" in text:
        text = _EXTERNAL_LINK_RE.sub(_external_link_label, text)
    if "<" in text:
        text = _HTML_TAG_RE.sub(_html_tag_replacement, text)
    text = _render_lines(text)
    text = _render_quotes(text)
    if "&" in text:
        text = _ENTITY_RE.sub(_decode_entity, text)
    text = _tidy(text)
    return _extract_markers(text, targets, is_disambiguation, had_nowiki)


def _without_marker_characters(text: str) -> str:
    """Delete the control characters used as markers (and "\\r"). A dump cannot hold them (XML 1.0),
    so this is a few fast `in` tests."""
    for char in _MARKER_CHARS + "\r":
        if char in text:
            text = text.replace(char, "")
    return text


def _append_after_cut(pieces: list[str], piece: str) -> None:
    """Append the text that follows removed markup, repairing what the removal left behind: a doubled
    space ("a {{x}} b"), a space before punctuation ("a {{citation needed}}."), and parentheses
    emptied of their content ("Paris ({{IPA|..}}) is", "Paris ({{lang|fr|Paris}}, born ...").

    Done at the cuts rather than by regexes over the whole text, which would also touch text the
    author wrote that way and cost a full scan each."""
    if not piece:
        return
    if pieces and pieces[-1][-1:] == "'" and piece[0] == "'":
        # "''{{transl|ar|..}}''" is two italic toggles around a template; joined, the quotes would
        # read as one run of four (apostrophe + bold) and shift every bold run after it.
        piece = _NOWIKI_EDGE + piece
    if pieces:
        prev = pieces[-1]
        last = prev[-1:]
        first = piece[0]
        if last == " ":
            if first == " ":
                piece = piece.lstrip(" ")
                first = piece[:1]
            if first in (",", ".", ")") and piece[:2] != "..":
                prev = prev.rstrip(" ")
                last = prev[-1:]
        elif last == ";" and first in (",", ".", ")") and prev.endswith("&nbsp;"):  # "3500&nbsp;{{sc|bc}}."
            prev = prev[:-6].rstrip(" ")
            last = prev[-1:]
        if last == "(":
            if first in (" ", ",", ";"):
                piece = piece.lstrip(" ,;")
                first = piece[:1]
            if first == ")":
                prev = prev[:-1].rstrip(" ")
                piece = piece[1:]
        pieces[-1] = prev
    pieces.append(piece)


# ── 1. comments and extension tags ──

_OPAQUE_OPEN_RE = re.compile(r"<!--|<(%s)(?=[\s/>])[^<>]*>" % _OPAQUE_TAGS, re.IGNORECASE)
_CLOSE_TAG_RES: dict[str, re.Pattern] = {}


def _close_tag_re(name: str) -> re.Pattern:
    pattern = _CLOSE_TAG_RES.get(name)
    if pattern is None:
        pattern = _CLOSE_TAG_RES[name] = re.compile(r"</%s\s*>" % name, re.IGNORECASE)
    return pattern


def _drop_comments_and_extension_tags(text: str) -> tuple[str, bool]:
    """Remove comments and opaque extension tags in one left-to-right scan (the first opener wins, as
    in MediaWiki: a comment inside <ref> is part of the ref, a <ref> inside a comment is comment)."""
    if "<" not in text:
        return text, False
    pieces: list[str] = []
    pos = 0
    had_nowiki = False
    for start, end, replacement in _iter_opaque(text):
        _append_after_cut(pieces, text[pos:start])
        if replacement:
            pieces.append(replacement)
            had_nowiki = True
        pos = end
    if pos == 0:
        return text, False
    _append_after_cut(pieces, text[pos:])
    return "".join(pieces), had_nowiki


def _iter_opaque(text: str):
    """Yield (start, end, replacement) for each comment/extension tag, in text order."""
    unclosed: set[str] = set()  # tag names with no closer left: their later openers need no search
    search_from = 0
    while True:
        match = _OPAQUE_OPEN_RE.search(text, search_from)
        if match is None:
            return
        start, open_end = match.span()
        name = match.group(1)
        if name is None:  # "<!--": an unclosed comment runs to the end, as in MediaWiki
            close = text.find("-->", open_end)
            end = len(text) if close < 0 else close + 3
            yield start, end, ""
            search_from = end
            continue
        name = name.lower()
        content_end = end = open_end
        if not match.group(0).endswith("/>") and name not in unclosed:
            close = _close_tag_re(name).search(text, open_end)
            if close is None:
                unclosed.add(name)  # the opener is dropped alone; the text after it is kept
            else:
                content_end, end = close.span()
        replacement = ""
        if name == "nowiki":
            # Content kept literally; the edges also stop a link trail ("[[bus]]<nowiki/>es").
            content = text[open_end:content_end].translate(_NOWIKI_PROTECT)
            replacement = _NOWIKI_EDGE + content + _NOWIKI_EDGE
        yield start, end, replacement
        search_from = end


# ── 2. disambiguation ──

_TEMPLATE_NAME_RE = re.compile(r"\{\{\s*([^{}|\n<>\[\]]{1,120}?)\s*(?:\||\}\})")


def _is_disambiguation_name(name: str) -> bool:
    key = " ".join(name.replace("_", " ").lower().split())
    if key.startswith("template:"):
        key = key[9:].lstrip()
    return key in _DAB_NAMES or key.endswith(_DAB_SUFFIXES)


def _has_disambiguation_template(text: str) -> bool:
    if "__" in text and any(word in text for word in _DAB_MAGIC_WORDS):
        return True
    if "{{" not in text:
        return False
    return any(_is_disambiguation_name(m.group(1)) for m in _TEMPLATE_NAME_RE.finditer(text))


# ── 3. templates and tables ──

# Brace runs ("{{{" of a parameter counts 3, so "{{a|{{{b}}}}}" balances), and table delimiters,
# which MediaWiki only sees at a line start ("{|" may follow indentation colons). "|}}" at a line start
# closes a template, not a table.
_BRACE_TOKEN_RE = re.compile(r"(\{\{+)|(\}\}+)|(\n[ \t:]*\{\|)|(\n[ \t]*\|\}(?!\}))")


def _drop_templates_and_tables(text: str) -> str:
    if "{" not in text and "|}" not in text:
        return text
    spans = _template_and_table_spans(text)
    return _cut_spans(text, spans) if spans else text


def _template_and_table_spans(text: str) -> list[tuple[int, int]]:
    """Spans (possibly nested or overlapping) to delete.

    Braces are matched as characters: a closing run takes braces from the innermost open run, so a
    run can close several templates or part of one. Inside a template, table tokens are ignored (the
    template is dropped whole anyway). An unclosed "{{" loses only its braces; an unclosed table runs
    to the end of the page.
    """
    spans = []
    stack: list[list[int]] = []  # [position of an open brace run, braces still open in it]
    table_depth = 0
    table_start = 0
    for match in _BRACE_TOKEN_RE.finditer(text):
        kind = match.lastindex
        start, end = match.span()
        if kind == 1:
            stack.append([start, end - start])
        elif kind == 2:
            pos = start
            while pos < end and stack:
                top = stack[-1]
                taken = min(end - pos, top[1])
                top[1] -= taken
                pos += taken
                spans.append((top[0] + top[1], pos))  # the rightmost braces of the run close first
                if top[1] == 0:
                    stack.pop()
            if pos < end and not table_depth:
                spans.append((pos, end))  # stray closing braces
        elif stack:
            continue
        elif kind == 3:  # the match starts at the "\n" before the line, which is kept
            if table_depth == 0:
                table_start = start + 1
            table_depth += 1
        elif table_depth:
            table_depth -= 1
            if table_depth == 0:
                spans.append((table_start, end))
        else:
            spans.append((start + 1, end))  # stray "|}"
    for position, still_open in stack:
        spans.append((position, position + still_open))
    if table_depth:
        spans.append((table_start, len(text)))
    return spans


def _cut_spans(text: str, spans: list[tuple[int, int]]) -> str:
    spans.sort()
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue
        if start > pos:
            _append_after_cut(pieces, text[pos:start])
        pos = end
    _append_after_cut(pieces, text[pos:])
    return "".join(pieces)


# ── language conversion (zh and the other wikis with script variants) ──

_CONVERTER_LANGS = frozenset(("zh", "gan", "wuu", "sr", "kk", "ku", "tg", "uz", "shi", "iu", "crh", "ban"))
_LANGUAGE_CONVERSION_RE = re.compile(r"-\{([^{}]*)\}-")
_VARIANT_RE = re.compile(r"\s*[a-z]{2,3}(?:-[a-z]+)?\s*:")
_VARIANT_PREFERENCE = ("zh-hans", "zh-cn", "zh", "zh-sg", "zh-my", "zh-hant", "zh-tw", "zh-hk", "zh-mo")


def _language_conversion(match: re.Match) -> str:
    """-{text}- shows text; -{zh-hans:A;zh-hant:B}- shows one variant (simplified first);
    -{H|rule}-, -{T|title}- and -{-|rule}- show nothing; -{R|text}- shows text."""
    content = match.group(1)
    if "|" in content:
        flags, rest = content.split("|", 1)
        flags = flags.strip()
        if flags and len(flags) <= 4 and (flags.isalpha() or flags == "-"):
            if set(flags) & set("HT-"):
                return ""
            content = rest
    if not _VARIANT_RE.match(content):
        return content
    variants = {}
    for part in content.split(";"):
        code, colon, shown = part.partition(":")
        if colon:
            variants.setdefault(code.strip().lower(), shown)
    for code in _VARIANT_PREFERENCE:
        if code in variants:
            return variants[code]
    return next(iter(variants.values()), content)


# ── 4. internal links ──

# "]]]" is one token: either a link closing after a single "]" of its own text (an external link at
# the end of a caption: "[[File:x|see [http://y z]]]") or a link followed by a literal "]".
_LINK_SPLIT_RE = re.compile(r"(\[\[|\]\]\](?!\])|\]\])")
# Characters that make "[[...]]" not a link in MediaWiki (it is shown literally).
_INVALID_TARGET_RE = re.compile(r"[<>\[\]{}\n]")
_MULTI_SPACE_RE = re.compile(r" {2,}")


def _prefix_key(prefix: str) -> str:
    key = prefix.lower()
    if "_" in key:
        key = key.replace("_", " ")
    key = key.strip()
    if "  " in key:
        key = " ".join(key.split())
    return key


@lru_cache(maxsize=None)
def _prefix_kinds(lang: str) -> dict[str, str]:
    """Lower-case namespace/interwiki prefix -> "file" | "category" | "lang" | "self" | "other"."""
    kinds = dict.fromkeys(_INTERWIKI, "other")
    kinds.update(dict.fromkeys(WIKIPEDIA_LANGUAGES, "lang"))
    kinds.update(dict.fromkeys(_CANONICAL_OTHER + _LOCAL_OTHER.get(lang, ()), "other"))
    kinds.update(dict.fromkeys(_CANONICAL_CATEGORY + _LOCAL_CATEGORY.get(lang, ()), "category"))
    kinds.update(dict.fromkeys(_CANONICAL_FILE + _LOCAL_FILE.get(lang, ()), "file"))
    if lang in WIKIPEDIA_LANGUAGES:
        kinds[lang] = "self"  # "[[en:Foo]]" on en is a plain link to Foo
    return kinds


@lru_cache(maxsize=None)
def _linktrail_re(lang: str):
    trail = _LINKTRAILS.get(lang, _DEFAULT_LINKTRAIL)
    return re.compile(trail) if trail else None


def _render_internal_links(text: str, lang: str) -> tuple[str, list[str]]:
    """Render [[links]]; article links become \\x01<index>\\x1f text \\x02 with targets[index]."""
    targets: list[str] = []
    if "[[" not in text:
        return (text.replace("]]", "") if "]]" in text else text), targets
    out: list[str] = []
    _render_links_into(text, out, targets, (_prefix_kinds(lang), _linktrail_re(lang)))
    return "".join(out), targets


def _render_links_into(text: str, out: list[str], targets: list[str], context, depth: int = 0) -> None:
    """Append `text` to `out` with its links rendered. Brackets are paired with a stack, so a file's
    caption may hold links; an unpaired "[[" or "]]" is dropped alone (no "[[" survives)."""
    parts = _LINK_SPLIT_RE.split(text)  # text, token, text, token, ..., text
    count = len(parts)
    partner = [0] * count  # for an opening token: index of its closing token; 0 if unclosed
    stack = []
    for k in range(1, count, 2):
        if parts[k] == "[[":
            stack.append(k)
        elif stack:
            partner[stack.pop()] = k
    out.append(parts[0])
    k = 1
    while k < count:
        close = partner[k]
        if not close:  # a stray "]]" or an unclosed "[["
            _append_after_cut(out, parts[k + 1] if parts[k] != "]]]" else "]" + parts[k + 1])
            k += 2
            continue
        nested = close != k + 2
        body = "".join(parts[k + 1 : close]) if nested else parts[k + 1]
        following = parts[close + 1]
        if parts[close] == "]]]":
            if body.count("[") > body.count("]"):
                body += "]"
            else:
                following = "]" + following
        emitted = len(out)
        used = _render_link(body, nested, following, out, targets, context, depth)
        if len(out) == emitted:  # the link vanished (file, category, ...): repair the cut
            _append_after_cut(out, following[used:])
        else:
            out.append(following[used:] if used else following)
        k = close + 2


def _render_link(body: str, nested: bool, following: str, out: list[str], targets: list[str], context, depth: int) -> int:
    """Render one link to `out`; return how many characters of `following` its link trail took."""
    kinds, trail_re = context
    target, bar, label = body.partition("|")
    if _INVALID_TARGET_RE.search(target):  # not a link: its text, without brackets
        _render_nested(body, nested, out, targets, context, depth)
        return 0
    written = target.strip()
    escaped = written.startswith(":")  # "[[:Category:X]]" links to the page instead of tagging
    title = written[1:].lstrip() if escaped else written
    kind = None
    colon = title.find(":")
    if colon > 0:
        kind = kinds.get(_prefix_key(title[:colon]))
        if kind == "self":
            title = title[colon + 1 :].lstrip()
            kind = None
        elif kind in ("file", "category", "lang") and not escaped:
            return 0  # dropped whole, caption and nested links included
    if nested:
        # A link inside a link's text is not valid MediaWiki; keep the text and the inner links.
        _render_nested(label if bar else title, True, out, targets, context, depth)
        return 0
    used = 0
    trail = ""
    if trail_re is not None and following:
        match = trail_re.match(following)
        if match:
            trail = match.group()
            used = match.end()
    if not bar:
        shown = target.replace(":", "", 1) if escaped else target
    elif label:
        shown = label
    else:
        shown = _pipe_trick(title, colon if kind else -1)
    shown += trail
    if "\n" in shown or "<" in shown:
        shown = _single_line(shown)
    normalised = normalise_title(title) if kind is None else ""
    if not normalised:  # another namespace, another wiki, or a same-page "#Section" link
        out.append(shown)
        return used
    core = shown.strip(" ")
    if not core:
        out.append(shown)
        return used
    if "  " in core:  # internal double spaces are the link's own text: protect them from collapsing
        core = _MULTI_SPACE_RE.sub(lambda m: _KEPT_SPACE * len(m.group()), core)
    # Edge spaces ("[[ foo ]]") go outside the anchor, where they collapse with their neighbours.
    before = " " if shown[0] == " " else ""
    after = " " if shown[-1] == " " else ""
    out.append("%s%s%d%s%s%s%s" % (before, _ANCHOR_OPEN, len(targets), _ANCHOR_INDEX_END, core, _ANCHOR_CLOSE, after))
    targets.append(normalised)
    return used


def _render_nested(text: str, nested: bool, out: list[str], targets: list[str], context, depth: int) -> None:
    """Text holding links that is not itself a link. Real pages nest a level or two at most; deeper
    (junk) is flattened to its text without anchors, which keeps the work linear and the stack small."""
    if not nested:
        out.append(text)
    elif depth < 2:
        _render_links_into(text, out, targets, context, depth + 1)
    else:
        out.append(_LINK_SPLIT_RE.sub("", text))


def _single_line(shown: str) -> str:
    """Link text stays on one line, so that no line-based pass can split an anchor."""
    if "<" in shown:
        shown = _HTML_TAG_RE.sub(_tag_in_link_text, shown)
    return shown.replace("\n", " ")


def _tag_in_link_text(match: re.Match) -> str:
    return " " if match.group(2) or match.group(3) else ""


def _pipe_trick(title: str, colon: int) -> str:
    """"[[Paris, Texas|]]" shows "Paris", "[[Mercury (planet)|]]" shows "Mercury" (MediaWiki expands
    this on save, so it is rare in dumps)."""
    if colon > 0:
        title = title[colon + 1 :]
    title = strip_qualifier(title)
    for comma in (", ", "，"):
        title = title.split(comma, 1)[0]
    return title


# ── 5. everything else ──

_URL_START = (
    r"(?:(?:https?|ftps?|irc|ircs|gopher|telnet|nntp|sftp|ssh|svn|git|mms|worldwind)://|//"
    r"|(?:mailto|news|xmpp|sips?|tel|urn|geo|magnet|bitcoin):)"
)
# The label stops at "[" too: with "[http://x" repeated and no "]", each try then stops at the next
# opener instead of scanning to the end of the line (quadratic).
_EXTERNAL_LINK_RE = re.compile(r"\[%s[^\s\[\]<>\"\x00-\x08\x1f]*(?:[ \t]+([^\[\]\n]*))?\]" % _URL_START, re.IGNORECASE)


def _external_link_label(match: re.Match) -> str:
    return match.group(1) or ""


# Attributes may not hold markers: a tag holding half an anchor is left alone rather than cut.
_HTML_TAG_RE = re.compile(
    r"<(/?)(?:(%s)|(br)|(?:%s))\b(?:\s[^<>\x00-\x08\x1f]*)?/?>" % (_BLOCK_TAGS, _INLINE_TAGS), re.IGNORECASE
)


def _html_tag_replacement(match: re.Match) -> str:
    if match.group(2):
        return "\n"
    if match.group(3):
        return " "
    return ""


_HEADING_RE = re.compile(r"\n(={1,6})[ \t]*([^\n]*?)[ \t]*\1[ \t]*(?=\n|\Z)")
_LIST_MARKER_RE = re.compile(r"\n(?:[*#:;]+|-{4,})[ \t]*")


def _heading_line(match: re.Match) -> str:
    return "\n%s%d%s" % (_HEADING, len(match.group(1)), match.group(2))


def _render_lines(text: str) -> str:
    """Headings -> "\\x07<level>text"; list markers, horizontal rules and behaviour switches dropped."""
    if "\n=" in text:
        text = _HEADING_RE.sub(_heading_line, text)
    text = _LIST_MARKER_RE.sub("\n", text)
    if "__" in text:
        text = _MAGIC_WORD_RE.sub("", text)
    return text


_QUOTE_SPLIT_RE = re.compile(r"('{2,})")


def _render_quotes(text: str) -> str:
    """Strip bold/italic quotes line by line (their state resets at each line end, as in MediaWiki);
    only lines holding "''" are touched. Bold runs before the first heading get \\x04...\\x05."""
    if "''" not in text:
        return text
    lead_end = text.find(_HEADING)
    if lead_end < 0:
        lead_end = len(text)
    pieces = []
    pos = 0
    while True:
        quotes = text.find("''", pos)
        if quotes < 0:
            break
        line_start = text.rfind("\n", pos, quotes) + 1 or pos
        line_end = text.find("\n", quotes)
        if line_end < 0:
            line_end = len(text)
        pieces.append(text[pos:line_start])
        pieces.append(_quotes_in_line(text[line_start:line_end], line_start < lead_end))
        pos = line_end
    pieces.append(text[pos:])
    return "".join(pieces)


def _quotes_in_line(line: str, mark_bold: bool) -> str:
    """MediaWiki's doQuotes: 2 quotes toggle italic, 3 bold, 5 both; 4 are an apostrophe and bold,
    more than 5 are apostrophes and bold-italic; if both counts are odd one bold is read as an
    apostrophe and italic (preferably one after a single-letter word: "l'''amour''")."""
    parts = _QUOTE_SPLIT_RE.split(line)
    italics = bolds = 0
    for k in range(1, len(parts), 2):
        run = len(parts[k])
        if run == 4:
            parts[k - 1] += "'"
            parts[k] = "'''"
        elif run > 5:
            parts[k - 1] += "'" * (run - 5)
            parts[k] = "'''''"
        run = len(parts[k])
        italics += run != 3
        bolds += run != 2
    if italics % 2 and bolds % 2:
        _bold_to_apostrophe_italic(parts)
    out = [parts[0]]
    bold = False
    for k in range(1, len(parts), 2):
        piece = parts[k + 1]
        if len(parts[k]) != 2:
            bold = not bold
            if mark_bold:
                piece = _bold_marker(out, piece, bold)
        out.append(piece)
    if bold and mark_bold:
        _bold_marker(out, "", False)
    return "".join(out)


def _bold_marker(out: list[str], piece: str, opening: bool) -> str:
    """Add a bold marker to `out`, with the spaces at the run's edges moved outside it (so they still
    collapse with their neighbours); return what is left of `piece`."""
    if opening:
        stripped = piece.lstrip(" ")
        out.append(piece[: len(piece) - len(stripped)])
        out.append(_BOLD_OPEN)
        return stripped
    previous = out[-1]
    stripped = previous.rstrip(" ")
    out[-1] = stripped
    out.append(_BOLD_CLOSE)
    out.append(previous[len(stripped) :])
    return piece


def _bold_to_apostrophe_italic(parts: list[str]) -> None:
    single_letter = multi_letter = after_space = -1
    for k in range(1, len(parts), 2):
        if len(parts[k]) != 3:
            continue
        before = parts[k - 1]
        if before[-1:] == " ":
            if after_space < 0:
                after_space = k
        elif before[-2:-1] == " " or len(before) == 1:
            single_letter = k
            break
        elif multi_letter < 0:
            multi_letter = k
    chosen = next((k for k in (single_letter, multi_letter, after_space) if k >= 0), -1)
    if chosen >= 0:
        parts[chosen - 1] += "'"
        parts[chosen] = "''"


_ENTITY_RE = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));")


def _decode_entity(match: re.Match) -> str:
    name = match.group(3)
    if name is not None:
        if name == "nbsp":
            return " "
        return html5.get(name + ";", match.group(0))
    code = int(match.group(1)) if match.group(1) else int(match.group(2), 16)
    if code in (0x09, 0x0A, 0x0D, 0xA0):  # whitespace in HTML: a space (and never a line break in a link)
        return " "
    # Control characters (which would pass for markers), surrogates and out-of-range stay literal.
    if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code > 0x10FFFF:
        return match.group(0)
    return chr(code)


_SPACES_RE = re.compile("  +")
_WORD_RE = re.compile(r"\w")
_EMPTY_MARKUP_RE = re.compile("\x01[0-9]+\x1f\x02|\x04\x05|\x06\x06")


def _tidy(text: str) -> str:
    """Collapse spaces, strip lines, drop empty lines and empty sections."""
    if "\x1f\x02" in text or "\x04\x05" in text or "\x06\x06" in text:
        text = _EMPTY_MARKUP_RE.sub("", text)
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACES_RE.sub(" ", text)
    # A line without a letter or digit is what removed markup left ("." after "* {{DMOZ|..}}.");
    # such lines are short, so only short lines pay for the regex.
    lines = [line for line in (line.strip(" ") for line in text.split("\n")) if len(line) > 8 or _WORD_RE.search(line)]
    if _HEADING in text:
        _drop_empty_sections(lines)
    return "\n".join(line for line in lines if line)


def _drop_empty_sections(lines: list[str]) -> None:
    """Blank out headings with no text under them before the next heading of the same or a higher
    level ("References" whose content was all templates), and strip the markers of the others."""
    content_below = [False] * 8  # by level: text seen (walking up) since a heading of that level or higher
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if line[0] != _HEADING:
            if not content_below[6]:
                content_below = [True] * 8
            continue
        level = int(line[1]) if line[1:2].isdigit() else 1
        heading = line[2:].strip(" ")
        lines[i] = heading if content_below[level] else ""
        for deeper in range(level, 8):
            content_below[deeper] = False


# ── 6. markers -> offsets ──

_MARKER_SPLIT_RE = re.compile("([\x01\x02\x04\x05\x06])")
_RESTORE = {ord(_KEPT_SPACE): " "}
_RESTORE_NOWIKI = {**_RESTORE, **_NOWIKI_RESTORE}


def _extract_markers(text: str, targets: list[str], is_disambiguation: bool, had_nowiki: bool) -> ParsedPage:
    parts = _MARKER_SPLIT_RE.split(text)  # text, marker, text, marker, ..., text
    spans = []  # (start, end, target index)
    bold_spans = []
    anchor_start = bold_start = -1
    anchor_index = 0
    length = len(parts[0])
    for k in range(1, len(parts), 2):
        marker = parts[k]
        if marker == _ANCHOR_OPEN:
            piece = parts[k + 1]
            index_end = piece.find(_ANCHOR_INDEX_END)
            anchor_index = int(piece[:index_end])
            parts[k + 1] = piece[index_end + 1 :]
            anchor_start = length
        elif marker == _ANCHOR_CLOSE:
            if anchor_start >= 0:
                spans.append((anchor_start, length, anchor_index))
            anchor_start = -1
        elif marker == _BOLD_OPEN:
            bold_start = length
        elif marker == _BOLD_CLOSE:
            if bold_start >= 0:
                bold_spans.append((bold_start, length))
            bold_start = -1
        length += len(parts[k + 1])
    plain = "".join(parts[::2]) if len(parts) > 1 else text
    if had_nowiki:
        plain = plain.translate(_RESTORE_NOWIKI)
    elif _KEPT_SPACE in plain:
        plain = plain.translate(_RESTORE)
    anchors = []
    for start, end, index in spans:
        # Spaces at a link's edges are not part of the name it shows.
        while start < end and plain[start].isspace():
            start += 1
        while end > start and plain[end - 1].isspace():
            end -= 1
        if start < end:
            anchors.append(Anchor(start, end, targets[index]))
    names = dict.fromkeys(name for name in (plain[s:e].strip() for s, e in bold_spans) if name)
    return ParsedPage(plain, tuple(anchors), tuple(names), is_disambiguation)
