"""The alerts list: recent alerts and their delivery status (``alerts list``,
``/api/v1/alerts``, the Alerts page), as the documented JSON rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tracker.store.alerts import AlertRow, list_alerts
from tracker.store.engine import Engine

__all__ = ["alert_rows", "alerts", "parse_since"]


def parse_since(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """``since``: an ISO time or an age (24h, 7d) before ``now``; ValueError (one line)
    otherwise."""
    if value is None:
        return None
    from tracker.alerts.rules import parse_duration

    try:
        return (now or datetime.now(UTC)) - parse_duration(value)
    except ValueError:
        pass
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"since: expected a time (2026-11-30T08:00) or an age (24h, 7d), got {value!r}"
        ) from None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


def alert_rows(found: Sequence[AlertRow]) -> list[dict[str, Any]]:
    """The documented JSON rows of ``alerts list`` (and ``/api/v1/alerts``)."""
    return [
        {
            "id": a.alert_id,
            "created_at": a.created_at,
            "rule": a.rule,
            "kind": a.kind,
            "channel": a.channel,
            "status": a.status,
            "attempts": a.attempts,
            "title": a.title,
            "last_error": a.last_error,
            "sent_at": a.sent_at,
        }
        for a in found
    ]


def alerts(
    engine: Engine, *, since: datetime | None = None, failed: bool = False, limit: int = 200
) -> list[dict[str, Any]]:
    """Alerts newest first, one row per channel (raises DatabaseError)."""
    return alert_rows(list_alerts(engine, since=since, failed=failed, limit=limit))
