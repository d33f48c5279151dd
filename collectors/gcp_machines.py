"""GPU machine shapes on Compute Engine, from Google's published tables.

The Cloud Billing Catalog prices *resources* (a vCPU-hour, a GiB-hour of RAM, a
GPU-hour, a GiB-month of local SSD), never a machine type, so the collector needs
each machine type's shape to compose a price. The shapes come from the Compute
Engine documentation:

* accelerator-optimized machines (A2, A3, G2):
  https://cloud.google.com/compute/docs/accelerator-optimized-machines
* GPUs attachable to N1 and the vCPU/memory limits per GPU count:
  https://cloud.google.com/compute/docs/gpus (section "N1 general-purpose machine
  types with attached GPUs")
* bundled local SSD (A2 Ultra, A3): https://cloud.google.com/compute/docs/disks/local-ssd
  ("Choose a valid number of Local SSD disks": a fixed count of 375 GiB disks)

Memory is GiB: the docs write "GB" but the Compute API reports these shapes in MiB
(a2-highgpu-1g has memoryMb 87040 = 85 GiB), and the RAM SKUs are priced per GiB-hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tracker.models import Interconnect

__all__ = ["GPU_TYPES", "MACHINE_SHAPES", "N1_GPU_LIMITS", "GpuType", "MachineShape"]

LOCAL_SSD_DISK_GIB = 375


@dataclass(frozen=True)
class GpuType:
    """One GCP accelerator: its API name, what the catalog should call it, its memory."""

    key: str
    """Our key for the GPU SKU (the classifier in gcp_skus maps descriptions to it)."""
    accelerator_type: str
    """The Compute API accelerator type name (``gcloud --accelerator type=...``)."""
    catalog_name: str
    """The spelling given to :func:`tracker.catalog.resolve_gpu`."""
    memory_gib: Decimal


GPU_TYPES: dict[str, GpuType] = {
    g.key: g
    for g in (
        GpuType("a100-40gb", "nvidia-tesla-a100", "A100", Decimal(40)),
        GpuType("a100-80gb", "nvidia-a100-80gb", "A100 80GB", Decimal(80)),
        GpuType("h100-80gb", "nvidia-h100-80gb", "H100 80GB", Decimal(80)),
        GpuType("h100-mega-80gb", "nvidia-h100-mega-80gb", "H100 80GB", Decimal(80)),
        GpuType("h200-141gb", "nvidia-h200-141gb", "H200", Decimal(141)),
        GpuType("l4", "nvidia-l4", "L4", Decimal(24)),
        GpuType("t4", "nvidia-tesla-t4", "T4", Decimal(16)),
        GpuType("v100", "nvidia-tesla-v100", "V100", Decimal(16)),
        GpuType("p100", "nvidia-tesla-p100", "P100", Decimal(16)),
        GpuType("p4", "nvidia-tesla-p4", "P4", Decimal(8)),
    )
}


@dataclass(frozen=True)
class MachineShape:
    """One purchasable shape: what the collector multiplies the resource SKUs by."""

    machine_type: str
    """The offer's instance type; N1 shapes carry their GPUs
    (``n1-standard-8+2xnvidia-tesla-t4``)."""
    family: str
    """Key of the family's core/RAM SKUs: a2, a3, a3plus (A3 Mega), a3ultra, g2, n1."""
    vcpus: int
    memory_gib: Decimal
    gpu: str
    """Key into :data:`GPU_TYPES`."""
    gpu_count: int
    local_ssd_gib: int
    interconnect: Interconnect
    base_machine_type: str
    """The Compute API machine type (differs from ``machine_type`` for N1 + GPU)."""

    @property
    def gpu_type(self) -> GpuType:
        return GPU_TYPES[self.gpu]


def _fixed(
    machine_type: str,
    family: str,
    vcpus: int,
    memory_gib: int | str,
    gpu: str,
    gpu_count: int,
    ssd_disks: int,
    interconnect: Interconnect,
) -> MachineShape:
    return MachineShape(
        machine_type=machine_type,
        family=family,
        vcpus=vcpus,
        memory_gib=Decimal(memory_gib),
        gpu=gpu,
        gpu_count=gpu_count,
        local_ssd_gib=ssd_disks * LOCAL_SSD_DISK_GIB,
        interconnect=interconnect,
        base_machine_type=machine_type,
    )


_NV = Interconnect.NVLINK
_PCIE = Interconnect.PCIE

