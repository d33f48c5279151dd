"""Prime Intellect collector over its documented offers (tests/fixtures/primeintellect)."""

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
from collectors.primeintellect import (
    DOCUMENTED_URL,
    PrimeIntellectCollector,
    cheapest,
    parse_page,
)
from tests.cli.recorded_server import serve_recorded
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "primeintellect" / "availability_gpus.json"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers, _, _ = parse_page(body, lambda r, d: skips.append((r, d)))
    return offers, skips


def test_documented_offers_priced_per_whole_offer() -> None:
    offers, skips = parse(payload())
    by_type = {o.instance_type: o for o in offers}
    assert skips == [] and set(by_type) == {"hyperstack/n3-H100x1", "runpod/NVIDIA H100 PCIe"}
    hyper = by_type["hyperstack/n3-H100x1"]
    # prices.onDemand 1.9 USD for the 1-GPU offer (1.9 per GPU-hour x 1)
    assert (hyper.price_per_hour, hyper.currency) == (Decimal("1.9"), "USD")
    assert (hyper.provider, hyper.region, hyper.pricing) == (
        "primeintellect",
        "CANADA-1",
        PricingModel.ON_DEMAND,
    )
    assert hyper.attributes["underlying_cloud"] == "hyperstack"
    assert (hyper.gpu_model, hyper.gpu_known, hyper.gpu_count) == ("H100-PCIE", True, Decimal(1))
    assert (hyper.vcpus, hyper.memory_gib, hyper.gpu_memory_gib) == (
        Decimal(180),
        Decimal(180),
        Decimal(80),
    )
    assert hyper.interconnect is Interconnect.PCIE
    assert hyper.availability is Availability.AVAILABLE
    runpod = by_type["runpod/NVIDIA H100 PCIe"]
    assert (runpod.price_per_hour, runpod.region) == (Decimal("2.69"), "US-KS-2")
    assert runpod.availability is Availability.LOW  # stockStatus "Low"


def test_two_gpu_box_memory_is_split_per_gpu() -> None:
    body = payload()
    item = body["items"][0]
    item.update(gpuCount=2, gpuMemory=160, cloudId="n3-H100x2")
    item["prices"]["onDemand"] = 3.8  # 2 x 1.9
    [offer, _], _ = parse(body)
    assert (offer.gpu_count, offer.gpu_memory_gib) == (Decimal(2), Decimal(80))  # 160 / 2
    assert offer.price_per_hour == Decimal("3.8")


def test_live_offers_of_one_plan_are_one_at_the_lowest_price() -> None:
    body = payload()
    dearer = copy.deepcopy(body["items"][0])
    dearer["prices"]["onDemand"] = 2.1
    body["items"].append(dearer)
    community = copy.deepcopy(body["items"][0])
    community["security"] = "community_cloud"
    body["items"].append(community)
    offers = cheapest(iter(parse(body)[0]))
    by_type = {o.instance_type: o for o in offers}
    assert by_type["hyperstack/n3-H100x1"].price_per_hour == Decimal("1.9")  # min(1.9, 2.1)
    assert by_type["hyperstack/n3-H100x1"].attributes["listed"] == 2
    assert "hyperstack/n3-H100x1 community_cloud" in by_type


def test_spot_offer_is_spot() -> None:
    body = payload()
    body["items"][0]["isSpot"] = True
    assert parse(body)[0][0].pricing is PricingModel.SPOT


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda o: o["prices"].update(onDemand=None), "no_price"),
        (lambda o: o["prices"].update(onDemand=0), "zero_price"),
        (lambda o: o.pop("prices"), "malformed_item"),
        (lambda o: o.update(gpuCount=0), "malformed_item"),
        (lambda o: o.update(dataCenter=None, country=None), "malformed_item"),
    ],
)
def test_unpriceable_offer_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["items"][0])
    offers, skips = parse(body)
    assert len(offers) == 1 and [r for r, _ in skips] == [reason]


def test_answer_without_items_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no items list"):
        parse({"detail": "Not authenticated"})


@respx.mock
def test_pages_until_the_total_is_seen_with_the_bearer_key() -> None:
    body = payload()
    first = {"items": body["items"][:1], "totalCount": 2}
    second = {"items": body["items"][1:], "totalCount": 2}
    route = respx.get(DOCUMENTED_URL).mock(
        side_effect=[httpx.Response(200, json=first), httpx.Response(200, json=second)]
    )
    settings = Settings()
    offers = list(PrimeIntellectCollector(settings, "pk").collect(RunContext(settings=settings)))
    assert len(offers) == 2 and route.call_count == 2
    assert route.calls[1].request.url.params["page"] == "2"
    assert route.calls[0].request.headers["Authorization"] == "Bearer pk"


def test_missing_key_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        PrimeIntellectCollector.from_settings(Settings())
    assert str(info.value) == (
        "no API key: set GPU_TRACKER_PRIMEINTELLECT__API_KEY (or PRIME_API_KEY)"
    )


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_primeintellect_into_the_store(cli: Run) -> None:
    routes = {("GET", "/api/v1/availability/gpus"): FIXTURE.read_bytes()}
    with serve_recorded(routes) as url:
        env = {"GPU_TRACKER_PRIMEINTELLECT__ENDPOINT_URL": url, "PRIME_API_KEY": "pk"}
        proc = cli("collect", "--provider", "primeintellect", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--provider", "primeintellect", "--format", "json", "--limit", "50")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert {
        (r["instance_type"], r["region"], r["pricing"]): Decimal(str(r["price_per_hour"]))
        for r in rows
    } == {
        ("hyperstack/n3-H100x1", "CANADA-1", "on_demand"): Decimal("1.9"),
        ("runpod/NVIDIA H100 PCIe", "US-KS-2", "on_demand"): Decimal("2.69"),
    }
