"""Price List items -> on-demand and reserved offers (pure parser, recorded payloads)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from collectors.aws_hardware import InstanceHardware
from collectors.aws_pricelist import effective_hourly, parse_price_list_item
from collectors.base import RunContext
from tracker.models import Interconnect, PricingModel

from .aws_helpers import gpu_items, gpu_page, hardware, load
from .conftest import run_context

US = "US East (N. Virginia)"


def _m5_hardware() -> dict[str, InstanceHardware]:
    """Pretend m5.large had a GPU, so the real (non-GPU) capture's prices can be checked."""
    return {
        "m5.large": InstanceHardware(
            instance_type="m5.large",
            gpu_model="T4",
            gpu_raw_name="T4",
            gpu_known=True,
            gpu_count=Decimal(1),
            gpu_memory_gib=Decimal(16),
            vcpus=Decimal(2),
            memory_gib=Decimal(8),
            interconnect=Interconnect.PCIE,
            kind="gpu",
            manufacturer="NVIDIA",
        )
    }


def _by_term(offers: list[Any]) -> dict[tuple[str, str, str], Any]:
    return {(o.pricing.value, o.payment_option, o.offering_class): o for o in offers}


def test_real_m5_capture_reserved_effective_hourly_checked_by_hand(ctx: RunContext) -> None:
    item = load("pricing_get_products_pricelist_item_m5_large.json")
    parsed = parse_price_list_item(item, _m5_hardware(), ctx.skip, region_hint="us-east-1")
    assert not ctx.skips
    offers = _by_term(parsed)
    assert len(offers) == 13  # 1 on-demand + 12 reserved (2 terms x 2 classes x 3 options)

    assert offers[("on_demand", "", "")].price_per_hour == Decimal("0.0960000000")
    # No Upfront, 1yr standard: the hourly rate is the whole price.
    no_upfront = offers[("reserved_1y", "no_upfront", "standard")]
    assert no_upfront.price_per_hour == Decimal("0.06")
    assert no_upfront.attributes["upfront_usd"] == Decimal(0)
    # Partial Upfront, 1yr standard: $252 upfront + $0.029/h -> 0.029 + 252/8760.
    # 252/8760 = 0.028767123287..., so 0.057767123287... -> 0.0577671233 at 10 places.
    partial = offers[("reserved_1y", "partial_upfront", "standard")]
    assert partial.price_per_hour == Decimal("0.0577671233")
    assert partial.attributes["upfront_usd"] == Decimal("252")
    assert partial.attributes["recurring_hourly_usd"] == Decimal("0.029")
    # All Upfront, 1yr standard: $494 / 8760 h = 0.056392694063... -> 0.0563926941.
    all_upfront = offers[("reserved_1y", "all_upfront", "standard")]
    assert all_upfront.price_per_hour == Decimal("0.0563926941")
    assert all_upfront.attributes["recurring_hourly_usd"] == Decimal(0)
    # All Upfront, 3yr convertible: $1161 / 26280 h = 0.044178082191... -> 0.0441780822.
    three = offers[("reserved_3y", "all_upfront", "convertible")]
    assert three.price_per_hour == Decimal("0.0441780822")
    # Partial Upfront, 3yr standard: 0.019 + 505/26280 (0.019216133942...) = 0.0382161339.
    assert offers[("reserved_3y", "partial_upfront", "standard")].price_per_hour == Decimal(
        "0.0382161339"
    )
    for offer in parsed:
        assert offer.region == "us-east-1"  # no regionCode in this 2021 item: the query's region
        assert offer.zone == ""
        assert offer.currency == "USD"


def test_effective_hourly_arithmetic() -> None:
    assert effective_hourly(Decimal("1.5"), Decimal(0), 8760) == Decimal("1.5000000000")
    assert effective_hourly(Decimal("0.5"), Decimal("4380"), 8760) == Decimal("1.0000000000")
    assert effective_hourly(Decimal(0), Decimal("26280"), 26280) == Decimal("1.0000000000")


def test_gpu_page_parses_into_on_demand_and_reserved_offers(ctx: RunContext) -> None:
    hw = hardware()
    offers = []
    for raw in gpu_page()["PriceList"]:  # JSON strings, exactly as GetProducts returns them
        offers.extend(parse_price_list_item(raw, hw, ctx.skip, region_hint="us-east-1"))
        assert not ctx.skips
    assert len(offers) == 7 * 13
    p4d = _by_term([o for o in offers if o.instance_type == "p4d.24xlarge"])
    od = p4d[("on_demand", "", "")]
    assert od.price_per_hour == Decimal("21.957642")
    assert (od.gpu_model, od.gpu_count, od.gpu_memory_gib) == ("A100-40GB", 8, Decimal(40))
    assert od.vcpus == 96 and od.memory_gib == 1152
    assert od.interconnect is Interconnect.NVLINK
    # 1yr standard Partial Upfront (derived): $57639 upfront + $6.6330376875/h;
    # 57639 / 8760 = 6.579794520547..., + 6.6330376875 = 13.212832208047... -> 10 places.
    partial = p4d[("reserved_1y", "partial_upfront", "standard")]
    assert partial.price_per_hour == Decimal("13.2128322080")
    assert partial.pricing is PricingModel.RESERVED_1Y
    p5 = [o for o in offers if o.instance_type == "p5.48xlarge"]
    assert {o.gpu_model for o in p5} == {"H100-SXM"}
    g6f = [o for o in offers if o.instance_type == "g6f.large"]
    assert {(o.gpu_model, o.gpu_count) for o in g6f} == {("L4", Decimal("0.125"))}
    inf2 = [o for o in offers if o.instance_type == "inf2.xlarge"]
    assert {(o.gpu_model, o.attributes["accelerator_kind"]) for o in inf2} == {
        ("Inferentia2", "accelerator")
    }


