"""Tencent Cloud items → offers, checked by hand against tests/fixtures/tencent/.

Every expected value below is read off the fixture (SOURCES.md says where each came
from) or worked out by hand in the comment beside it; none is copied from the code.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from collectors.base import SkipItem, parse_each
from collectors.tencent_parse import charge_types, describe_item, parse_item
from tests.collectors.tencent_server import fixture
from tracker.models import Interconnect, Offer, PricingModel
from tracker.settings import Settings

REGION = "ap-guangzhou"


def _settings(**tencent: Any) -> Settings:
    return Settings(tencent=tencent)  # no fx_rates: prices are kept in their own currency


def _items(name: str) -> list[Any]:
    items: list[Any] = fixture(name)["Response"]["InstanceTypeQuotaSet"]
    return items


def _parse(
    name: str,
    settings: Settings | None = None,
    scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> tuple[dict[tuple[str, str, PricingModel], Offer], list[tuple[str, str]]]:
    settings = settings or _settings()
    skips: list[tuple[str, str]] = []
    offers: dict[tuple[str, str, PricingModel], Offer] = {}
    for batch in parse_each(
        _items(name),
        lambda item: parse_item(item, REGION, settings, scope),
        lambda reason, detail: skips.append((reason, detail)),
        describe_item,
    ):
        for offer in batch:
            key = (offer.instance_type, offer.zone, offer.pricing)
            assert key not in offers
            offers[key] = offer
    return offers, skips


POSTPAID = "zone_configs_postpaid_ap-guangzhou_derived.json"
SPOTPAID = "zone_configs_spotpaid_ap-guangzhou_derived.json"
PREPAID = "zone_configs_prepaid_ap-guangzhou_derived.json"


def test_pay_as_you_go_page_gives_hand_checked_offers_and_counted_skips() -> None:
    offers, skips = _parse(POSTPAID)
    # S2.SMALL1 (no GPU) is not this tracker's market: neither an offer nor a skip.
    assert sorted(k[0] for k in offers) == [
        "GN7.2XLARGE32",
        "GN7.LARGE20",
        "GT4.4XLARGE96",
        "PNV4.7XLARGE116",
    ]
    assert sorted(reason for reason, _ in skips) == ["unknown_gpu_family", "zero_price"]
    details = " | ".join(detail for _, detail in skips)
    # Every price of GN10Xp.2XLARGE40 is 0: not offered, never free.
    assert "GN10Xp.2XLARGE40 ap-guangzhou-3 POSTPAID_BY_HOUR" in details
    # GI1 (Intel SG1) is not in the family table: skipped, never guessed.
    assert "'GI1'" in details

    t4 = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.ON_DEMAND)]
    assert (t4.gpu_model, t4.gpu_known, t4.gpu_raw_name) == ("T4", True, "NVIDIA Tesla T4")
    assert (t4.gpu_count, t4.gpu_memory_gib) == (Decimal(1), Decimal(16))
    assert (t4.vcpus, t4.memory_gib, t4.interconnect) == (
        Decimal(8),
        Decimal(32),
        Interconnect.PCIE,
    )
    assert (t4.region, t4.zone, t4.payment_option) == (REGION, "ap-guangzhou-3", "")
    assert (t4.price_per_hour, t4.currency) == (Decimal("8.68"), "CNY")
    assert t4.price_per_hour_usd is None  # stored in CNY only; USD is computed when read
    assert "list_price_per_hour" not in t4.attributes  # UnitPrice 8.68 = UnitPriceDiscount
    assert t4.attributes["discount_percent"] == Decimal(100)
    assert (t4.attributes["status"], t4.attributes["stock"]) == ("SELL", "EnoughStock")
    assert t4.attributes["availability"] == "available"
    assert (
        t4.attributes["hardware_source"]
        == "https://www.tencentcloud.com/document/product/560/19701"
    )

    quarter = offers[("GN7.LARGE20", "ap-guangzhou-3", PricingModel.ON_DEMAND)]
    # A 1/4 vGPU of a 16 GB T4: GpuCount 0.25, per-GPU memory stays 16, the VM sees 4.
    assert (quarter.gpu_model, quarter.gpu_count) == ("T4", Decimal("0.25"))
    assert quarter.gpu_memory_gib == Decimal(16)
    assert quarter.attributes["vram_total_gib"] == Decimal("4.00")  # 0.25 × 16
    assert quarter.price_per_hour == Decimal("2.84")
    assert quarter.attributes["availability"] == "low"  # StatusCategory UnderStock

    a100 = offers[("GT4.4XLARGE96", "ap-guangzhou-6", PricingModel.ON_DEMAND)]
    assert (a100.gpu_model, a100.gpu_memory_gib) == ("A100-40GB", Decimal(40))
    assert a100.interconnect is Interconnect.NVLINK
    # The account's price is UnitPriceDiscount 22.912 = 28.64 × 80 % (Discount "80.000000",
    # sent as text); the list price is kept beside it.
    assert a100.price_per_hour == Decimal("22.912")
    assert a100.attributes["list_price_per_hour"] == Decimal("28.64")
    assert a100.attributes["discount_percent"] == Decimal(80)
    assert a100.attributes["availability"] == "sold_out"  # Status SOLD_OUT
    assert a100.attributes["sold_out_reason"] == "Insufficient inventory"

    a10 = offers[("PNV4.7XLARGE116", "ap-guangzhou-6", PricingModel.ON_DEMAND)]
    assert (a10.gpu_model, a10.gpu_memory_gib, a10.vcpus) == ("A10", Decimal(24), Decimal(28))
    assert a10.price_per_hour == Decimal("12.3")
    # Stepped pay-as-you-go: 12.3 for the first 96 h, then 11.07, then 9.84 after 360 h.
    assert a10.attributes["price_per_hour_after_96h"] == Decimal("11.07")
    assert a10.attributes["price_per_hour_after_360h"] == Decimal("9.84")


def test_spot_price_is_the_discounted_unit_price() -> None:
    offers, skips = _parse(SPOTPAID)
    assert skips == []
    spot = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.SPOT)]
    assert spot.price_per_hour == Decimal("1.736")  # 8.68 × 20 % (Discount 20)
    assert spot.attributes["list_price_per_hour"] == Decimal("8.68")


def test_prepaid_terms_become_effective_hourly_prices() -> None:
    offers, skips = _parse(PREPAID)
    assert skips == []
    one = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.RESERVED_1Y)]
    # DiscountPriceOneYear 41922 / 8760 h = 4.78561643835616… → 10 places
    assert one.price_per_hour == Decimal("4.7856164384")
    # OriginalPriceOneYear 49320 / 8760 = 5.63013698630137…
    assert one.attributes["list_price_per_hour"] == Decimal("5.6301369863")
    assert one.attributes["term_price"] == Decimal(41922)
    assert one.attributes["list_term_price"] == Decimal(49320)
    assert one.attributes["monthly_price"] == Decimal(4110)
    assert one.attributes["discount_percent"] == Decimal(85)
    assert one.payment_option == "all_upfront"
    three = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.RESERVED_3Y)]
    # DiscountPriceThreeYear 73980 / 26280 h (3 × 8760) = 2.81506849315068…
    assert three.price_per_hour == Decimal("2.8150684932")
    assert three.attributes["discount_percent"] == Decimal(50)
    # GT4 prices one year only (every three-year field is 0: not offered).
    assert ("GT4.4XLARGE96", "ap-guangzhou-6", PricingModel.RESERVED_3Y) not in offers
    gt4 = offers[("GT4.4XLARGE96", "ap-guangzhou-6", PricingModel.RESERVED_1Y)]
    assert gt4.price_per_hour == Decimal("17.1232876712")  # 150000 / 8760 = 17.12328767123…
    assert "list_price_per_hour" not in gt4.attributes  # OriginalPriceOneYear = Discount…
    assert len(offers) == 3


def test_prepaid_scope_of_one_term_yields_only_that_term() -> None:
    offers, _ = _parse(PREPAID, scope=frozenset({PricingModel.RESERVED_3Y}))
    assert list(offers) == [("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.RESERVED_3Y)]


def test_charge_types_follow_the_pricing_scope() -> None:
    assert charge_types(frozenset({PricingModel.SPOT})) == ["SPOTPAID"]
    assert charge_types(frozenset({PricingModel.RESERVED_1Y, PricingModel.ON_DEMAND})) == [
        "POSTPAID_BY_HOUR",
        "PREPAID",
    ]
    assert charge_types(frozenset(PricingModel)) == ["POSTPAID_BY_HOUR", "SPOTPAID", "PREPAID"]


def test_international_site_prices_in_usd_without_a_rate() -> None:
    settings = Settings(tencent={"site": "international"})
    offers, skips = _parse(SPOTPAID, settings)
    spot = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.SPOT)]
    assert (spot.currency, spot.price_per_hour, spot.usd) == (
        "USD",
        Decimal("1.736"),
        Decimal("1.736"),
    )
    assert spot.attributes["site"] == "international"
    assert skips == []


def test_china_site_keeps_cny_prices_without_any_exchange_rate() -> None:
    offers, skips = _parse(SPOTPAID, Settings())
    assert skips == []  # no fx_rates needed: the USD figure is computed when read
    spot = offers[("GN7.2XLARGE32", "ap-guangzhou-3", PricingModel.SPOT)]
    assert (spot.currency, spot.price_per_hour, spot.price_per_hour_usd) == (
        "CNY",
        Decimal("1.736"),  # 8.68 × 20 %
        None,
    )


def test_real_docs_examples_have_no_gpu_items() -> None:
    for name in (
        "describe_zone_instance_config_infos_docs_example.json",
        "describe_zone_instance_config_infos_text_discount_docs_example.json",
    ):
        assert _parse(name) == ({}, [])


def test_older_shape_with_gpu_only_and_text_discounts() -> None:
    # The older real docs example (no GpuCount, Discount "100.000000", stepped prices)
    # with only what makes it a GPU item changed here: family, type and Gpu.
    (real,) = _items("describe_zone_instance_config_infos_text_discount_docs_example.json")
    assert "GpuCount" not in real
    item = dict(real, InstanceFamily="GN7", InstanceType="GN7.2XLARGE32", Gpu=1)
    (offer,) = parse_item(item, REGION, _settings()) or []
    assert (offer.gpu_model, offer.gpu_count) == ("T4", Decimal(1))  # from Gpu
    assert offer.price_per_hour == Decimal("0.15")
    assert offer.attributes["discount_percent"] == Decimal(100)  # "100.000000"
    assert offer.attributes["price_per_hour_after_96h"] == Decimal("0.07")
    assert offer.attributes["price_per_hour_after_360h"] == Decimal("0.05")
    assert offer.attributes["availability"] == "available"  # Status SELL, no StatusCategory


def _gpu_item(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = dict(_items(SPOTPAID)[0])
    item.update(changes)
    return item


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"GpuCount": 0, "Gpu": 0}, "no_gpu_count"),
        ({"InstanceChargeType": "CDHPAID"}, "unknown_charge_type"),
        ({"Price": None}, "malformed_item"),
        ({"Price": {"UnitPriceDiscount": -1, "ChargeUnit": "HOUR"}}, "malformed_item"),
        ({"Price": {"UnitPriceDiscount": "abc", "ChargeUnit": "HOUR"}}, "malformed_item"),
        ({"Price": {"UnitPriceDiscount": 1.7, "ChargeUnit": "GB"}}, "unexpected_charge_unit"),
        ({"Price": {"UnitPriceDiscount": 0, "UnitPrice": 8.68}}, "zero_price"),
        ({"Zone": ""}, "malformed_item"),
    ],
)
def test_unpriceable_gpu_items_are_counted_skips(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(SkipItem) as caught:
        parse_item(_gpu_item(**changes), REGION, _settings())
    assert caught.value.reason == reason


def test_family_is_matched_without_regard_to_case_and_falls_back_to_the_type_name() -> None:
    (offer,) = parse_item(_gpu_item(InstanceFamily="gn7"), REGION, _settings()) or []
    assert offer.gpu_model == "T4"
    (offer,) = parse_item(_gpu_item(InstanceFamily=None), REGION, _settings()) or []
    assert offer.attributes["instance_family"] == "GN7"  # from "GN7.2XLARGE32"
