"""tracker.unreadable: a stored row the model refuses is counted on every read and
logged once per process (a dashboard reads the same rows on every request)."""

from __future__ import annotations

import logging

import pytest

from tracker.models import InvalidOffer
from tracker.unreadable import offer_key_text, skip_unreadable, unreadable_count


def test_counted_every_time_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    problem = InvalidOffer("memory_gib", "must be > 0, got 0E-10")
    before = unreadable_count()
    with caplog.at_level(logging.WARNING, logger="tracker.unreadable"):
        for _ in range(3):
            skip_unreadable("offer", "test-unreadable/x1", problem)
        skip_unreadable("offer", "test-unreadable/x2", problem)
    assert unreadable_count() - before == 4
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0] == (
        "stored offer test-unreadable/x1 skipped: it fails validation (memory_gib: must be > 0, "
        "got 0E-10); correct it, or re-import its source with --full"
    )


def test_an_offer_key_leaves_out_empty_parts() -> None:
    row = {"provider": "acme", "instance_type": "a1", "region": "us", "zone": "",
           "pricing": "spot", "payment_option": "", "offering_class": None, "os": "linux"}  # fmt: skip
    assert offer_key_text(row.get) == "acme/a1/us/spot/linux"
