"""Novita collector over its recorded products list (tests/fixtures/novita/SOURCES)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import ALL_PRICING, CollectorError, MissingCredentials, RunContext
from collectors.novita import NovitaCollector, parse_products
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "novita" / "products.json"
URL = "https://api.novita.ai/gpu-instance/openapi/v1/products"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(
    body: Any, scope: frozenset[PricingModel] = ALL_PRICING
) -> tuple[dict[tuple[str, str, PricingModel], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_products(body, lambda r, d: skips.append((r, d)), scope)
    return {(o.instance_type, o.region, o.pricing): o for o in offers}, skips


def test_each_product_is_one_gpu_per_region_and_pricing_model() -> None:
    offers, skips = parse(payload())
    assert skips == []
    od, spot = PricingModel.ON_DEMAND, PricingModel.SPOT
    # price / 100000 USD per GPU-hour: 35000 -> 0.35, spotPrice 17500 -> 0.175,
    # 160000 -> 1.6, 67000 -> 0.67; the A100 and product 26 sell no spot
    assert {k: o.price_per_hour for k, o in offers.items()} == {
        ("4090.16c62g", "US-CA-06", od): Decimal("0.35"),
        ("4090.16c62g", "EU-GB-01", od): Decimal("0.35"),
        ("4090.16c62g", "US-CA-06", spot): Decimal("0.175"),
        ("4090.16c62g", "EU-GB-01", spot): Decimal("0.175"),
        ("A100-80GB.14c240g", "US-CA-06", od): Decimal("1.6"),
        ("26", "US-01", od): Decimal("0.67"),
    }
    rtx = offers[("4090.16c62g", "EU-GB-01", od)]
    assert (rtx.gpu_model, rtx.gpu_known, rtx.gpu_raw_name) == ("RTX-4090", True, "RTX 4090 24GB")
    assert (rtx.gpu_count, rtx.vcpus, rtx.memory_gib) == (Decimal(1), Decimal(16), Decimal(62))
    assert rtx.currency == "USD"
    assert rtx.attributes["region_name"] == "EU-GB-01 (United Kingdom)"
    assert rtx.availability == Availability.AVAILABLE
    # availableDeploy false: still an offer, not deployable now
    assert offers[("26", "US-01", od)].availability == Availability.UNAVAILABLE
    assert offers[("A100-80GB.14c240g", "US-CA-06", od)].gpu_model == "A100-80GB"


def test_scope_leaves_out_spot() -> None:
    offers, _ = parse(payload(), frozenset({PricingModel.ON_DEMAND}))
    assert {p for _, _, p in offers} == {PricingModel.ON_DEMAND} and len(offers) == 4


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"price": "0"}, "zero_price"),
        ({"price": None}, "zero_price"),
        ({"regions": []}, "no_location"),
        ({"regions": {}}, "malformed_item"),
        ({"availableDeploy": None}, "malformed_item"),
        ({"name": ""}, "malformed_item"),
    ],
)
def test_unpriceable_product_is_a_counted_skip(change: dict[str, Any], reason: str) -> None:
    body = payload()
    body["data"][1].update(change)
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert skips[0][1].startswith("A100-80GB.14c240g: ")
    assert {k[0] for k in offers} == {"4090.16c62g", "26"}  # the others still count


def test_response_without_data_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^novita: response has no 'data' list$"):
        parse({"products": []})


def test_missing_key_skips_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOVITA_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        NovitaCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_NOVITA__API_KEY (or NOVITA_API_KEY)"
    monkeypatch.setenv("NOVITA_API_KEY", "env-key")
    assert NovitaCollector.from_settings(Settings())._api_key == "env-key"


@respx.mock
def test_key_is_a_bearer_token_and_a_refused_one_fails_in_one_line() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(401, json={"message": "bad"}))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(NovitaCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["Authorization"] == "Bearer bad"
    assert str(info.value) == (
        "novita: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_NOVITA__API_KEY (or NOVITA_API_KEY)"
    )