def test_region_code_wins_over_the_queried_region(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    item["product"]["attributes"]["regionCode"] = "us-east-2"
    offers = parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1")
    assert {o.region for o in offers} == {"us-east-2"}


def test_without_any_region_the_item_is_skipped(ctx: RunContext) -> None:
    assert parse_price_list_item(gpu_items()[f"g5.xlarge@{US}"], hardware(), ctx.skip) == []
    assert ctx.skips == Counter({"no_region": 1})


def test_pricing_scope_limits_what_is_built(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    only_3y = frozenset({PricingModel.RESERVED_3Y})
    offers = parse_price_list_item(
        item, hardware(), ctx.skip, region_hint="us-east-1", pricing_scope=only_3y
    )
    assert len(offers) == 6
    assert {o.pricing for o in offers} == {PricingModel.RESERVED_3Y}


def _first_term(item: dict[str, Any], kind: str) -> dict[str, Any]:
    term: dict[str, Any] = next(iter(item["terms"][kind].values()))
    return term


def test_missing_terms_is_a_counted_skip(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    del item["terms"]
    assert parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1") == []
    assert ctx.skips == Counter({"missing_terms": 1})
    assert "g5.xlarge" in ctx.details[0]


def test_non_usd_is_kept_in_its_currency(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    dim = next(iter(_first_term(item, "OnDemand")["priceDimensions"].values()))
    dim["pricePerUnit"] = {"CNY": "7.2000000000"}
    offers = parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1")
    assert not ctx.skips
    assert len(offers) == 13  # on-demand in CNY, the reserved terms in USD
    od = next(o for o in offers if o.pricing is PricingModel.ON_DEMAND)
    # AWS China prices in CNY: stored as such, converted at the rate in force when read
    assert (od.currency, od.price_per_hour, od.price_per_hour_usd) == ("CNY", Decimal("7.2"), None)


def test_zero_price_is_skipped(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    dim = next(iter(_first_term(item, "OnDemand")["priceDimensions"].values()))
    dim["pricePerUnit"]["USD"] = "0.0000000000"
    offers = parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1")
    assert ctx.skips == Counter({"zero_price": 1})
    assert all(o.pricing is not PricingModel.ON_DEMAND for o in offers)


def test_unknown_gpu_instance_type_is_skipped(ctx: RunContext) -> None:
    # The real m5.large capture: DescribeInstanceTypes reports no GPU for it.
    item = load("pricing_get_products_pricelist_item_m5_large.json")
    assert parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1") == []
    assert ctx.skips == Counter({"unknown_gpu": 1})


def test_bad_json_and_foreign_products_are_skipped(ctx: RunContext) -> None:
    assert parse_price_list_item("{nope", hardware(), ctx.skip) == []
    assert ctx.skips == Counter({"bad_json": 1})
    envelope = load("pricing_get_products_envelope_awscli_example.json")
    ebs_ctx = run_context()
    ebs = envelope["PriceList"][0]
    assert parse_price_list_item(ebs, hardware(), ebs_ctx.skip, region_hint="us-east-1") == []
    assert ebs_ctx.skips == Counter({"not_an_instance": 1})


@pytest.mark.parametrize(
    ("key", "value"),
    [("operatingSystem", "Windows"), ("tenancy", "Dedicated"), ("marketoption", "CapacityBlock")],
)
def test_items_outside_the_filter_are_never_stored_as_linux_shared(
    key: str, value: str, ctx: RunContext
) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    item["product"]["attributes"][key] = value
    assert parse_price_list_item(item, hardware(), ctx.skip, region_hint="us-east-1") == []
    assert ctx.skips == Counter({"filtered_attributes": 1})


def test_unknown_purchase_option_skips_only_that_term(ctx: RunContext) -> None:
    item = gpu_items()[f"g5.xlarge@{US}"]
    term = _first_term(item, "Reserved")
    term["termAttributes"]["PurchaseOption"] = "Heavy Utilization"
    offers = parse_price_list_item(
        copy.deepcopy(item), hardware(), ctx.skip, region_hint="us-east-1"
    )
    assert ctx.skips == Counter({"unknown_reserved_term": 1})
    assert len(offers) == 12


def test_decoded_and_string_items_give_the_same_offers(ctx: RunContext) -> None:
    raw = gpu_page()["PriceList"][0]
    hw = hardware()
    a = parse_price_list_item(raw, hw, ctx.skip, region_hint="us-east-1")
    b = parse_price_list_item(json.loads(raw), hw, ctx.skip, region_hint="us-east-1")
    assert a == b
