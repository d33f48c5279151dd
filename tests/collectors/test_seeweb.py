"""Seeweb collector over a recorded ``/plans`` (tests/fixtures/seeweb/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.seeweb import SeewebCollector, parse_plans
from tracker.models import Availability, Offer
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "seeweb" / "plans.json"
URL = "https://api.seeweb.it/ecs/v2/plans"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[dict[tuple[str, str], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_plans(body, lambda r, d: skips.append((r, d)))
    return {(o.instance_type, o.region): o for o in offers}, skips


def test_one_offer_per_gpu_plan_and_region_in_euros() -> None:
    offers, skips = parse(payload())
    # ECS1GPU7 in it-fr2 and it-mi2, ECS2GPU3 and ECS1GPU9 in it-fr2; eCS4 has gpu "0"
    assert sorted(offers) == [
        ("ECS1GPU7", "it-fr2"),
        ("ECS1GPU7", "it-mi2"),
        ("ECS1GPU9", "it-fr2"),
        ("ECS2GPU3", "it-fr2"),
    ]
    l40s = offers[("ECS1GPU7", "it-mi2")]
    assert (l40s.price_per_hour, l40s.currency) == (Decimal("0.85"), "EUR")
    assert (l40s.gpu_model, l40s.gpu_count, l40s.gpu_memory_gib) == (
        "L40S",
        Decimal(1),
        Decimal(48),
    )
    # cpu "8", ram "32768" MB / 1024 = 32 GiB
    assert (l40s.vcpus, l40s.memory_gib) == (Decimal(8), Decimal(32))
    assert l40s.availability is Availability.UNKNOWN
    assert skips == []


def test_price_is_the_whole_server() -> None:
    offers, _ = parse(payload())
    a100 = offers[("ECS2GPU3", "it-fr2")]
    # hourly_price 1.98 for gpu "2" x "A100 80GB": 0.99 per GPU-hour
    assert (a100.gpu_model, a100.gpu_count) == ("A100-80GB", Decimal(2))
    assert a100.price_per_hour == Decimal("1.98")
    assert a100.memory_gib == Decimal(240)  # 245760 MB / 1024


def test_amd_gpu_is_collected_too() -> None:
    offers, _ = parse(payload())
    assert offers[("ECS1GPU9", "it-fr2")].gpu_model == "MI300X"


def test_retired_plan_and_duplicate_regions() -> None:
    body = payload()
    body["plans"][1]["available"] = False
    body["plans"][0]["available_regions"].append({"location": "it-fr2"})
    offers, skips = parse(body)
    assert ("ECS2GPU3", "it-fr2") not in offers
    assert [k for k in offers if k[0] == "ECS1GPU7"] == [
        ("ECS1GPU7", "it-fr2"),
        ("ECS1GPU7", "it-mi2"),
    ]
    assert skips == []


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda p: p.update(hourly_price="0.85"), "malformed_item"),
        (lambda p: p.update(hourly_price=0), "zero_price"),
        (lambda p: p.update(ram="32 GB"), "malformed_item"),
        (lambda p: p.update(available_regions=None), "malformed_item"),
        (lambda p: p.update(gpu_label=None), "malformed_item"),
    ],
)
def test_unpriceable_plan_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["plans"][0])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason] and skips[0][1].startswith("ECS1GPU7:")
    assert ("ECS2GPU3", "it-fr2") in offers


def test_response_without_plans_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'plans' list"):
        parse({"plans": {}})


@respx.mock
def test_collect_sends_the_token_header_and_the_configured_currency() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings(seeweb={"currency": "USD"})
    offers = list(SeewebCollector(settings, "sw-token").collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["X-APITOKEN"] == "sw-token"
    assert "Authorization" not in route.calls[0].request.headers
    assert {o.currency for o in offers} == {"USD"} and len(offers) == 4


@respx.mock
def test_refused_token_is_one_line_naming_provider_and_setting() -> None:
    respx.get(URL).mock(return_value=httpx.Response(401, json={"status": "error"}))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(SeewebCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "seeweb: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_SEEWEB__API_KEY (or SEEWEB_API_TOKEN)"
    )


def test_missing_token_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEEWEB_API_TOKEN", raising=False)
    with pytest.raises(MissingCredentials) as info:
        SeewebCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_SEEWEB__API_KEY (or SEEWEB_API_TOKEN)"
