"""How a re-collection splits its compact rows into chunks (tracker.store.ingest)."""

from __future__ import annotations

import pytest

from tracker.store.ingest import CHUNK_ROWS, chunk_rows


@pytest.mark.parametrize(
    ("listed", "rows"),
    [
        # 200,000 / 50,000 = 4 chunks; 200,000 / 4.5 = 44,444.4 -> 44,445, so four chunks
        # hold 177,780 and the last, waited-for one 22,220 (half of one).
        (200_000, 44_445),
        # 1,000,000 / 50,000 = 20 chunks, capped at 8: 1,000,000 / 8.5 = 117,647.06 ->
        # 117,648 (eight hold 941,184; the last 58,816).
        (1_000_000, 117_648),
        # 25,000 rounds to no full chunk: one of 25,000 / 1.5 = 16,666.7 -> 16,667 while
        # staging, the last 8,333 at the end.
        (25_000, 16_667),
        # A first collection lists nothing: no compact row, the default size.
        (0, CHUNK_ROWS),
    ],
)
def test_the_last_chunk_is_half_the_others(listed: int, rows: int) -> None:
    assert chunk_rows(listed) == rows
