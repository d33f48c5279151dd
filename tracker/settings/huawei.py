"""Settings section `[huawei]`."""

from __future__ import annotations

from tracker.settings.base import Section


class HuaweiSettings(Section):
    """Huawei Cloud ECS/BSS prices (collectors/huawei.py)."""

    enabled: bool = True
