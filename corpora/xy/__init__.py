"""XY-LENT data: the VoCAP vocabulary, Sinkhorn pair sampling and the token-id shards."""
