"""Built-in hook plugin: evaluate the alert rules after every committed collection.

Registered in ``gpu_tracker.hooks`` like any third-party plugin, with order 50 so
it runs after the rankings recompute (order 10) whose snapshots ``ranking_change``
rules read. After queueing it drains the outbox, unless the command said
``--no-notify`` (:func:`no_notify`): then alerts wait for ``alerts send`` or the
service's timer.

A rules file that cannot be used never costs a run: the run is already committed
when hooks run, and this hook evaluates nothing and moves no cursor, so once the
file is fixed the next evaluation (the next run, ``alerts send``) sees every change
since. The problem is one line (file, rule, key): handed to the command that asked
(:func:`rules_problems`, which exits 1 with it) or, in ``serve``, logged as an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from tracker.hooks import JobHealthChange
from tracker.redact import secrets_of
from tracker.settings import ConfigError, Settings
from tracker.store import Engine

if TYPE_CHECKING:
    from tracker.alerts.setup import AlertSetup

__all__ = [
    "after_collection",
    "after_failed_runs",
    "job_health_changed",
    "no_notify",
    "order",
    "rules_problems",
]

log = logging.getLogger(__name__)
order = 50
_deliver: ContextVar[bool] = ContextVar("gpu_tracker_alerts_deliver", default=True)
_problems: ContextVar[list[str] | None] = ContextVar("gpu_tracker_alerts_problems", default=None)


@contextmanager
def rules_problems() -> Iterator[list[str]]:
    """Within this block, a rules file that cannot be used is added to the list yielded
    (one line each) instead of logged: the command reports it and exits 1."""
    found: list[str] = []
    token = _problems.set(found)
    try:
        yield found
    finally:
        _problems.reset(token)


def _setup(settings: Settings) -> AlertSetup | None:
    """The alert setup, or None (reported once, one line) when the rules cannot be used."""
    from tracker.alerts.setup import load_setup

    try:
        return load_setup(settings)
    except ConfigError as exc:
        line = (
            f"{exc} (alerts not evaluated: the run is stored, and its changes are "
            "evaluated once the file is fixed)"
        )
        found = _problems.get()
        if found is None:
            log.error(line, extra={"event": "alerts_rules_invalid"})
        elif line not in found:
            found.append(line)
        return None


@contextmanager
def no_notify() -> Iterator[None]:
    """Within this block, evaluation queues alerts but does not deliver them."""
    token = _deliver.set(False)
    try:
        yield
    finally:
        _deliver.reset(token)


def after_collection(engine: Engine, settings: Settings) -> None:
    from tracker.alerts.evaluate import evaluate
    from tracker.alerts.sender import drain

    setup = _setup(settings)
    if setup is None or not setup.active:
        return
    evaluate(
        engine,
        setup.rules,
        list(setup.channels),
        fx_rates=settings.fx_rates,
        discounts=settings.discounts,
    )
    if _deliver.get():
        drain(engine, settings.alerts, setup.channels, secrets=secrets_of(settings))


def after_failed_runs(engine: Engine, settings: Settings) -> None:
    """A run failed and is recorded: the collector-health rules now, and their alerts
    sent now (unless ``--no-notify``), not at the sender's next tick."""
    from tracker.alerts.evaluate import evaluate
    from tracker.alerts.sender import drain

    setup = _setup(settings)
    if setup is None or not setup.active:
        return
    queued = evaluate(engine, setup.rules, list(setup.channels), health_only=True)
    if queued and _deliver.get():
        drain(engine, settings.alerts, setup.channels, secrets=secrets_of(settings))


def job_health_changed(engine: Engine, settings: Settings, change: JobHealthChange) -> None:
    from tracker.alerts.evaluate import health_change_alerts
    from tracker.alerts.sender import drain

    setup = _setup(settings)
    if setup is None or not setup.active:
        return
    if health_change_alerts(engine, setup.rules, list(setup.channels), change) and _deliver.get():
        drain(engine, settings.alerts, setup.channels, secrets=secrets_of(settings))
