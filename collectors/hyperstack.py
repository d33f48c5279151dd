"""Hyperstack GPU prices: ``GET /v1/core/flavors`` joined to ``GET /v1/pricebook`` (API key).

Hyperstack (NexGen Cloud's Infrahub API) lists its virtual machine shapes and their
prices apart. ``/core/flavors`` answers ``{status, message, data}`` where ``data`` holds one
group per GPU model and region (``gpu``, ``region_name``, ``flavors``), each flavor with
``name``, ``region_name``, ``cpu``, ``ram`` (GB), ``disk``, ``ephemeral``, ``gpu``,
``gpu_count`` and ``stock_available`` (field names as in NexGen Cloud's own SDK,
``hyperstack`` ``FlavorFields``). ``/pricebook`` is a list of ``{name, value,
original_value, discount_applied, ...}``: "hourly running costs for all resources", where
``value`` is the "price value for the GPU per hour" and ``original_value`` the price
"before any discounts". A GPU flavor's hourly price is its GPU's pricebook rate times its
``gpu_count`` (what SkyPilot's ``fetch_hyperstack.py`` and CoCalc's Hyperstack pricing
compute; root disk and public IP are billed on top as resources of their own).

One offer is one flavor in one region, on demand, priced at the list rate
(``original_value``: an account's discount is the read layer's business, DESIGN.md), in
USD (Hyperstack bills in dollars). ``stock_available`` sets ``available`` /
``unavailable``. A flavor without a GPU is no GPU offer; one whose GPU the pricebook does
not name is a counted ``no_price`` skip (SkyPilot notes an H200 listed without a price).
The key is sent in the ``api_key`` header, as Hyperstack's SDK and docs send it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    GpuCloudCollector,
    documented_url,
    gpu_offer,
    loose_number,
    number,
    text,
)
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Interconnect, Offer, PricingModel

__all__ = [
    "FLAVORS_URL",
    "PRICEBOOK_URL",
    "HyperstackCollector",
    "parse_flavors",
    "parse_pricebook",
]

log = logging.getLogger(__name__)

PROVIDER = "hyperstack"
FLAVORS_URL = "https://infrahub-api.nexgencloud.com/v1/core/flavors"
PRICEBOOK_URL = "https://infrahub-api.nexgencloud.com/v1/pricebook"
CURRENCY = "USD"


def _rate(entry: Mapping[str, Any]) -> Decimal | None:
    """The list rate of one pricebook entry: ``original_value`` (before discounts); when
    the entry sends none and says no discount applies, ``value`` is that list rate."""
    original = loose_number(entry, "original_value")
    if original is not None:
        return original
    return loose_number(entry, "value") if entry.get("discount_applied") is not True else None


def parse_pricebook(payload: Any) -> dict[str, tuple[Decimal | None, Decimal | None]]:
    """Resource name -> (list rate, this account's rate) per hour; numbers or numeric
    strings (both have been seen), an unreadable entry left out (its flavors then skip)."""
    if not isinstance(payload, list):
        raise CollectorError("hyperstack: pricebook is not a list")
    rates: dict[str, tuple[Decimal | None, Decimal | None]] = {}
    for entry in payload:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        try:
            rates[entry["name"].strip()] = (_rate(entry), loose_number(entry, "value"))
        except SkipItem as exc:
            log.warning("hyperstack: pricebook entry %s unreadable: %s", entry["name"], exc)
    return rates


def _interconnect(flavor_name: str, gpu: str) -> Interconnect:
    lowered = f"{flavor_name} {gpu}".lower()
    if "nvlink" in lowered or "sxm" in lowered:
        return Interconnect.NVLINK
    return Interconnect.PCIE if "pcie" in lowered else Interconnect.UNKNOWN


def _stock(flavor: Mapping[str, Any]) -> Availability:
    state = flavor.get("stock_available")
    if state is None:
        return Availability.UNKNOWN
    if not isinstance(state, bool):
        raise SkipItem("malformed_item", f"stock_available is {state!r}")
    return Availability.AVAILABLE if state else Availability.UNAVAILABLE


def parse_flavor(
    flavor: Any,
    group: Mapping[str, Any],
    rates: Mapping[str, tuple[Decimal | None, Decimal | None]],
) -> Offer | None:
    """One flavor -> its offer; None for a flavor without a GPU (not a GPU offer)."""
    if not isinstance(flavor, Mapping):
        raise SkipItem("malformed_item", f"flavor is {type(flavor).__name__}")
    name = text(flavor, "name")
    count = number(flavor, "gpu_count", required=False)
    gpu = flavor.get("gpu") or group.get("gpu")
    if not count or not isinstance(gpu, str) or not gpu.strip():
        return None  # a CPU-only flavor
    gpu = gpu.strip()
    region = flavor.get("region_name") or group.get("region_name")
    if not isinstance(region, str) or not region.strip():
        raise SkipItem("malformed_item", "region_name missing")
    listed, account = rates.get(gpu, (None, None))
    if listed is None:
        raise SkipItem("no_price", f"the pricebook has no rate for GPU {gpu!r}")
    if listed <= 0:
        raise SkipItem("zero_price", f"{gpu} rate {listed}")
    attributes: dict[str, AttributeValue] = {
        "price_per_gpu_hour": listed,
        "account_price_per_gpu_hour": account,  # ``value``: after this key's discounts
        "root_disk_gb": number(flavor, "disk", required=False),
        "ephemeral_disk_gb": number(flavor, "ephemeral", required=False),
    }
    return gpu_offer(
        name,
        resolve_gpu(gpu),
        gpu,
        attributes,
        provider=PROVIDER,
        instance_type=name,
        region=region.strip(),
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=listed * count,  # n3-H100x2: 2 x the H100's hourly rate
        currency=CURRENCY,
        gpu_count=count,
        vcpus=number(flavor, "cpu", required=False),
        memory_gib=number(flavor, "ram", required=False),
        interconnect=_interconnect(name, gpu),
        availability=_stock(flavor),
    )


def _label(flavor: Any) -> str:
    name = flavor.get("name") if isinstance(flavor, Mapping) else None
    return name if isinstance(name, str) else ""


def parse_flavors(
    payload: Any,
    rates: Mapping[str, tuple[Decimal | None, Decimal | None]],
    skip: Callable[[str, str], None],
) -> list[Offer]:
    """Every GPU flavor of a ``FlavorListResponse``, priced from ``rates``."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise CollectorError("hyperstack: flavors response has no 'data' list")
    if payload.get("status") is False:
        raise CollectorError(f"hyperstack: flavors request failed: {payload.get('message')!r}")
    offers: list[Offer] = []
    for group in payload["data"]:
        if not isinstance(group, Mapping) or not isinstance(group.get("flavors"), list):
            skip("malformed_item", f"flavor group without a flavors list ({group!r:.80})")
            continue
        offers.extend(parse_each(group["flavors"], _in_group(group, rates), skip, _label))
    return offers


def _in_group(
    group: Mapping[str, Any], rates: Mapping[str, tuple[Decimal | None, Decimal | None]]
) -> Callable[[Any], Offer | None]:
    return lambda flavor: parse_flavor(flavor, group, rates)


class HyperstackCollector(GpuCloudCollector):
    """On-demand GPU flavor prices on Hyperstack, per region."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Hyperstack flavors priced from its pricebook (on-demand, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # the pricebook names no spot rates
    documented: ClassVar[str] = FLAVORS_URL
    key_header: ClassVar[tuple[str, str]] = ("api_key", "{}")

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        origin = self.section(self.settings).endpoint_url
        with self.client() as http:
            rates = parse_pricebook(self.fetch(http, "GET", documented_url(PRICEBOOK_URL, origin)))
            payload = self.fetch(http, "GET")
        offers = parse_flavors(payload, rates, ctx.skip)
        log.info("%s: %d offers", self.name, len(offers))
        yield from offers