# accelerator-optimized-machines: "A2 Standard" (A100 40GB), "A2 Ultra" (A100 80GB,
# local SSD bundled), "A3 High"/"A3 Mega"/"A3 Ultra" (H100 / H100 Mega / H200, 16 or
# 32 bundled Local SSD disks on the 8-GPU shapes), "G2" (L4, PCIe).
_ACCELERATOR_OPTIMIZED: tuple[MachineShape, ...] = (
    _fixed("a2-highgpu-1g", "a2", 12, 85, "a100-40gb", 1, 0, _NV),
    _fixed("a2-highgpu-2g", "a2", 24, 170, "a100-40gb", 2, 0, _NV),
    _fixed("a2-highgpu-4g", "a2", 48, 340, "a100-40gb", 4, 0, _NV),
    _fixed("a2-highgpu-8g", "a2", 96, 680, "a100-40gb", 8, 0, _NV),
    _fixed("a2-megagpu-16g", "a2", 96, 1360, "a100-40gb", 16, 0, _NV),
    _fixed("a2-ultragpu-1g", "a2", 12, 170, "a100-80gb", 1, 1, _NV),
    _fixed("a2-ultragpu-2g", "a2", 24, 340, "a100-80gb", 2, 2, _NV),
    _fixed("a2-ultragpu-4g", "a2", 48, 680, "a100-80gb", 4, 4, _NV),
    _fixed("a2-ultragpu-8g", "a2", 96, 1360, "a100-80gb", 8, 8, _NV),
    _fixed("a3-highgpu-1g", "a3", 26, 234, "h100-80gb", 1, 2, _NV),
    _fixed("a3-highgpu-2g", "a3", 52, 468, "h100-80gb", 2, 4, _NV),
    _fixed("a3-highgpu-4g", "a3", 104, 936, "h100-80gb", 4, 8, _NV),
    _fixed("a3-highgpu-8g", "a3", 208, 1872, "h100-80gb", 8, 16, _NV),
    _fixed("a3-megagpu-8g", "a3plus", 208, 1872, "h100-mega-80gb", 8, 16, _NV),
    _fixed("a3-ultragpu-8g", "a3ultra", 224, 2952, "h200-141gb", 8, 32, _NV),
    _fixed("g2-standard-4", "g2", 4, 16, "l4", 1, 0, _PCIE),
    _fixed("g2-standard-8", "g2", 8, 32, "l4", 1, 0, _PCIE),
    _fixed("g2-standard-12", "g2", 12, 48, "l4", 1, 0, _PCIE),
    _fixed("g2-standard-16", "g2", 16, 64, "l4", 1, 0, _PCIE),
    _fixed("g2-standard-24", "g2", 24, 96, "l4", 2, 0, _PCIE),
    _fixed("g2-standard-32", "g2", 32, 128, "l4", 1, 0, _PCIE),
    _fixed("g2-standard-48", "g2", 48, 192, "l4", 4, 0, _PCIE),
    _fixed("g2-standard-96", "g2", 96, 384, "l4", 8, 0, _PCIE),
)

# gpus: "N1 general-purpose machine types with attached GPUs" -- per GPU model and
# count, the largest vCPU count and memory (GB) the VM may have.
N1_GPU_LIMITS: dict[str, dict[int, tuple[int, int]]] = {
    "t4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
    "v100": {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)},
    "p100": {1: (16, 104), 2: (32, 208), 4: (96, 624)},
    "p4": {1: (24, 156), 2: (48, 312), 4: (96, 624)},
}

# A representative set of predefined N1 shapes (n1-standard-N: N vCPUs, 3.75 GiB each);
# custom N1 shapes are priced by other SKUs and not modelled.
N1_STANDARD_VCPUS = (4, 8, 16, 32)


def _n1_shapes() -> tuple[MachineShape, ...]:
    shapes = []
    for gpu, limits in N1_GPU_LIMITS.items():
        accelerator = GPU_TYPES[gpu].accelerator_type
        for count, (max_vcpus, max_memory) in limits.items():
            for vcpus in N1_STANDARD_VCPUS:
                memory = Decimal("3.75") * vcpus
                if vcpus > max_vcpus or memory > max_memory:
                    continue
                base = f"n1-standard-{vcpus}"
                shapes.append(
                    MachineShape(
                        machine_type=f"{base}+{count}x{accelerator}",
                        family="n1",
                        vcpus=vcpus,
                        memory_gib=memory,
                        gpu=gpu,
                        gpu_count=count,
                        local_ssd_gib=0,
                        # V100s attached to N1 are linked by NVLink in the 8-GPU
                        # topology only; the docs promise nothing for the rest.
                        interconnect=_PCIE if gpu != "v100" else Interconnect.UNKNOWN,
                        base_machine_type=base,
                    )
                )
    return tuple(shapes)


MACHINE_SHAPES: tuple[MachineShape, ...] = _ACCELERATOR_OPTIMIZED + _n1_shapes()
