"""Settings section `[huawei]`: Huawei Cloud ECS flavors priced by BSS (collectors/huawei.py).

Credentials follow the Huawei SDK's own convention (``HUAWEICLOUD_SDK_AK`` /
``HUAWEICLOUD_SDK_SK``), or ``huawei.ak`` / ``huawei.sk`` and their ``*_file``; the SDK's
``HUAWEICLOUD_SDK_IAM_ENDPOINT`` keeps working for the per-region project-id lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import CsvList, Section, endpoint_origin, secret_or_env, split_csv

AK_ENV = "HUAWEICLOUD_SDK_AK"
SK_ENV = "HUAWEICLOUD_SDK_SK"

DEFAULT_REGIONS: Mapping[str, tuple[str, ...]] = {
    "china": ("cn-north-4", "cn-east-3", "cn-south-1"),
    "international": ("ap-southeast-1", "ap-southeast-3"),
}
"""Regions asked when ``regions`` is empty: the site's large GPU regions."""


class HuaweiSettings(Section):
    """Huawei Cloud ECS/BSS prices (collectors/huawei.py)."""

    enabled: bool = True
    site: Literal["china", "international"] = "china"
    """Which billing API prices the flavors: ``china`` is BSS (huaweicloud.com, CNY),
    ``international`` is BSS-INTL (huaweicloud.com/intl, USD). The currency itself is
    read from each rating response."""
    regions: CsvList = Field(default_factory=list)
    """ECS region ids; empty means the site's defaults (see the README)."""
    ak: SecretStr | None = None
    ak_file: Path | None = None
    sk: SecretStr | None = None
    sk_file: Path | None = None
    ecs_endpoint_url: str | None = None
    """``http(s)://host[:port]`` that replaces every region's ECS endpoint (a gateway or test
    server); the region id still selects the project."""
    bss_endpoint_url: str | None = None
    """``http(s)://host[:port]`` replacing the site's BSS endpoint."""
    max_retries: Annotated[int, Field(ge=0, le=10)] = 4
    """Retries of a throttled call (HTTP 429, APIGW.0308) before the region is given up."""
    retry_base_seconds: Annotated[float, Field(ge=0, le=60)] = 1.0
    """First back-off of a throttled call; doubled per retry, with jitter."""
    timeout_seconds: Annotated[float, Field(gt=0)] = 60.0

    _split = field_validator("regions", mode="before")(split_csv)
    _origins = field_validator("ecs_endpoint_url", "bss_endpoint_url")(endpoint_origin)

    def resolved_regions(self) -> list[str]:
        return list(dict.fromkeys(self.regions)) or list(DEFAULT_REGIONS[self.site])

    def credentials(
        self, environ: Mapping[str, str] | None = None
    ) -> tuple[SecretStr, SecretStr] | None:
        """(AK, SK) from the section or the SDK's variables; None when either is missing."""
        ak = secret_or_env(self.ak, self.ak_file, "huawei.ak", AK_ENV, environ)
        sk = secret_or_env(self.sk, self.sk_file, "huawei.sk", SK_ENV, environ)
        return (ak, sk) if ak is not None and sk is not None else None
