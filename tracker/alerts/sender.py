"""Drain the outbox: one digest per channel, marked sent only once the channel accepted it.

At least once: a delivery is marked ``sent`` after ``send`` returned, in its own
transaction. A process killed in between re-sends that digest after a restart
(same alert ids, so a receiver can tell), and never drops a pending alert. A
failed attempt waits ``backoff_base_seconds * 2**(failures-1)`` (at most
``backoff_max_seconds``); after ``max_attempts`` failures, or at once when the
channel says retrying cannot help, the delivery is ``dead`` (``alerts list --failed``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import groupby

from tracker.alerts.channels import AlertChannel, DeliveryError
from tracker.alerts.digest import build_digest
from tracker.alerts.stats import STATS, DeliveryStats
from tracker.errors import one_line
from tracker.redact import masked_first, redact, secret_values_of
from tracker.settings.alerts import AlertsSettings
from tracker.store import Engine, PostgresLocks, outbox

__all__ = ["DrainResult", "backoff", "drain"]

log = logging.getLogger(__name__)
LOCK = "alerts:sender"
_local = threading.Lock()


@dataclass
class DrainResult:
    sent: dict[str, int] = field(default_factory=dict)
    """Alerts each channel accepted."""
    failed: dict[str, str] = field(default_factory=dict)
    """Each channel that failed, with its one-line error."""
    busy: bool = False
    """Another sender was draining (nothing done here)."""


def backoff(config: AlertsSettings, failures: int) -> timedelta:
    """Wait after the ``failures``-th failed attempt in a row."""
    seconds = config.backoff_base_seconds * 2 ** max(failures - 1, 0)
    return timedelta(seconds=min(seconds, config.backoff_max_seconds))


@contextmanager
def _hold(engine: Engine) -> Iterator[bool]:
    """One sender at a time: in this process, and across processes on Postgres."""
    if not _local.acquire(blocking=False):
        yield False
        return
    try:
        if engine.dialect.name == "postgresql":
            with PostgresLocks(engine).hold(LOCK) as held:
                yield held
        else:
            yield True
    finally:
        _local.release()


def drain(
    engine: Engine,
    config: AlertsSettings,
    channels: Mapping[str, AlertChannel],
    *,
    now: datetime | None = None,
    stats: DeliveryStats = STATS,
    secrets: Iterable[str] = (),
) -> DrainResult:
    """Send every due delivery, one digest per channel. Raises DatabaseError.

    A channel's error text is masked before it is stored, counted or logged: of
    ``secrets`` (the settings' own, :func:`tracker.redact.secrets_of`) and of the
    ``[alerts]`` secrets, each with its parts (a webhook path a receiver echoed)."""
    masked = masked_first([*secrets, *secret_values_of(config)])
    result = DrainResult()
    with _hold(engine) as held:
        if not held:
            result.busy = True
            return result
        at = (now or datetime.now(UTC)).astimezone(UTC)
        due = outbox.due_deliveries(engine, at)
        for name, group in groupby(due, key=lambda d: d.channel):
            items = list(group)
            channel = channels.get(name)
            try:
                if channel is None:
                    raise DeliveryError("not_configured", f"channel {name!r} is not configured")
                channel.send(build_digest(items, config.digest_rows))
            except Exception as exc:
                error = _masked(exc, masked)
                _failed(engine, config, name, items, error, at, stats)
                result.failed[name] = str(error)
                continue
            outbox.mark_sent(engine, [d.delivery_id for d in items], datetime.now(UTC))
            stats.sent(name, len(items), at)
            result.sent[name] = len(items)
            log.info(
                "%s accepted %d alert(s)",
                name,
                len(items),
                extra={
                    "event": "alerts_sent",
                    "channel": name,
                    "alerts": [d.alert_id for d in items],
                },
            )
    return result


def _masked(exc: Exception, secrets: list[str]) -> DeliveryError:
    """``exc`` as a DeliveryError whose text holds none of ``secrets``."""
    if isinstance(exc, DeliveryError):
        text = redact(str(exc), secrets)
        return DeliveryError(exc.reason, text, permanent=exc.permanent)
    return DeliveryError("error", redact(one_line(exc), secrets))


def _failed(
    engine: Engine,
    config: AlertsSettings,
    channel: str,
    items: list[outbox.DueDelivery],
    error: DeliveryError,
    at: datetime,
    stats: DeliveryStats,
) -> None:
    dead = [
        (d.delivery_id, d.attempts)
        for d in items
        if error.permanent or d.attempts + 1 >= config.max_attempts
    ]
    dead_ids = {i for i, _ in dead}
    retry = [(d.delivery_id, d.attempts) for d in items if d.delivery_id not in dead_ids]
    for attempts, group in groupby(sorted(retry, key=lambda r: r[1]), key=lambda r: r[1]):
        outbox.mark_failed(engine, list(group), str(error), at + backoff(config, attempts + 1))
    if dead:
        outbox.mark_failed(engine, dead, str(error), None)
    stats.failed(channel, error.reason, len(items), str(error), at)
    log.warning(
        "%s did not take %d alert(s): %s (%d dead, %d to retry)",
        channel,
        len(items),
        error,
        len(dead),
        len(retry),
        extra={"event": "alerts_failed", "channel": channel, "reason": error.reason},
    )
