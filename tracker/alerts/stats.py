"""What this process's sender did, per channel: /metrics counters and /healthz detail.

Kept in memory (like the service's job health): counters restart at zero with the
process, which Prometheus' ``rate()`` expects; the outbox itself stays the
durable record (``alerts list``).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["STATS", "ChannelStats", "DeliveryStats"]


@dataclass
class ChannelStats:
    sent: int = 0
    """Alerts the channel accepted."""
    failed: Counter[str] = field(default_factory=Counter)
    """Alerts in failed attempts, by reason code."""
    consecutive_failures: int = 0
    last_error: str | None = None
    last_success: datetime | None = None
    last_failure: datetime | None = None


class DeliveryStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.channels: dict[str, ChannelStats] = {}

    def _of(self, channel: str) -> ChannelStats:
        return self.channels.setdefault(channel, ChannelStats())

    def declare(self, channel: str) -> None:
        with self._lock:
            self._of(channel)

    def sent(self, channel: str, alerts: int, at: datetime) -> None:
        with self._lock:
            s = self._of(channel)
            s.sent += alerts
            s.consecutive_failures = 0
            s.last_error = None
            s.last_success = at

    def failed(self, channel: str, reason: str, alerts: int, error: str, at: datetime) -> None:
        with self._lock:
            s = self._of(channel)
            s.failed[reason] += alerts
            s.consecutive_failures += 1
            s.last_error = error
            s.last_failure = at

    def snapshot(self) -> dict[str, ChannelStats]:
        with self._lock:
            return {
                name: ChannelStats(
                    s.sent,
                    Counter(s.failed),
                    s.consecutive_failures,
                    s.last_error,
                    s.last_success,
                    s.last_failure,
                )
                for name, s in self.channels.items()
            }

    def health(self, failing_after: int) -> dict[str, Any]:
        """Each channel's state; ``failing`` lists those with ``failing_after`` failures in a row."""
        channels = {
            name: {
                "sent": s.sent,
                "consecutive_failures": s.consecutive_failures,
                "last_error": s.last_error,
                "last_success": s.last_success.isoformat() if s.last_success else None,
                "last_failure": s.last_failure.isoformat() if s.last_failure else None,
                "failing": s.consecutive_failures >= failing_after,
            }
            for name, s in sorted(self.snapshot().items())
        }
        failing = [name for name, c in channels.items() if c["failing"]]
        return {"status": "failing" if failing else "ok", "failing": failing, "channels": channels}


STATS = DeliveryStats()
"""The process's delivery stats (the sender writes, /metrics and /healthz read)."""
