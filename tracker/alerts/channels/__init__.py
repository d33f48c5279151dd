"""Alert channels: the ``gpu_tracker.alert_channels`` entry-point group.

A channel is a class with a ``name``, a ``from_settings(settings)`` classmethod
that returns an instance, or None when the channel is not configured (raising
:class:`~tracker.settings.ConfigError` when it is half-configured), and
``send(digest)``, which returns once the receiver accepted the message and
raises :class:`DeliveryError` otherwise. Slack and email are registered in the
group like any third-party channel, so a Teams or PagerDuty channel is one small
module and an entry point::

    [project.entry-points."gpu_tracker.alert_channels"]
    teams = "my_package.teams:TeamsChannel"
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, ClassVar, Protocol, Self

from tracker.settings import ConfigError

if TYPE_CHECKING:
    from tracker.alerts.digest import Digest
    from tracker.settings import Settings

__all__ = ["GROUP", "AlertChannel", "DeliveryError", "load_channels"]

log = logging.getLogger(__name__)
GROUP = "gpu_tracker.alert_channels"


class DeliveryError(Exception):
    """The receiver did not accept a message.

    ``reason`` is a short code for metrics (``http_404``, ``timeout``, ``auth``…);
    ``permanent`` says retrying cannot help (a revoked webhook), so the alert is
    dead at once instead of after ``max_attempts``. The message never holds a secret.
    """

    def __init__(self, reason: str, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.permanent = permanent


class AlertChannel(Protocol):
    name: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> Self | None: ...

    def send(self, digest: Digest) -> None: ...


def load_channels(settings: Settings) -> dict[str, AlertChannel]:
    """The configured channels by name (raises ConfigError for a half-configured one).

    A channel plugin that fails to load is logged and left out, as hook plugins are.
    """
    found: dict[str, AlertChannel] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in found:
            continue
        try:
            cls = ep.load()
        except Exception as exc:
            log.error("alert channel %s (%s) failed to load: %s", ep.name, ep.value, exc)
            continue
        try:
            channel = cls.from_settings(settings)
        except ConfigError:
            raise
        except Exception as exc:
            log.error("alert channel %s cannot be set up: %s", ep.name, exc)
            continue
        if channel is not None:
            found[ep.name] = channel
    return found
