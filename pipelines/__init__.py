"""Beam jobs: each module is options + a few composite PTransforms over `corpora` + `run(argv)`."""
