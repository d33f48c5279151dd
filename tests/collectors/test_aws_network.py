"""An EC2 type's fabric and bandwidth from DescribeInstanceTypes' NetworkInfo (real items)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.aws_hardware import parse_instance_types
from collectors.aws_network import gbps_from_performance, instance_network
from tracker.models import Fabric

from .aws_helpers import instance_type_items, load
from .conftest import run_context

NETWORK = Path(__file__).resolve().parent.parent / "fixtures" / "aws"


def _moto_8() -> dict[str, Any]:
    """moto's items keyed by type (p4d, p5, p5en, p6-b200, p6-b300, g5.48xl, trn1, trn2)."""
    items: dict[str, Any] = json.loads(
        (NETWORK / "ec2_describe_instance_types_network_moto_8_types.json").read_text()
    )
    return items


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("3200 Gigabit", Decimal(3200)),
        ("4x 100 Gigabit", Decimal(400)),  # 4 × 100
        ("16x 200 Gigabit", Decimal(3200)),  # 16 × 200
        ("Up to 25 Gigabit", Decimal(25)),  # the burst peak AWS states
        ("3.12 Gigabit", Decimal("3.12")),
        ("High", None),
        ("", None),
    ],
)
def test_network_performance_text(text: str, gbps: Decimal | None) -> None:
    assert gbps_from_performance(text) == gbps


def test_efa_types_read_as_efa_with_the_instance_figure() -> None:
    items = _moto_8()
    expected = {
        # NetworkPerformance as AWS states it per instance:
        "p4d.24xlarge": Decimal(400),  # "4x 100 Gigabit"
        "p5.48xlarge": Decimal(3200),  # "3200 Gigabit" (= 32 cards × 100)
        "p5en.48xlarge": Decimal(3200),  # 16 cards × 200
        # moto lists 8 cards × 200 = 1,600 but states "3200 Gigabit": the instance's
        # own figure wins (AWS publishes 3,200 Gbps EFAv4 for p6-b200).
        "p6-b200.48xlarge": Decimal(3200),
        "p6-b300.48xlarge": Decimal(6400),  # "6400 Gigabit"; cards sum 350 + 16 × 400 = 6,750
        "trn1.32xlarge": Decimal(800),  # "8x 100 Gigabit"
        "trn2.48xlarge": Decimal(3200),  # "16x 200 Gigabit"
        "g5.48xlarge": Decimal(100),  # EfaSupported true on the 8-GPU g5
    }
    for name, gbps in expected.items():
        assert instance_network(items[name]) == (Fabric.EFA, gbps), name


def test_no_efa_is_ethernet_and_no_network_info_is_unknown() -> None:
    by_type = {i["InstanceType"]: i for i in instance_type_items()}
    # g4dn.xlarge: EfaSupported false, "Up to 25 Gigabit".
    assert instance_network(by_type["g4dn.xlarge"]) == (Fabric.ETHERNET, Decimal(25))
    # The 2020 capture has no NetworkCards/EFA fields at all: not stated.
    old = load("ec2_describe_instance_types_t3_micro_p3_16xlarge.json")["InstanceTypes"]
    p3 = next(i for i in old if i["InstanceType"] == "p3.16xlarge")
    fabric, _ = instance_network(p3)
    assert fabric is Fabric.UNKNOWN


def test_the_cards_sum_when_the_text_has_no_figure() -> None:
    item = json.loads(json.dumps(_moto_8()["p4d.24xlarge"]))
    item["NetworkInfo"]["NetworkPerformance"] = "High"
    # 4 cards × PeakBandwidthInGbps 100.0 = 400
    assert instance_network(item) == (Fabric.EFA, Decimal(400))


def test_the_hardware_carries_fabric_into_the_offer_fields() -> None:
    ctx = run_context()
    hw = parse_instance_types(list(_moto_8().values()), ctx.skip)
    assert not ctx.skips
    fields = hw["p5.48xlarge"].offer_fields()
    assert (fields["fabric"], fields["network_gbps"]) == (Fabric.EFA, Decimal(3200))


def test_every_accelerated_type_moto_ships_states_its_network() -> None:
    """moto's whole DescribeInstanceTypes dump: every accelerated type has NetworkInfo with
    EfaSupported and a NetworkPerformance figure, so none is left unknown; the 8-GPU
    training types are all EFA, and EFA agrees with AWS's own flag item by item."""
    from .test_aws_hardware import _moto_instance_types

    data = _moto_instance_types()
    ctx = run_context()
    hw = parse_instance_types(data.values(), ctx.skip)
    assert not ctx.skips and len(hw) >= 50
    for name, h in hw.items():
        assert h.fabric is not Fabric.UNKNOWN, name
        assert h.network_gbps is not None and h.network_gbps > 0, name
        efa = data[name]["NetworkInfo"]["EfaSupported"]
        assert (h.fabric is Fabric.EFA) is efa, name
    for name in ("p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge", "trn1.32xlarge"):
        assert hw[name].fabric is Fabric.EFA, name
