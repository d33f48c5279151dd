"""The Huawei collector through Huawei's SDK against a local IAM/ECS/BSS stand-in.

The stand-in (tests/collectors/huawei_server.py) is a real HTTP server answering the
recorded responses of tests/fixtures/huawei/ (see SOURCES.md there) and refusing any
request whose SDK-HMAC-SHA256 signature it cannot verify with the test's AK/SK.
Expected figures are worked out by hand from those fixtures in the comments.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials
from collectors.huawei import HuaweiCollector
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

from .conftest import run_context
from .huawei_server import ON_DEMAND, PERIOD, HuaweiStandIn, Reply, load, serve

REGION = "cn-east-2"
PROJECT = "065a7c66da0010992ff7c0031e5a5e7d"  # cn-east-2 in the IAM docs example
OD, Y1, Y3 = PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[HuaweiStandIn]:
    # A fresh AK per test: the SDK caches looked-up project/domain ids per AK.
    ak = f"AK{uuid.uuid4().hex[:18].upper()}"
    stand_in = HuaweiStandIn(ak=ak, sk=uuid.uuid4().hex)
    with serve(stand_in):
        monkeypatch.setenv("HUAWEICLOUD_SDK_IAM_ENDPOINT", stand_in.url)
        monkeypatch.setenv("HUAWEICLOUD_SDK_AK", stand_in.ak)
        monkeypatch.setenv("HUAWEICLOUD_SDK_SK", stand_in.sk)
        yield stand_in


def settings_for(stand_in: HuaweiStandIn, **huawei: Any) -> Settings:
    section = {
        "regions": [REGION],
        "ecs_endpoint_url": stand_in.url,
        "bss_endpoint_url": stand_in.url,
        "retry_base_seconds": 0.01,
        **huawei,
    }
    return Settings(huawei=section)  # no fx_rates: prices are kept in their own currency


def collect(settings: Settings, **kwargs: Any) -> tuple[list[Offer], Any]:
    ctx = run_context(settings, **kwargs)
    offers = list(HuaweiCollector.from_settings(settings).collect(ctx))
    return offers, ctx


def by_key(offers: list[Offer]) -> dict[tuple[str, PricingModel], Offer]:
    return {(o.instance_type, o.pricing): o for o in offers}


def test_collects_gpu_offers_through_the_sdk_with_signed_requests(
    standin: HuaweiStandIn,
) -> None:
    offers, ctx = collect(settings_for(standin))
    got = by_key(offers)

    # Flavors: c3 (no GPU) and p2v (abandoned everywhere) are not the market; g1's
    # "M60-2Q" is a vGPU slice (counted skip); p1 is sold on demand only
    # (cond:operation:charge = demand): 4 on-demand + 3 × 2 yearly offers.
    assert len(offers) == 10
    assert ctx.skips == {"vgpu_profile": 1}
    assert (("p1.2xlarge.8", Y1) not in got) and (("p2v.2xlarge.8", OD) not in got)

    t4 = got[("pi2.2xlarge.4", OD)]
    assert (t4.gpu_model, t4.gpu_count, t4.gpu_memory_gib) == (
        "T4",
        1,
        16,
    )  # "1 * NVIDIA T4 / 1 * 16G"
    assert (t4.vcpus, t4.memory_gib) == (8, 32)  # vcpus "8"; ram 32768 MiB / 1024
    assert (t4.region, t4.currency, t4.price_per_hour) == (REGION, "CNY", Decimal("3.20"))
    assert t4.attributes["list_price_per_hour"] == Decimal("4.00")  # official_website_amount
    assert t4.price_per_hour_usd is None  # stored in CNY only; USD is computed when read

    p100 = got[("p1.2xlarge.8", OD)]
    assert (p100.gpu_model, p100.price_per_hour) == ("P100", Decimal("9.78"))
    assert "list_price_per_hour" not in p100.attributes  # amount == list price

    v100 = got[("p2s.16xlarge.8", OD)]
    # "8 * NVIDIA V100 / 8 * 32G" of a p2s flavor: Huawei documents P2s as V100 over
    # "PCIe Gen3", 32 GiB, so the PCIe card's 32 GB member; 524288 MiB = 512 GiB.
    assert (v100.gpu_model, v100.gpu_count, v100.memory_gib) == ("V100-PCIE-32GB", 8, 512)
    assert v100.interconnect == "pcie"

    ascend = got[("ai1s.large.4", OD)]
    assert (ascend.gpu_known, ascend.gpu_model, ascend.gpu_count) == (False, "HUAWEI Ascend 310", 1)

    # 1 year: best-offer amount 11212.8 / 8760 h = 1.28; list 14016 / 8760 = 1.6.
    t4_1y = got[("pi2.2xlarge.4", Y1)]
    assert t4_1y.price_per_hour == Decimal("1.28")
    assert t4_1y.attributes["list_price_per_hour"] == Decimal("1.6")
    assert t4_1y.attributes["term_price"] == Decimal("11212.8")
    # 3 years: 30274.56 / (3 × 8760 = 26280) h = 1.152; list 42048 / 26280 = 1.6.
    assert got[("pi2.2xlarge.4", Y3)].price_per_hour == Decimal("1.152")
    # 624000 / 8760 = 71.23287671232876… → 10 places; 1872000 / 26280 is the same.
    assert got[("p2s.16xlarge.8", Y1)].price_per_hour == Decimal("71.2328767123")
    assert got[("p2s.16xlarge.8", Y3)].price_per_hour == Decimal("71.2328767123")
    # 7700 / 8760 = 0.87899543378995… → 0.8789954338
    assert got[("ai1s.large.4", Y1)].price_per_hour == Decimal("0.8789954338")

    # What the SDK sent: the project id from the IAM lookup, Linux resource specs.
    (od_body,) = standin.calls(ON_DEMAND)
    assert od_body["project_id"] == PROJECT
    specs = [p["resource_spec"] for p in od_body["product_infos"]]
    assert specs == [
        "pi2.2xlarge.4.linux",
        "p1.2xlarge.8.linux",
        "p2s.16xlarge.8.linux",
        "ai1s.large.4.linux",
    ]
    assert {
        (p["usage_measure_id"], p["usage_value"], p["region"]) for p in od_body["product_infos"]
    } == {(4, 1, REGION)}
    periods = standin.calls(PERIOD)
    assert sorted(p["period_num"] for body in periods for p in body["product_infos"][:1]) == [1, 3]
    assert all(
        len(body["product_infos"]) == 3 and body["project_id"] == PROJECT for body in periods
    )
    assert any(
        path.startswith(f"/v1/{PROJECT}/cloudservers/flavors") for _, path, _ in standin.requests
    )
    assert standin.bad_signatures == 0


def test_a_wrong_secret_key_fails_the_run_with_one_line_naming_the_variables(
    standin: HuaweiStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = uuid.uuid4().hex
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", wrong)
    with pytest.raises(CollectorError) as exc:
        collect(settings_for(standin))
    line = str(exc.value)
    assert "\n" not in line and wrong not in line
    assert "APIGW.0301" in line and "HUAWEICLOUD_SDK_SK" in line
    assert standin.bad_signatures >= 1 and not standin.calls(ON_DEMAND)


def test_throttling_is_retried_then_succeeds(standin: HuaweiStandIn) -> None:
    throttled = Reply(429, load("apigw_error_0308_throttled.json"))
    standin.scripted[ON_DEMAND].extend([throttled, throttled])
    offers, ctx = collect(settings_for(standin), scope=frozenset({OD}))
    assert len(standin.calls(ON_DEMAND)) == 3  # two 429s, then the recorded answer
    assert len(offers) == 4 and not ctx.partial


def test_throttling_past_the_retries_is_one_clear_line(standin: HuaweiStandIn) -> None:
    throttled = Reply(429, load("apigw_error_0308_throttled.json"))
    standin.scripted[ON_DEMAND].extend([throttled] * 3)
    with pytest.raises(CollectorError) as exc:
        collect(settings_for(standin, max_retries=2), scope=frozenset({OD}))
    line = str(exc.value)
    assert "\n" not in line
    assert "ListOnDemandResourceRatings" in line and "APIGW.0308" in line
    assert "still throttled" in line
    assert len(standin.calls(ON_DEMAND)) == 3  # the first call and 2 retries


def test_an_unknown_region_is_one_line_and_the_other_regions_still_count(
    standin: HuaweiStandIn,
) -> None:
    settings = settings_for(standin, regions=[REGION, "xx-nowhere-1"])
    offers, ctx = collect(settings, scope=frozenset({OD}))
    assert len(offers) == 4 and {o.region for o in offers} == {REGION}
    line = ctx.partial["xx-nowhere-1"]
    assert line == (
        "huawei: region xx-nowhere-1: project lookup: IAM knows no project of this region for "
        "the account (unknown or not enabled region id?): Failed to get project id of region "
        "'xx-nowhere-1'"
    )


def test_a_region_the_sdk_has_no_endpoint_for_is_one_line(standin: HuaweiStandIn) -> None:
    settings = settings_for(standin, regions=["xx-nowhere-1"], ecs_endpoint_url=None)
    with pytest.raises(CollectorError) as exc:
        collect(settings)
    assert "xx-nowhere-1" in str(exc.value) and "no ECS endpoint" in str(exc.value)


def test_more_than_100_flavors_are_rated_100_at_a_time(standin: HuaweiStandIn) -> None:
    template = load("ecs_list_flavors_gpu_edited.json")["flavors"][1]  # pi2.2xlarge.4
    standin.flavors = {
        "flavors": [{**template, "name": f"pi2.x{i}", "id": f"pi2.x{i}"} for i in range(150)]
    }
    offers, ctx = collect(settings_for(standin), scope=frozenset({OD}))
    assert [len(b["product_infos"]) for b in standin.calls(ON_DEMAND)] == [100, 50]
    # The recorded reply answers ids 1-4 only: 4 priced per call, the rest reported.
    assert len(offers) == 8 and ctx.skips["no_price"] == 142


def test_the_international_site_uses_bss_intl_and_its_currency(standin: HuaweiStandIn) -> None:
    standin.on_demand = {**standin.on_demand, "currency": "USD"}
    offers, _ = collect(settings_for(standin, site="international"), scope=frozenset({OD}))
    t4 = by_key(offers)[("pi2.2xlarge.4", OD)]
    assert (t4.currency, t4.price_per_hour, t4.usd) == ("USD", Decimal("3.20"), Decimal("3.20"))


def test_missing_credentials_skip_huawei_with_one_line_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HUAWEICLOUD_SDK_AK", raising=False)
    monkeypatch.delenv("HUAWEICLOUD_SDK_SK", raising=False)
    with pytest.raises(MissingCredentials) as exc:
        HuaweiCollector.from_settings(Settings())
    assert "HUAWEICLOUD_SDK_AK" in str(exc.value) and "HUAWEICLOUD_SDK_SK" in str(exc.value)


def test_an_unreachable_endpoint_is_one_line(standin: HuaweiStandIn) -> None:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(CollectorError) as exc:
        collect(settings_for(standin, ecs_endpoint_url=closed), scope=frozenset({OD}))
    line = str(exc.value)
    assert "\n" not in line and "region cn-east-2: ListFlavors" in line
    assert "ConnectionException" in line
