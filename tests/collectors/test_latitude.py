"""Latitude.sh collector over the plans fixture (tests/fixtures/latitude/SOURCES)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.latitude import LatitudeCollector, parse_plans
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "latitude" / "plans_gpu.json"
URL = "https://api.latitude.sh/plans"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[dict[str, Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_plans(body, lambda r, d: skips.append((r, d)))
    return {o.region: o for o in offers}, skips


def test_one_offer_per_gpu_plan_and_region_at_the_hourly_usd_price() -> None:
    offers, skips = parse(payload())
    assert skips == [] and sorted(offers) == ["Japan", "United States"]  # c3.small: no GPU
    us = offers["United States"]
    # pricing.USD.hour 3.37 for the whole one-GPU server
    assert (us.price_per_hour, us.currency, us.pricing) == (
        Decimal("3.37"),
        "USD",
        PricingModel.ON_DEMAND,
    )
    assert (us.instance_type, us.gpu_model, us.gpu_raw_name) == (
        "g3-h100-small",
        "H100-SXM",
        "H100",
    )
    assert (us.gpu_count, us.gpu_memory_gib, us.vcpus) == (Decimal(1), Decimal(80), Decimal(8))
    assert us.attributes["price_month_usd"] == Decimal("1230.0")
    assert us.attributes["price_hour_brl"] == Decimal("3.38")
    assert us.attributes["sites_in_stock"] == "DAL"
    assert us.availability == Availability.AVAILABLE
    assert offers["Japan"].availability == Availability.UNAVAILABLE  # in_stock []


def test_a_region_without_an_hourly_usd_price_is_a_counted_skip() -> None:
    body = payload()
    del body["data"][0]["attributes"]["regions"][1]["pricing"]["USD"]
    offers, skips = parse(body)
    assert list(offers) == ["United States"]
    assert skips == [("zero_price", "g3-h100-small: Japan: no hourly USD price (None)")]


def test_response_without_data_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^latitude: response has no 'data' list$"):
        parse({"plans": []})


def test_missing_token_skips_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LATITUDESH_AUTH_TOKEN", raising=False)
    with pytest.raises(MissingCredentials) as info:
        LatitudeCollector.from_settings(Settings())
    assert str(info.value) == (
        "no API key: set GPU_TRACKER_LATITUDE__API_KEY (or LATITUDESH_AUTH_TOKEN)"
    )


@respx.mock
def test_asks_for_gpu_plans_with_the_token_and_a_refused_one_fails_in_one_line() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    offers = list(LatitudeCollector(settings, "tok").collect(RunContext(settings=settings)))
    sent = route.calls[0].request
    assert sent.url.params["filter[gpu]"] == "true" and len(offers) == 2
    assert sent.headers["Authorization"] == "Bearer tok"
    respx.get(URL).mock(return_value=httpx.Response(401, json={"errors": []}))
    with pytest.raises(CollectorError) as info:
        list(LatitudeCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "latitude: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_LATITUDE__API_KEY (or LATITUDESH_AUTH_TOKEN)"
    )
