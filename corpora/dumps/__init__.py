"""The bytes and pages of a MediaWiki dump: bz2 decoding, multistream byte ranges, the <siteinfo> head, pages."""
