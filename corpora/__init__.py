"""Plain-Python text logic shared by the Beam jobs: dump readers, wikitext parsing, tokenisers, schemas.

Nothing in this package imports Beam, so every piece is unit-tested directly.
"""
