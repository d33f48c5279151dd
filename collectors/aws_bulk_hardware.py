"""Accelerator hardware from a bulk offer file's own product attributes.

Without credentials ``DescribeInstanceTypes`` cannot be called, so the hardware
of a type comes from what the offer file says of it (``instanceType``, ``gpu``
(the device count), ``vcpu``, ``memory`` such as ``"244 GiB"``) plus the one fact
it never names: which device a family carries. :data:`FAMILY_DEVICES` is that
fact, taken from real ``DescribeInstanceTypes`` items (moto 5.2.5's
``ec2/resources/instance_types.json.gz``, p3 from the p3.16xlarge capture in
tests/fixtures/aws). The attributes are shaped into a DescribeInstanceTypes item
and read by :func:`collectors.aws_hardware.instance_hardware`, so both paths
resolve names through the GPU catalog the same way. ``networkPerformance`` becomes the
item's ``NetworkInfo.NetworkPerformance`` (bandwidth only: the price list does not
state EFA, so the fabric is ``unknown``). Fractional-GPU families
(g6f, gr6f) are left out: the offer file does not give the partition size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.aws_hardware import GpuResolver, InstanceHardware, instance_hardware
from collectors.base import SkipItem

__all__ = ["FAMILY_DEVICES", "accelerated", "bulk_hardware"]

# family -> (DescribeInstanceTypes block, device name, manufacturer, MiB per device)
FAMILY_DEVICES: Mapping[str, tuple[str, str, str, int]] = {
    "dl2q": ("InferenceAcceleratorInfo", "Qualcomm AI100", "Qualcomm", 16000),
    "g4dn": ("GpuInfo", "T4", "NVIDIA", 16384),
    "g5": ("GpuInfo", "A10G", "NVIDIA", 22888),
    "g5g": ("GpuInfo", "T4g", "NVIDIA", 16384),
    "g6": ("GpuInfo", "L4", "NVIDIA", 22888),
    "g6e": ("GpuInfo", "L40S", "NVIDIA", 45776),
    "g7": ("GpuInfo", "RTX PRO 4500", "NVIDIA", 32768),
    "g7e": ("GpuInfo", "RTX PRO Server 6000", "NVIDIA", 98304),
    "gr6": ("GpuInfo", "L4", "NVIDIA", 22888),
    "inf1": ("NeuronInfo", "Inferentia", "AWS", 8192),
    "inf2": ("NeuronInfo", "Inferentia2", "AWS", 32768),
    "p3": ("GpuInfo", "V100", "NVIDIA", 16384),
    "p3dn": ("GpuInfo", "V100", "NVIDIA", 32768),
    "p4d": ("GpuInfo", "A100", "NVIDIA", 40960),
    "p4de": ("GpuInfo", "A100", "NVIDIA", 81920),
    "p5": ("GpuInfo", "H100", "NVIDIA", 81920),
    "p5e": ("GpuInfo", "H200", "NVIDIA", 144384),
    "p5en": ("GpuInfo", "H200", "NVIDIA", 144384),
    "p6-b200": ("GpuInfo", "B200", "NVIDIA", 183359),
    "p6-b300": ("GpuInfo", "B300", "NVIDIA", 275040),
    "trn1": ("NeuronInfo", "Trainium", "AWS", 32768),
    "trn1n": ("NeuronInfo", "Trainium", "AWS", 32768),
    "trn2": ("NeuronInfo", "Trainium2", "AWS", 524288),
}
ACCELERATED_FAMILIES = frozenset({"GPU instance", "Machine Learning ASIC Instances"})
_LIST_KEYS = {"GpuInfo": "Gpus", "NeuronInfo": "NeuronDevices"}
_LIST_KEYS["InferenceAcceleratorInfo"] = "Accelerators"
_GIB = re.compile(r"^\s*([0-9.,]+)\s*GiB\s*$")


def accelerated(attrs: Mapping[str, Any]) -> bool:
    """A product of a GPU or ML-accelerator type (what the bulk path keeps)."""
    name = str(attrs.get("instanceType") or "")
    return (
        name.split(".")[0] in FAMILY_DEVICES
        or attrs.get("instanceFamily") in ACCELERATED_FAMILIES
        or str(attrs.get("gpu") or "0") not in ("0", "NA")
    )


def _number(value: Any, name: str, where: str) -> Decimal:
    try:
        return Decimal(str(value).replace(",", ""))
    except InvalidOperation:
        raise SkipItem("malformed_instance_type", f"{where}: {name}={value!r}") from None


def bulk_hardware(
    attrs: Mapping[str, Any], include_accelerators: bool, resolve_gpu: GpuResolver
) -> InstanceHardware | None:
    """The hardware of one accelerated product; SkipItem when it cannot be told."""
    name = str(attrs.get("instanceType") or "")
    device = FAMILY_DEVICES.get(name.split(".")[0])
    count_raw = attrs.get("gpu")
    if device is None or count_raw in (None, "", "NA", "0"):
        raise SkipItem(
            "unknown_gpu",
            f"{name}: the offer file names no device family/count (gpu={count_raw!r})",
        )
    block, device_name, manufacturer, mib = device
    count = _number(count_raw, "gpu", name)
    item: dict[str, Any] = {
        "InstanceType": name,
        block: {
            _LIST_KEYS[block]: [
                {
                    "Name": device_name,
                    "Manufacturer": manufacturer,
                    "Count": int(count),
                    "MemoryInfo": {"SizeInMiB": mib},
                }
            ]
        },
    }
    vcpu = attrs.get("vcpu")
    if vcpu not in (None, "", "NA"):
        item["VCpuInfo"] = {"DefaultVCpus": int(_number(vcpu, "vcpu", name))}
    performance = attrs.get("networkPerformance")
    if performance not in (None, "", "NA"):
        # Only the figure: the price list never says whether the type has EFA, so the
        # shaped item has no EfaSupported and the fabric reads as unknown.
        item["NetworkInfo"] = {"NetworkPerformance": str(performance)}
    memory = _GIB.match(str(attrs.get("memory") or ""))
    if memory:
        gib = _number(memory.group(1), "memory", name)
        item["MemoryInfo"] = {"SizeInMiB": int(gib * 1024)}
    return instance_hardware(item, include_accelerators, resolve_gpu)
