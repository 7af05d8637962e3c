"""corpora/wikitext/compiled/ against the Python passes it replaces: the same output, byte for byte.

Every page of the real excerpts and of the bundled samples is parsed both ways; each compiled step is
also fed random text made of the characters its rules turn on, and must give what its Python twin
gives (or raise what it raises)."""
import random
import re
import sys
from types import SimpleNamespace

import pytest

from corpora.wikitext import passes as compiled_passes  # noqa: I001
from corpora.wikitext import parse as wikitext
from corpora.wikitext import blocks as wikitext_blocks
from corpora.wikitext import lines as wikitext_lines
from corpora.wikitext import links as wikitext_links
from corpora.wikitext import tidy as wikitext_tidy
from corpora.dumps.pages import RawPage, iter_pages_from_file, sample_dump_paths
from corpora.wiki.languages import wiki_language
from corpora.wikitext.parse import parse_wikitext
from wikitext_checks import SHARED

compiled_modules = compiled_passes.compiled_passes()
if compiled_modules is None:
    # CI installs the package with its build step: a missing module there is a broken build.
    if "CI" in __import__("os").environ and not __import__("os").environ.get("XLU_PURE_PYTHON"):
        raise RuntimeError("corpora.wikitext.compiled was not built: `pip install -e .` needs Cython and a C compiler")
    pytest.skip("corpora.wikitext.compiled not built (pure-Python install)", allow_module_level=True)


def public_functions(module) -> dict:
    return {name: function for name, function in vars(module).items()
            if re.fullmatch(r"[a-z][a-z_]*", name) and callable(function) and getattr(function, "__module__", None) == module.__name__}


# Every twin by its name, whichever module holds it.
speedups = SimpleNamespace(**{name: function for module in compiled_modules.values()
                              for name, function in public_functions(module).items()})


COMPILING_MODULES = (wikitext, wikitext_blocks, wikitext_lines, wikitext_tidy)  # each binds its passes at import


def pass_bindings(module):
    """A module's `_<pass>_pass` names, each with the Python pass it was chosen for."""
    return {name: getattr(module, name[1:-len("_pass")]) for name in dir(module)
            if name.startswith("_") and name.endswith("_pass") and not name.startswith("__")}


def outcome(function, *args):
    try:
        return function(*args)
    except Exception as error:  # the twins must fail alike too
        return type(error)


def parsed_both_ways(monkeypatch, pages):
    compiled = [parse_wikitext(text, language, title) for language, title, text in pages]
    for module in COMPILING_MODULES:
        for name, python_pass in pass_bindings(module).items():
            monkeypatch.setattr(module, name, python_pass)
    python = [parse_wikitext(text, language, title) for language, title, text in pages]
    return compiled, python


def dump_pages(path, code):
    language = wiki_language(code)
    with open(path, "rb") as stream:
        return [(language, page.title, page.text) for page in iter_pages_from_file(stream, str(path), "bz2")
                if isinstance(page, RawPage)]


REAL_DUMPS = sorted(SHARED.glob("*wiki-*.xml.bz2")) if SHARED.exists() else []


@pytest.mark.skipif(not REAL_DUMPS, reason=f"no real dumps in {SHARED}")
@pytest.mark.parametrize("path", REAL_DUMPS, ids=lambda path: path.name.split(".")[0])
def test_real_pages_parse_the_same(monkeypatch, path):
    pages = dump_pages(path, path.name.split("wiki-")[0])
    compiled, python = parsed_both_ways(monkeypatch, pages)
    differing = [title for (_, title, _), a, b in zip(pages, compiled, python) if a != b]
    assert pages and not differing


def test_sample_pages_parse_the_same(monkeypatch):
    pages = [page for code, path in sample_dump_paths().items() for page in dump_pages(path, code)]
    compiled, python = parsed_both_ways(monkeypatch, pages)
    assert compiled == python


# ── each step on random text ──

LINK_PIECES = ["[[", "]]", "]]]", "]", "[", "|", ":", "File:", "Category:", "fr:", "en:", "#", "&amp;", "%20", "_",
               "<b>", "\n", " ", "  ", "\t", "\u00a0", "\u200e", "a", "bus", "es", "é", "ß", "ǅ", "日本", "Σ", "ﬀ",
               "http://x.org", "{{", "}}", "'", "thumb", ".jpg", "x (y)", ",", "."]


def random_text(rng, pieces, length):
    return "".join(rng.choice(pieces) for _ in range(length))


@pytest.mark.parametrize("code", ["en", "de", "tr", "ca", "ja", "hy"])
def test_links_on_random_text(code):
    """Link trails of several shapes (tr's "'(?!')", ca's "·"), every prefix kind, nesting, strays."""
    language = wiki_language(code)
    rng = random.Random(code)
    for _ in range(3000):
        text = random_text(rng, LINK_PIECES, rng.randint(1, 30))
        assert outcome(speedups.render_internal_links, text, language) == outcome(
            wikitext_links.render_internal_links, text, language), repr(text)


