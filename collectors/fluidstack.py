"""Fluidstack GPU prices from ``GET /list_available_configurations`` (API key in ``api-key``).

Fluidstack's documentation ("Configurations") answers this call with one object per GPU
type: ``gpu_type`` (``H100_PCIE_80GB``: model, socket and memory in one name),
``gpu_counts`` (the instance sizes sold, in GPUs), ``price_per_gpu_hr`` (a decimal string),
``estimated_provisioning_time_minutes`` and ``regions``. "The value you specify for
gpu_count determines the CPU count, as well as the RAM and NVME storage sizes", which the
list does not state. So one offer is one GPU type x GPU count x region, on demand, priced
``price_per_gpu_hr`` x the count (as SkyPilot's ``fetch_fluidstack.py`` prices it), in US
dollars (the answer names no currency; Fluidstack sells in USD). The list says nothing of
capacity per region, so availability is left unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Interconnect, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "FluidstackCollector", "parse_configurations"]

PROVIDER = "fluidstack"
DOCUMENTED_URL = "https://platform.fluidstack.io/list_available_configurations"
CURRENCY = "USD"
_MEMORY = re.compile(r"_(\d+)GB$", re.IGNORECASE)


def _memory_gib(gpu_type: str) -> Decimal | None:
    """``H100_PCIE_80GB`` -> 80: the type's name carries its memory per GPU."""
    found = _MEMORY.search(gpu_type)
    return Decimal(found.group(1)) if found else None


def _interconnect(gpu_type: str) -> Interconnect:
    upper = gpu_type.upper()
    if "SXM" in upper or "NVLINK" in upper:
        return Interconnect.NVLINK
    return Interconnect.PCIE if "PCIE" in upper else Interconnect.UNKNOWN


def _counts(config: Mapping[str, Any]) -> list[int]:
    counts = config.get("gpu_counts")
    if not isinstance(counts, list) or not counts:
        raise SkipItem("malformed_item", f"gpu_counts is not a list of counts ({counts!r:.80})")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts):
        raise SkipItem("malformed_item", f"gpu_counts holds a non-count ({counts!r:.80})")
    return sorted(set(counts))


def _regions(config: Mapping[str, Any]) -> list[str]:
    regions = config.get("regions")
    if not isinstance(regions, list) or not regions:
        raise SkipItem("malformed_item", f"regions is not a list of names ({regions!r:.80})")
    if not all(isinstance(r, str) and r.strip() for r in regions):
        raise SkipItem("malformed_item", f"regions holds a non-name ({regions!r:.80})")
    return sorted({r.strip() for r in regions})


def parse_configuration(config: Any) -> list[Offer]:
    """One configuration object -> an offer per GPU count and region."""
    if not isinstance(config, Mapping):
        raise SkipItem("malformed_item", f"configuration is {type(config).__name__}")
    gpu_type = text(config, "gpu_type")
    per_gpu = loose_number(config, "price_per_gpu_hr")
    if per_gpu is None:
        raise SkipItem("no_price", "price_per_gpu_hr missing")
    if per_gpu <= 0:
        raise SkipItem("zero_price", f"price_per_gpu_hr {per_gpu}")
    counts, regions = _counts(config), _regions(config)
    memory = _memory_gib(gpu_type)
    match = resolve_gpu(gpu_type, memory)
    provisioning = config.get("estimated_provisioning_time_minutes")
    attributes: dict[str, AttributeValue] = {
        "price_per_gpu_hour": per_gpu,
        "estimated_provisioning_minutes": (
            provisioning
            if isinstance(provisioning, int) and not isinstance(provisioning, bool)
            else None
        ),
    }
    return [
        gpu_offer(
            f"{gpu_type}::{count}",
            match,
            gpu_type,
            attributes,
            provider=PROVIDER,
            instance_type=f"{gpu_type}::{count}",
            region=region,
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=per_gpu * count,  # "5" per GPU-hour x 8 GPUs = 40 per hour
            currency=CURRENCY,
            gpu_count=Decimal(count),
            gpu_memory_gib=memory,
            interconnect=_interconnect(gpu_type),
        )
        for count in counts
        for region in regions
    ]


def parse_configurations(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every offer of a ``list_available_configurations`` answer; a configuration that
    cannot be priced is a counted skip naming its GPU type."""
    if not isinstance(payload, list):
        raise CollectorError("fluidstack: response is not a list of configurations")
    offers: list[Offer] = []
    for config in payload:
        try:
            offers.extend(parse_configuration(config))
        except SkipItem as exc:
            label = config.get("gpu_type") if isinstance(config, Mapping) else None
            skip(exc.reason, f"{label}: {exc.detail}" if isinstance(label, str) else exc.detail)
    return offers


class FluidstackCollector(GpuCloudCollector):
    """On-demand GPU configuration prices on Fluidstack, per GPU count and region."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Fluidstack available configurations (on-demand, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # the list has no spot prices
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("api-key", "{}")

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_configurations(payload, ctx.skip))
