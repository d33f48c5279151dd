"""Hardware facts for Azure GPU VM sizes, which the Retail Prices API does not carry.

The Retail API only names a size (``armSkuName``); GPU model, count and memory
come from Microsoft's size pages, transcribed here with the page each row came
from. A size that looks like a GPU size (``Standard_N…``) but is missing here is
reported as unknown by the collector, never guessed from its name.

Figures are the size pages' own: "Memory (GB)" and "Accelerator-Memory (GB)" are
copied as written (the pages' spec tables state both in GiB). ``vram_gib`` is per
*whole* GPU; fractional NVadsA10 v5 sizes get a fractional ``gpu_count`` so that
``gpu_count * vram_gib`` is the frame buffer the VM actually sees (1/6 × 24 = 4).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType

from tracker.models import Interconnect

__all__ = ["SIZES", "AzureSize", "looks_like_gpu_size"]

_DOCS = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
_NCV3 = _DOCS + "ncv3-series"
_NCAST4 = _DOCS + "ncast4v3-series"
_NCA100 = _DOCS + "nca100v4-series"
_NDA100 = _DOCS + "ndasra100v4-series"
_NDMA100 = _DOCS + "ndma100v4-series"
_NDH100 = _DOCS + "ndh100v5-series"
_NCH100 = _DOCS + "ncadsh100v5-series"
_NCCH100 = _DOCS + "nccadsh100v5-series"
_NDH200 = _DOCS + "nd-h200-v5-series"
_NVA10 = _DOCS + "nvadsa10v5-series"
_NDMI300X = _DOCS + "ndmi300xv5-series"


@dataclass(frozen=True, slots=True)
class AzureSize:
    """One VM size's hardware. ``gpu`` is the raw name handed to the GPU catalog."""

    gpu: str
    gpu_count: Decimal
    vram_gib: Decimal
    vcpus: int
    memory_gib: Decimal | None
    interconnect: Interconnect
    source: str
    gpu_fabric: str = ""
    """Named GPU-to-GPU fabric when it is not NVIDIA's (MI300X: Infinity Fabric)."""

    @property
    def total_vram_gib(self) -> Decimal:
        """Frame buffer of the whole VM, to the page's precision (1/6 × 24 = 4.00)."""
        return (self.gpu_count * self.vram_gib).quantize(Decimal("0.01"))


def _d(value: str) -> Decimal:
    return Decimal(value)


# 1/6 and 1/3 at the store's money scale (10 places), so the stored count equals
# the emitted one and re-collecting never looks like a hardware change.
_SIXTH = Decimal("0.1666666667")
_THIRD = Decimal("0.3333333333")
_PCIE = Interconnect.PCIE
_V100P = "V100 PCIe"  # the catalog's V100-PCIE family; 16 GiB picks V100-PCIE-16GB
_NVLINK = Interconnect.NVLINK

