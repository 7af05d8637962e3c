"""Seeded randomness keyed by what a choice is about, never by iteration order (docs/design.md §6).

Beam may deliver elements in any order and split work across any number of workers, so a random
choice must be a pure function of (seed, stable key). Python's `hash()` is salted per process and
cannot be used; blake2b is stable across processes, machines and Python versions.
"""
from __future__ import annotations

import hashlib
import random


def stable_hash(*parts: object) -> int:
    """A 64-bit integer that depends only on the parts' text, identical on every worker."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def keyed_rng(seed: int, *key: object) -> random.Random:
    """A private generator for one keyed decision (e.g. one mention's answer position)."""
    return random.Random(stable_hash(seed, *key))
