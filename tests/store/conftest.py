"""Fixtures shared by the store's tests."""

from __future__ import annotations

import pytest

from tracker.store.ingest import _known as known  # patched where it is looked up


@pytest.fixture(params=["usual chunks", "a chunk per row"])
def chunking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs the test twice: with the write path's own chunk size, and with every compact
    row its own chunk (each chunk's join and price changes sent while the next row is
    staged; tracker.store.ingest), so a scenario's answers cannot depend on the split."""
    if request.param == "a chunk per row":
        one_row_chunks(monkeypatch)


def one_row_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every compact row of a run its own chunk (tracker.store.ingest.chunk_rows)."""
    monkeypatch.setattr(known, "chunk_rows", lambda listed: 1)
