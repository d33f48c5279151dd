"""RunPod pod prices from the GraphQL ``gpuTypes`` query (API key).

RunPod prices a GPU type **per GPU** for each cloud: Secure Cloud (RunPod's own
data centres) and Community Cloud (vetted hosts) are different products at
different prices, so each is its own offer (``offering_class`` ``secure`` /
``community``). A pod rents 1..``maxGpuCount`` GPUs of one type; the collector
stores the counts 1, 2, 4 and 8 that the type allows, priced per-GPU × count. A
price of 0 (or none) means the cloud does not offer the type: no offer, never a
free one. Spot (interruptible) prices are being retired by RunPod: stored as spot
where present and non-zero, their absence is normal. Prices are global (RunPod
does not price per data centre), so the region is ``global``.

Availability comes from ``lowestPrice(input: {gpuCount: 1, secureCloud: true})``, the
query RunPod's docs show for "Check GPU type availability" (runpod/docs
``sdks/graphql/manage-pods.mdx``: "if ``stockStatus`` is ``"Low"``, it means there
are very few GPUs of that type available"). So it speaks for Secure Cloud on-demand
offers only: ``High``/``Medium`` → available, ``Low`` → low, and a GPU count not in
``availableGpuCounts`` → unavailable (the docs' example: High with ``[1, 2, 4]``). A
null status with no available count is unavailable. Community Cloud and spot offers,
and any status RunPod adds later (kept raw in the ``stock_status`` attribute), are
unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "GPU_TYPES_QUERY", "RunPodCollector", "parse_gpu_types"]

log = logging.getLogger(__name__)

PROVIDER = "runpod"
DOCUMENTED_URL = "https://api.runpod.io/graphql"
REGION = "global"
GPU_COUNTS = (1, 2, 4, 8)
# The fields of the official SDK's own gpuTypes query (runpod-python, api/queries/gpus.py).
GPU_TYPES_QUERY = """query GpuTypes {
  gpuTypes {
    maxGpuCount id displayName manufacturer memoryInGb
    secureCloud communityCloud
    securePrice communityPrice secureSpotPrice communitySpotPrice
    lowestPrice(input: {gpuCount: 1, secureCloud: true}) { stockStatus availableGpuCounts }
  }
}"""
STOCK_STATUS = {
    "High": Availability.AVAILABLE,
    "Medium": Availability.AVAILABLE,
    "Low": Availability.LOW,
}
"""RunPod's ``stockStatus`` values (docs examples show ``High`` and ``Low``)."""
# (offering_class, cloud flag, on-demand field, spot field)
_CLOUDS = (
    ("secure", "secureCloud", "securePrice", "secureSpotPrice"),
    ("community", "communityCloud", "communityPrice", "communitySpotPrice"),
)


def _per_gpu(item: Mapping[str, Any], field: str) -> Decimal | None:
    """The per-GPU price, or ``None`` when the cloud does not offer it (absent, null, 0)."""
    value = number(item, field, required=False)
    if value is None or value == 0:
        return None
    if value < 0:
        raise SkipItem("malformed_item", f"{field} is negative ({value})")
    return value


def _max_count(item: Mapping[str, Any]) -> int:
    value = item.get("maxGpuCount")
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SkipItem("malformed_item", f"maxGpuCount missing or not a count ({value!r})")
    return value


