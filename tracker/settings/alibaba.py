"""Settings section `[alibaba]`."""

from __future__ import annotations

from tracker.settings.base import Section


class AlibabaSettings(Section):
    """Alibaba Cloud ECS prices (collectors/alibaba.py)."""

    enabled: bool = True
