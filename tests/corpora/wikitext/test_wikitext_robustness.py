"""corpora.wikitext.parse on malformed and pathological input: it degrades gracefully and stays linear."""
import gc
import time

import pytest

from corpora.wikitext.parse import parse_wikitext
from wikitext_checks import links, parse


# ─────────────────────────── malformed input ───────────────────────────


@pytest.mark.parametrize(
    "wikitext, expected_text, expected_links",
    [
        ("a {{unclosed [[Link]] b", "a unclosed Link b", ["Link"]),
        ("a {{x}} }} b ]] c", "a b c", []),
        ("a [[unclosed link and [[Real]] b", "a unclosed link and Real b", ["Real"]),
        ("a <ref>never closed [[Link]] b", "a never closed Link b", ["Link"]),
        ("a <ref name=x> b <ref>c</ref> d", "a d", []),  # the first </ref> closes the first <ref>
        ("a\n{|\n| cell [[In]]\nno end", "a", []),
        ("a <!-- never closed [[X]]", "a", []),
        ("a [[Foo|b [[Bar]] c]] d", "a b Bar c d", ["Bar"]),
        ("a [[<bad>|x]] b", "", []),  # MediaWiki shows "[[<bad>|x]]"; a line holding a pipe goes
        ("a [[]] b [[|x]] c", "a b x c", []),
        ("''' '' ''''' a", "a", []),
        ("a &#1; &bogus; &#xD800; b", "a &#1; &bogus; &#xD800; b", []),
        ("a \x01\x02\x07\x1f b", "a b", []),
        ("{{{{{{", "", []),
        ("", "", []),
    ],
)
def test_malformed_markup_degrades_gracefully(wikitext, expected_text, expected_links):
    page = parse(wikitext)
    assert page.text == expected_text
    assert [t for _, t in links(page)] == expected_links
    for leftover in ("{{", "[[", "]]", "<ref"):
        assert leftover not in page.text


JUNK_BYTES = 400_000  # with a quarter of it, enough to tell linear (4x) from quadratic (16x)
JUNK_UNITS = [
    "{{{{[[", "[[{{", "<ref>", "<ref name=x>[[a|", "<!--", "{|\n", "|}\n", "'" * 4, "[[a|b]]]]",
    "[http://x ", "\n==x", "[[<", "[[File:x|", "&#", "<span ", "{{a|", "-{",
    "a|", "x|5px|", "( , ", ", ; ", "(''{{x}}'') ", "1{{ndash}}", "{{lang|x|", "{{nowrap|{{ndash}}", "x {{IPA|a}} (",
]
JUNK = {
    **{unit: unit * (JUNK_BYTES // len(unit)) for unit in JUNK_UNITS},
    "nested links": "[[a|" * (JUNK_BYTES // 8) + "]]" * (JUNK_BYTES // 8),
    "nested invalid links": "[[<" * (JUNK_BYTES // 5) + "]]" * (JUNK_BYTES // 5),
    "nested templates": "{{a|" * (JUNK_BYTES // 6) + "}}" * (JUNK_BYTES // 6),
    "one long heading line": "=" + "x" * JUNK_BYTES,
}


def cpu_seconds_to_parse(wikitext: str):
    """CPU time of one parse, with Python's cyclic GC off: a full collection that falls inside it
    walks everything earlier tests left in this worker's heap, which is not the parser's cost."""
    gc.disable()
    try:
        started = time.process_time()
        page = parse_wikitext(wikitext, "zh")  # zh also runs the -{ }- conversion pass
        return time.process_time() - started, page
    finally:
        gc.enable()


@pytest.mark.parametrize("name", list(JUNK))
def test_pathological_input_stays_linear(name):
    """A quarter of the input against all of it, back to back (so both see the same machine load):
    linear parsing takes ~4x as long on the whole, quadratic ~16x; the bound, 5x plus 0.1 s, fails a
    quadratic term once it costs ~0.4x the linear work at 400 KB (~1.5x at 1 MB). An absolute bound
    alone failed on a loaded 2-core machine (2.2 s where the parse of 1 MB takes 1.0 s alone)."""
    whole = JUNK[name]
    quarter = whole[: len(whole) // 4]
    if name.startswith("nested"):  # the nesting is the point: a quarter of each half
        half = len(whole) // 2
        quarter = whole[: half // 4] + whole[half: half + half // 4]
    small, _ = cpu_seconds_to_parse(quarter)
    elapsed, page = cpu_seconds_to_parse(whole)
    if elapsed >= 5 * small + 0.1:  # once more, in case the other test worker took the core meanwhile
        small = min(small, cpu_seconds_to_parse(quarter)[0])
        elapsed = min(elapsed, cpu_seconds_to_parse(whole)[0])
    size = f"{len(whole) / 1000:.0f} KB"
    assert elapsed < 5 * small + 0.1, f"{elapsed:.2f}s on {size} of {name!r}, {small:.2f}s on a quarter"
    assert elapsed < 5.0, f"{elapsed:.1f}s on {size} of {name!r}"
    for leftover in ("{{", "[[", "]]", "<ref"):
        assert leftover not in page.text
