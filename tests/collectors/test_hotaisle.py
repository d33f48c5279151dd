"""Hot Aisle collector over a recorded available-VM list (tests/fixtures/hotaisle/SOURCES.md)."""

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
from collectors.hotaisle import HotAisleCollector, parse_available
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "hotaisle" / "available_vms.json"
URL = "https://admin.hotaisle.app/api/teams/my-team/virtual_machines/available/"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_available(body, lambda r, d: skips.append((r, d))), skips


def test_vm_price_in_cents_is_the_whole_vm() -> None:
    [offer], skips = parse(payload())
    # OnDemandPrice 199 cents -> $1.99 per hour for the 1-GPU VM
    assert offer.price_per_hour == Decimal("1.99") and offer.currency == "USD"
    assert offer.pricing is PricingModel.ON_DEMAND
    assert (offer.gpu_model, offer.gpu_known, offer.gpu_count) == ("MI300X", True, Decimal(1))
    # ram_capacity 257698037760 bytes / 1024^3 = 240 GiB; 13 cores
    assert (offer.vcpus, offer.memory_gib) == (Decimal(13), Decimal(240))
    assert offer.instance_type == "1x MI300X 13c 240g"
    assert (offer.region, offer.availability) == ("global", Availability.AVAILABLE)
    assert offer.attributes["disk_gib"] == Decimal(12288)  # 13194139533312 / 1024^3
    assert skips == []


def test_identical_vms_are_one_offer_at_the_lowest_price() -> None:
    body = payload()
    dearer = copy.deepcopy(body[0])
    dearer["OnDemandPrice"] = 249
    body.append(dearer)
    eight = copy.deepcopy(body[0])
    eight["Specs"]["gpus"][0]["count"] = 8
    eight["Specs"]["cpu_cores"] = 104
    eight["OnDemandPrice"] = 1592  # 8 x 199
    body.append(eight)
    offers, _ = parse(body)
    by_type = {o.instance_type: o for o in offers}
    assert by_type["1x MI300X 13c 240g"].price_per_hour == Decimal("1.99")
    assert by_type["1x MI300X 13c 240g"].attributes["listed"] == 2
    assert by_type["8x MI300X 104c 240g"].price_per_hour == Decimal("15.92")


def test_null_means_nothing_available() -> None:
    assert parse(None) == ([], [])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda vm: vm.update(OnDemandPrice=1.99), "malformed_item"),
        (lambda vm: vm.update(OnDemandPrice=0), "zero_price"),
        (lambda vm: vm["Specs"].update(gpus=[]), "malformed_item"),
        (lambda vm: vm["Specs"].pop("cpu_cores"), "malformed_item"),
    ],
)
def test_unpriceable_vm_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body[0])
    offers, skips = parse(body)
    assert offers == [] and [r for r, _ in skips] == [reason]


def test_unknown_gpu_is_kept() -> None:
    body = payload()
    body[0]["Specs"]["gpus"][0]["model"] = "MI999X"
    [offer], _ = parse(body)
    assert (offer.gpu_model, offer.gpu_known) == ("MI999X", False)


def test_response_that_is_not_a_list_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="not a list"):
        parse({"detail": "Not found."})


@respx.mock
def test_collect_sends_the_token_scheme_for_the_team() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    collector = HotAisleCollector(settings, "ha-key", "my-team")
    offers = list(collector.collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["Authorization"] == "Token ha-key"
    assert len(offers) == 1


@respx.mock
def test_refused_key_is_one_line_naming_provider_and_setting() -> None:
    respx.get(URL).mock(return_value=httpx.Response(401, json={"detail": "Invalid token."}))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(HotAisleCollector(settings, "bad", "my-team").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "hotaisle: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_HOTAISLE__API_KEY (or HOTAISLE_API_KEY)"
    )


def test_missing_key_or_team_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOTAISLE_API_KEY", raising=False)
    monkeypatch.delenv("HOTAISLE_TEAM_HANDLE", raising=False)
    with pytest.raises(MissingCredentials, match=r"^no API key: set GPU_TRACKER_HOTAISLE"):
        HotAisleCollector.from_settings(Settings())
    monkeypatch.setenv("HOTAISLE_API_KEY", "k")
    with pytest.raises(MissingCredentials) as info:
        HotAisleCollector.from_settings(Settings())
    assert str(info.value) == "no team: set GPU_TRACKER_HOTAISLE__TEAM (or HOTAISLE_TEAM_HANDLE)"
    monkeypatch.setenv("HOTAISLE_TEAM_HANDLE", "env-team")
    assert HotAisleCollector.from_settings(Settings()).team == "env-team"
    assert HotAisleCollector.from_settings(Settings(hotaisle={"team": "own"})).team == "own"
