"""The alert configuration of a process: its channels and validated rules, loaded once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracker.alerts.channels import AlertChannel, load_channels
from tracker.alerts.rules import AlertRule, load_rules
from tracker.settings import Settings

if TYPE_CHECKING:
    from tracker.recommend.profiles import ProfileSet

__all__ = ["AlertSetup", "collector_names", "load_setup"]


@dataclass(frozen=True)
class AlertSetup:
    rules: list[AlertRule]
    channels: dict[str, AlertChannel]

    @property
    def active(self) -> bool:
        return bool(self.rules)


def load_setup(settings: Settings) -> AlertSetup:
    """Channels from the settings and rules from ``alerts.rules_file``.

    Raises :class:`~tracker.settings.ConfigError` (a :class:`RulesError` for the
    rules), one line naming the file, the rule and the key.
    """
    if not settings.alerts.enabled:
        return AlertSetup([], {})
    channels = load_channels(settings)
    rules = load_rules(
        settings.alerts.rules_file, channels, collector_names(settings), lambda: _profiles(settings)
    )
    return AlertSetup(rules, channels)


def _profiles(settings: Settings) -> ProfileSet:
    """The profiles file ``plan`` and ``recommend`` read: where saved plans are."""
    from tracker.recommend.profiles import load_profiles, user_profiles_path

    return load_profiles(user_profiles_path(settings.profiles_path))


def collector_names(settings: Settings) -> set[str]:
    """The registered collectors' names (entry points and ``plugins``), without loading
    them: what a rule's ``provider`` may name."""
    from importlib.metadata import entry_points

    from tracker.registry import GROUP

    return {ep.name for ep in entry_points(group=GROUP)} | set(settings.plugins)
