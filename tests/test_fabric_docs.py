"""The shipped documented fabrics (tracker/catalog/fabrics.toml): checked hard at load."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from collectors.azure_sizes import SIZES as AZURE_SIZES
from collectors.gcp_machines import MACHINE_SHAPES
from collectors.oci_shapes import SHAPES as OCI_SHAPES
from tracker.catalog import FabricDataError, documented_fabric, load_fabrics
from tracker.models import Fabric

NOT_COLLECTED_YET = {("gcp", "a4-highgpu-8g")}
"""Documented, but the GCP collector has no A4 shape yet."""


def test_every_row_names_a_type_its_collector_sells() -> None:
    known = {
        "azure": set(AZURE_SIZES),
        "gcp": {s.machine_type for s in MACHINE_SHAPES},
        "oci": set(OCI_SHAPES),
    }
    rows = load_fabrics()
    assert rows  # the file is shipped and read
    for provider, itype in rows:
        assert itype in known[provider] or (provider, itype) in NOT_COLLECTED_YET, itype


@pytest.mark.parametrize(
    ("provider", "itype", "fabric", "gbps"),
    [
        ("oci", "BM.GPU.H100.8", Fabric.ROCE, Decimal(3200)),  # 8 × 2 × 200
        ("oci", "BM.GPU.H200.8", Fabric.ROCE, Decimal(3200)),  # 8 × 400
        ("azure", "Standard_ND96isr_H100_v5", Fabric.INFINIBAND, Decimal(3200)),  # 8 × 400
        ("azure", "Standard_ND96asr_v4", Fabric.INFINIBAND, Decimal(1600)),  # 8 × 200 HDR
        ("gcp", "a3-ultragpu-8g", Fabric.ROCE, Decimal(3200)),  # 8 CX7 NICs, 3,200 total
        ("gcp", "a3-megagpu-8g", Fabric.GPUDIRECT_TCPX, Decimal(1600)),  # lower of 1,800/1,600
    ],
)
def test_hand_read_rows(provider: str, itype: str, fabric: Fabric, gbps: Decimal) -> None:
    row = documented_fabric(provider, itype)
    assert row is not None and (row.fabric, row.network_gbps) == (fabric, gbps)
    assert row.source.startswith("https://")


def test_a_type_without_a_row_is_not_documented() -> None:
    assert documented_fabric("azure", "Standard_NC24ads_A100_v4") is None


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('provider = "oci"\ninstance_type = "x"\nfabric = "fast"\nsource = "s"', "not a Fabric"),
        ('provider = "oci"\ninstance_type = "x"\nfabric = "unknown"\nsource = "s"', "missing row"),
        ('provider = "oci"\ninstance_type = "x"\nfabric = "roce"', "source is required"),
        ('provider = "oci"\ninstance_type = "x"\nfabric = "roce"\nsource = "s"\ngbps = 1', "gbps"),
        (
            'provider = "oci"\ninstance_type = "x"\nfabric = "roce"\nsource = "s"\nnetwork_gbps = -1',
            "positive number",
        ),
    ],
)
def test_a_bad_row_is_one_line_naming_the_row(tmp_path: Path, body: str, says: str) -> None:
    path = tmp_path / "fabrics.toml"
    path.write_text(f"[[fabric]]\n{body}\n")
    with pytest.raises(FabricDataError, match=says) as info:
        load_fabrics(path)
    assert str(info.value).startswith(f"{path}: [[fabric]] #1")
    assert "\n" not in str(info.value)
