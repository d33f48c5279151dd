"""Lambda Cloud on-demand prices from ``GET /api/v1/instance-types`` (API key).

Lambda prices an instance type once, in integer US cents per hour, and names the
regions that have capacity for it right now (``regions_with_capacity_available``).
Each (type, region listed there) is an offer marked ``available``. Lambda does not
name the regions a type is sold in without capacity, so a region that ran out would
simply vanish from the response: a (type, region) this collector listed before
(``ctx.listed_keys()``), of a type Lambda still lists, stays an offer marked
``unavailable`` instead of being delisted. A type Lambda stops listing is delisted;
a type never seen with capacity has no known region and yields no offer.

GPU count comes from ``specs.gpus`` (cross-checked against the ``8x`` in the
description, read as a whole number) and the model from ``gpu_description``
(``"H100 (80 GB SXM5)"``: name, memory in GB, form factor) through the catalog.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import (
    AttributeValue,
    Availability,
    Interconnect,
    Offer,
    PricingModel,
)

__all__ = ["DOCUMENTED_URL", "LambdaCollector", "parse_instance_types", "parse_item"]

log = logging.getLogger(__name__)

PROVIDER = "lambda"
DOCUMENTED_URL = "https://cloud.lambda.ai/api/v1/instance-types"
_CENTS = Decimal(100)
# "8x H100 (80 GB SXM5)": the whole leading number, however many digits.
_COUNT_PREFIX = re.compile(r"^\s*(\d+)\s*x\s", re.IGNORECASE)
# "H100 (80 GB SXM5)", "GH200 (96 GB)", "A10 (24 GB PCIe)"
_GPU_DESCRIPTION = re.compile(
    r"^(?P<model>.+?)\s*\(\s*(?P<memory>\d+(?:\.\d+)?)\s*GB(?:\s+(?P<form>[^)]*?))?\s*\)\s*$",
    re.IGNORECASE,
)


def _interconnect(form: str) -> Interconnect:
    upper = form.upper()
    if "SXM" in upper:
        return Interconnect.NVLINK
    if "PCIE" in upper:
        return Interconnect.PCIE
    return Interconnect.UNKNOWN


def _count(specs: Mapping[str, Any], description: str) -> Decimal:
    gpus = number(specs, "gpus")
    assert gpus is not None
    if gpus != gpus.to_integral_value() or gpus < 0:
        raise SkipItem("malformed_item", f"specs.gpus is not a whole number ({gpus})")
    prefix = _COUNT_PREFIX.match(description)
    if prefix is not None and Decimal(prefix.group(1)) != gpus:
        raise SkipItem(
            "inconsistent_gpu_count",
            f"specs.gpus {gpus} but the description says {description!r}",
        )
    return gpus


def parse_item(name: str, entry: Any, known_regions: Collection[str] = ()) -> list[Offer]:
    """Offers for one instance type: one ``available`` per region with capacity, and one
    ``unavailable`` per ``known_regions`` entry (where it was listed before) without.

    A type without GPUs (``specs.gpus`` 0) is not a GPU offer and yields nothing.
    Raises :class:`SkipItem` when the type cannot be priced.
    """
    if not isinstance(entry, Mapping) or not isinstance(entry.get("instance_type"), Mapping):
        raise SkipItem("malformed_item", f"{name}: no instance_type object")
    itype: Mapping[str, Any] = entry["instance_type"]
    specs = itype.get("specs")
    if not isinstance(specs, Mapping):
        raise SkipItem("malformed_item", f"{name}: no specs object")
    raw_description = itype.get("description")
    description = raw_description if isinstance(raw_description, str) else ""
    count = _count(specs, description)
    if count == 0:
        return []
    cents = itype.get("price_cents_per_hour")
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise SkipItem("malformed_item", f"price_cents_per_hour is not an integer ({cents!r})")
    if cents <= 0:
        raise SkipItem("zero_price", f"price_cents_per_hour {cents}")
    price = Decimal(cents) / _CENTS  # exact: 3592 cents -> 35.92
    gpu_description = text(itype, "gpu_description")
    parsed = _GPU_DESCRIPTION.match(gpu_description)
    memory = Decimal(parsed.group("memory")) if parsed else None
    form = (parsed.group("form") or "") if parsed else ""
    match = resolve_gpu(gpu_description, memory)
    regions = entry.get("regions_with_capacity_available")
    if not isinstance(regions, list):
        raise SkipItem("malformed_item", "regions_with_capacity_available is not a list")
    attributes: dict[str, AttributeValue] = {
        "description": description,
        "gpu_description": gpu_description,
        "storage_gib": number(specs, "storage_gib", required=False),
        "price_cents_per_hour": cents,
    }
    if form:
        attributes["gpu_form_factor"] = form
    listed: list[tuple[str, Any, Availability]] = []
    for region in regions:
        if not isinstance(region, Mapping):
            raise SkipItem("malformed_item", f"region entry {region!r} is not an object")
        listed.append((text(region, "name"), region.get("description"), Availability.AVAILABLE))
    with_capacity = {region_name for region_name, _, _ in listed}
    listed += [
        (r, None, Availability.UNAVAILABLE) for r in sorted(set(known_regions) - with_capacity)
    ]
    return [
        gpu_offer(
            name,
            match,
            gpu_description,
            {**attributes, "region_description": where} if isinstance(where, str) else attributes,
            provider=PROVIDER,
            instance_type=text(itype, "name") if itype.get("name") else name,
            region=region_name,
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=price,
            currency="USD",
            gpu_count=count,
            gpu_memory_gib=memory,
            vcpus=number(specs, "vcpus", required=False),
            memory_gib=number(specs, "memory_gib", required=False),
            interconnect=_interconnect(form),
            availability=availability,
        )
        for region_name, where, availability in listed
    ]


def parse_instance_types(
    payload: Any,
    skip: Callable[[str, str], None],
    known: Mapping[str, Collection[str]] | None = None,
) -> list[Offer]:
    """Every offer in an ``/instance-types`` response; unpriceable types are skips.

    ``known`` maps an instance type to the regions it was listed in before (what the
    store holds), so those without capacity now stay offers marked unavailable.
    """
    data = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(data, Mapping):
        raise CollectorError("lambda: response has no 'data' object of instance types")
    before = known or {}

    def parse(kv: tuple[Any, Any]) -> list[Offer]:
        name, entry = str(kv[0]), kv[1]
        itype = entry.get("instance_type") if isinstance(entry, Mapping) else None
        real = itype.get("name") if isinstance(itype, Mapping) else None
        return parse_item(name, entry, before.get(real if isinstance(real, str) else name, ()))

    listed = parse_each(data.items(), parse, skip, where=lambda kv: str(kv[0]))
    return [offer for offers in listed for offer in offers]


class LambdaCollector(GpuCloudCollector):
    """On-demand GPU instance prices from Lambda Cloud."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Lambda Cloud instance types (on-demand, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False
    """Lambda sells no spot capacity."""
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        with self.client() as http:
            payload = self.fetch(http, "GET")
        known: dict[str, set[str]] = {}
        for key in ctx.listed_keys():
            known.setdefault(key[1], set()).add(key[2])  # (provider, instance_type, region, …)
        offers = parse_instance_types(payload, ctx.skip, known)
        log.info("lambda: %d offers", len(offers))
        yield from offers
