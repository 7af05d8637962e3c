"""The one place where the parser chooses between its Python passes and their compiled twins.

The parser's hottest passes are written twice: in Python, which defines them, and in
corpora/wikitext/compiled_passes.pyx, which `pip install` builds where Cython and a C compiler are at
hand and which gives the same output, byte for byte, faster (benchmarks/README.md). Each module that
runs such a pass binds `chosen(its_python_pass)` once, at import; every call goes through that name.
The Python passes run when the twin was not built, or when XLU_PURE_PYTHON=1 asks for them (it also
makes corpora/dumps/decoding.py decompress with libbz2, its reference decoder).
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import Callable, TypeVar

Pass = TypeVar("Pass", bound=Callable)


def compiled_passes() -> ModuleType | None:
    if os.environ.get("XLU_PURE_PYTHON") == "1":
        return None
    try:
        from corpora.wikitext import compiled_passes as twins
    except ImportError:
        return None
    return twins


COMPILED = compiled_passes()


def chosen(python_pass: Pass) -> Pass:
    """The function to run for `python_pass`: its compiled twin of the same name where it was built."""
    return python_pass if COMPILED is None else getattr(COMPILED, python_pass.__name__)


def not_built_note() -> str:
    """What a job prints when the compiled passes are missing though nobody asked for the Python ones;
    "" otherwise."""
    if os.environ.get("XLU_PURE_PYTHON") == "1" or COMPILED is not None:
        return ""
    return ("note: the parser's compiled passes (corpora/wikitext/compiled_passes.pyx) are not built, so parsing "
            "runs slower (same output); reinstall with a C compiler at hand: pip install -e .")
