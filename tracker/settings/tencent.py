"""Settings section `[tencent]`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import CsvList, Section, endpoint_origin, secret_or_env, split_csv

SECRET_ID_ENV = "TENCENTCLOUD_SECRET_ID"
SECRET_KEY_ENV = "TENCENTCLOUD_SECRET_KEY"
"""The variables Tencent's own SDK and tccli read; used when the section sets no key."""


class TencentSettings(Section):
    """Tencent Cloud CVM prices (collectors/tencent.py)."""

    enabled: bool = True
    site: Literal["china", "international"] = "china"
    """Which Tencent Cloud the account belongs to. The API's prices carry no currency:
    the China site (cloud.tencent.com) bills in CNY, the international site
    (tencentcloud.com) in USD. It also picks the default endpoint
    (``cvm.tencentcloudapi.com`` or ``cvm.intl.tencentcloudapi.com``)."""
    secret_id: SecretStr | None = None
    secret_id_file: Path | None = None
    secret_key: SecretStr | None = None
    secret_key_file: Path | None = None
    endpoint_url: str | None = None
    """``http(s)://host[:port]`` replacing the site's CVM endpoint (a gateway, a test server)."""
    regions: CsvList = Field(default_factory=list)
    """Region ids (``ap-guangzhou,ap-singapore``); empty means every region DescribeRegions
    reports AVAILABLE."""

    _split = field_validator("regions", mode="before")(split_csv)
    _origin = field_validator("endpoint_url")(endpoint_origin)

    @property
    def currency(self) -> str:
        return "CNY" if self.site == "china" else "USD"

    def credentials(self, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
        """(secret id, secret key): the section's own (or its ``*_file``), else the
        ``TENCENTCLOUD_*`` variables; None when either half is missing."""
        pair = [
            secret_or_env(
                getattr(self, name), getattr(self, f"{name}_file"), f"tencent.{name}", var, environ
            )
            for name, var in (("secret_id", SECRET_ID_ENV), ("secret_key", SECRET_KEY_ENV))
        ]
        secret_id, secret_key = (s.get_secret_value().strip() if s else "" for s in pair)
        return (secret_id, secret_key) if secret_id and secret_key else None
