"""Which GPU each Tencent Cloud CVM instance family carries.

``DescribeZoneInstanceConfigInfos`` counts an instance type's GPUs (``GpuCount``,
fractional for vGPU types) but never names them, so the model comes from the
family, as Tencent's instance-type documentation lists it:

- GPU Computing instances: https://www.tencentcloud.com/document/product/560/19701
  (PNV4, GT4, GN10Xp, GN10X, GN7, GN7vi, GI3X, GN8, GN6/GN6S)
- GPU Rendering instances: https://www.tencentcloud.com/document/product/560/19700
  (GNV4v, GNV4, GN7vw)

``gpu`` is Tencent's own spelling from those pages ("NVIDIA Tesla V100 NVLink 32 GB");
the catalog's aliases resolve it, with ``vram_gib`` (one whole GPU, from the pages'
"GPU Video Memory" columns) choosing between memory variants. A family missing here
(HCCPNV4h, PNV5b, GI1's Intel SG1, anything new) is a counted ``unknown_gpu_family``
skip: the GPU of a family is never guessed from its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from tracker.models import Interconnect

__all__ = ["COMPUTE_DOC", "FAMILIES", "RENDERING_DOC", "TencentFamily", "family_of"]

COMPUTE_DOC = "https://www.tencentcloud.com/document/product/560/19701"
RENDERING_DOC = "https://www.tencentcloud.com/document/product/560/19700"


@dataclass(frozen=True, slots=True)
class TencentFamily:
    gpu: str
    """The GPU as Tencent's documentation names it."""
    vram_gib: Decimal
    """Memory of one whole GPU (a 1/4 vGPU type gets a quarter of it)."""
    interconnect: Interconnect
    source: str


def _family(gpu: str, vram: int, source: str, nvlink: bool = False) -> TencentFamily:
    link = Interconnect.NVLINK if nvlink else Interconnect.PCIE
    return TencentFamily(gpu, Decimal(vram), link, source)


_T4 = "NVIDIA Tesla T4"
_A10 = "NVIDIA A10"
_V100 = "NVIDIA Tesla V100 NVLink 32 GB"

FAMILIES: Mapping[str, TencentFamily] = {
    "PNV4": _family(_A10, 24, COMPUTE_DOC),
    "GT4": _family("NVIDIA A100 NVLink 40 GB", 40, COMPUTE_DOC, nvlink=True),
    "GN10Xp": _family(_V100, 32, COMPUTE_DOC, nvlink=True),
    "GN10X": _family(_V100, 32, COMPUTE_DOC, nvlink=True),
    # GN7 also sells 1/4 and 1/2 vGPU shares of a T4 (GN7.LARGE20, GN7.2XLARGE40).
    "GN7": _family(_T4, 16, COMPUTE_DOC),
    "GN7vi": _family(_T4, 16, COMPUTE_DOC),
    "GI3X": _family(_T4, 16, COMPUTE_DOC),
    "GN8": _family("NVIDIA Tesla P40", 24, COMPUTE_DOC),
    "GN6": _family("NVIDIA Tesla P4", 8, COMPUTE_DOC),
    "GN6S": _family("NVIDIA Tesla P4", 8, COMPUTE_DOC),
    "GNV4v": _family(_A10, 24, RENDERING_DOC),
    "GNV4": _family(_A10, 24, RENDERING_DOC),
    "GN7vw": _family(_T4, 16, RENDERING_DOC),
}

_BY_UPPER = {name.upper(): family for name, family in FAMILIES.items()}


def family_of(name: str) -> TencentFamily | None:
    """The family's GPU; the API's spelling of a family name ("GN10Xp") is matched
    without regard to case, since the documentation and the API differ on it."""
    return _BY_UPPER.get(name.strip().upper())
