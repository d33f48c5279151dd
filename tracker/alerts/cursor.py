"""How far rules may move their cursors without skipping a change still being written.

Ids are allocated when a row is inserted, not when its transaction commits: while a
long collection is still running, a shorter one can commit rows with higher ids.
A cursor moved to "the highest id now" would then pass the long run's rows for
good. So each evaluation records a checkpoint (time, highest ids), and a cursor
moves only to the last checkpoint taken before the oldest run still in progress
started: every row committed later has a higher id than that checkpoint's. Rows
scanned twice are harmless (the outbox's dedupe key).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from tracker.store import Engine, outbox

__all__ = ["GLOBAL_RULE", "safe_ids"]

GLOBAL_RULE = "@global"
CHECKPOINTS = "@checkpoints"
MARGIN = timedelta(seconds=60)
"""Clock skew allowed between replicas writing run start times."""
STUCK = timedelta(hours=6)
"""A ``running`` run older than this belongs to a process that died."""
MAX_CHECKPOINTS = 500


def safe_ids(
    engine: Engine, now: datetime, stored: str | None
) -> tuple[dict[str, int], dict[str, int] | None, str]:
    """(current highest ids, the ids cursors may move to or None, new checkpoints JSON)."""
    current = outbox.latest_ids(engine)
    checkpoints: list[tuple[str, dict[str, int]]] = [tuple(c) for c in json.loads(stored or "[]")]  # type: ignore[misc]
    checkpoints.append((now.isoformat(), current))
    oldest = outbox.oldest_running_start(engine, now - STUCK)
    if oldest is None:
        return current, current, json.dumps([[now.isoformat(), current]])
    limit = oldest - MARGIN
    before = [c for c in checkpoints if datetime.fromisoformat(c[0]) < limit]
    after = [c for c in checkpoints if datetime.fromisoformat(c[0]) >= limit]
    safe = before[-1][1] if before else None
    kept = ([before[-1]] if before else []) + after[-MAX_CHECKPOINTS:]
    return current, safe, json.dumps([list(c) for c in kept])
