"""What a template renderer is, and the small renderers every table of them uses
(corpora/wikitext/templates/inline.py, corpora/wikitext/templates/local.py, corpora/wikitext/templates/italian.py)."""
from __future__ import annotations

from collections.abc import Callable

# (positional arguments, named arguments) -> the text the template shows
Renderer = Callable[[list[str], dict[str, str]], str]


def arg(positional: list[str], k: int, default: str = "") -> str:
    return positional[k] if len(positional) > k else default


def const(text: str) -> Renderer:
    return lambda positional, named: text


def first(positional, named) -> str:
    return arg(positional, 0)


def second(positional, named) -> str:
    return arg(positional, 1)


def last(positional, named) -> str:
    return positional[-1] if positional else ""
