"""JarvisLabs GPU prices from ``GET /misc/server_meta`` (API key).

``server_meta`` has one row per (GPU type, region, workload type): ``price_per_hour``
and ``spot_price`` **per GPU**, ``num_gpus`` (the most GPUs one instance takes),
``cpus_per_gpu`` and ``ram_per_gpu`` (an instance grows with its GPUs), ``vram`` per
GPU, and how many GPUs are free now (``effective_num_free_devices``, else
``num_free_devices``; ``spot_num_free_devices`` for spot). One offer is ``Nx <gpu_type>``
for N in 1, 2, 4, 8 up to ``num_gpus`` (1 when absent), priced N x the per-GPU price,
``available`` when N GPUs are free and ``unavailable`` when not; the row's
``workload_type`` (``vm``, ``container``, or none on older rows) is the offering class,
since JarvisLabs lists the same GPU as both products. Numbers arrive as numbers or
numeric strings (``"vram": "24"``); anything else is a counted skip. CPU-only
``cpu_meta`` combinations are not GPU offers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "JarvisLabsCollector", "parse_server_meta"]


PROVIDER = "jarvislabs"
DOCUMENTED_URL = "https://backendprod.jarvislabs.net/misc/server_meta"
GPU_COUNTS = (1, 2, 4, 8)
# (pricing, price field, free-GPU fields in order of preference)
_PRICES = (
    (PricingModel.ON_DEMAND, "price_per_hour", ("effective_num_free_devices", "num_free_devices")),
    (PricingModel.SPOT, "spot_price", ("spot_num_free_devices",)),
)


def parse_row(row: Any, scope: frozenset[PricingModel]) -> list[Offer]:
    """The offers of one ``server_meta`` row; :class:`SkipItem` if it cannot be priced."""
    if not isinstance(row, Mapping):
        raise SkipItem("malformed_item", f"row is {type(row).__name__}")
    gpu_type, region = text(row, "gpu_type"), text(row, "region")
    workload = row.get("workload_type")
    largest = loose_number(row, "num_gpus") or Decimal(1)
    vram = loose_number(row, "vram")
    cpus, ram = loose_number(row, "cpus_per_gpu"), loose_number(row, "ram_per_gpu")
    match = resolve_gpu(gpu_type, vram)
    attributes: dict[str, AttributeValue] = {"max_gpus_per_instance": largest}
    offers = []
    for pricing, field, free_fields in _PRICES:
        per_gpu = loose_number(row, field)
        if not per_gpu or pricing not in scope:  # absent, null or 0: not sold this way
            continue
        free = next((v for v in (loose_number(row, f) for f in free_fields) if v is not None), None)
        for count in (c for c in GPU_COUNTS if c <= largest):
            if free is None:
                availability = Availability.UNKNOWN
            else:
                rentable = count <= free
                availability = Availability.AVAILABLE if rentable else Availability.UNAVAILABLE
            offers.append(
                gpu_offer(
                    f"{count}x {gpu_type}",
                    match,
                    gpu_type,
                    {**attributes, "price_per_gpu": per_gpu, "free_gpus": free},
                    provider=PROVIDER,
                    instance_type=f"{count}x {gpu_type}",
                    region=region,
                    pricing=pricing,
                    price_per_hour=per_gpu * count,  # 2 x L4 at 0.44 = 0.88
                    currency="USD",
                    gpu_count=Decimal(count),
                    gpu_memory_gib=vram,
                    vcpus=cpus * count if cpus is not None else None,
                    memory_gib=ram * count if ram is not None else None,
                    offering_class=workload if isinstance(workload, str) else "",
                    availability=availability,
                )
            )
    if not offers and loose_number(row, "price_per_hour") is None:
        raise SkipItem("malformed_item", "price_per_hour missing")
    return offers


def parse_server_meta(
    payload: Any,
    skip: Callable[[str, str], None],
    scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> list[Offer]:
    """Every GPU offer in a ``server_meta`` response; unpriceable rows are counted skips."""
    rows = payload.get("server_meta") if isinstance(payload, Mapping) else None
    if not isinstance(rows, list):
        raise CollectorError("jarvislabs: response has no 'server_meta' list")

    def where(row: Any) -> str:
        if not isinstance(row, Mapping):
            return ""
        return f"{row.get('gpu_type')} {row.get('region')} {row.get('workload_type')}"

    found = parse_each(rows, lambda row: parse_row(row, scope), skip, where)
    return [offer for offers in found for offer in offers]


class JarvisLabsCollector(GpuCloudCollector):
    """On-demand and spot per-GPU prices on JarvisLabs."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "JarvisLabs server_meta (per-GPU on-demand/spot, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False  # one response carries both prices
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_server_meta(payload, ctx.skip, scope))
