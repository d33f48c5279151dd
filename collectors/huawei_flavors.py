"""Huawei Cloud ECS flavors (``ListFlavors``) reduced to the hardware of GPU/NPU flavors.

ECS names a flavor's accelerators only in free text: ``os_extra_specs["info:gpu:name"]``
("1 * NVIDIA P100 / 1 * 16G": count, model, then count × memory per card) and, for
Huawei's own NPUs, ``info:ascend:name`` in the same shape. ``pci_passthrough:alias``
("nvidia-p100:1") carries the count when the text has none. ``vcpus`` is a string and
``ram`` is MiB. A flavor with none of these is not a GPU flavor (dropped silently); a
GPU-typed flavor whose text cannot be read is a counted skip, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.base import SkipItem

__all__ = ["FlavorHardware", "parse_flavor", "sold_charging_modes"]

_GPU_TYPES = frozenset({"gpu", "ascend"})
# "2 * NVIDIA T4 / 2 * 16G", "1 * NVIDIA M60-2Q / 2G", "8 * HUAWEI Ascend 910B / 8 * 64G"
_INFO = re.compile(
    r"^\s*(?:(?P<count>\d+)\s*\*\s*)?(?P<name>[^/]+?)\s*"
    r"(?:/\s*(?:(?P<mem_count>\d+)\s*\*\s*)?(?P<mem>\d+(?:\.\d+)?)\s*G(?:B|iB)?\s*)?$",
    re.IGNORECASE,
)
_ALIAS = re.compile(r"^\s*([^:,\s]+)\s*:\s*(\d+)\s*$")
# NVIDIA vGPU profiles ("M60-2Q", "M60-1Q"): a slice of one card, not a whole GPU.
_VGPU_PROFILE = re.compile(r"-\d+[QABC]$", re.IGNORECASE)
_SOLD = frozenset({"normal", "promotion", "obt", "sellout", "obt_sellout"})
_MIB_PER_GIB = Decimal(1024)


@dataclass(frozen=True)
class FlavorHardware:
    flavor: str
    gpu_name: str
    gpu_count: Decimal
    vram_gib: Decimal | None
    vcpus: Decimal
    memory_gib: Decimal
    performance_type: str
    generation: str
    operation_status: str


def _specs(flavor: Mapping[str, Any]) -> Mapping[str, Any]:
    specs = flavor.get("os_extra_specs")
    return specs if isinstance(specs, Mapping) else {}


def _text(specs: Mapping[str, Any], key: str) -> str:
    value = specs.get(key)
    return value.strip() if isinstance(value, str) else ""


def _alias_count(alias: str) -> int | None:
    """Cards in ``pci_passthrough:alias`` ("nvidia-p100:1", several joined by commas)."""
    total = 0
    for part in alias.split(","):
        match = _ALIAS.match(part)
        if match is None:
            return None
        total += int(match.group(2))
    return total or None


def _accelerator(specs: Mapping[str, Any]) -> tuple[str, Decimal, Decimal | None] | None:
    """(model, count, memory per card in GiB or None) from the flavor's info text."""
    raw = _text(specs, "info:gpu:name") or _text(specs, "info:ascend:name")
    if not raw:
        return None
    match = _INFO.match(raw.strip("'\""))
    if match is None or not match.group("name").strip():
        raise SkipItem("unreadable_gpu_info", f"info text {raw!r}")
    name = match.group("name").strip()
    if _VGPU_PROFILE.search(name):
        raise SkipItem("vgpu_profile", f"{raw!r} is a vGPU slice, not a whole GPU")
    count_text = match.group("count")
    count = int(count_text) if count_text else _alias_count(_text(specs, "pci_passthrough:alias"))
    if not count:
        raise SkipItem("unreadable_gpu_info", f"no GPU count in {raw!r} or pci_passthrough:alias")
    mem_count = match.group("mem_count")
    if mem_count is not None and int(mem_count) != count:
        raise SkipItem(
            "unreadable_gpu_info", f"{raw!r}: {count} cards but memory given for {mem_count}"
        )
    memory = Decimal(match.group("mem")) if match.group("mem") else None
    return name, Decimal(count), memory


def sold_charging_modes(flavor: Mapping[str, Any]) -> frozenset[str]:
    """``demand`` and/or ``period``: what ``cond:operation:charge`` allows (both if unset)."""
    charge = _text(_specs(flavor), "cond:operation:charge")
    modes = {m.strip() for m in charge.split(",") if m.strip()} & {"demand", "period"}
    return frozenset(modes or {"demand", "period"})


def _on_sale(specs: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the flavor is sold in any zone, and its region-level status."""
    status = _text(specs, "cond:operation:status") or "normal"
    zones = re.findall(r"\(([^)]+)\)", _text(specs, "cond:operation:az"))
    return (status in _SOLD or any(z.strip() in _SOLD for z in zones)), status


def parse_flavor(flavor: Any) -> FlavorHardware | None:
    """Hardware of one GPU/NPU flavor; None for a flavor without accelerators or off sale."""
    if not isinstance(flavor, Mapping):
        raise SkipItem("malformed_flavor", f"flavor is {type(flavor).__name__}, not an object")
    specs = _specs(flavor)
    perf = _text(specs, "ecs:performancetype")
    accelerator = _accelerator(specs)
    if accelerator is None:
        if perf in _GPU_TYPES:
            raise SkipItem("no_gpu_info", f"performancetype {perf!r} but no info:gpu:name")
        return None
    name = flavor.get("name") or flavor.get("id")
    if not isinstance(name, str) or not name.strip():
        raise SkipItem("malformed_flavor", "flavor has no name")
    on_sale, status = _on_sale(specs)
    if not on_sale:
        return None
    try:
        vcpus = Decimal(str(flavor.get("vcpus")).strip())
        memory_gib = Decimal(int(flavor["ram"])) / _MIB_PER_GIB
    except (InvalidOperation, KeyError, TypeError, ValueError):
        raise SkipItem(
            "malformed_flavor", f"vcpus {flavor.get('vcpus')!r} / ram {flavor.get('ram')!r}"
        ) from None
    gpu_name, count, vram = accelerator
    return FlavorHardware(
        flavor=name.strip(),
        gpu_name=gpu_name,
        gpu_count=count,
        vram_gib=vram,
        vcpus=vcpus,
        memory_gib=memory_gib,
        performance_type=perf,
        generation=_text(specs, "ecs:generation"),
        operation_status=status,
    )
