"""The alerts side of ``serve``: the rules checked at start, the outbox drained on a timer.

Evaluation itself runs in the ``alerts`` hook after each committed collection; this
timer delivers what is still due (retries after backoff, alerts queued with
``--no-notify`` or by another process) and runs the collector-health rules, since
a failed run triggers no after-collection hook. A bad rules file raises
:class:`~tracker.settings.ConfigError` from :meth:`Alerting.load`, so the service
refuses to start with the same line ``alerts rules`` prints.
"""

from __future__ import annotations

import logging
from typing import Any

from tracker.alerts.evaluate import evaluate
from tracker.alerts.sender import drain
from tracker.alerts.setup import AlertSetup, load_setup
from tracker.alerts.stats import STATS
from tracker.errors import one_line
from tracker.redact import secrets_of
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, outbox

__all__ = ["Alerting"]

log = logging.getLogger(__name__)


class Alerting:
    def __init__(self, settings: Settings, engine: Engine, setup: AlertSetup) -> None:
        self.settings = settings
        self.engine = engine
        self.setup = setup
        for name in setup.channels:
            STATS.declare(name)

    @classmethod
    def load(cls, settings: Settings, engine: Engine) -> Alerting:
        return cls(settings, engine, load_setup(settings))

    @property
    def active(self) -> bool:
        return self.setup.active

    @property
    def interval_seconds(self) -> float:
        return self.settings.alerts.send_interval_seconds

    def tick(self) -> None:
        """Collector-health rules, then deliver what is due. Never raises."""
        try:
            evaluate(self.engine, self.setup.rules, list(self.setup.channels), health_only=True)
            drain(
                self.engine,
                self.settings.alerts,
                self.setup.channels,
                secrets=secrets_of(self.settings),
            )
        except DatabaseError as exc:
            log.warning("alerts not sent now: %s", one_line(exc), extra={"event": "alerts_db"})
        except Exception:
            log.exception("alert sender failed", extra={"event": "alerts_error"})

    def backlog(self) -> dict[str, int]:
        return outbox.backlog(self.engine)

    def health(self) -> dict[str, Any]:
        report = STATS.health(self.settings.alerts.failing_after)
        report["rules"] = len(self.setup.rules)
        return report
