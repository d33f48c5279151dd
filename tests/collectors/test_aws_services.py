"""AWS storage and egress prices: the pure parsers on real(-shaped) Price List items, and
the collector's service run through botocore's Stubber into the real store (both engines)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from sqlalchemy import Engine, select

from collectors.aws import AwsCollector
from collectors.aws_services import (
    egress_filters,
    parse_egress_item,
    parse_storage_item,
    storage_filters,
)
from collectors.base import ServiceCollector, SkipItem, collects_services
from tracker.collect_services import SERVICES_SCOPE, run_service_collector
from tracker.models import RunStatus
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit
from tracker.settings import Settings
from tracker.store.schema import CollectionRun
from tracker.store.series import service_prices

from .aws_helpers import load

SSD, HDD, EGRESS = (
    ServiceKind.BLOCK_STORAGE_SSD,
    ServiceKind.BLOCK_STORAGE_HDD,
    ServiceKind.EGRESS_INTERNET,
)
GB_MONTH, GB = ServiceUnit.GB_MONTH, ServiceUnit.GB


def gp3_af_south_1() -> dict[str, Any]:
    item: dict[str, Any] = load("pricing_get_products_pricelist_item_gp3_af_south_1.json")
    return item


def ebs_page() -> dict[str, Any]:
    page: dict[str, Any] = load("pricing_get_products_ebs_us_east_1_derived.json")
    return page


def egress_page() -> dict[str, Any]:
    page: dict[str, Any] = load("pricing_get_products_egress_us_east_1_derived.json")
    return page


def egress_item() -> dict[str, Any]:
    item: dict[str, Any] = json.loads(egress_page()["PriceList"][0])
    return item


def _dims(item: dict[str, Any]) -> dict[str, Any]:
    (term,) = item["terms"]["OnDemand"].values()
    dims: dict[str, Any] = term["priceDimensions"]
    return dims


def _skip(call: Any) -> tuple[str, str]:
    with pytest.raises(SkipItem) as info:
        call()
    return info.value.reason, info.value.detail


# ----------------------------------------------------------------------------- storage


def test_the_real_gp3_item_is_one_ssd_price_per_gb_month() -> None:
    # The captured item: $0.1047 per GB-Mo of gp3 in af-south-1, from 0 GB, no upper bound.
    assert parse_storage_item(json.dumps(gp3_af_south_1())) == ServicePrice(
        "aws", "af-south-1", SSD, GB_MONTH, Decimal("0.1047"), "USD", Decimal(0), None
    )


def test_gp3_is_ssd_and_st1_is_hdd_in_us_east_1() -> None:
    parsed = [parse_storage_item(raw) for raw in ebs_page()["PriceList"]]
    assert parsed == [
        ServicePrice("aws", "us-east-1", SSD, GB_MONTH, Decimal("0.08"), "USD", Decimal(0), None),
        ServicePrice("aws", "us-east-1", HDD, GB_MONTH, Decimal("0.045"), "USD", Decimal(0), None),
    ]


def test_other_volume_types_and_local_zones_are_not_priced_and_not_skips() -> None:
    # The real io1 item of the aws-cli example (usagetype ...VolumeUsage.piops, no
    # volumeApiName): not a volume type this tracker prices.
    io1 = json.loads(load("pricing_get_products_envelope_awscli_example.json")["PriceList"][0])
    assert parse_storage_item(io1, region_hint="ap-southeast-1") is None
    local_zone = gp3_af_south_1()
    local_zone["product"]["attributes"]["locationType"] = "AWS Local Zone"  # changed value
    assert parse_storage_item(local_zone) is None


def test_an_item_without_region_code_takes_the_queried_region() -> None:
    item = gp3_af_south_1()
    del item["product"]["attributes"]["regionCode"]  # as older items are
    price = parse_storage_item(item, region_hint="af-south-1")
    assert price is not None and price.region == "af-south-1"
    reason, detail = _skip(lambda: parse_storage_item(item))
    assert reason == "no_region" and "XWCTMRRUJM7TGYST" in detail


def test_a_free_or_ambiguous_storage_price_is_a_skip() -> None:
    free = gp3_af_south_1()
    (dim,) = _dims(free).values()
    dim["pricePerUnit"] = {"USD": "0.0000000000"}
    assert _skip(lambda: parse_storage_item(free))[0] == "zero_price"
    two = gp3_af_south_1()
    dims = _dims(two)
    dims["second"] = copy.deepcopy(next(iter(dims.values())))
    assert _skip(lambda: parse_storage_item(two)) == (
        "malformed_term",
        "gp3 af-south-1 sku XWCTMRRUJM7TGYST: 2 price dimensions, expected one",
    )
    hourly = gp3_af_south_1()
    next(iter(_dims(hourly).values()))["unit"] = "Hrs"
    assert "unit 'Hrs', expected GB-Mo" in _skip(lambda: parse_storage_item(hourly))[1]


# ----------------------------------------------------------------------------- egress


def test_egress_tiers_come_from_begin_and_end_range_in_gb() -> None:
    # 0-10 TB at 0.09, 10-50 TB at 0.085, 50-150 TB at 0.07, above 150 TB at 0.05 (1 TB =
    # 1,024 GB: 10,240 / 51,200 / 153,600), the last tier open-ended ("Inf").
    def tier(price: str, start: int, end: int | None) -> ServicePrice:
        upper = None if end is None else Decimal(end)
        return ServicePrice("aws", "us-east-1", EGRESS, GB, Decimal(price), "USD", start, upper)  # type: ignore[arg-type]

    assert parse_egress_item(egress_page()["PriceList"][0]) == [
        tier("0.09", 0, 10240),
        tier("0.085", 10240, 51200),
        tier("0.07", 51200, 153600),
        tier("0.05", 153600, None),
    ]


def test_egress_without_from_region_code_takes_the_queried_region() -> None:
    item = egress_item()
    del item["product"]["attributes"]["fromRegionCode"]  # as in the pyutu capture
    assert {p.region for p in parse_egress_item(item, region_hint="us-east-1")} == {"us-east-1"}
    assert _skip(lambda: parse_egress_item(item))[0] == "no_region"


def test_a_transfer_that_is_not_internet_egress_is_a_skip() -> None:
    # The real pyutu product (InterRegion Inbound) in the GetProducts envelope.
    real = load("offer_file_awsdatatransfer_product_pyutu.json")
    item = {"product": real["product"], "terms": {"OnDemand": real["term"]}}
    reason, detail = _skip(lambda: parse_egress_item(item, region_hint="us-west-2"))
    assert reason == "filtered_attributes"
    assert "transferType='InterRegion Inbound', expected 'AWS Outbound'" in detail


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("gap", "a tier starts at 51200, not 10240"),
        ("no_open_end", "no tier above 10240 GB"),
        ("all_free", "every tier is free"),
    ],
)
def test_tiers_that_would_misprice_a_month_are_a_skip(change: str, message: str) -> None:
    item = egress_item()
    dims = _dims(item)
    codes = list(dims)
    if change == "gap":  # drop the 10-50 TB tier
        del dims[codes[1]]
    elif change == "no_open_end":  # only the first tier
        for code in codes[1:]:
            del dims[code]
    else:
        for dim in dims.values():
            dim["pricePerUnit"] = {"USD": "0.0000000000"}
    reason, detail = _skip(lambda: parse_egress_item(item))
    assert reason in {"malformed_tiers", "zero_price"}
    assert detail == f"egress us-east-1 sku DRVEGRESSUSEAST1: {message}"


def test_a_local_zone_transfer_product_is_not_priced() -> None:
    item = egress_item()
    item["product"]["attributes"]["fromLocationType"] = "AWS Local Zone"  # changed value
    assert parse_egress_item(item) == []


# ----------------------------------------------------------------------------- the run


def _settings(*regions: str) -> Settings:
    return Settings(aws={"regions": list(regions)})


class Pricing:
    """The collector's real ``pricing`` client wrapped in an activated Stubber."""

    def __init__(self, *regions: str) -> None:
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
        )
        self.collector = AwsCollector(_settings(*regions), session=session)
        self.stubber = Stubber(self.collector.client("pricing", "us-east-1"))
        self.stubber.activate()

    def page(
        self, code: str, filters: list[dict[str, str]], items: list[str], token: str = ""
    ) -> None:
        expected = {
            "ServiceCode": code,
            "Filters": filters,
            "FormatVersion": "aws_v1",
            "MaxResults": 100,
        }
        if token == "second":
            expected["NextToken"] = "page-2"
        response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": items}
        if token == "first":
            response["NextToken"] = "page-2"
        self.stubber.add_response("get_products", response, expected)

    def region(self, region: str = "us-east-1") -> None:
        self.page("AmazonEC2", storage_filters(region), ebs_page()["PriceList"])
        self.page("AWSDataTransfer", egress_filters(region), egress_page()["PriceList"])

    def error(self, code: str = "ThrottlingException") -> None:
        self.stubber.add_client_error(
            "get_products", service_error_code=code, service_message=f"{code} (test)"
        )


