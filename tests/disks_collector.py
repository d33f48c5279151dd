"""A collector plugin with storage prices (``collect_service_prices``) and no network:
what the service and CLI tests run as ``fakedisks`` (``GPU_TRACKER_PLUGINS``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from decimal import Decimal
from typing import ClassVar, Self

from collectors.base import CollectorError, RunContext
from tracker.models import Offer, PricingModel
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit
from tracker.settings import Settings

FAIL_ENV = "FAKEDISKS_FAIL"
SSD = ServicePrice(
    "fakedisks", "r1", ServiceKind.BLOCK_STORAGE_SSD, ServiceUnit.GB_MONTH, Decimal("0.08"), "USD"
)


class Disks:
    """Sells no instance and one disk price; ``failing`` (or $FAKEDISKS_FAIL) fails the disks."""

    name: ClassVar[str] = "fakedisks"
    description: ClassVar[str] = "test collector with storage prices"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False
    failing: ClassVar[bool] = False

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls()

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return iter(())

    def collect_service_prices(self, ctx: RunContext) -> Iterator[ServicePrice]:
        if self.failing or os.environ.get(FAIL_ENV):
            raise CollectorError("fakedisks: the price list answered 503")
        yield SSD
