"""What tests of corpora.wikitext.parse share: the invariants every parse keeps, and two small helpers."""
import os
from pathlib import Path

from corpora.titles import normalise_title
from corpora.wikitext.parse import ParsedPage, parse_wikitext

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("XLU_SHARED", REPO.parent / "shared")) / "data" / "wikipedia"


def check_invariants(page: ParsedPage) -> None:
    """What every parse must satisfy, whatever the input."""
    assert isinstance(page.text, str)
    previous_end = 0
    for anchor in page.anchors:
        shown = page.text[anchor.start : anchor.end]
        assert shown and shown == shown.strip(), anchor
        assert "\n" not in shown
        assert anchor.start >= previous_end, "anchors sorted and non-overlapping"
        previous_end = anchor.end
        assert anchor.target and normalise_title(anchor.target) == anchor.target
    for marker in "\x00\x01\x02\x03\x04\x05\x06\x07\x1f":
        assert marker not in page.text
    assert "\n\n" not in page.text and page.text == page.text.strip()


def parse(wikitext: str, lang: str = "en") -> ParsedPage:
    page = parse_wikitext(wikitext, lang)
    check_invariants(page)
    return page


def links(page: ParsedPage) -> list[tuple[str, str]]:
    return [(page.text[a.start : a.end], a.target) for a in page.anchors]
