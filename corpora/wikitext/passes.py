"""Whether the parser runs its compiled passes (corpora/wikitext/compiled_passes.pyx) or the Python ones.

`pip install` builds them where Cython and a C compiler are at hand; they give the same output as
the Python passes they replace, byte for byte, at about 1.9 times the parser's speed. The Python passes
stay the reference and run when the module was not built, or when XLU_PURE_PYTHON=1 asks for them
(it also makes corpora/dumps/decoding.py decompress with libbz2, its reference decoder).
"""
from __future__ import annotations

import os
from types import ModuleType


def compiled_passes() -> ModuleType | None:
    if os.environ.get("XLU_PURE_PYTHON") == "1":
        return None
    try:
        from corpora.wikitext import compiled_passes as wikitext_speedups
    except ImportError:
        return None
    return wikitext_speedups


def not_built_note() -> str:
    """What a job prints when the compiled passes are missing though nobody asked for the Python ones;
    "" otherwise."""
    if os.environ.get("XLU_PURE_PYTHON") == "1" or compiled_passes() is not None:
        return ""
    return ("note: the parser's compiled passes (corpora/wikitext/compiled_passes.pyx) are not built, so parsing "
            "runs about 1.9x slower (same output); reinstall with a C compiler at hand: pip install -e .")
