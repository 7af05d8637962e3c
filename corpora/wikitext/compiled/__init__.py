"""Compiled twins of the parser's hottest passes (corpora/wikitext/parse.py), for speed only: one module
here per Python module whose passes it twins (blocks, links, lines, tidy, parse).

Each function in these modules gives exactly what the Python function it names gives, byte for byte: the Python
modules stay the reference and the fallback (no compiler, `XLU_PURE_PYTHON=1`), and
tests/corpora/wikitext/test_wikitext_speedups.py parses every page of the real excerpts both ways and compares.

Only the common case is compiled. Whatever is rare or intricate (a namespace prefix, a nested link, an
entity in a title, a cut to repair) is handed to the Python code that handles it, so the compiled
code holds no rule of its own that could drift from the reference.
"""
