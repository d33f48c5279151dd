"""DescribeInstanceTypes -> the accelerator hardware of each GPU/ML-accelerator type.

Pure: the items go in, hardware resolved through the GPU catalog comes out, and
every item that should have described an accelerator but cannot be read is a
:class:`~collectors.base.SkipItem` reported to the caller's skip sink. The
price list and spot parsers (:mod:`collectors.aws_pricelist`,
:mod:`collectors.aws_spot`) join their prices to this hardware by instance type.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from collectors.aws_network import instance_network
from collectors.base import SkipItem, SkipSink, parse_each
from tracker.models import AttributeValue, Fabric, Interconnect, InvalidOffer, to_decimal

__all__ = ["PROVIDER", "InstanceHardware", "parse_instance_types"]

log = logging.getLogger(__name__)

PROVIDER = "aws"
MIB_PER_GIB = Decimal(1024)

GpuResolver = Callable[[str, Decimal | None], Any]


@dataclass(frozen=True, slots=True)
class InstanceHardware:
    """Accelerator facts of one instance type, already resolved through the GPU catalog.

    ``kind`` is ``"gpu"`` or ``"accelerator"`` (Inferentia, Trainium, Qualcomm AI100):
    accelerators are priced like GPUs but never named as one.
    """

    instance_type: str
    gpu_model: str
    gpu_raw_name: str
    gpu_known: bool
    gpu_count: Decimal
    gpu_memory_gib: Decimal | None
    vcpus: Decimal | None
    memory_gib: Decimal | None
    interconnect: Interconnect
    kind: str
    manufacturer: str
    partition: Decimal | None = None
    """Share of one physical GPU (g6f: 0.125); None for whole GPUs."""
    fabric: Fabric = Fabric.UNKNOWN
    """``efa`` where ``NetworkInfo.EfaSupported`` says so (:mod:`collectors.aws_network`)."""
    network_gbps: Decimal | None = None

    def offer_fields(self) -> dict[str, Any]:
        """The Offer keyword arguments that describe the machine (same for every price)."""
        return {
            "gpu_model": self.gpu_model,
            "gpu_raw_name": self.gpu_raw_name,
            "gpu_known": self.gpu_known,
            "gpu_count": self.gpu_count,
            "gpu_memory_gib": self.gpu_memory_gib,
            "vcpus": self.vcpus,
            "memory_gib": self.memory_gib,
            "interconnect": self.interconnect,
            "fabric": self.fabric,
            "network_gbps": self.network_gbps,
        }

    def attributes(self) -> dict[str, AttributeValue]:
        attrs: dict[str, AttributeValue] = {"accelerator_kind": self.kind}
        if self.manufacturer:
            attrs["accelerator_manufacturer"] = self.manufacturer
        if self.partition is not None:
            attrs["gpu_partition_size"] = self.partition
        return attrs


def _resolver() -> GpuResolver:
    from tracker.catalog import resolve_gpu

    return resolve_gpu


def _mib_to_gib(value: Any, name: str) -> Decimal | None:
    if value in (None, 0):
        return None
    return (to_decimal(value, name) / MIB_PER_GIB).quantize(Decimal("0.001"))


def _device(info: Mapping[str, Any], list_key: str) -> Mapping[str, Any] | None:
    devices = info.get(list_key) or []
    return devices[0] if devices and isinstance(devices[0], Mapping) else None


def parse_instance_types(
    items: Iterable[Mapping[str, Any]],
    skip: SkipSink,
    *,
    include_accelerators: bool = True,
    resolve: GpuResolver | None = None,
) -> dict[str, InstanceHardware]:
    """``DescribeInstanceTypes`` items -> hardware of the GPU/ML-accelerator types.

    Instance types without a GPU or ML accelerator are left out silently (they are
    not this tracker's market); video transcoders (``MediaAcceleratorInfo``) and
    FPGAs are not ML accelerators either. A GPU name the catalog does not know is
    kept under its raw name and flagged ``gpu_known=False``. An accelerator item
    that cannot be read is reported to ``skip`` as ``malformed_instance_type``.
    """
    resolve_gpu = resolve or _resolver()

    def parse(item: Mapping[str, Any]) -> InstanceHardware | None:
        return instance_hardware(item, include_accelerators, resolve_gpu)

    return {hw.instance_type: hw for hw in parse_each(items, parse, skip)}


def instance_hardware(
    item: Mapping[str, Any], include_accelerators: bool, resolve_gpu: GpuResolver
) -> InstanceHardware | None:
    """One item's hardware; None for a type without a GPU or ML accelerator."""
    name = item.get("InstanceType")
    if not isinstance(name, str) or not name:
        raise SkipItem("malformed_instance_type", f"item without InstanceType: {item!r:.80}")
    try:
        return _hardware(name, item, include_accelerators, resolve_gpu)
    except InvalidOffer as exc:
        raise SkipItem("malformed_instance_type", f"{name}: {exc}") from None


@dataclass(frozen=True, slots=True)
class _Common:
    instance_type: str
    vcpus: Decimal | None
    memory_gib: Decimal | None
    fabric: Fabric
    network_gbps: Decimal | None


def _hardware(
    name: str, item: Mapping[str, Any], include_accelerators: bool, resolve_gpu: GpuResolver
) -> InstanceHardware | None:
    vcpus = item.get("VCpuInfo", {}).get("DefaultVCpus")
    memory = item.get("MemoryInfo", {}).get("SizeInMiB")
    fabric, gbps = instance_network(item)
    common = _Common(
        fabric=fabric,
        network_gbps=gbps,
        instance_type=name,
        vcpus=to_decimal(vcpus, f"{name}.VCpuInfo.DefaultVCpus") if vcpus else None,
        memory_gib=_mib_to_gib(memory, f"{name}.MemoryInfo.SizeInMiB"),
    )
    gpu = _device(item.get("GpuInfo") or {}, "Gpus")
    if gpu is not None:
        return _gpu_hardware(name, gpu, resolve_gpu, common)
    if not include_accelerators:
        return None
    # Neuron (Inferentia/Trainium) first: it is the newer, more precise block;
    # InferenceAcceleratorInfo also covers Qualcomm AI100 (dl2q).
    accel = _device(item.get("NeuronInfo") or {}, "NeuronDevices")
    manufacturer = "AWS"
    if accel is None:
        accel = _device(item.get("InferenceAcceleratorInfo") or {}, "Accelerators")
        manufacturer = str(accel.get("Manufacturer", "")) if accel else ""
    if accel is None:
        return None
    raw = str(accel.get("Name") or "").strip()
    count = to_decimal(accel.get("Count", 0), f"{name}.accelerator Count")
    if not raw or count <= 0:
        raise InvalidOffer(f"{name}.accelerator", "accelerator without a name or count")
    per_device = _mib_to_gib(accel.get("MemoryInfo", {}).get("SizeInMiB"), f"{name}.accel memory")
    # Accelerator names are unambiguous, and their memory figures are not reliable
    # (trn2 reports 512 GiB per 96 GiB Trainium2 device), so resolve by name alone.
    match = resolve_gpu(raw, None)
    spec = getattr(match, "spec", None)
    if spec is not None and getattr(spec, "kind", "accelerator") == "gpu":
        raise InvalidOffer(f"{name}.accelerator", f"{raw!r} resolved to GPU {match.name!r}")
    if spec is not None and per_device is not None and per_device > spec.vram_gib * 2:
        log.debug("%s: %s GiB per %s is implausible; using the datasheet", name, per_device, raw)
        per_device = spec.vram_gib
    return InstanceHardware(
        gpu_model=match.name,
        gpu_raw_name=raw,
        gpu_known=match.known,
        gpu_count=count,
        gpu_memory_gib=per_device,
        interconnect=Interconnect.UNKNOWN,
        kind="accelerator",
        manufacturer=manufacturer,
        instance_type=common.instance_type,
        vcpus=common.vcpus,
        memory_gib=common.memory_gib,
        fabric=common.fabric,
        network_gbps=common.network_gbps,
    )


def _gpu_hardware(
    name: str, gpu: Mapping[str, Any], resolve_gpu: GpuResolver, common: _Common
) -> InstanceHardware:
    raw = str(gpu.get("Name") or "").strip()
    if not raw:
        raise InvalidOffer(f"{name}.GpuInfo.Gpus[0].Name", "missing")
    count = to_decimal(gpu.get("Count", 0), f"{name}.GpuInfo.Gpus[0].Count")
    partition_raw = gpu.get("GpuPartitionSize")
    partition = (
        to_decimal(partition_raw, f"{name}.GpuPartitionSize") if partition_raw is not None else None
    )
    share: Decimal | None = None
    if partition is not None and Decimal(0) < partition < Decimal(1):
        # g6f/gr6f: Count is 0 and the instance owns a slice of one GPU.
        logical = to_decimal(gpu.get("LogicalGpuCount", 1) or 1, f"{name}.LogicalGpuCount")
        share = partition.normalize()
        count = partition * logical
    if count <= 0:
        raise InvalidOffer(f"{name}.GpuInfo.Gpus[0].Count", f"no GPUs ({count})")
    memory = _mib_to_gib(gpu.get("MemoryInfo", {}).get("SizeInMiB"), f"{name}.GPU memory")
    # A slice reports its share of the memory; offers carry VRAM per whole GPU
    # (the convention every collector follows: usable VRAM = gpu_count x
    # gpu_memory_gib), which is also what the catalog needs to tell A100 40/80 GB
    # and V100 16/32 GB apart.
    hint = memory / share if memory is not None and share else memory
    match = resolve_gpu(raw, hint)
    spec = getattr(match, "spec", None)
    if spec is None:
        interconnect = Interconnect.UNKNOWN
    elif getattr(spec, "kind", "gpu") != "gpu":
        raise InvalidOffer(f"{name}.GpuInfo", f"{raw!r} resolved to non-GPU {match.name!r}")
    else:
        interconnect = Interconnect.NVLINK if spec.nvlink else Interconnect.PCIE
    return InstanceHardware(
        gpu_model=match.name,
        gpu_raw_name=raw,
        gpu_known=match.known,
        gpu_count=count,
        gpu_memory_gib=hint,
        interconnect=interconnect,
        kind="gpu",
        manufacturer=str(gpu.get("Manufacturer", "")),
        partition=share,
        instance_type=common.instance_type,
        vcpus=common.vcpus,
        memory_gib=common.memory_gib,
        fabric=common.fabric,
        network_gbps=common.network_gbps,
    )
