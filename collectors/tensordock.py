"""TensorDock prices from the v2 ``GET /api/v2/locations`` (API token).

TensorDock is a marketplace of hosts grouped into locations. Each location lists the
GPU models deployable there (``v0Name``, e.g. ``h100-sxm5-80gb``) with ``price_per_hr``
**per GPU**, ``max_count`` GPUs deployable now, the most vCPUs / RAM / disk a VM may
take (``resources``) and the price of each on top (``pricing.per_vcpu_hr``,
``per_gb_ram_hr``, ``per_gb_storage_hr``): a VM costs its GPUs plus its resources.

So an offer is one VM shape: ``N x <v0Name>`` for N in 1, 2, 4, 8, with
``tensordock.vcpus_per_gpu`` vCPUs and ``ram_gb_per_gpu`` GB of RAM per GPU (8 and 32 by
default: this tracker's choice, as TensorDock documents no default shape; capped at
the location's ``max_vcpus`` / ``max_ram_gb``) and ``storage_gb`` of disk (default
100 GB, TensorDock's documented minimum), priced
``N x price_per_hr + vCPUs x per_vcpu_hr + RAM x per_gb_ram_hr + disk x per_gb_storage_hr``.
The shape is kept in the offer's attributes. The region is the location
(``city, stateprovince, country``). Counts up to ``max_count`` are ``available``; a
larger count listed before stays an ``unavailable`` offer; a GPU a location stops
listing is delisted (its price there is no longer known).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    Before,
    GpuCloudCollector,
    availability_now,
    gpu_offer,
    listed_before,
    number,
    text,
)
from tracker.catalog import normalize_gpu_name, resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel
from tracker.settings import TensorDockSettings

__all__ = ["DOCUMENTED_URL", "TensorDockCollector", "parse_locations", "region_name"]


PROVIDER = "tensordock"
DOCUMENTED_URL = "https://dashboard.tensordock.com/api/v2/locations"
GPU_COUNTS = (1, 2, 4, 8)
_PER = (("per_vcpu_hr", "vcpus"), ("per_gb_ram_hr", "ram_gb"), ("per_gb_storage_hr", "storage_gb"))


def region_name(location: Mapping[str, Any]) -> str:
    """``Austin, Texas, United States``: the parts TensorDock gives, in that order."""
    parts = [location.get(k) for k in ("city", "stateprovince", "country")]
    named = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    if not named:
        raise SkipItem("malformed_item", "location has no city, stateprovince or country")
    return ", ".join(named)


def _non_negative(part: Mapping[str, Any], field: str) -> Decimal:
    value = number(part, field)
    assert value is not None
    if value < 0:
        raise SkipItem("malformed_item", f"{field} is negative ({value})")
    return value


def _shape(gpu: Mapping[str, Any], count: int, shape: TensorDockSettings) -> dict[str, Decimal]:
    resources = gpu.get("resources")
    if not isinstance(resources, Mapping):
        raise SkipItem("malformed_item", "no resources object")
    storage = Decimal(shape.storage_gb)
    if storage > _non_negative(resources, "max_storage_gb"):
        raise SkipItem("shape_too_large", f"max_storage_gb below {storage} GB")
    return {
        "vcpus": min(Decimal(shape.vcpus_per_gpu * count), _non_negative(resources, "max_vcpus")),
        "ram_gb": min(
            Decimal(shape.ram_gb_per_gpu * count), _non_negative(resources, "max_ram_gb")
        ),
        "storage_gb": storage,
    }


def parse_gpu(region: str, gpu: Any, shape: TensorDockSettings, before: Before) -> list[Offer]:
    """The offers of one GPU model at one location; :class:`SkipItem` if unpriceable."""
    if not isinstance(gpu, Mapping):
        raise SkipItem("malformed_item", f"gpu entry is {type(gpu).__name__}")
    v0_name = text(gpu, "v0Name")
    per_gpu = number(gpu, "price_per_hr")
    assert per_gpu is not None
    if per_gpu <= 0:
        raise SkipItem("zero_price", f"{v0_name}: price_per_hr {per_gpu}")
    max_count = gpu.get("max_count")
    if not isinstance(max_count, int) or isinstance(max_count, bool) or max_count < 0:
        raise SkipItem("malformed_item", f"{v0_name}: max_count is {max_count!r}")
    pricing = gpu.get("pricing")
    if not isinstance(pricing, Mapping):
        raise SkipItem("malformed_item", f"{v0_name}: no pricing object")
    rates = {field: _non_negative(pricing, field) for field, _ in _PER}
    display = gpu.get("displayName") if isinstance(gpu.get("displayName"), str) else None
    match = resolve_gpu(display or v0_name)
    memory = normalize_gpu_name(display or v0_name).memory_gib  # "80GB" in the name
    offers = []
    for count in GPU_COUNTS:
        instance_type = f"{count}x {v0_name}"
        availability = availability_now(count <= max_count, region, instance_type, before)
        if availability is None:
            continue
        resources = _shape(gpu, count, shape)
        price = per_gpu * count + sum(rates[f] * resources[r] for f, r in _PER)
        attributes: dict[str, AttributeValue] = {
            "price_per_gpu": per_gpu,
            "display_name": display,
            "max_count": max_count,
            **{f"shape_{k}": v for k, v in resources.items()},
            **rates,
        }
        offers.append(
            gpu_offer(
                instance_type,
                match,
                display or v0_name,
                attributes,
                provider=PROVIDER,
                instance_type=instance_type,
                region=region,
                pricing=PricingModel.ON_DEMAND,
                price_per_hour=price,
                currency="USD",
                gpu_count=Decimal(count),
                gpu_memory_gib=memory,
                vcpus=resources["vcpus"],
                memory_gib=resources["ram_gb"],
                availability=availability,
            )
        )
    return offers


def parse_locations(
    payload: Any,
    skip: Callable[[str, str], None],
    shape: TensorDockSettings | None = None,
    before: Before | None = None,
) -> list[Offer]:
    """Every offer in a ``/locations`` response; unpriceable GPU entries are skips."""
    data = payload.get("data") if isinstance(payload, Mapping) else None
    locations = data.get("locations") if isinstance(data, Mapping) else None
    if not isinstance(locations, list):
        raise CollectorError("tensordock: response has no data.locations list")
    shape = shape or TensorDockSettings()
    entries: list[tuple[str, Any]] = []
    for location in locations:
        if not isinstance(location, Mapping) or not isinstance(location.get("gpus"), list):
            skip("malformed_item", f"location {location!r:.80} has no gpus list")
            continue
        try:
            region = region_name(location)
        except SkipItem as exc:
            skip(exc.reason, f"location {location.get('id')}: {exc.detail}")
            continue
        entries += [(region, gpu) for gpu in location["gpus"]]
    found = parse_each(
        entries,
        lambda entry: parse_gpu(entry[0], entry[1], shape, before or {}),
        skip,
        where=lambda entry: entry[0],
    )
    return [offer for offers in found for offer in offers]


class TensorDockCollector(GpuCloudCollector):
    """On-demand VM prices (GPU plus a default shape of vCPU, RAM and disk) on TensorDock."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "TensorDock v2 locations (on-demand VM shapes, API token)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # the v2 API lists on-demand only
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(
            ctx,
            lambda payload, scope: parse_locations(
                payload, ctx.skip, self.settings.tensordock, listed_before(ctx)
            ),
        )
