"""TensorDock collector over the documented ``/api/v2/locations`` example (SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.tensordock import TensorDockCollector, parse_locations
from tracker.models import Availability, Offer
from tracker.settings import Settings, TensorDockSettings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "tensordock" / "locations.json"
URL = "https://dashboard.tensordock.com/api/v2/locations"
AUSTIN = "Austin, Texas, United States"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(
    body: Any, shape: TensorDockSettings | None = None, before: Any = None
) -> tuple[dict[tuple[str, str], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_locations(body, lambda r, d: skips.append((r, d)), shape, before)
    return {(o.instance_type, o.region): o for o in offers}, skips


def test_one_offer_per_gpu_count_up_to_max_count_priced_with_the_default_shape() -> None:
    offers, skips = parse(payload())
    assert sorted(offers) == [(f"{n}x h100-sxm5-80gb", AUSTIN) for n in (1, 2, 4, 8)]  # max_count 8
    one = offers[("1x h100-sxm5-80gb", AUSTIN)]
    # 1 x 2.2 + 8 vCPU x 0.003 + 32 GB x 0.002 + 100 GB x 0.00005
    # = 2.2 + 0.024 + 0.064 + 0.005 = 2.293
    assert one.price_per_hour == Decimal("2.293") and one.currency == "USD"
    assert (one.vcpus, one.memory_gib) == (Decimal(8), Decimal(32))
    assert (one.gpu_model, one.gpu_known, one.gpu_memory_gib) == ("H100-SXM", True, Decimal(80))
    assert one.availability is Availability.AVAILABLE
    assert one.attributes["price_per_gpu"] == Decimal("2.2")
    assert one.attributes["shape_storage_gb"] == Decimal(100)
    eight = offers[("8x h100-sxm5-80gb", AUSTIN)]
    # 8 x 2.2 + 64 x 0.003 + 256 x 0.002 + 100 x 0.00005 = 17.6 + 0.192 + 0.512 + 0.005
    assert eight.price_per_hour == Decimal("18.309")
    assert skips == []


def test_shape_is_capped_at_the_locations_maximum_resources() -> None:
    body = payload()
    body["data"]["locations"][0]["gpus"][0]["resources"]["max_vcpus"] = 20
    offers, _ = parse(body)
    four = offers[("4x h100-sxm5-80gb", AUSTIN)]
    # 4 x 8 = 32 vCPUs wanted, 20 allowed:
    # 8.8 + 20 x 0.003 + 128 x 0.002 + 0.005 = 8.8 + 0.06 + 0.256 + 0.005 = 9.121
    assert four.vcpus == Decimal(20)
    assert four.price_per_hour == Decimal("9.121")


def test_configured_shape_changes_the_price() -> None:
    shape = TensorDockSettings(vcpus_per_gpu=4, ram_gb_per_gpu=16, storage_gb=200)
    offers, _ = parse(payload(), shape)
    # 2.2 + 4 x 0.003 + 16 x 0.002 + 200 x 0.00005 = 2.2 + 0.012 + 0.032 + 0.01 = 2.254
    assert offers[("1x h100-sxm5-80gb", AUSTIN)].price_per_hour == Decimal("2.254")


def test_counts_above_max_count_listed_before_stay_unavailable() -> None:
    body = payload()
    body["data"]["locations"][0]["gpus"][0]["max_count"] = 2
    before = {("on_demand", "8x h100-sxm5-80gb"): {AUSTIN}}
    offers, _ = parse(body, before=before)
    assert offers[("2x h100-sxm5-80gb", AUSTIN)].availability is Availability.AVAILABLE
    assert offers[("8x h100-sxm5-80gb", AUSTIN)].availability is Availability.UNAVAILABLE
    assert ("4x h100-sxm5-80gb", AUSTIN) not in offers  # never listed: no offer


def test_region_is_the_location_and_unknown_gpu_is_kept() -> None:
    body = payload()
    location = copy.deepcopy(body["data"]["locations"][0])
    location.update(city="Reykjavik", stateprovince=None, country="Iceland")
    location["gpus"][0].update(v0Name="mystery-pcie-24gb", displayName="Mystery 24GB", max_count=1)
    body["data"]["locations"].append(location)
    offers, _ = parse(body)
    odd = offers[("1x mystery-pcie-24gb", "Reykjavik, Iceland")]
    assert (odd.gpu_model, odd.gpu_known) == ("Mystery 24GB", False)
    assert odd.price_per_hour == Decimal("2.293")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda g: g.update(price_per_hr="2.2"), "malformed_item"),
        (lambda g: g.update(price_per_hr=0), "zero_price"),
        (lambda g: g["pricing"].pop("per_gb_ram_hr"), "malformed_item"),
        (lambda g: g["pricing"].update(per_vcpu_hr=-0.5), "malformed_item"),
        (lambda g: g["resources"].update(max_storage_gb=50), "shape_too_large"),
        (lambda g: g.update(max_count="8"), "malformed_item"),
    ],
)
def test_unpriceable_gpu_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["data"]["locations"][0]["gpus"][0])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason] and offers == {}
    assert skips[0][1].startswith(AUSTIN)


def test_response_without_locations_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"no data\.locations"):
        parse({"error": "Unauthorized"})


@respx.mock
def test_collect_sends_the_bearer_token_and_honours_the_override() -> None:
    route = respx.get("http://127.0.0.1:8089/api/v2/locations").mock(
        return_value=httpx.Response(200, json=payload())
    )
    settings = Settings(tensordock={"endpoint_url": "http://127.0.0.1:8089"})
    offers = list(TensorDockCollector(settings, "td-token").collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["Authorization"] == "Bearer td-token"
    assert len(offers) == 4


@respx.mock
def test_refused_token_is_one_line_naming_provider_and_setting() -> None:
    respx.get(URL).mock(return_value=httpx.Response(401, json={"error": "Unauthorized"}))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(TensorDockCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "tensordock: the API key was refused (HTTP 401); check GPU_TRACKER_TENSORDOCK__API_KEY"
    )


def test_missing_token_skips_with_one_line() -> None:
    with pytest.raises(MissingCredentials) as info:
        TensorDockCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_TENSORDOCK__API_KEY"
