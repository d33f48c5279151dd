"""Built-in hook plugin: evaluate the alert rules after every committed collection.

Registered in ``gpu_tracker.hooks`` like any third-party plugin, with order 50 so
it runs after the rankings recompute (order 10) whose snapshots ``ranking_change``
rules read. After queueing it drains the outbox, unless the command said
``--no-notify`` (:func:`no_notify`): then alerts wait for ``alerts send`` or the
service's timer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tracker.hooks import JobHealthChange
from tracker.settings import Settings
from tracker.store.engine import Engine

__all__ = ["after_collection", "job_health_changed", "no_notify", "order"]

order = 50
_deliver: ContextVar[bool] = ContextVar("gpu_tracker_alerts_deliver", default=True)


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
    from tracker.alerts.setup import load_setup

    setup = load_setup(settings)
    if not setup.active:
        return
    evaluate(engine, setup.rules, list(setup.channels), fx_rates=settings.fx_rates)
    if _deliver.get():
        drain(engine, settings.alerts, setup.channels)


def job_health_changed(engine: Engine, settings: Settings, change: JobHealthChange) -> None:
    from tracker.alerts.evaluate import health_change_alerts
    from tracker.alerts.sender import drain
    from tracker.alerts.setup import load_setup

    setup = load_setup(settings)
    if not setup.active:
        return
    if health_change_alerts(engine, setup.rules, list(setup.channels), change) and _deliver.get():
        drain(engine, settings.alerts, setup.channels)
