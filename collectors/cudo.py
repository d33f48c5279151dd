"""CUDO Compute VM prices from ``GET /v1/vms/machine-types-2`` (public list).

CUDO sells a VM as separately priced parts: each machine type (a CPU generation with
one GPU model in one data centre) prices a vCPU, a GiB of RAM, a GPU, a GiB of disk
and the IPv4 address per hour (``vcpuPriceHr``, ``memoryGibPriceHr``, ``gpuPriceHr``,
``minStorageGibPriceHr``, ``ipv4PriceHr``: ``{"value": "<decimal>"}``). So an offer is
one VM shape: ``<machineType> Nx <gpuModelId>`` for N in 1, 2, 4, 8, with
``cudo.vcpus_per_gpu`` vCPUs and ``ram_gib_per_gpu`` GiB per GPU and ``storage_gib``
of disk, priced ``N x GPU + vCPUs x vCPU + RAM x GiB + disk x disk GiB + IPv4``. A
shape the machine type forbids (its vCPU-per-GPU and vCPU-per-GiB limits) is a
counted skip. ``maxGpuFree`` is the largest GPU count deployable now: counts up to it
are ``available``; a larger count listed before stays ``unavailable``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    Before,
    GpuCloudCollector,
    availability_now,
    decimal_text,
    gpu_offer,
    listed_before,
    number,
    text,
)
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel
from tracker.settings import CudoSettings

__all__ = ["DOCUMENTED_URL", "CudoCollector", "parse_machine_types"]


PROVIDER = "cudo"
DOCUMENTED_URL = "https://rest.compute.cudo.org/v1/vms/machine-types-2"
GPU_COUNTS = (1, 2, 4, 8)
_PARTS = ("gpuPriceHr", "vcpuPriceHr", "memoryGibPriceHr", "minStorageGibPriceHr", "ipv4PriceHr")
_MODE = re.compile(r"\s*\(.*\)\s*$")  # "A40 (compute mode)"


def _rate(item: Mapping[str, Any], field: str) -> Decimal:
    part = item.get(field)
    value = decimal_text(part, "value") if isinstance(part, Mapping) else None
    if value is None:
        raise SkipItem("malformed_item", f"{field}.value missing")
    return value


def _limit(item: Mapping[str, Any], field: str) -> Decimal | None:
    return number(item, field, required=False)


def _shape(item: Mapping[str, Any], count: int, shape: CudoSettings) -> dict[str, Decimal]:
    """vCPUs, RAM and disk of a ``count``-GPU VM; :class:`SkipItem` if CUDO forbids it.

    vCPUs and RAM both grow with the count, so a ratio limit the shape breaks it breaks
    at every count: the machine type is skipped, not one count of it."""
    vcpus, ram = Decimal(shape.vcpus_per_gpu * count), Decimal(shape.ram_gib_per_gpu * count)
    checks = (
        ("minVcpuPerGpu", count, 1),
        ("maxVcpuPerGpu", count, -1),
        ("minVcpuPerMemoryGib", ram, 1),
        ("maxVcpuPerMemoryGib", ram, -1),
    )
    for field, per, sign in checks:
        bound = _limit(item, field)
        if bound is not None and (vcpus - bound * per) * sign < 0:
            raise SkipItem(
                "shape_not_allowed", f"{vcpus} vCPUs for {count} GPUs breaks {field} {bound}"
            )
    return {"vcpus": vcpus, "ram_gib": ram, "storage_gib": Decimal(shape.storage_gib)}


def _fits(item: Mapping[str, Any], count: int, vm: Mapping[str, Decimal]) -> bool:
    """Whether the largest VM deployable now (``max*Free``) holds this one."""
    wanted = [("maxGpuFree", Decimal(count)), ("maxVcpuFree", vm["vcpus"])]
    wanted += [("maxMemoryGibFree", vm["ram_gib"]), ("maxStorageGibFree", vm["storage_gib"])]
    for field, amount in wanted:
        free = _limit(item, field)
        if free is not None and amount > free:
            return False
    return True


def parse_machine_type(item: Any, shape: CudoSettings, before: Before) -> list[Offer] | None:
    """The offers of one machine type; ``None`` for a type without GPUs."""
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"machine type is {type(item).__name__}")
    model_id = item.get("gpuModelId")
    if not model_id:
        return None
    model = text(item, "gpuModel")
    region, machine = text(item, "dataCenterId"), text(item, "machineType")
    gpu, vcpu, ram, disk, ipv4 = (_rate(item, field) for field in _PARTS)
    if gpu <= 0:
        raise SkipItem("zero_price", f"gpuPriceHr {gpu}")
    match = resolve_gpu(_MODE.sub("", model))
    offers = []
    for count in GPU_COUNTS:
        instance_type = f"{machine} {count}x {model_id}"
        vm = _shape(item, count, shape)
        availability = availability_now(_fits(item, count, vm), region, instance_type, before)
        if availability is None:
            continue
        price = gpu * count + vcpu * vm["vcpus"] + ram * vm["ram_gib"] + disk * vm["storage_gib"]
        attributes: dict[str, AttributeValue] = {
            "price_per_gpu": gpu,
            "cpu_model": item.get("cpuModel") if isinstance(item.get("cpuModel"), str) else None,
            "max_gpu_free": _limit(item, "maxGpuFree"),
            **{f"shape_{k}": v for k, v in vm.items()},
            **dict(zip(_PARTS, (gpu, vcpu, ram, disk, ipv4), strict=True)),
        }
        offers.append(
            gpu_offer(
                instance_type,
                match,
                model,
                attributes,
                provider=PROVIDER,
                instance_type=instance_type,
                region=region,
                pricing=PricingModel.ON_DEMAND,
                price_per_hour=price + ipv4,
                currency="USD",
                gpu_count=Decimal(count),
                vcpus=vm["vcpus"],
                memory_gib=vm["ram_gib"],
                availability=availability,
            )
        )
    return offers


def parse_machine_types(
    payload: Any,
    skip: Callable[[str, str], None],
    shape: CudoSettings | None = None,
    before: Before | None = None,
) -> list[Offer]:
    """Every GPU offer in a ``machine-types-2`` response; unpriceable types are skips."""
    types = payload.get("machineTypes") if isinstance(payload, Mapping) else None
    if not isinstance(types, list):
        raise CollectorError("cudo: response has no 'machineTypes' list")
    shape = shape or CudoSettings()

    def where(item: Any) -> str:
        if not isinstance(item, Mapping):
            return ""
        return f"{item.get('dataCenterId')} {item.get('machineType')} {item.get('gpuModelId')}"

    found = parse_each(
        types, lambda item: parse_machine_type(item, shape, before or {}), skip, where
    )
    return [offer for offers in found for offer in offers]


class CudoCollector(GpuCloudCollector):
    """On-demand VM prices (GPUs plus a default shape) on CUDO Compute."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "CUDO Compute VM machine types (on-demand VM shapes, public)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # CUDO lists on-demand prices only
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(
            ctx,
            lambda payload, scope: parse_machine_types(
                payload, ctx.skip, self.settings.cudo, listed_before(ctx)
            ),
        )
