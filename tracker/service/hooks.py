"""What runs after each successful collection: the extension points of the service.

Later subsystems plug in here rather than into the scheduler: rankings are
recomputed by ``tracker.recommend.recompute_rankings`` when that module exists,
and the alerts subsystem appends its evaluator to ``Service.post_run_hooks`` (and
its stale-collector notifier to ``Service.stale_hooks``). A hook that raises is
logged with the collector's name and never stops the service.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine

from tracker.collect import RunSummary
from tracker.service.jobs import JobSpec
from tracker.settings import Settings

__all__ = ["PostRunHook", "StaleHook", "rankings_hook"]

log = logging.getLogger(__name__)

PostRunHook = Callable[[Engine, Settings, RunSummary], None]
"""Called after a run succeeded and committed, with that run's summary."""
StaleHook = Callable[[JobSpec, datetime | None], None]
"""Called once when a job turns stale, with its last success (None: never)."""


def rankings_hook() -> PostRunHook | None:
    """A hook calling ``tracker.recommend.recompute_rankings``, or None (logged) if absent."""
    try:
        module = importlib.import_module("tracker.recommend")
    except ModuleNotFoundError as exc:
        if exc.name != "tracker.recommend":
            raise  # the module exists but is broken: that is a bug to surface
        log.warning(
            "rankings will not be recomputed after runs: tracker.recommend is not installed"
        )
        return None
    recompute = getattr(module, "recompute_rankings", None)
    if not callable(recompute):
        log.warning(
            "rankings will not be recomputed after runs: "
            "tracker.recommend has no recompute_rankings(engine, settings)"
        )
        return None

    def recompute_rankings(engine: Engine, settings: Settings, summary: RunSummary) -> None:
        recompute(engine, settings)

    return recompute_rankings
