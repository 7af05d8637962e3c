"""The fixture counting reads that fall back to libbz2, shared by the decoder tests (a module of its own:
a conftest.py here would shadow tests/conftest.py, which test modules import by name)."""
from __future__ import annotations

import pytest

from corpora.dumps import decoding as dump_bytes


@pytest.fixture
def reference_calls(monkeypatch) -> list:
    """The reads that fall back to libbz2 (the reference decoder), with their arguments."""
    calls, reference = [], dump_bytes.libbz2_chunks

    def counted(*args, **kwargs):
        calls.append(args[1:])
        return reference(*args, **kwargs)

    monkeypatch.setattr(dump_bytes, "libbz2_chunks", counted)
    return calls
