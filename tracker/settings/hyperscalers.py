"""Sections of the hyperscaler collectors: AWS, Azure and GCP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import CsvList, Section, read_secret, split_csv

_BLOCK_TYPES = (
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.4xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "p6-b300.48xlarge",
    "trn1.32xlarge",
    "trn2.3xlarge",
    "trn2.48xlarge",
)
"""The types AWS's Capacity Blocks pricing page lists (2026-01 to 2026-07 snapshots)."""


class AwsSettings(Section):
    enabled: bool = True
    regions: CsvList = Field(default_factory=list)
    """Empty means every region the Price List reports GPU offers in."""
    pricing_region: str = "us-east-1"
    spot: bool = True
    savings_plans: bool = True
    """Collect Savings Plans rates (EC2 Instance and Compute plans) beside reservations."""
    capacity_blocks: bool = True
    """Collect EC2 Capacity Blocks for ML offerings (pricing ``capacity_block``; needs
    credentials): one DescribeCapacityBlockOfferings call per type × count × duration."""
    capacity_block_types: CsvList = Field(default_factory=lambda: list(_BLOCK_TYPES))
    """Instance types to ask for (only those the region's DescribeInstanceTypes lists)."""
    capacity_block_instance_counts: list[int] = Field(default_factory=lambda: [1, 8])
    """Block sizes asked for, 1-64 instances; each is its own series (``offering_class``)."""
    capacity_block_hours: list[int] = Field(default_factory=lambda: [24, 168])
    """Block lengths asked for: 24-336 h in whole days, then whole weeks up to 4,368 h."""
    spot_lookback_days: int = Field(7, ge=1, le=90)
    spot_advisor_url: str = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
    include_accelerators: bool = True
    """Keep Inferentia/Trainium instances (as non-GPU accelerators)."""
    endpoint_url: str | None = None
    """Overrides both pricing and EC2 endpoints; AWS_ENDPOINT_URL_* still work when unset."""
    pricing_endpoint_url: str | None = None
    """Price List API endpoint only (a VPC endpoint or proxy); wins over ``endpoint_url``."""
    ec2_endpoint_url: str | None = None
    """EC2 endpoint only; wins over ``endpoint_url``. Applies to every region queried."""
    savingsplans_endpoint_url: str | None = None
    """Savings Plans endpoint only (a global service); wins over ``endpoint_url``."""
    max_attempts: int = Field(8, ge=1, le=30)
    """botocore adaptive-retry attempts per call (throttling is retried with backoff)."""
    bulk_url: str = "https://pricing.us-east-1.amazonaws.com"
    """Root of the public Price List bulk offer files, read when there are no AWS
    credentials (on-demand and reserved only); a mirror or a test server."""

    _split = field_validator("regions", "capacity_block_types", mode="before")(split_csv)

    @field_validator("capacity_block_instance_counts")
    @classmethod
    def _counts(cls, value: list[int]) -> list[int]:
        bad = [n for n in value if not 1 <= n <= 64]
        if bad:
            raise ValueError(f"{bad[0]} instances: a capacity block holds 1-64")
        return value

    @field_validator("capacity_block_hours")
    @classmethod
    def _hours(cls, value: list[int]) -> list[int]:
        from tracker.capacity_blocks import valid_block_hours

        bad = [h for h in value if not valid_block_hours(h)]
        if bad:
            raise ValueError(
                f"{bad[0]} h: capacity blocks run 24-336 h in whole days, "
                "or whole weeks up to 4368 h"
            )
        return value


class AzureSettings(Section):
    enabled: bool = True
    endpoint_url: str = "https://prices.azure.com/api/retail/prices"
    """Retail Prices API base; NextPageLinks are re-rooted on it (proxies, mirrors)."""
    regions: CsvList = Field(default_factory=list)
    """armRegionName values; empty means one all-regions query."""
    currency_code: str = "USD"
    """Currency the API prices in; prices are stored in it and converted when read."""
    include_low_priority: bool = False
    """Store Low Priority meters (as spot with offering_class "low_priority"), never as Spot."""
    discover_unknown_sizes: bool = False
    """Fetch every VM meter instead of only the sizes in collectors/azure_sizes.py, so GPU
    sizes missing from that table are reported (many more requests)."""

    _split = field_validator("regions", mode="before")(split_csv)

    @field_validator("currency_code")
    @classmethod
    def _currency(cls, value: str) -> str:
        code = value.strip().upper()
        if len(code) != 3 or not code.isalpha():
            raise ValueError(f"must be a 3-letter ISO 4217 code, got {value!r}")
        return code


class GcpSettings(Section):
    """Cloud Billing Catalog access for the GCP collector (collectors/gcp.py)."""

    enabled: bool = True
    api_key: SecretStr | None = None
    """Sent as ``x-goog-api-key``; without one, Application Default Credentials are used."""
    api_key_file: Path | None = None
    endpoint_url: str | None = None
    """``host[:port]`` or ``http(s)://host[:port]`` (a gateway, mirror or test server);
    default ``cloudbilling.googleapis.com``."""
    regions: CsvList = Field(default_factory=list)
    """Empty means every region a GPU SKU is sold in."""
    currency_code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    """Currency the catalog is asked to price in; stored as such, converted when read."""
    page_size: Annotated[int, Field(ge=1, le=5000)] = 5000
    timeout_seconds: Annotated[float, Field(gt=0)] = 60.0
    """Per request."""
    retry_initial_seconds: Annotated[float, Field(ge=0)] = 1.0
    retry_max_seconds: Annotated[float, Field(ge=0)] = 30.0
    retry_deadline_seconds: Annotated[float, Field(gt=0)] = 300.0
    """Total time one page may spend retrying 429/5xx before the run fails."""

    _split = field_validator("regions", mode="before")(split_csv)

    @field_validator("endpoint_url")
    @classmethod
    def _check_endpoint(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        import re  # local: this section is the only user

        value = value.strip().rstrip("/")
        host = r"(?:[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])"
        match = re.fullmatch(rf"(?:https?://)?{host}(?::\d{{1,5}})?", value)
        if match is None:
            raise ValueError(
                f"expected host[:port] or http(s)://host[:port] without a path, got {value!r}"
            )
        return value

    def resolved_api_key(self) -> SecretStr | None:
        return read_secret(self.api_key, self.api_key_file, "gcp.api_key")
