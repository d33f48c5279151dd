"""Settings section `[fx]`."""

from __future__ import annotations

from tracker.settings.base import Section


class FxSettings(Section):
    """ECB reference rates (collectors/fx.py)."""

    enabled: bool = True
