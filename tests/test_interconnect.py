"""The interconnect vocabulary: NVLink, a vendor-neutral GPU fabric, PCIe, unknown.

Which link an offer states, and which one the recommender assumes from the GPU catalog
when an offer does not say (issue 10 items 11 and 12).
"""

from __future__ import annotations

import pytest

from collectors.azure_sizes import SIZES
from tests.conftest import make_offer
from tracker.catalog import get_spec
from tracker.models import Interconnect, InvalidOffer
from tracker.recommend.fabric import catalog_interconnect
from tracker.store.schema import Series


def test_gpu_fabric_is_a_value_of_its_own_and_fits_the_stored_column() -> None:
    assert Interconnect("gpu_fabric") is Interconnect.GPU_FABRIC
    assert make_offer(interconnect="gpu_fabric").interconnect is Interconnect.GPU_FABRIC
    width = Series.__table__.c.interconnect.type.length
    assert all(len(value) <= width for value in Interconnect)
    with pytest.raises(InvalidOffer, match="nvlink, gpu_fabric, pcie, unknown"):
        make_offer(interconnect="infinity")


def test_azure_nd_mi300x_v5_is_joined_by_a_gpu_fabric_not_nvlink() -> None:
    # learn.microsoft.com ndmi300xv5-series: 8 x MI300X joined by AMD's Infinity Fabric
    # (xGMI), AMD's GPU-to-GPU fabric, not NVIDIA's NVLink; NVIDIA's ND sizes keep NVLink.
    mi300x = SIZES["Standard_ND96isr_MI300X_v5"]
    assert mi300x.interconnect is Interconnect.GPU_FABRIC
    assert mi300x.gpu_fabric == "Infinity Fabric"
    assert SIZES["Standard_ND96isr_H100_v5"].interconnect is Interconnect.NVLINK


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        # NVIDIA SXM modules sit on HGX boards wired with NVLink/NVSwitch
        ("H100-SXM", Interconnect.NVLINK),
        ("A100-80GB", Interconnect.NVLINK),
        ("V100-16GB", Interconnect.NVLINK),
        ("B200", Interconnect.NVLINK),
        # OAM modules sit on their vendor's baseboard: Infinity Fabric, Gaudi's RoCE mesh
        ("MI300X", Interconnect.GPU_FABRIC),
        ("Gaudi2", Interconnect.GPU_FABRIC),
        # a PCIe card may or may not be bridged: the catalog cannot tell
        ("A100-80GB-PCIE", Interconnect.UNKNOWN),
        ("L40S", Interconnect.UNKNOWN),
        ("L4", Interconnect.UNKNOWN),
        ("GH200-96GB", Interconnect.UNKNOWN),
        # a chip whose datasheet names its own chip-to-chip link (issue 38): NeuronLink-v2
        # on every chip of a trn1.32xlarge / inf2.48xlarge, ICI across a TPU host
        ("Trainium1", Interconnect.GPU_FABRIC),
        ("Inferentia2", Interconnect.GPU_FABRIC),
        ("TPU-v5p", Interconnect.GPU_FABRIC),
        ("TPU7x", Interconnect.GPU_FABRIC),
        # Inferentia1's datasheet names no such link
        ("Inferentia1", Interconnect.UNKNOWN),
    ],
)
def test_catalog_interconnect_follows_the_parts_form_factor(
    gpu: str, expected: Interconnect
) -> None:
    assert catalog_interconnect(get_spec(gpu)) is expected


def test_an_unknown_gpu_has_no_catalog_interconnect() -> None:
    assert catalog_interconnect(None) is Interconnect.UNKNOWN