def _stored(engine: Engine) -> dict[tuple[str, str, str], Decimal]:
    return {
        (s.price.region, s.price.service.value, f"{s.price.tier_start_gb:f}".split(".")[0]): (
            s.price.price.normalize()
        )
        for s in service_prices(engine, provider="aws")
    }


def test_the_aws_collector_implements_the_service_contract() -> None:
    assert collects_services(AwsCollector)
    assert isinstance(Pricing("us-east-1").collector, ServiceCollector)


def test_a_service_run_stores_disks_and_egress_tiers_in_the_run_log(engine: Engine) -> None:
    aws = Pricing("us-east-1")
    aws.region()
    summary = run_service_collector(engine, aws.collector, aws.collector.settings)
    aws.stubber.assert_no_pending_responses()
    assert summary.status is RunStatus.SUCCEEDED, summary.error
    assert (summary.scope, summary.stats.offers_seen, summary.stats.new_series) == (
        SERVICES_SCOPE,
        6,  # gp3 + st1 + 4 egress tiers
        6,
    )
    assert _stored(engine) == {
        ("us-east-1", "block_storage_ssd", "0"): Decimal("0.08"),
        ("us-east-1", "block_storage_hdd", "0"): Decimal("0.045"),
        ("us-east-1", "egress_internet", "0"): Decimal("0.09"),
        ("us-east-1", "egress_internet", "10240"): Decimal("0.085"),
        ("us-east-1", "egress_internet", "51200"): Decimal("0.07"),
        ("us-east-1", "egress_internet", "153600"): Decimal("0.05"),
    }
    with engine.connect() as conn:
        row = conn.execute(select(CollectionRun).where(CollectionRun.id == summary.run_id)).one()
    assert (row.provider, row.source, row.scope, row.status) == (
        "aws",
        "aws",
        "services",
        "succeeded",
    )
    assert row.offers_seen == 6


