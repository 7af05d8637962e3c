"""Wikitext to plain text with anchors: the parser's passes (blocks, links, lines, tidy) and their compiled twins."""
