"""Finds collectors through the ``gpu_tracker.collectors`` entry-point group.

One registry feeds the CLI's ``--provider`` choices, ``gpu-tracker providers``
and the scheduler's jobs, so a plugin appears everywhere at once.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from collectors.base import Collector, MissingCredentials, NotConfigured
from tracker.settings import Settings

__all__ = [
    "GROUP",
    "ProviderStatus",
    "available",
    "enabled",
    "status",
    "unusable",
]

GROUP = "gpu_tracker.collectors"
log = logging.getLogger(__name__)


def available(settings: Settings | None = None) -> dict[str, type[Collector]]:
    """Every registered collector class by name (a broken plugin is logged, not fatal).

    Entry points first, then ``settings.plugins`` (``name = "module:Class"``), which
    may override an entry point of the same name.
    """
    found: dict[str, type[Collector]] = {}
    sources = [(ep.name, ep.value, ep.load) for ep in entry_points(group=GROUP)]
    if settings is not None:
        sources += [(n, v, _importer(v)) for n, v in settings.plugins.items()]
    for name, value, loader in sorted(sources, key=lambda s: s[0]):
        try:
            cls = loader()
        except Exception as exc:  # a third-party plugin must not take the CLI down
            log.error("collector plugin %s (%s) failed to load: %s", name, value, exc)
            continue
        found[name] = cls
    return found


def _importer(spec: str) -> Callable[[], Any]:
    def load() -> Any:
        module, _, attr = spec.partition(":")
        if not module or not attr:
            raise ValueError(f"expected 'module:Class', got {spec!r}")
        return getattr(importlib.import_module(module), attr)

    return load


def enabled(settings: Settings, name: str) -> bool:
    """``<name>.enabled`` from the settings; collectors without a section are enabled."""
    return bool(getattr(settings.section(name), "enabled", True))


_PROBE_LOGGERS = ("google.auth",)
"""SDKs that log a WARNING of their own when they find no credentials (google-auth:
"Authentication failed using Compute Engine authentication due to unavailable metadata
server"); a collector without credentials is told as *not configured*, at INFO, instead."""


@contextmanager
def _credential_probe() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _PROBE_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def unusable(
    settings: Settings, name: str, collector: type[Collector]
) -> tuple[str | None, str | None]:
    """(why ``name`` is not scheduled at all, why it is not configured now).

    Switched off or with nothing to do, it is not scheduled. Missing credentials
    leave it scheduled but *not configured*: they may turn up (a metadata endpoint
    timing out at boot, a secret file mounted later), so the service asks again each
    cadence, and until then the job is neither run nor stale. Any other error is left
    to the runs to report (it may be transient)."""
    if not enabled(settings, name):
        return f"disabled ({name}.enabled = false)", None
    try:
        with _credential_probe():
            collector.from_settings(settings)
    except MissingCredentials as exc:
        return None, str(exc)
    except NotConfigured as exc:
        return str(exc), None
    except Exception:  # reported by every run instead: it may be transient
        return None, None
    return None, None


@dataclass(frozen=True)
class ProviderStatus:
    name: str
    description: str
    configured: bool
    reason: str


def status(settings: Settings) -> list[ProviderStatus]:
    """Whether each registered collector could run now, and why not."""
    result = []
    for name, cls in available(settings).items():
        try:
            collector = cls.from_settings(settings)
        except NotConfigured as exc:  # MissingCredentials too
            result.append(ProviderStatus(name, cls.description, False, str(exc)))
        except Exception as exc:
            result.append(ProviderStatus(name, cls.description, False, f"error: {exc}"))
        else:
            # A collector that runs only in part says which parts (AWS without credentials).
            readiness = getattr(collector, "readiness", "") or "ready"
            result.append(ProviderStatus(name, cls.description, True, str(readiness)))
    return result
