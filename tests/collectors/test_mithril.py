"""Mithril collector over its documented instance type and SDK-test auctions
(tests/fixtures/mithril/SOURCES)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.mithril import MithrilCollector, parse_auctions
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "mithril"
TYPES_URL = "https://api.mithril.ai/v2/instance-types"
SPOT_URL = "https://api.mithril.ai/v2/spot/availability"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(auctions: Any) -> tuple[dict[str, Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_auctions(
        load("instance_types.json"), auctions, lambda r, d: skips.append((r, d))
    )
    return {o.region: o for o in offers}, skips


def test_one_spot_offer_per_auction_at_its_last_price() -> None:
    offers, skips = parse(load("spot_availability.json"))
    # "$5.00" -> 5.00 and "$4.50" -> 4.50 per hour for the whole 8-GPU instance
    assert {r: o.price_per_hour for r, o in offers.items()} == {
        "us-east-1": Decimal("5.00"),
        "us-west-2": Decimal("4.50"),
    }
    east = offers["us-east-1"]
    assert (east.instance_type, east.pricing, east.currency) == (
        "h100.80gb.sxm",
        PricingModel.SPOT,
        "USD",
    )
    assert (east.gpu_model, east.gpu_raw_name, east.gpu_count) == ("H100-SXM", "H100", Decimal(8))
    assert (east.vcpus, east.memory_gib) == (Decimal(192), Decimal(1800))
    assert east.gpu_memory_gib == Decimal(80)
    assert east.attributes["capacity"] == 5 and east.attributes["gpu_socket"] == "SXM5"
    assert east.availability == Availability.AVAILABLE
    assert offers["us-west-2"].availability == Availability.UNAVAILABLE  # capacity 0
    # auc_3 names an instance type the list does not have
    assert skips == [
        ("unknown_instance_type", "auc_3: instance type it_5M6aGxGovNeX5ltT is not listed")
    ]


@pytest.mark.parametrize(
    ("price", "reason"),
    [
        ("5.00", "malformed_item"),
        ("$abc", "malformed_item"),
        ("$0.00", "zero_price"),
        (5, "malformed_item"),
    ],
)
def test_a_price_that_is_not_dollars_is_a_counted_skip(price: Any, reason: str) -> None:
    auctions = load("spot_availability.json")[:2]
    auctions[0]["last_instance_price"] = price
    offers, skips = parse(auctions)
    assert [r for r, _ in skips] == [reason] and skips[0][1].startswith("auc_1: ")
    assert list(offers) == ["us-west-2"]


def test_a_response_that_is_not_a_list_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^mithril: instance-types or spot/availability"):
        parse_auctions({"data": []}, [], lambda r, d: None)


def test_missing_key_skips_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MITHRIL_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        MithrilCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_MITHRIL__API_KEY (or MITHRIL_API_KEY)"


@respx.mock
def test_both_lists_are_read_with_the_key_and_a_refused_one_fails_in_one_line() -> None:
    types = respx.get(TYPES_URL).mock(
        return_value=httpx.Response(200, json=load("instance_types.json"))
    )
    respx.get(SPOT_URL).mock(return_value=httpx.Response(200, json=load("spot_availability.json")))
    settings = Settings()
    offers = list(MithrilCollector(settings, "fkey_x").collect(RunContext(settings=settings)))
    assert types.calls[0].request.headers["Authorization"] == "Bearer fkey_x" and len(offers) == 2
    respx.get(TYPES_URL).mock(return_value=httpx.Response(401, json={"detail": "bad"}))
    with pytest.raises(CollectorError) as info:
        list(MithrilCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "mithril: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_MITHRIL__API_KEY (or MITHRIL_API_KEY)"
    )
