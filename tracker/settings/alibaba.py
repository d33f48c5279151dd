"""Settings section `[alibaba]`.

Credentials are not settings: the collector reads Alibaba's own variables
``ALIBABA_CLOUD_ACCESS_KEY_ID`` / ``ALIBABA_CLOUD_ACCESS_KEY_SECRET`` (the names
Alibaba's SDKs and CLI use), so one pair serves every Alibaba tool on the machine.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from tracker.settings.base import CsvList, Section, endpoint_origin, split_csv

DEFAULT_REGIONS = ("cn-hangzhou", "cn-beijing", "cn-shanghai", "ap-southeast-1")
"""Regions with the widest GPU choice on both sites; override with ``regions``."""


class AlibabaSettings(Section):
    """Alibaba Cloud ECS prices (collectors/alibaba.py)."""

    enabled: bool = True
    regions: CsvList = Field(default_factory=lambda: list(DEFAULT_REGIONS))
    """Region ids (``cn-hangzhou``, ``ap-southeast-1``); the account's site decides the
    currency (CNY on the China site, USD on the international one)."""
    endpoint_url: str | None = None
    """``http(s)://host[:port]`` of a gateway or test server used for every region;
    default: the SDK's own regional endpoint (``ecs.<region>.aliyuncs.com``)."""
    spot: bool = True
    """Collect preemptible (spot) prices from DescribeSpotPriceHistory."""
    spot_lookback_days: int = Field(3, ge=1, le=30)
    """History read on the first run (the API keeps 30 days); later runs start at the
    last stored spot point."""
    max_attempts: int = Field(5, ge=1, le=20)
    """Attempts per call when the API answers ``Throttling`` (exponential backoff)."""
    timeout_seconds: float = Field(30.0, gt=0)
    """Connect and read timeout per request."""

    _split = field_validator("regions", mode="before")(split_csv)
    _origin = field_validator("endpoint_url")(endpoint_origin)
