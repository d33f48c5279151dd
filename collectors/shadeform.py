"""Shadeform marketplace prices from ``GET /v1/instances/types`` (API key in ``X-API-KEY``).

Shadeform resells the GPU instances of other clouds (``cloud``: ``hyperstack``,
``datacrunch``, ``lambdalabs``, ...) through one API. Each instance type is one
``shade_instance_type`` (Shadeform's standard name, ``A100_80Gx8``) in one underlying
cloud, with its ``configuration`` (``gpu_type``, ``num_gpus``, ``vram_per_gpu_in_gb``,
``vcpus``, ``memory_in_gb``, ``storage_in_gb``, ``interconnect``), ``hourly_price``:
"the base hourly price of the instance in cents" (OpenAPI ``HourlyPrice``; the
platform fee is not included), and ``availability``: one ``{region, available}`` per
region of that cloud. One offer is one instance type in one region, on demand, priced
``hourly_price / 100`` USD, ``available`` or ``unavailable`` as listed.

The provider is ``shadeform`` (that is who bills), never the underlying cloud: the
instance type is ``<cloud>/<shade_instance_type>`` and the ``underlying_cloud`` and
``cloud_instance_type`` attributes say which machine it is, so a comparison that also
collects that cloud directly can tell a resale from a second machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Interconnect, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "ShadeformCollector", "parse_instance_types"]


PROVIDER = "shadeform"
DOCUMENTED_URL = "https://api.shadeform.ai/v1/instances/types"
_CENTS = Decimal(100)
_LINKS = {"pcie": Interconnect.PCIE, "sxm": Interconnect.NVLINK, "nvlink": Interconnect.NVLINK}


def _interconnect(config: Mapping[str, Any]) -> Interconnect:
    """``nvlink: true`` (newer answers) or the ``interconnect`` name; else unknown."""
    if config.get("nvlink") is True:
        return Interconnect.NVLINK
    link = config.get("interconnect")
    return (
        _LINKS.get(link.strip().lower(), Interconnect.UNKNOWN)
        if isinstance(link, str)
        else (Interconnect.UNKNOWN)
    )


def _regions(item: Mapping[str, Any]) -> list[tuple[str, Availability]]:
    listed = item.get("availability")
    if not isinstance(listed, list) or not listed:
        raise SkipItem("malformed_item", "availability is not a list of regions")
    regions = []
    for entry in listed:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("available"), bool):
            raise SkipItem("malformed_item", f"availability entry {entry!r:.80}")
        state = Availability.AVAILABLE if entry["available"] else Availability.UNAVAILABLE
        regions.append((text(entry, "region"), state))
    return regions


def parse_instance_type(item: Any) -> list[Offer]:
    """The offers of one instance type, one per region; :class:`SkipItem` if unpriceable."""
    if not isinstance(item, Mapping) or not isinstance(item.get("configuration"), Mapping):
        raise SkipItem("malformed_item", "instance type without a configuration object")
    config: Mapping[str, Any] = item["configuration"]
    cloud, shade_type = text(item, "cloud"), text(item, "shade_instance_type")
    cents = item.get("hourly_price")
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise SkipItem("malformed_item", f"hourly_price is not whole cents ({cents!r})")
    if cents <= 0:
        raise SkipItem("zero_price", f"hourly_price {cents}")
    count = number(config, "num_gpus")
    if count is None or count <= 0:
        return []  # not a GPU instance
    gpu = text(config, "gpu_type")
    vram = number(config, "vram_per_gpu_in_gb", required=False)
    storage = number(config, "storage_in_gb", required=False)
    cloud_type = item.get("cloud_instance_type")
    attributes: dict[str, AttributeValue] = {
        "underlying_cloud": cloud,
        "cloud_instance_type": cloud_type if isinstance(cloud_type, str) else None,
        "storage_gb": storage,
        "price_cents_per_hour": cents,
    }
    match = resolve_gpu(gpu, vram)
    where = f"{cloud}/{shade_type}"
    return [
        gpu_offer(
            where,
            match,
            gpu,
            attributes,
            provider=PROVIDER,
            instance_type=where,
            region=region,
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=Decimal(cents) / _CENTS,  # 210 cents -> $2.10 per instance-hour
            currency="USD",
            gpu_count=count,
            gpu_memory_gib=vram,
            vcpus=number(config, "vcpus", required=False),
            memory_gib=number(config, "memory_in_gb", required=False),
            interconnect=_interconnect(config),
            availability=state,
        )
        for region, state in _regions(item)
    ]


def parse_instance_types(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every offer of an ``InstanceTypesResponse``; an unpriceable type is a counted skip."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("instance_types"), list):
        raise CollectorError("shadeform: response has no instance_types list")
    offers: list[Offer] = []
    for item in payload["instance_types"]:
        try:
            offers.extend(parse_instance_type(item))
        except SkipItem as exc:
            label = item.get("shade_instance_type") if isinstance(item, Mapping) else None
            skip(exc.reason, f"{label}: {exc.detail}" if isinstance(label, str) else exc.detail)
    return offers


class ShadeformCollector(GpuCloudCollector):
    """On-demand prices of the instances Shadeform resells, per underlying cloud and region."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Shadeform marketplace instance types (on-demand, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # the list has no spot prices
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("X-API-KEY", "{}")

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_instance_types(payload, ctx.skip))
