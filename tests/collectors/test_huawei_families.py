"""Huawei's V100 families: the flavor text says "NVIDIA V100" for the PCIe and the
NVLink (SXM2) cards alike, so the family (``ecs:generation``) decides, as Huawei's
GPU-accelerated ECS page documents it (collectors/huawei_families.py cites it)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from collectors.huawei import build_offer
from collectors.huawei_families import catalog_spelling
from collectors.huawei_flavors import FlavorHardware
from collectors.huawei_ratings import Rating
from tracker.models import PricingModel


def _hardware(flavor: str, generation: str, vram: int, count: int) -> FlavorHardware:
    return FlavorHardware(
        flavor=flavor,
        gpu_name="NVIDIA V100",
        gpu_count=Decimal(count),
        vram_gib=Decimal(vram),
        vcpus=Decimal(8 * count),
        memory_gib=Decimal(64 * count),
        performance_type="gpu",
        generation=generation,
        operation_status="normal",
    )


def _offer(flavor: str, generation: str, vram: int, count: int) -> tuple[str, str, str]:
    rating = Rating(amount=Decimal("10"), list_amount=None, currency="CNY")
    offer = build_offer(
        _hardware(flavor, generation, vram, count), "cn-north-4", PricingModel.ON_DEMAND, rating
    )
    return offer.gpu_model, offer.gpu_raw_name, offer.interconnect.value


@pytest.mark.parametrize(
    ("flavor", "generation", "vram", "count", "expected"),
    [
        # P2s table: "1 x V100 | PCIe Gen3 | 1 x 32 GiB" -> the 32 GB PCIe card.
        ("p2s.2xlarge.8", "p2s", 32, 1, ("V100-PCIE-32GB", "NVIDIA V100", "pcie")),
        # P2: V100 16 GiB at "14 TFLOPS ... 112 TFLOPS" (the PCIe figures).
        ("p2.8xlarge.8", "p2", 16, 4, ("V100-PCIE-16GB", "NVIDIA V100", "pcie")),
        # P2v: "GPU NVLink for direct communication between GPUs", 16 GiB -> SXM2 16 GB.
        ("p2v.16xlarge.8", "p2v", 16, 8, ("V100-16GB", "NVIDIA V100", "nvlink")),
        # No ecs:generation: the flavor name's prefix is the family.
        ("p2s.16xlarge.8", "", 32, 8, ("V100-PCIE-32GB", "NVIDIA V100", "pcie")),
    ],
)
def test_v100_flavors_resolve_to_their_documented_card(
    flavor: str, generation: str, vram: int, count: int, expected: tuple[str, str, str]
) -> None:
    assert _offer(flavor, generation, vram, count) == expected


def test_an_undocumented_family_keeps_the_flavor_spelling() -> None:
    assert catalog_spelling("NVIDIA V100", "p9x") == "NVIDIA V100"
    assert catalog_spelling("NVIDIA V100 PCIe", "p2s") == "NVIDIA V100 PCIe"
    assert catalog_spelling("NVIDIA V100", "P2S") == "NVIDIA V100 PCIe"