@pytest.mark.slow
def test_link_title_first_letter_for_every_character():
    """The compiled title case: which first letters upper_first changes, across all of Unicode."""
    language = wiki_language("de")
    characters = [chr(code) for code in range(0x80, sys.maxunicode + 1)
                  if not (0xD800 <= code <= 0xDFFF) and not chr(code).isspace() and chr(code) not in "|[]{}<>:#&%_"]
    for start in range(0, len(characters), 20000):
        text = "".join("[[%sx]] " % char for char in characters[start : start + 20000])
        assert speedups.render_internal_links(text, language) == wikitext_links.render_internal_links(text, language)


MARKER_PIECES = ["\x01", "\x1f", "\x02", "\x03", "\x04", "\x05", "\x06", "0", "1", "12", "a", " ", "  ", "\n", "\t",
                 "é", "日", "\U0001f600", "x"]


def test_markers_on_random_text():
    targets = ["T%d" % n for n in range(13)]
    rng = random.Random(6)
    for _ in range(20000):
        text = random_text(rng, MARKER_PIECES, rng.randint(0, 25))
        assert outcome(speedups.plain_text_and_anchors, text, targets) == outcome(
            wikitext.plain_text_and_anchors, text, targets), repr(text)


def test_markers_as_the_link_pass_writes_them():
    """Well-formed marks, which the random text above rarely makes: anchors, bold runs, edges."""
    rng = random.Random(7)
    words = ["a", " ", "b c", "\u3000", "é", "日本", "\n", "\x06", "\x03", " \x03 "]
    for _ in range(5000):
        targets, pieces = [], []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.4:
                pieces.append("\x01%d\x1f%s\x02" % (len(targets), random_text(rng, words, rng.randint(0, 3))))
                targets.append("T%d" % len(targets))
            elif kind < 0.6:
                pieces.append("\x04%s\x05" % random_text(rng, words, rng.randint(0, 3)))
            else:
                pieces.append(random_text(rng, words, rng.randint(1, 4)))
        text = "".join(pieces)
        assert speedups.plain_text_and_anchors(text, targets) == wikitext.plain_text_and_anchors(text, targets)


TIDY_PIECES = ["\x01", "\x1f", "\x02", "\x04", "\x05", "\x06", "1", "23", " ", "  ", "\t", "\n", ",", ";", ":", "，",
               "；", "：", "、", "\u3000", "\u00a0", "a", "é", "_", "٣", "½", "日", ".", "|", "\U00010400"]


QUOTE_PIECES = ["'", "''", "'''", "''''", "'''''", "''''''", "a", "l", " ", "\n", "\x07", "é", "日", "ab "]


def test_quotes_on_random_text():
    """Runs of every length, odd counts of both kinds, single-letter words; in the lead and after it."""
    rng = random.Random(5)
    for _ in range(20000):
        text = random_text(rng, QUOTE_PIECES, rng.randint(0, 16))
        for mark_bold in (True, False):
            assert speedups.quotes_in_line(text, mark_bold) == wikitext_lines.quotes_in_line(text, mark_bold), repr(text)


RESIDUE_PIECES = ["(", ")", "[", "]", "（", "［", " ", ";", ",", ":", "\x06", "a", ".", "）", "日"]


def test_residue_pairs_on_random_text():
    rng = random.Random(4)
    for _ in range(20000):
        text = random_text(rng, RESIDUE_PIECES, rng.randint(0, 6))
        assert speedups.has_residue_pair(text) == wikitext_tidy.has_residue_pair(text), repr(text)


RESIDUE_REPAIR_PIECES = RESIDUE_PIECES + ["［", "］", "（", "（", "；", "，", "、", "：", "/", "–", "—", "-", "\x1f",
                                          "\u3000", "()", "[]", "x", "_", "f()", "a[]", ", , , , , , , , )"]


def test_residue_repair_on_random_text():
    """Every alternative of _RESIDUE_RE, at its edges: a pair kept after an identifier, eight
    separators before a bracket and nine, spaces the class reads and nowiki edges it does not."""
    rng = random.Random(8)
    for _ in range(30000):
        text = random_text(rng, RESIDUE_REPAIR_PIECES, rng.randint(0, 14))
        assert speedups.without_residue(text) == wikitext_tidy.without_residue(text), repr(text)


def test_space_before_punctuation_on_random_text():
    rng = random.Random(9)
    pieces = [" ", "  ", "   ", ",", ";", ".", ":", ")", "(", "\n", "\t", "\u3000", "\x1f", "a", "é", "日", "!"]
    for _ in range(30000):
        text = random_text(rng, pieces, rng.randint(0, 12))
        assert speedups.without_space_before_punctuation(text) == wikitext_tidy.without_space_before_punctuation(text), repr(text)


