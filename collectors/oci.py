"""Oracle Cloud GPU shape prices from the public price list (cetools, no credentials).

The price list holds one row per *part*; the GPU shapes' parts are billed per
GPU-hour, so a shape costs its part's ``PAY_AS_YOU_GO`` price × GPU count
(:mod:`collectors.oci_shapes`). Offers come only from the shape table: rows that
look like GPU-hours but are not a shape's price (NVIDIA AI Enterprise licences,
Cloud@Customer, VMware, Roving Edge) never become offers, and a table part whose
row turns out to be one of those is a counted skip (Oracle re-used a number).
OCI prices are the same in every commercial region, so the region is ``global``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.fabric_docs import documented_network
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number
from collectors.oci_shapes import PREEMPTIBLE_DISCOUNT, PREEMPTIBLE_RULE, SHAPES, OciShape
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "OciCollector", "PartPrice", "parse_price_list", "shape_offers"]

log = logging.getLogger(__name__)

PROVIDER = "oci"
DOCUMENTED_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/"
CURRENCY = "USD"
REGION = "global"
GPU_HOUR_METRIC = "GPU Per Hour"
# Rows sold per GPU-hour that are not a GPU shape's own price.
_NOT_A_SHAPE = re.compile(
    r"AI Enterprise|Cloud@Customer|VMware|Roving Edge|Licen[cs]e", re.IGNORECASE
)


class PartPrice:
    """One price-list row: part number, name and the USD pay-as-you-go price."""

    __slots__ = ("display_name", "metric", "part_number", "price")

    def __init__(self, part_number: str, display_name: str, metric: str, price: Decimal) -> None:
        self.part_number = part_number
        self.display_name = display_name
        self.metric = metric
        self.price = price


def _payg_usd(item: Mapping[str, Any]) -> Decimal:
    localizations = item.get("currencyCodeLocalizations")
    if not isinstance(localizations, list):
        raise SkipItem("malformed_item", "currencyCodeLocalizations is not a list")
    found: list[Decimal] = []
    for loc in localizations:
        if not isinstance(loc, Mapping) or loc.get("currencyCode") != CURRENCY:
            continue
        for price in loc.get("prices") or []:
            if isinstance(price, Mapping) and price.get("model") == "PAY_AS_YOU_GO":
                value = number(price, "value")
                assert value is not None
                found.append(value)
    if len(found) != 1:
        raise SkipItem(
            "malformed_item", f"{len(found)} USD PAY_AS_YOU_GO prices (expected exactly one)"
        )
    return found[0]


def parse_price_list(
    payload: Any, parts: set[str], skip: Callable[[str, str], None]
) -> dict[str, PartPrice]:
    """Prices of the ``parts`` the shape table uses; other rows are not read."""
    items = payload.get("items") if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise CollectorError("oci: response has no 'items' list")
    prices: dict[str, PartPrice] = {}
    for item in items:
        part = item.get("partNumber") if isinstance(item, Mapping) else None
        if part not in parts:
            continue  # licences, Cloud@Customer, VMware, CPU, storage …: not a shape's price
        assert isinstance(item, Mapping) and isinstance(part, str)
        try:
            prices[part] = PartPrice(
                part,
                str(item.get("displayName") or ""),
                str(item.get("metricName") or ""),
                _payg_usd(item),
            )
        except SkipItem as exc:
            skip(exc.reason, f"part {part}: {exc.detail}")
    return prices


def _check_part(shape: OciShape, part: PartPrice | None) -> PartPrice:
    if part is None:
        raise SkipItem(
            "part_not_listed", f"{shape.name}: part {shape.part_number} not in the price list"
        )
    if part.metric != GPU_HOUR_METRIC or _NOT_A_SHAPE.search(part.display_name):
        raise SkipItem(
            "part_mismatch",
            f"{shape.name}: part {part.part_number} is {part.display_name!r} "
            f"({part.metric!r}), not a GPU-hour of the shape",
        )
    if part.price <= 0:
        raise SkipItem("zero_price", f"{shape.name}: part {part.part_number} price {part.price}")
    return part


def shape_offers(
    shape: OciShape, part: PartPrice | None, scope: frozenset[PricingModel], preemptible: bool
) -> list[Offer]:
    """On-demand (and preemptible-as-spot where supported) offers for one shape."""
    checked = _check_part(shape, part)
    on_demand = checked.price * shape.gpu_count
    match = resolve_gpu(shape.gpu, shape.vram_gib)
    attributes: dict[str, AttributeValue] = {
        "part_number": checked.part_number,
        "part_name": checked.display_name,
        "price_per_gpu_hour": checked.price,
        "ocpus": shape.ocpus,
        "memory_gb": shape.memory_gb,
        "hardware_source": shape.source,
    }
    prices: list[tuple[PricingModel, Decimal, dict[str, AttributeValue]]] = []
    if PricingModel.ON_DEMAND in scope:
        prices.append((PricingModel.ON_DEMAND, on_demand, attributes))
    if PricingModel.SPOT in scope and preemptible and shape.preemptible:
        spot_attributes = {**attributes, "spot_rule": PREEMPTIBLE_RULE}
        prices.append((PricingModel.SPOT, on_demand * PREEMPTIBLE_DISCOUNT, spot_attributes))
    return [
        gpu_offer(
            shape.name,
            match,
            shape.gpu,
            attrs,
            provider=PROVIDER,
            instance_type=shape.name,
            region=REGION,
            pricing=pricing,
            price_per_hour=price,
            currency=CURRENCY,
            gpu_count=Decimal(shape.gpu_count),
            gpu_memory_gib=shape.vram_gib,
            vcpus=shape.vcpus,
            memory_gib=Decimal(shape.memory_gb),
            interconnect=shape.interconnect,
            **documented_network(PROVIDER, shape.name),
            offering_class="preemptible" if pricing is PricingModel.SPOT else "",
        )
        for pricing, price, attrs in prices
    ]


def parse_offers(
    payload: Any,
    skip: Callable[[str, str], None],
    scope: frozenset[PricingModel] = frozenset(PricingModel),
    *,
    preemptible: bool = True,
    shapes: Mapping[str, OciShape] = SHAPES,
) -> list[Offer]:
    """Every shape's offers from one price-list response."""
    parts = parse_price_list(payload, {s.part_number for s in shapes.values()}, skip)
    listed = parse_each(
        shapes.values(),
        lambda shape: shape_offers(shape, parts.get(shape.part_number), scope, preemptible),
        skip,
    )
    return [offer for offers in listed for offer in offers]


class OciCollector(GpuCloudCollector):
    """GPU shape prices (on-demand, preemptible as spot) on Oracle Cloud."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Oracle Cloud public price list x documented GPU shapes"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False
    """Preemptible prices are derived from the same price list as on-demand."""
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = self.scope(ctx)
        if not scope:
            return
        with self.client() as http:
            payload = self.fetch(http, "GET", params={"currencyCode": CURRENCY})
        preemptible = self.settings.oci.include_preemptible
        offers = parse_offers(payload, ctx.skip, scope, preemptible=preemptible)
        log.info("oci: %d offers", len(offers))
        yield from offers
