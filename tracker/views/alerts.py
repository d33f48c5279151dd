"""The alerts list: recent alerts and their delivery status (``alerts list``,
``/api/v1/alerts``, the Alerts page), as the documented JSON rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tracker.alerts.render import render
from tracker.redact import redact
from tracker.store import Engine
from tracker.store.outbox import AlertRow, list_alerts

__all__ = ["alert_rows", "alerts", "parse_since"]


def parse_since(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """``since``: what :func:`tracker.history.args.parse_time` reads (now, today,
    yesterday, an age such as 24h or 7d before ``now``, an ISO time); ValueError (one
    line) otherwise."""
    if value is None:
        return None
    from tracker.history.args import parse_time

    return parse_time(value, "since", now=now or datetime.now(UTC))


def alert_rows(found: Sequence[AlertRow], secrets: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The documented JSON rows of ``alerts list`` (and ``/api/v1/alerts``).

    ``message`` is the alert's line as Slack and email show it (rendered from what
    evaluation stored, :mod:`tracker.alerts.render`); ``next_attempt_at`` is set while a
    delivery is pending. ``last_error`` is masked of ``secrets``
    (:func:`tracker.redact.secrets_of`): the sender masks before it stores, and a row
    stored before it did is masked here."""
    return [
        {
            "id": a.alert_id,
            "created_at": a.created_at,
            "rule": a.rule,
            "kind": a.kind,
            "channel": a.channel,
            "status": a.status,
            "attempts": a.attempts,
            "next_attempt_at": a.next_attempt_at,
            "title": a.title,
            "message": render(a.kind, a.details or {}, a.title).text,
            "last_error": redact(a.last_error, secrets) if a.last_error else a.last_error,
            "sent_at": a.sent_at,
        }
        for a in found
    ]


def alerts(
    engine: Engine,
    *,
    since: datetime | None = None,
    failed: bool = False,
    limit: int = 200,
    secrets: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Alerts newest first, one row per channel, errors masked of ``secrets`` (raises
    DatabaseError)."""
    return alert_rows(list_alerts(engine, since=since, failed=failed, limit=limit), secrets)