def test_list_markers_on_random_text():
    rng = random.Random(10)
    pieces = ["\n", "*", "#", ":", ";", "-", "--", "----", " ", "\t", "a", "é", "日", "\U00010400", "=", "\n\n"]
    for _ in range(30000):
        text = random_text(rng, pieces, rng.randint(0, 14))
        assert speedups.without_list_markers(text) == wikitext_lines.without_list_markers(text), repr(text)


@pytest.mark.parametrize("step", ["without_empty_markup_and_spaces", "without_doubled_separators", "worded_lines"])
def test_tidy_steps_on_random_text(step):
    rng = random.Random(step)
    for _ in range(20000):
        text = random_text(rng, TIDY_PIECES, rng.randint(0, 30))
        assert getattr(speedups, step)(text) == getattr(wikitext_tidy, step)(text), repr(text)


OPAQUE_PIECES = ["<!--", "-->", "<!-", "<ref>", "</ref>", "<ref name=x/>", "<REF >", "</Ref\t>", "</ref", "<ref", "<refs>",
                 "<math>", "</math>", "<math display=\"block\">", "~", "x^2", "<nowiki>", "</nowiki>", "<nowiki/>",
                 "<ſection>", "</ſection>", "<İncludeonly>", "</includeonly>", "<section\u3000/>", "</SECTİON>", "<\u212amaplink/>", "<br>", "<", ">", "/",
                 " ", "\n", "a", "'", "''", "(", ")", ",", ";", ":", ".", "&lt;", "<references/>", "é", "日"]


def test_comments_and_extension_tags_on_random_text():
    """Openers and closers of every case (and the non-ASCII letters `re` matches to ASCII ones),
    unclosed ones, comments inside tags and tags inside comments, the content math and nowiki show."""
    rng = random.Random(2)
    for _ in range(20000):
        text = random_text(rng, OPAQUE_PIECES, rng.randint(0, 14))
        assert outcome(speedups.drop_comments_and_extension_tags, text) == outcome(
            wikitext_blocks.drop_comments_and_extension_tags, text), repr(text)


BRACE_PIECES = ["{{", "}}", "{", "}", "}}}", "{{{", "\n", "{|", "|}", "|}}", " ", "\t", ":", "|", "a", "é", "日"]


def test_template_spans_on_random_text():
    rng = random.Random(3)
    for _ in range(20000):
        text = random_text(rng, BRACE_PIECES, rng.randint(0, 30))
        assert speedups.template_and_table_spans(text) == wikitext_blocks.template_and_table_spans(text), repr(text)


def test_every_pass_runs_its_compiled_twin():
    """Each module runs the twin chosen in corpora/wikitext/passes.py, none its Python pass directly."""
    bound = {name: (module, python_pass) for module in COMPILING_MODULES for name, python_pass in pass_bindings(module).items()}
    assert len(bound) == 12
    for name, (module, python_pass) in bound.items():
        assert getattr(module, name) is getattr(speedups, python_pass.__name__), name


def test_pure_python_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.setenv("XLU_PURE_PYTHON", "1")
    assert compiled_passes.compiled_passes() is None
    monkeypatch.delenv("XLU_PURE_PYTHON")
    assert compiled_passes.compiled_passes() == compiled_modules


def test_compiled_module_has_a_twin_for_every_step():
    """Each public function of a compiled module names the Python function it replaces, in the module
    of the same name."""
    twins = {"render_internal_links": wikitext_links, "plain_text_and_anchors": wikitext,
             "without_empty_markup_and_spaces": wikitext_tidy, "without_doubled_separators": wikitext_tidy,
             "worded_lines": wikitext_tidy, "template_and_table_spans": wikitext_blocks,
             "has_residue_pair": wikitext_tidy, "quotes_in_line": wikitext_lines,
             "drop_comments_and_extension_tags": wikitext_blocks, "without_residue": wikitext_tidy,
             "without_space_before_punctuation": wikitext_tidy, "without_list_markers": wikitext_lines}
    public = {name: module_name for module_name, module in compiled_modules.items() for name in public_functions(module)}
    assert public == {name: module.__name__.rsplit(".", 1)[1] for name, module in twins.items()}
    assert all(callable(getattr(module, name)) for name, module in twins.items())


def test_the_job_says_when_the_parser_runs_without_its_compiled_passes(monkeypatch, capsys):
    """A user whose install could not compile them learns it, and how to mend it."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines import common, wiki_mrc

    opts = common.job_options(PipelineOptions([]), wiki_mrc.WikiMrcOptions, "wiki_mrc")
    wiki_mrc.plan(opts)
    assert "compiled passes" not in capsys.readouterr().err
    monkeypatch.setattr(compiled_passes, "COMPILED", None)
    wiki_mrc.plan(opts)
    assert "pip install -e ." in capsys.readouterr().err
    monkeypatch.setenv("XLU_PURE_PYTHON", "1")  # asked for: nothing to mend
    wiki_mrc.plan(opts)
    assert "compiled passes" not in capsys.readouterr().err