def test_pages_are_followed_and_a_second_product_for_a_service_is_a_skip(
    sqlite_engine: Engine,
) -> None:
    aws = Pricing("us-east-1")
    gp3, st1 = ebs_page()["PriceList"]
    aws.page("AmazonEC2", storage_filters("us-east-1"), [gp3], token="first")
    aws.page("AmazonEC2", storage_filters("us-east-1"), [st1, gp3], token="second")
    aws.page("AWSDataTransfer", egress_filters("us-east-1"), egress_page()["PriceList"])
    summary = run_service_collector(sqlite_engine, aws.collector, aws.collector.settings)
    assert summary.status is RunStatus.SUCCEEDED
    assert summary.stats.offers_seen == 6
    assert summary.skip_reasons == {"duplicate_product": 1}


def test_a_failing_region_keeps_its_stored_tiers_and_the_others_are_refreshed(
    engine: Engine,
) -> None:
    first = Pricing("us-east-1")
    first.region()
    assert run_service_collector(engine, first.collector, first.collector.settings).ok
    # Next run: two regions; us-east-1 is throttled past retries, eu-west-1 answers.
    second = Pricing("eu-west-1", "us-east-1")
    eu = [raw.replace("us-east-1", "eu-west-1") for raw in ebs_page()["PriceList"]]
    second.page("AmazonEC2", storage_filters("eu-west-1"), eu)
    second.page("AWSDataTransfer", egress_filters("eu-west-1"), [])
    second.error()
    summary = run_service_collector(engine, second.collector, second.collector.settings)
    assert summary.status is RunStatus.SUCCEEDED, summary.error
    assert "us-east-1" in summary.partial_regions
    assert summary.skip_reasons == {"partial_regions": 1}
    assert summary.stats.delisted == 0  # us-east-1's six tiers stay open
    stored = _stored(engine)
    assert len([k for k in stored if k[0] == "us-east-1"]) == 6
    assert stored[("eu-west-1", "block_storage_ssd", "0")] == Decimal("0.08")


def test_every_region_failing_fails_the_run_with_one_line(engine: Engine) -> None:
    aws = Pricing("us-east-1")
    aws.error("AccessDeniedException")
    summary = run_service_collector(engine, aws.collector, aws.collector.settings)
    assert summary.status is RunStatus.FAILED
    assert summary.error == (
        "CollectorError: aws: every region failed (1); first: us-east-1: "
        "AccessDeniedException: AccessDeniedException (test)"
    )
    with engine.connect() as conn:
        row = conn.execute(select(CollectionRun).where(CollectionRun.id == summary.run_id)).one()
    assert (row.scope, row.status, row.error) == ("services", "failed", summary.error)
    assert _stored(engine) == {}


def test_a_tier_no_longer_listed_is_ended_by_the_next_complete_run(engine: Engine) -> None:
    first = Pricing("us-east-1")
    first.region()
    assert run_service_collector(engine, first.collector, first.collector.settings).ok
    second = Pricing("us-east-1")
    gp3 = ebs_page()["PriceList"][0]
    second.page(
        "AmazonEC2", storage_filters("us-east-1"), [gp3.replace("0.0800000000", "0.0900000000")]
    )
    second.page("AWSDataTransfer", egress_filters("us-east-1"), egress_page()["PriceList"])
    summary = run_service_collector(engine, second.collector, second.collector.settings)
    # gp3 0.08 -> 0.09 is one change; st1 (no longer listed) is ended; 4 tiers unchanged.
    assert (summary.stats.price_changes, summary.stats.delisted, summary.stats.unchanged) == (
        1,
        1,
        4,
    )
    stored = _stored(engine)
    assert stored[("us-east-1", "block_storage_ssd", "0")] == Decimal("0.09")
    assert ("us-east-1", "block_storage_hdd", "0") not in stored
