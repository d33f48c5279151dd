"""Pure parsing of Alibaba ECS payloads (tests/fixtures/alibaba/, see SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.alibaba_parse import (
    instance_type_items,
    parse_describe_price,
    parse_instance_types,
    parse_spot_advice,
    parse_spot_history,
)
from collectors.base import SkipItem
from tracker.catalog import get_spec
from tracker.models import PricingModel

FIXTURES = Path(__file__).parents[1] / "fixtures" / "alibaba"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


class Skips(list[tuple[str, str]]):
    def __call__(self, reason: str, detail: str) -> None:
        self.append((reason, detail))


def hardware() -> dict[str, Any]:
    items = instance_type_items(load("DescribeInstanceTypes_page1.json"))
    items += instance_type_items(load("DescribeInstanceTypes_page2.json"))
    skips = Skips()
    found = parse_instance_types(items, skips)
    assert skips == []
    return found


def test_gpu_memory_is_per_gpu_for_whole_gpu_types() -> None:
    a100 = hardware()["ecs.ebmgn7e.32xlarge"]
    # GPUAmount 8, GPUMemorySize 80: 80 GiB per GPU, 8 × 80 = 640 GiB in the machine.
    assert (a100.gpu_count, a100.gpu_memory_gib, a100.total_gpu_memory_gib) == (8, 80, 640)
    fields, _ = a100.offer_fields()
    assert fields["gpu_model"] == "A100-80GB"  # the 80 GiB figure picks the 80 GB part


def test_gpu_memory_is_the_slices_total_for_fractional_types() -> None:
    vgpu = hardware()["ecs.vgn7i-vws-m4.xlarge"]
    # "NVIDIA A10*1/6", GPUAmount 1, GPUMemorySize 4: the slice has 4 GiB of a 24 GiB card.
    assert vgpu.gpu_count == Decimal("0.1666666667")  # 1 × 1/6
    assert vgpu.total_gpu_memory_gib == 4
    assert vgpu.gpu_memory_gib == 24  # 4 × 6 ÷ (1 × 1)
    fields, attrs = vgpu.offer_fields()
    assert (fields["gpu_model"], fields["gpu_known"]) == ("A10", True)
    assert attrs["vram_total_gib"] == 4


def test_types_without_gpus_are_left_out_and_a_bad_share_is_counted() -> None:
    assert "ecs.g6.large" not in hardware()  # GPUAmount 0 in the docs example
    skips = Skips()
    bad = {"InstanceTypeId": "ecs.x", "GPUAmount": 1, "GPUSpec": "NVIDIA A10*7/6"}
    assert parse_instance_types([bad], skips) == {}
    assert skips[0][0] == "unknown_gpu"


def test_unknown_gpu_spelling_is_kept_and_flagged() -> None:
    item = {"InstanceTypeId": "ecs.gnx", "GPUAmount": 2, "GPUSpec": "NVIDIA Z9000"}
    hw = parse_instance_types([item], Skips())["ecs.gnx"]
    fields, attrs = hw.offer_fields()
    assert (fields["gpu_model"], fields["gpu_known"]) == ("NVIDIA Z9000", False)
    assert attrs["gpu_unknown_reason"]


def test_year_prices_become_hourly_over_the_whole_term() -> None:
    one = parse_describe_price(load("DescribePrice_gn7i_year1.json"), PricingModel.RESERVED_1Y, "x")
    # 3712.8 CNY ÷ 8,760 h = 0.4238356164; list 4368 ÷ 8,760 = 0.4986301370.
    assert (one.hourly, one.list_hourly, one.term_price) == (
        Decimal("0.4238356164"),
        Decimal("0.4986301370"),
        Decimal("3712.8"),
    )
    three = parse_describe_price(
        load("DescribePrice_gn7i_year3.json"), PricingModel.RESERVED_3Y, "x"
    )
    assert three.hourly == Decimal("0.2991780822")  # 7862.4 ÷ 26,280


def test_hour_price_takes_the_instance_line_and_the_total_when_there_is_none() -> None:
    hour = parse_describe_price(load("DescribePrice_gn7i_hour.json"), PricingModel.ON_DEMAND, "x")
    assert (hour.hourly, hour.basis, hour.currency) == (Decimal("11.55"), "instanceType", "CNY")
    usd = parse_describe_price(
        load("DescribePrice_vgn7i_hour_usd.json"), PricingModel.ON_DEMAND, "x"
    )
    assert (usd.hourly, usd.list_hourly, usd.basis, usd.currency) == (
        Decimal("0.48"),
        Decimal("0.6"),
        "total",
        "USD",
    )


def test_a_price_without_currency_is_skipped() -> None:
    body = {"PriceInfo": {"Price": {"TradePrice": 1.0}}}
    with pytest.raises(SkipItem, match="Currency"):
        parse_describe_price(body, PricingModel.ON_DEMAND, "x")


def test_spot_advice_numbers_arrive_as_strings() -> None:
    advice = parse_spot_advice(load("DescribeSpotAdvice.json"))
    found = advice[("cn-hangzhou-g", "ecs.gn7i-c8g1.2xlarge")]
    assert (found.interruption_rate_pct, found.interruption_bucket) == (4, "3-5%")
    assert found.average_spot_pct_of_on_demand == 12
    # The bucket's upper bound, the figure the recommender prices spot risk with.
    assert found.attributes()["interruption_max_pct"] == 5
    assert len(advice) == 1  # cn-hangzhou-i lists no resources


def test_spot_history_without_currency_drops_the_points_counted() -> None:
    body = load("DescribeSpotPriceHistory_page1.json")
    skips = Skips()
    offers = parse_spot_history(
        body["SpotPrices"]["SpotPriceType"], hardware(), "", skips, region="cn-hangzhou"
    )
    assert offers == [] and skips[0][0] == "malformed_spot_item"


@pytest.mark.parametrize(
    ("spec", "memory", "expected"),
    [
        # GPUSpec spellings with GPUMemorySize, as DescribeInstanceTypes reports them.
        ("NVIDIA A800", 80, "A800-80GB"),
        ("NVIDIA H800", 80, "H800"),
        ("NVIDIA H20", 96, "H20"),
        ("NVIDIA L20", 48, "L20"),
        ("NVIDIA A30", 24, "A30"),
        ("NVIDIA T4", 16, "T4"),
        ("NVIDIA A10*1/3", 8, "A10"),  # a share: 8 GiB of a 24 GiB card
    ],
)
def test_alibaba_gpu_spellings_resolve(spec: str, memory: int, expected: str) -> None:
    item = {"InstanceTypeId": "ecs.x", "GPUAmount": 1, "GPUSpec": spec, "GPUMemorySize": memory}
    fields, _ = parse_instance_types([item], Skips())["ecs.x"].offer_fields()
    assert (fields["gpu_model"], fields["gpu_known"]) == (expected, True)


@pytest.mark.parametrize("name", ["A800-80GB", "H800", "H20", "L20"])
def test_china_market_rows_state_memory_and_leave_unpublished_figures_out(name: str) -> None:
    spec = get_spec(name)
    assert spec.vram_gib in (48, 80, 96) and spec.source.startswith("https://")
    # No NVIDIA datasheet to cite: throughput is absent, never borrowed from the A100/H100.
    assert (spec.bf16_tflops, spec.fp32_tflops, spec.memory_bandwidth_gbs) == (None, None, None)
    assert spec.note
