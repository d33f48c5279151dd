"""What a digest says, and how far a cursor may move while a run is still writing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.listed_collector import collect
from tracker.alerts.cursor import safe_ids
from tracker.alerts.digest import build_digest, id_ranges
from tracker.store.outbox import DueDelivery
from tracker.store.runs import start_run


def due(alert_id: int, kind: str, title: str, **details: Any) -> DueDelivery:
    return DueDelivery(
        alert_id, alert_id, "slack", 0, "r", kind, "s", title, {"kind": kind, **details},
        datetime(2026, 3, 1, tzinfo=UTC),
    )  # fmt: skip


def test_the_subject_says_what_changed() -> None:
    price = {"provider": "aws", "instance_type": "p5", "region": "us-east-1", "new": "1.00"}
    digest = build_digest(
        [
            due(1, "price_change", "a", change_pct="-10.00", **price),
            due(2, "price_change", "b", change_pct="-30.00", **price),
            due(3, "price_change", "c", change_pct="-5.00", **price),
            due(
                7,
                "ranking_change",
                "best for llm-7b-lora now gcp a2-ultragpu-1g (was aws p4d.24xlarge)",
                event="leader",
            ),
        ],
        rows=2,
    )
    # A new leader first, then the drops (one headline part per kind).
    assert digest.subject == (
        "[gpu-tracker] best for llm-7b-lora now gcp a2-ultragpu-1g, 3 price drops"
    )
    # The leader line first (its group leads), then the largest drop; the -10 % and
    # -5 % ones are counted: 4 alerts, 2 shown, "and 2 more".
    assert [i.alert_ids for i in digest.shown] == [(7,), (2,)]
    assert digest.more == 2
    assert digest.ids_text == "alert ids 1-3, 7"


def test_id_ranges() -> None:
    assert id_ranges([5]) == "5"
    assert id_ranges([3, 1, 2, 9, 10, 12]) == "1-3, 9-10, 12"


def test_cursor_waits_for_a_run_still_in_progress(sqlite_engine: Engine) -> None:
    now = datetime.now(UTC)
    collect(sqlite_engine, [offer("a", "1.00")], now - timedelta(hours=1))
    current, safe, stored = safe_ids(sqlite_engine, now - timedelta(minutes=20), None)
    assert safe == current  # nothing running: every id so far is committed
    # A run starts 10 minutes ago and is still writing; meanwhile another commits.
    start_run(
        sqlite_engine,
        provider="slow",
        source="slow",
        scope="all",
        started=now - timedelta(minutes=10),
    )
    collect(sqlite_engine, [offer("a", "1.00"), offer("b", "2.00")], now - timedelta(minutes=5))
    later, safe, stored = safe_ids(sqlite_engine, now, stored)
    assert later["series"] == current["series"] + 1
    # The cursor may only move to the checkpoint taken before the slow run started.
    assert safe == current
    assert [c[1] for c in json.loads(stored)] == [current, later]
