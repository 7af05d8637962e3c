"""The torch side of xlu-factory (DESIGN.md §3): reads only the Parquet written by the Beam jobs.

Never imports Beam, so that a training machine needs only the `train` extra.
"""
