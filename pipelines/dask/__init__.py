"""Beam on Dask: the bounded-memory local route and the cluster route (docs/scale_out.md)."""
