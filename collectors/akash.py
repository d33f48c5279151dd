"""Akash Network GPU prices from the Console API's ``GET /v1/gpu-prices`` (public, no key).

Akash is a marketplace: providers bid on each deployment, so there is no list price.
The Console API summarises the bids of the last 14 to 31 days per GPU model (vendor,
model, memory, interface): for each provider its best bid for a deployment of one
such GPU, converted to USD per hour at the day's AKT price (Akash's
``GpuPriceService.getGpuPrices``), and then ``min``, ``max``, ``avg``, ``med`` and
``weightedAverage`` (weighted by each provider's GPUs) over those providers. That is
already the aggregate collectors/vastai.py builds for Vast, so one offer is one entry
of ``models``: the price is ``price.min`` (the cheapest provider's best bid, as Vast's
series are the cheapest offer), the other statistics are attributes, and the model's
``availability`` (GPUs free now out of those listed) sets ``available`` /
``unavailable``. Leases run until the tenant closes them, so they are on-demand. A
model with ``price: null`` (no usable bid in the window) is a counted skip.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number, text
from tracker.catalog import GpuMatch, resolve_gpu
from tracker.models import AttributeValue, Availability, Interconnect, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "AkashCollector", "parse_gpu_prices", "parse_model"]


PROVIDER = "akash"
DOCUMENTED_URL = "https://console-api.akash.network/v1/gpu-prices"
REGION = "global"
"""The summary is network-wide; the API names no provider location."""
_GI = re.compile(r"^(\d+(?:\.\d+)?)\s*Gi$")
_STATS = ("max", "avg", "med", "weightedAverage")


def _memory_gib(ram: str) -> Decimal | None:
    """``80Gi`` -> 80 (Kubernetes' binary suffix, as Akash's provider configs write it)."""
    found = _GI.match(ram.strip())
    return Decimal(found.group(1)) if found else None


def _counts(model: Mapping[str, Any], field: str) -> tuple[int, int]:
    value = model.get(field)
    total = value.get("total") if isinstance(value, Mapping) else None
    free = value.get("available") if isinstance(value, Mapping) else None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (total, free)):
        raise SkipItem("malformed_item", f"{field} is not total/available counts ({value!r:.80})")
    assert isinstance(total, int) and isinstance(free, int)
    return total, free


def _match(model: str, interface: str, memory: Decimal | None) -> tuple[str, GpuMatch]:
    """The raw name sent (``h100 SXM5``) and its match; the model alone when the
    interface spelling is not an alias (``h200 SXM5``, ``rtx4090 PCIe``)."""
    raw = f"{model} {interface}".strip()
    match = resolve_gpu(raw, memory)
    if not match.known and interface:
        alone = resolve_gpu(model, memory)
        if alone.known:
            match = alone
    return raw, match


def _interconnect(interface: str) -> Interconnect:
    lowered = interface.lower()
    if lowered.startswith("sxm"):
        return Interconnect.NVLINK
    return Interconnect.PCIE if lowered.startswith("pcie") else Interconnect.UNKNOWN


def parse_model(model: Any) -> Offer:
    """One ``models`` entry -> its offer; no price is a counted ``no_price`` skip."""
    if not isinstance(model, Mapping):
        raise SkipItem("malformed_item", f"model is {type(model).__name__}")
    vendor, name = text(model, "vendor"), text(model, "model")
    ram, interface = text(model, "ram"), str(model.get("interface") or "")
    total, free = _counts(model, "availability")
    providers, providers_free = _counts(model, "providerAvailability")
    price = model.get("price")
    if price is None:
        raise SkipItem("no_price", "no bid in the Console API's window (price null)")
    if not isinstance(price, Mapping):
        raise SkipItem("malformed_item", f"price is {type(price).__name__}")
    currency = text(price, "currency")
    cheapest = number(price, "min")
    assert cheapest is not None
    if cheapest <= 0:
        raise SkipItem("zero_price", f"price.min {cheapest}")
    memory = _memory_gib(ram)
    raw, match = _match(name, interface, memory)
    attributes: dict[str, AttributeValue] = {
        f"price_{stat}": number(price, stat, required=False) for stat in _STATS
    }
    attributes |= {
        "vendor": vendor,
        "interface": interface,
        "gpus_total": total,
        "gpus_available": free,
        "providers_total": providers,
        "providers_available": providers_free,
    }
    instance_type = f"{vendor} {name} {ram} {interface}".strip()
    return gpu_offer(
        instance_type,
        match,
        raw,
        attributes,
        provider=PROVIDER,
        instance_type=instance_type,
        region=REGION,
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=cheapest,
        currency=currency,
        gpu_count=Decimal(1),
        gpu_memory_gib=memory,
        interconnect=_interconnect(interface),
        availability=Availability.AVAILABLE if free > 0 else Availability.UNAVAILABLE,
    )


def _label(model: Any) -> str:
    if not isinstance(model, Mapping):
        return ""
    parts = (model.get(k) for k in ("vendor", "model", "ram", "interface"))
    return " ".join(str(p) for p in parts if p)


def parse_gpu_prices(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every priced GPU model of a ``/v1/gpu-prices`` answer."""
    models = payload.get("models") if isinstance(payload, Mapping) else None
    if not isinstance(models, list):
        raise CollectorError("akash: response has no 'models' list")
    return list(parse_each(models, parse_model, skip, _label))


class AkashCollector(GpuCloudCollector):
    """Network-wide GPU bid prices on Akash, one offer per GPU model."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Akash Console API GPU prices (marketplace bids, per GPU model)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # Akash leases are not interruptible
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_gpu_prices(payload, ctx.skip))
