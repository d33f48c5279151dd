"""Settings section `[web]`."""

from __future__ import annotations

from tracker.settings.base import Section


class WebSettings(Section):
    """The dashboard and JSON API (tracker/web/)."""

    enabled: bool = True
