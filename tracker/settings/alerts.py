"""Settings section `[alerts]`."""

from __future__ import annotations

from tracker.settings.base import Section


class AlertsSettings(Section):
    """Alert rules and channels (tracker/alerts/); completed by the alerts work."""

    enabled: bool = True
