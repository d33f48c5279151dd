"""Azure size table rows checked against Microsoft's size pages (issue 10 items 16, 17)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from collectors.azure_sizes import SIZES
from tracker.catalog import resolve_gpu

# ncv3-series-specs.md: "NVIDIA Tesla V100 16 GiB", 1-4 GPUs, 112-448 GiB; the NCv3 cards
# are the PCIe V100 (14 FP32 / 112 tensor TFLOPS), not the SXM2 module (15.7 / 125).
NCV3 = {
    "Standard_NC6s_v3": (Decimal(1), Decimal(112)),
    "Standard_NC12s_v3": (Decimal(2), Decimal(224)),
    "Standard_NC24s_v3": (Decimal(4), Decimal(448)),
    "Standard_NC24rs_v3": (Decimal(4), Decimal(448)),
}


@pytest.mark.parametrize("sku", sorted(NCV3))
def test_ncv3_sizes_are_the_16_gib_pcie_v100(sku: str) -> None:
    size = SIZES[sku]
    count, memory = NCV3[sku]
    assert (size.gpu_count, size.vram_gib, size.memory_gib) == (count, Decimal(16), memory)
    match = resolve_gpu(size.gpu, size.vram_gib)
    assert match.name == "V100-PCIE-16GB", match.reason
    assert match.spec is not None and match.spec.fp16_tflops == 112


def test_nd_h200_v5_has_its_host_ram() -> None:
    # ND H200 v5 size page: Standard_ND96isr_H200_v5, 96 vCPU, 1,850 GiB memory, 8x H200 141 GB.
    size = SIZES["Standard_ND96isr_H200_v5"]
    assert size.memory_gib == Decimal(1850)
    assert (size.gpu_count, size.vram_gib, size.vcpus) == (Decimal(8), Decimal(141), 96)
    assert resolve_gpu(size.gpu, size.vram_gib).name == "H200"
