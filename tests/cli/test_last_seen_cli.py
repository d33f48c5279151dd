"""``last_seen`` in the CLI's JSON (``offers``, ``history``): keys and meaning kept (issue 17).

The store is filled through the real runner at fixed times, then read through the real
entry point; expected times are worked out from the runs, in comments.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.conftest import Run
from tests.store.test_last_seen import od, partial, run_scoped
from tracker.store.engine import make_engine

T0 = datetime(2026, 4, 1, tzinfo=UTC)
H = timedelta(hours=1)


def test_offers_and_history_json_read_the_last_sighting(cli: Run, db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        eu = [od("a", region="eu-west-1"), od("b", region="eu-west-1")]
        run_scoped(engine, [od("a"), od("b"), *eu], T0)
        run_scoped(engine, [od("a"), od("b"), *eu], T0 + H)
        # T0+2h: us "b" gone (delisted at T0+2h); eu-west-1 failed, only eu "a" came back.
        run_scoped(engine, [od("a"), eu[0]], T0 + 2 * H, before=partial("eu-west-1"))
        run_scoped(engine, [od("a"), od("b", "2.20")], T0 + 3 * H, before=partial("eu-west-1"))
    finally:
        engine.dispose()
    proc = cli("offers", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    seen = {(r["instance_type"], r["region"]): r["last_seen"] for r in json.loads(proc.stdout)}
    assert seen == {
        ("a", "us-east-1"): "2026-04-01T03:00:00Z",  # every run saw it: T0+3h
        ("b", "us-east-1"): "2026-04-01T03:00:00Z",  # relisted at 2.20 by the T0+3h run
        ("a", "eu-west-1"): "2026-04-01T02:00:00Z",  # partial at T0+3h, not seen: T0+2h
        ("b", "eu-west-1"): "2026-04-01T01:00:00Z",  # last complete eu run saw it: T0+1h
    }
    proc = cli("history", "-p", "testcloud", "-i", "b", "-r", "us-east-1", "--since",
               "2026-03-01", "--format", "json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    points = [(p["price_per_hour"], p["last_seen"], p["ended_at"]) for p in json.loads(proc.stdout)]
    # 2.00 seen at T0 and T0+1h, ended by the delisting at T0+2h; 2.20 opened at T0+3h.
    assert points == [
        ("2", "2026-04-01T01:00:00Z", "2026-04-01T02:00:00Z"),
        ("2.2", "2026-04-01T03:00:00Z", None),
    ]
