"""Settings section `[alibaba]`.

The key pair is the section's own (``access_key_id`` / ``access_key_secret`` or their
``*_file``, e.g. a mounted Docker secret), else Alibaba's own variables
``ALIBABA_CLOUD_ACCESS_KEY_ID`` / ``ALIBABA_CLOUD_ACCESS_KEY_SECRET`` (the names its SDKs
and CLI use), as for Tencent and Huawei.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import CsvList, Section, endpoint_origin, secret_or_env, split_csv

KEY_ID_ENV = "ALIBABA_CLOUD_ACCESS_KEY_ID"
KEY_SECRET_ENV = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"

DEFAULT_REGIONS = ("cn-hangzhou", "cn-beijing", "cn-shanghai", "ap-southeast-1")
"""Regions with the widest GPU choice on both sites; override with ``regions``."""


class AlibabaSettings(Section):
    """Alibaba Cloud ECS prices (collectors/alibaba.py)."""

    enabled: bool = True
    access_key_id: SecretStr | None = None
    access_key_id_file: Path | None = None
    access_key_secret: SecretStr | None = None
    access_key_secret_file: Path | None = None
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

    def credentials(
        self, environ: Mapping[str, str] | None = None
    ) -> tuple[SecretStr, SecretStr] | None:
        """(key id, key secret) from the section or Alibaba's variables; None when either
        half is missing."""
        pair = [
            secret_or_env(
                getattr(self, name), getattr(self, f"{name}_file"), f"alibaba.{name}", var, environ
            )
            for name, var in (("access_key_id", KEY_ID_ENV), ("access_key_secret", KEY_SECRET_ENV))
        ]
        key_id, secret = pair
        return (key_id, secret) if key_id is not None and secret is not None else None
