"""SaladCloud GPU prices from ``GET /organizations/{organization}/gpu-classes`` (API key).

Salad is a marketplace of consumer GPUs that Salad itself prices: it groups the machines
into **GPU classes** (``RTX 4090 (24 GB)``) and publishes, per class, one price for each
container-group **priority** (``high``, ``medium``, ``low``, ``batch``): a lower priority
costs less and is the first to lose its node when a higher one needs it. That list is
already the aggregate collectors/vastai.py builds from individual machines, so one offer
is one class at one priority: instance type the class name, ``offering_class`` the
priority, region ``global`` (a container group runs wherever a node is), priced at the
class's ``price`` (a decimal string, USD per GPU-hour; vCPU and memory are billed on
top, so they are not in it). Salad calls every priority a regular deployment, so all are
on-demand. ``is_high_demand: true`` makes the offer ``low``; otherwise the list says
nothing of capacity. The key travels in Salad's ``Salad-Api-Key`` header; the list is
an organization's, so its name is a setting too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from functools import partial
from typing import Any, ClassVar, Self
from urllib.parse import quote

from collectors.base import CollectorError, MissingCredentials, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    GpuCloudCollector,
    api_key_or_skip,
    decimal_text,
    documented_url,
    gpu_offer,
    text,
)
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel
from tracker.settings import Settings

__all__ = ["DOCUMENTED_URL", "SaladCollector", "parse_gpu_classes"]


PROVIDER = "salad"
DOCUMENTED_URL = "https://api.salad.com/api/public/organizations/{organization}/gpu-classes"
REGION = "global"
CURRENCY = "USD"


def parse_price(price: Any, gpu_class: Mapping[str, Any], name: str) -> Offer:
    """One class at one priority -> its offer."""
    if not isinstance(price, Mapping):
        raise SkipItem("malformed_item", f"price is {type(price).__name__}")
    priority = text(price, "priority")
    amount = decimal_text(price, "price")
    if amount is None:
        raise SkipItem("no_price", f"{priority}: price missing")
    if amount <= 0:
        raise SkipItem("zero_price", f"{priority}: price {amount}")
    high_demand = gpu_class.get("is_high_demand") is True
    attributes: dict[str, AttributeValue] = {
        "gpu_class_id": str(gpu_class.get("id") or ""),
        "gpu_class_type": str(gpu_class.get("gpu_class_type") or ""),
        "is_high_demand": high_demand,
    }
    match = resolve_gpu(name)
    return gpu_offer(
        f"{name} {priority}",
        match,
        name,
        attributes,
        provider=PROVIDER,
        instance_type=name,
        region=REGION,
        pricing=PricingModel.ON_DEMAND,
        offering_class=priority,
        price_per_hour=amount,
        currency=CURRENCY,
        gpu_count=Decimal(1),
        availability=Availability.LOW if high_demand else Availability.UNKNOWN,
    )


def _named(name: str, _price: Any) -> str:
    return name


def parse_gpu_classes(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every priced (class, priority) of a ``gpu-classes`` answer."""
    items = payload.get("items") if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise CollectorError("salad: response has no 'items' list")
    offers: list[Offer] = []
    for gpu_class in items:
        name = gpu_class.get("name") if isinstance(gpu_class, Mapping) else None
        prices = gpu_class.get("prices") if isinstance(gpu_class, Mapping) else None
        if not isinstance(name, str) or not name.strip() or not isinstance(prices, list):
            skip("malformed_item", f"GPU class without a name or prices ({gpu_class!r:.80})")
            continue
        assert isinstance(gpu_class, Mapping)
        label = name.strip()
        parse = partial(parse_price, gpu_class=gpu_class, name=label)
        offers += parse_each(prices, parse, skip, partial(_named, label))
    return offers


class SaladCollector(GpuCloudCollector):
    """GPU-class prices per priority on SaladCloud."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "SaladCloud GPU classes (per-priority GPU-hour prices)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # every priority is in the one list
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("Salad-Api-Key", "{}")

    def __init__(
        self, settings: Settings, api_key: str = "", organization: str = "", **kw: Any
    ) -> None:
        super().__init__(settings, api_key, **kw)
        self.organization = organization

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        key = api_key_or_skip(PROVIDER, settings.salad)
        organization = (settings.salad.organization or "").strip()
        if not organization:
            raise MissingCredentials("no organization: set GPU_TRACKER_SALAD__ORGANIZATION")
        return cls(settings, key, organization)

    @property
    def url(self) -> str:
        documented = DOCUMENTED_URL.format(organization=quote(self.organization, safe=""))
        return documented_url(documented, self.settings.salad.endpoint_url)

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_gpu_classes(payload, ctx.skip))
