"""Settings section `[tencent]`."""

from __future__ import annotations

from tracker.settings.base import Section


class TencentSettings(Section):
    """Tencent Cloud CVM prices (collectors/tencent.py)."""

    enabled: bool = True