SIZES: Mapping[str, AzureSize] = MappingProxyType(
    {
        # NCv3: NVIDIA Tesla V100 16 GiB, the PCIe card (not the SXM2 module), Intel Broadwell.
        "Standard_NC6s_v3": AzureSize(_V100P, _d("1"), _d("16"), 6, _d("112"), _PCIE, _NCV3),
        "Standard_NC12s_v3": AzureSize(_V100P, _d("2"), _d("16"), 12, _d("224"), _PCIE, _NCV3),
        "Standard_NC24s_v3": AzureSize(_V100P, _d("4"), _d("16"), 24, _d("448"), _PCIE, _NCV3),
        "Standard_NC24rs_v3": AzureSize(_V100P, _d("4"), _d("16"), 24, _d("448"), _PCIE, _NCV3),
        # NCasT4_v3: NVIDIA Tesla T4 16 GB.
        "Standard_NC4as_T4_v3": AzureSize("T4", _d("1"), _d("16"), 4, _d("28"), _PCIE, _NCAST4),
        "Standard_NC8as_T4_v3": AzureSize("T4", _d("1"), _d("16"), 8, _d("56"), _PCIE, _NCAST4),
        "Standard_NC16as_T4_v3": AzureSize("T4", _d("1"), _d("16"), 16, _d("110"), _PCIE, _NCAST4),
        "Standard_NC64as_T4_v3": AzureSize("T4", _d("4"), _d("16"), 64, _d("440"), _PCIE, _NCAST4),
        # NC A100 v4: NVIDIA PCIe A100 80 GB.
        "Standard_NC24ads_A100_v4": AzureSize(
            "A100 PCIe", _d("1"), _d("80"), 24, _d("220"), _PCIE, _NCA100
        ),
        "Standard_NC48ads_A100_v4": AzureSize(
            "A100 PCIe", _d("2"), _d("80"), 48, _d("440"), _PCIE, _NCA100
        ),
        "Standard_NC96ads_A100_v4": AzureSize(
            "A100 PCIe", _d("4"), _d("80"), 96, _d("880"), _PCIE, _NCA100
        ),
        # ND A100 v4: 8x A100 40 GB, "NVLINK 3.0 connectivity" (series summary).
        "Standard_ND96asr_v4": AzureSize(
            "A100 SXM4", _d("8"), _d("40"), 96, _d("900"), _NVLINK, _NDA100
        ),
        # NDm A100 v4: 8x A100 80 GB, NVLink 3.0.
        "Standard_ND96amsr_A100_v4": AzureSize(
            "A100 SXM4", _d("8"), _d("80"), 96, _d("1900"), _NVLINK, _NDMA100
        ),
        # ND H100 v5: 8x H100 80 GB, "NVLINK 4.0 connectivity" (series summary).
        "Standard_ND96isr_H100_v5": AzureSize(
            "H100 SXM", _d("8"), _d("80"), 96, _d("1900"), _NVLINK, _NDH100
        ),
        # NC H100 v5 (NCads_H100_v5): H100 NVL 94 GB, PCIe.
        "Standard_NC40ads_H100_v5": AzureSize(
            "H100 NVL", _d("1"), _d("94"), 40, _d("320"), _PCIE, _NCH100
        ),
        "Standard_NC80adis_H100_v5": AzureSize(
            "H100 NVL", _d("2"), _d("94"), 80, _d("640"), _PCIE, _NCH100
        ),
        # NCCads_H100_v5 (confidential): 1x H100 94 GB.
        "Standard_NCC40ads_H100_v5": AzureSize(
            "H100 NVL", _d("1"), _d("94"), 40, _d("320"), _PCIE, _NCCH100
        ),
        # ND H200 v5: 8x H200 141 GB "interconnected with 900 GB/s NVLink"; the size
        # table gives 1,850 GiB of memory.
        "Standard_ND96isr_H200_v5": AzureSize(
            "H200", _d("8"), _d("141"), 96, _d("1850"), _NVLINK, _NDH200
        ),
        # NVadsA10 v5: partial NVIDIA A10 (24 GB), 1/6 to 2 GPUs.
        "Standard_NV6ads_A10_v5": AzureSize("A10", _SIXTH, _d("24"), 6, _d("55"), _PCIE, _NVA10),
        "Standard_NV12ads_A10_v5": AzureSize("A10", _THIRD, _d("24"), 12, _d("110"), _PCIE, _NVA10),
        "Standard_NV18ads_A10_v5": AzureSize(
            "A10", _d("0.5"), _d("24"), 18, _d("220"), _PCIE, _NVA10
        ),
        "Standard_NV36ads_A10_v5": AzureSize(
            "A10", _d("1"), _d("24"), 36, _d("440"), _PCIE, _NVA10
        ),
        "Standard_NV36adms_A10_v5": AzureSize(
            "A10", _d("1"), _d("24"), 36, _d("880"), _PCIE, _NVA10
        ),
        "Standard_NV72ads_A10_v5": AzureSize(
            "A10", _d("2"), _d("24"), 72, _d("880"), _PCIE, _NVA10
        ),
        # ND MI300X v5: 8x AMD Instinct MI300X 192 GB joined by Infinity Fabric, AMD's
        # GPU-to-GPU fabric (not NVLink), named in the attributes.
        "Standard_ND96isr_MI300X_v5": AzureSize(
            "MI300X",
            _d("8"),
            _d("192"),
            96,
            _d("1850"),
            Interconnect.GPU_FABRIC,
            _NDMI300X,
            gpu_fabric="Infinity Fabric",
        ),
    }
)

# Azure's N family is its GPU family (NC compute, ND deep learning, NV and NG
# visualisation); NP is FPGA and is not tracked.
_GPU_LIKE = re.compile(r"^Standard_N[CDVG]", re.IGNORECASE)


def looks_like_gpu_size(arm_sku_name: str) -> bool:
    return bool(_GPU_LIKE.match(arm_sku_name))