def _secure_stock(item: Mapping[str, Any]) -> tuple[Availability, list[int] | None, Any]:
    """Secure Cloud's stock for the type: (availability, the GPU counts available now
    when RunPod lists them, the raw ``stockStatus``)."""
    lowest = item.get("lowestPrice")
    if not isinstance(lowest, Mapping):
        return Availability.UNKNOWN, None, None
    raw = lowest.get("stockStatus")
    counts = lowest.get("availableGpuCounts")
    available_counts = (
        [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
        if isinstance(counts, list)
        else None
    )
    if raw is None:
        none_left = available_counts is not None and not available_counts
        return (Availability.UNAVAILABLE if none_left else Availability.UNKNOWN), None, raw
    status = STOCK_STATUS.get(raw) if isinstance(raw, str) else None
    if status is None:
        log.info("runpod: unrecognised stockStatus %r kept as unknown", raw)
        return Availability.UNKNOWN, None, raw
    return status, available_counts, raw


def _availability(
    offering_class: str,
    pricing: PricingModel,
    count: int,
    stock: tuple[Availability, list[int] | None, Any],
) -> Availability:
    if offering_class != "secure" or pricing is not PricingModel.ON_DEMAND:
        return Availability.UNKNOWN  # the stock query asked about Secure Cloud pods
    status, available_counts, _ = stock
    if status.rentable and available_counts is not None and count not in available_counts:
        return Availability.UNAVAILABLE
    return status


def parse_gpu_type(item: Any, scope: frozenset[PricingModel]) -> list[Offer]:
    """Offers for one ``gpuTypes`` entry; raises :class:`SkipItem` if unpriceable."""
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"gpuTypes entry is {type(item).__name__}")
    gpu_id = text(item, "id")
    memory = number(item, "memoryInGb", required=False)
    prices: list[tuple[str, PricingModel, Decimal]] = []
    for offering_class, flag, on_demand_field, spot_field in _CLOUDS:
        if item.get(flag) is False:
            continue  # the type is not sold on this cloud
        for pricing, field in (
            (PricingModel.ON_DEMAND, on_demand_field),
            (PricingModel.SPOT, spot_field),
        ):
            per_gpu = _per_gpu(item, field)
            if per_gpu is not None and pricing in scope:
                prices.append((offering_class, pricing, per_gpu))
    if not prices:
        if not any(f in item for _, _, od, sp in _CLOUDS for f in (od, sp)):
            raise SkipItem("malformed_item", "no price field in the response")
        return []
    counts = [c for c in GPU_COUNTS if c <= _max_count(item)]
    match = resolve_gpu(gpu_id, memory)
    display = item.get("displayName")
    attributes: dict[str, AttributeValue] = {
        "display_name": display if isinstance(display, str) else None,
        "max_gpu_count": _max_count(item),
    }
    stock = _secure_stock(item)
    secure_attributes = dict(attributes)
    if stock[2] is not None:
        secure_attributes["stock_status"] = str(stock[2])  # RunPod's own word, as sent
    offers = []
    for offering_class, pricing, per_gpu in prices:
        for count in counts:
            base = secure_attributes if offering_class == "secure" else attributes
            offers.append(
                gpu_offer(
                    gpu_id,
                    match,
                    gpu_id,
                    {**base, "price_per_gpu": per_gpu},
                    provider=PROVIDER,
                    instance_type=f"{count}x {gpu_id}",
                    region=REGION,
                    pricing=pricing,
                    price_per_hour=per_gpu * count,
                    currency="USD",
                    gpu_count=Decimal(count),
                    gpu_memory_gib=memory,
                    offering_class=offering_class,
                    availability=_availability(offering_class, pricing, count, stock),
                )
            )
    return offers


def parse_gpu_types(
    payload: Any,
    skip: Callable[[str, str], None],
    scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> list[Offer]:
    """Every offer in a ``gpuTypes`` response; unpriceable entries are counted skips."""
    if isinstance(payload, Mapping) and payload.get("errors"):
        first = payload["errors"][0] if isinstance(payload["errors"], list) else payload["errors"]
        message = first.get("message") if isinstance(first, Mapping) else first
        raise CollectorError(f"runpod: GraphQL error: {message}")
    data = payload.get("data") if isinstance(payload, Mapping) else None
    types = data.get("gpuTypes") if isinstance(data, Mapping) else None
    if not isinstance(types, list):
        raise CollectorError("runpod: response has no data.gpuTypes list")
    listed = parse_each(
        types,
        lambda item: parse_gpu_type(item, scope),
        skip,
        where=lambda item: str(item.get("id") or "") if isinstance(item, Mapping) else "",
    )
    return [offer for offers in listed for offer in offers]


class RunPodCollector(GpuCloudCollector):
    """Per-GPU pod prices on RunPod's Secure and Community clouds."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "RunPod GraphQL gpuTypes (secure/community, on-demand/spot)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False
    """One gpuTypes query carries on-demand and spot prices together."""
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = self.scope(ctx)
        if not scope:
            return
        with self.client() as http:
            payload = self.fetch(http, "POST", json={"query": GPU_TYPES_QUERY})
        offers = parse_gpu_types(payload, ctx.skip, scope)
        log.info("runpod: %d offers", len(offers))
        yield from offers
