"""The one place where the parser chooses between its Python passes and their compiled twins.

The parser's hottest passes are written twice: in Python, which defines them, and in
corpora/wikitext/compiled/, which `pip install` builds where Cython and a C compiler are at hand and
which gives the same output, byte for byte, faster (benchmarks/README.md). The twin of a pass in
corpora/wikitext/<module>.py has its name, in corpora/wikitext/compiled/<module>.pyx. Each module that
runs such a pass binds `chosen(its_python_pass)` once, at import; every call goes through that name.
The Python passes run when the twins were not built, or when XLU_PURE_PYTHON=1 asks for them (it also
makes corpora/dumps/decoding.py decompress with libbz2, its reference decoder).
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Callable, TypeVar

Pass = TypeVar("Pass", bound=Callable)

TWIN_MODULES = ("blocks", "links", "lines", "tidy", "parse")


def compiled_passes() -> dict[str, ModuleType] | None:
    """The compiled modules by the name of the module they twin; None when they are not built (all
    or none: one build makes them) or not wanted."""
    if os.environ.get("XLU_PURE_PYTHON") == "1":
        return None
    try:
        return {name: importlib.import_module(f"corpora.wikitext.compiled.{name}") for name in TWIN_MODULES}
    except ImportError:
        return None


COMPILED = compiled_passes()


def twin_of(python_pass: Callable) -> Callable:
    """The compiled twin of `python_pass` (AttributeError if it has none, KeyError if its module has none)."""
    return getattr(COMPILED[python_pass.__module__.rsplit(".", 1)[1]], python_pass.__name__)


def chosen(python_pass: Pass) -> Pass:
    """The function to run for `python_pass`: its compiled twin where the twins were built."""
    return python_pass if COMPILED is None else twin_of(python_pass)


def not_built_note() -> str:
    """What a job prints when the compiled passes are missing though nobody asked for the Python ones;
    "" otherwise."""
    if os.environ.get("XLU_PURE_PYTHON") == "1" or COMPILED is not None:
        return ""
    return ("note: the parser's compiled passes (corpora/wikitext/compiled/) are not built, so parsing "
            "runs slower (same output); reinstall with a C compiler at hand: pip install -e .")
