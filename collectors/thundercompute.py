"""Thunder Compute GPU prices from ``GET /v1/pricing`` (key optional).

Thunder Compute's CLI (Thunder-Compute/thunder-cli, ``api.Client.FetchPricing``) reads
"the public pricing data" from this call: ``{"pricing": {key: USD per hour}}``, a flat
rate table. ``utils.CalculateHourlyPrice`` says what the keys mean: ``<gpu>_x<count>``
(``h100_x2``) is the hourly price of that many GPUs of that type with the shape's
included vCPUs and 100 GB of persistent disk per GPU; ``additional_vcpus`` is each vCPU
beyond those, per hour, and ``disk_gb`` each GB of disk beyond the allowance, per hour.
So one offer is one ``<gpu>_x<count>`` key, priced at its rate, with the two add-on rates
as attributes. The table names no region, no currency (Thunder bills in USD) and no
capacity, so the region is ``global`` and availability is left unknown. A key, when set,
is sent as a bearer token, as the CLI sends it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Self

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, api_key_if_set, gpu_offer, number
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel
from tracker.settings import Settings

__all__ = ["DOCUMENTED_URL", "ThunderComputeCollector", "parse_pricing"]


PROVIDER = "thundercompute"
DOCUMENTED_URL = "https://api.thundercompute.com:8443/v1/pricing"
REGION = "global"
"""The rate table names no location."""
CURRENCY = "USD"
ADD_ONS = {"additional_vcpus": "additional_vcpu_per_hour", "disk_gb": "extra_disk_gb_per_hour"}
"""The table's non-GPU rates and the attribute each becomes on every offer."""
_SHAPE = re.compile(r"^(?P<gpu>[a-z0-9]+)_x(?P<count>[1-9][0-9]*)$")


def _rate(rates: Mapping[str, Any], key: str) -> Decimal | None:
    try:
        return number(rates, key, required=False)
    except SkipItem:
        return None


def parse_rate(key: Any, rates: Mapping[str, Any], add_ons: Mapping[str, AttributeValue]) -> Offer:
    """One ``<gpu>_x<count>`` rate -> its offer; anything else is a counted skip."""
    found = _SHAPE.match(key) if isinstance(key, str) else None
    if found is None:
        raise SkipItem("malformed_item", f"not a <gpu>_x<count> rate key ({key!r:.40})")
    price = number(rates, key)
    assert price is not None
    if price <= 0:
        raise SkipItem("zero_price", f"rate {price}")
    gpu, count = found["gpu"], int(found["count"])
    match = resolve_gpu(gpu)
    return gpu_offer(
        key,
        match,
        gpu,
        dict(add_ons),
        provider=PROVIDER,
        instance_type=key,
        region=REGION,
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=price,  # the whole shape: h100_x2 4.98 is both GPUs
        currency=CURRENCY,
        gpu_count=Decimal(count),
    )


def parse_pricing(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every GPU shape of a ``/v1/pricing`` answer, sorted by key."""
    rates = payload.get("pricing") if isinstance(payload, Mapping) else None
    if not isinstance(rates, Mapping):
        raise CollectorError("thundercompute: response has no 'pricing' table")
    add_ons: dict[str, AttributeValue] = {
        attribute: _rate(rates, key) for key, attribute in ADD_ONS.items()
    }
    keys = sorted(k for k in rates if k not in ADD_ONS)
    return list(parse_each(keys, lambda k: parse_rate(k, rates, add_ons), skip, lambda k: str(k)))


class ThunderComputeCollector(GpuCloudCollector):
    """On-demand GPU shape prices on Thunder Compute."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Thunder Compute pricing table (on-demand GPU shapes)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # the table has no spot prices
    documented: ClassVar[str] = DOCUMENTED_URL

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings, api_key_if_set(PROVIDER, settings.thundercompute))

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_pricing(payload, ctx.skip))
