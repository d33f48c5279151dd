"""Verda (DataCrunch) collector over recorded payloads (tests/fixtures/verda/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.verda import VerdaCollector, locations, parse_instance_types
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "verda"
BASE = "https://api.verda.com/v1"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def spot_availability() -> Any:
    """The recorded availability with only FIN-01's 2A6000.20V and 1V100.6V left."""
    body = load("instance_availability.json")
    body[0]["availabilities"] = ["2A6000.20V", "1V100.6V"]
    return body


def parse(
    types: Any | None = None, before: dict[tuple[str, str], set[str]] | None = None
) -> tuple[dict[tuple[str, str, PricingModel], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    now = locations(load("instance_availability.json"), OD) | locations(spot_availability(), SPOT)
    offers = parse_instance_types(
        load("instance_types.json") if types is None else types,
        now,
        lambda r, d: skips.append((r, d)),
        before,
    )
    return {(o.instance_type, o.region, o.pricing): o for o in offers}, skips


def test_offers_only_where_the_availability_endpoint_lists_the_type() -> None:
    offers, skips = parse()
    # FIN-01 lists 2A6000.20V and 1V100.6V for on-demand and (trimmed) spot; the H100
    # and 8V100.48M types are deployable nowhere now; CPU.120V.480G has no GPU.
    assert sorted(offers) == [
        ("1V100.6V", "FIN-01", OD),
        ("1V100.6V", "FIN-01", SPOT),
        ("2A6000.20V", "FIN-01", OD),
        ("2A6000.20V", "FIN-01", SPOT),
    ]
    assert all(o.availability is Availability.AVAILABLE for o in offers.values())
    assert skips == []


def test_price_strings_are_the_whole_instance() -> None:
    offers, _ = parse()
    a6000 = offers[("2A6000.20V", "FIN-01", OD)]
    # price_per_hour "1.98" for the 2-GPU instance -> 1.98 / 2 = 0.99 per GPU-hour
    assert a6000.price_per_hour == Decimal("1.98") and a6000.currency == "USD"
    assert a6000.price_per_gpu_hour_usd == Decimal("0.99")
    assert offers[("2A6000.20V", "FIN-01", SPOT)].price_per_hour == Decimal("0.70")
    # "2x RTX A6000 48GB": 2 GPUs; gpu_memory 96 GB / 2 = 48 GB each
    assert (a6000.gpu_model, a6000.gpu_count, a6000.gpu_memory_gib) == (
        "RTX-A6000",
        Decimal(2),
        Decimal(48),
    )
    assert (a6000.vcpus, a6000.memory_gib) == (Decimal(20), Decimal(120))
    assert a6000.attributes["p2p"] == "50GB/s"


def test_eight_gpu_type_and_sxm_interconnect() -> None:
    now = {("on_demand", "8V100.48M"): {"FIN-02"}, ("on_demand", "1H100.80S.30V"): {"FIN-01"}}
    offers = {
        (o.instance_type, o.pricing): o
        for o in parse_instance_types(load("instance_types.json"), now, lambda r, d: None)
    }
    v100 = offers[("8V100.48M", OD)]
    # "8x NVidia Tesla V100", gpu_memory 128 GB / 8 = 16 GB -> the 16 GB V100
    assert (v100.gpu_model, v100.gpu_count, v100.gpu_memory_gib) == (
        "V100-16GB",
        Decimal(8),
        Decimal(16),
    )
    assert v100.price_per_hour == Decimal("5.00")
    assert v100.price_per_gpu_hour_usd == Decimal("0.625")  # 5.00 / 8
    h100 = offers[("1H100.80S.30V", OD)]
    assert (h100.gpu_model, h100.interconnect) == ("H100-SXM", Interconnect.NVLINK)
    assert h100.price_per_hour == Decimal("3.95")


def test_location_listed_before_stays_unavailable() -> None:
    offers, _ = parse(before={("on_demand", "1H100.80S.30V"): {"FIN-03"}})
    h100 = offers[("1H100.80S.30V", "FIN-03", OD)]
    assert h100.availability is Availability.UNAVAILABLE
    assert h100.price_per_hour == Decimal("3.95")


def test_unknown_gpu_is_kept_and_flagged() -> None:
    types = load("instance_types.json")
    types[3]["gpu"]["description"] = "1x Tesla V9000 16GB"
    offers, _ = parse(types)
    odd = offers[("1V100.6V", "FIN-01", OD)]
    assert (odd.gpu_model, odd.gpu_known) == ("Tesla V9000 16GB", False)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda t: t.update(price_per_hour=1.98), "malformed_item"),
        (lambda t: t.update(price_per_hour="free"), "malformed_item"),
        (lambda t: t["gpu"].update(number_of_gpus=4), "inconsistent_gpu_count"),
        (lambda t: t.pop("gpu"), "malformed_item"),
    ],
)
def test_malformed_type_is_a_counted_skip(change: Any, reason: str) -> None:
    types = load("instance_types.json")
    change(types[1])  # 2A6000.20V
    offers, skips = parse(types)
    assert [r for r, _ in skips] == [reason]
    assert skips[0][1].startswith("2A6000.20V:")
    assert ("1V100.6V", "FIN-01", OD) in offers


def test_zero_spot_price_means_no_spot_offer() -> None:
    types = load("instance_types.json")
    types[1]["spot_price"] = "0.00"
    offers, skips = parse(types)
    assert ("2A6000.20V", "FIN-01", SPOT) not in offers
    assert ("2A6000.20V", "FIN-01", OD) in offers and skips == []


# ----------------------------------------------------------------- collector


def mock_api(base: str = BASE) -> dict[str, respx.Route]:
    return {
        "token": respx.post(f"{base}/oauth2/token").mock(
            return_value=httpx.Response(200, json=load("oauth2_token.json"))
        ),
        "types": respx.get(f"{base}/instance-types").mock(
            return_value=httpx.Response(200, json=load("instance_types.json"))
        ),
        "od": respx.get(f"{base}/instance-availability", params={"isSpot": "false"}).mock(
            return_value=httpx.Response(200, json=load("instance_availability.json"))
        ),
        "spot": respx.get(f"{base}/instance-availability", params={"isSpot": "true"}).mock(
            return_value=httpx.Response(200, json=spot_availability())
        ),
        "clusters": respx.get(f"{base}/cluster-types").mock(
            return_value=httpx.Response(200, json=load("cluster_types.json"))
        ),
        "cluster_where": respx.get(f"{base}/cluster-availability").mock(
            return_value=httpx.Response(200, json=load("cluster_availability.json"))
        ),
    }


def run(collector: VerdaCollector, settings: Settings, **ctx: Any) -> list[Offer]:
    return list(collector.collect(RunContext(settings=settings, source="verda", **ctx)))


@respx.mock
def test_client_credentials_then_bearer_token() -> None:
    routes = mock_api()
    settings = Settings()
    offers = run(VerdaCollector(settings, "id-1", "secret-1"), settings)
    assert json.loads(routes["token"].calls[0].request.content) == {
        "grant_type": "client_credentials",
        "client_id": "id-1",
        "client_secret": "secret-1",
    }
    # oauth2_token.json's access_token is "access"
    assert routes["types"].calls[0].request.headers["Authorization"] == "Bearer access"
    assert routes["types"].calls[0].request.url.params["currency"] == "usd"
    assert routes["clusters"].calls[0].request.url.params["currency"] == "usd"
    # 4 instance offers (the first test) and the 16H200 cluster's one node in FIN-01
    assert len(offers) == 5
    assert [o.instance_type for o in offers if o.offering_class == "cluster"] == ["16H200"]


@respx.mock
def test_a_failing_cluster_call_keeps_the_instance_prices_and_delists_no_cluster(
    caplog: pytest.LogCaptureFixture,
) -> None:
    routes = mock_api()
    routes["clusters"].mock(return_value=httpx.Response(404))
    settings = Settings()
    stored = [  # a cluster node listed in FIN-03 before, and an instance in FIN-01
        ("verda", "16H200", "FIN-03", "", "on_demand", "", "cluster", "linux"),
        ("verda", "1V100.6V", "FIN-01", "", "on_demand", "", "", "linux"),
    ]
    context = RunContext(settings=settings, source="verda", listed_reader=lambda: stored)
    offers = list(VerdaCollector(settings, "i", "s").collect(context))
    # the 4 instance offers of test_client_credentials_then_bearer_token, no cluster node
    assert len(offers) == 4 and all(o.offering_class != "cluster" for o in offers)
    # only the location that held a cluster is partial: nothing there is delisted
    assert list(context.partial) == ["FIN-03"]
    assert context.partial["FIN-03"].startswith("clusters: ")
    assert "verda: clusters: " in caplog.text


@respx.mock
def test_spot_only_run_asks_only_for_spot_availability() -> None:
    routes = mock_api()
    settings = Settings()
    offers = run(VerdaCollector(settings, "i", "s"), settings, pricing_scope=frozenset({SPOT}))
    assert not routes["od"].called and routes["spot"].called
    assert not routes["clusters"].called  # clusters are pay-as-you-go: on demand only
    assert {o.pricing for o in offers} == {SPOT}


@respx.mock
def test_endpoint_override_keeps_every_documented_path() -> None:
    routes = mock_api("http://127.0.0.1:8089/v1")
    settings = Settings(verda={"endpoint_url": "http://127.0.0.1:8089"})
    assert len(run(VerdaCollector(settings, "i", "s"), settings)) == 5
    assert all(route.called for route in routes.values())


@pytest.mark.parametrize("status", [400, 401])
@respx.mock
def test_refused_credentials_are_one_line_naming_provider_and_settings(status: int) -> None:
    respx.post(f"{BASE}/oauth2/token").mock(
        return_value=httpx.Response(status, json={"code": "unauthorized_request", "message": "x"})
    )
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        run(VerdaCollector(settings, "id-1", "bad-secret"), settings)
    message = str(info.value)
    assert message.startswith(f"verda: the client credentials were refused (HTTP {status}); ")
    assert "GPU_TRACKER_VERDA__CLIENT_ID" in message and "\n" not in message
    assert "bad-secret" not in message


def test_missing_credentials_skip_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET", "DATACRUNCH_CLIENT_ID"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DATACRUNCH_CLIENT_SECRET", "half a pair")
    with pytest.raises(MissingCredentials, match=r"^no client credentials: set GPU_TRACKER_VERDA"):
        VerdaCollector.from_settings(Settings())


def test_credentials_from_section_file_or_either_sdk_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for var in ("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DATACRUNCH_CLIENT_ID", "dc-id")
    monkeypatch.setenv("DATACRUNCH_CLIENT_SECRET", "dc-secret")
    collector = VerdaCollector.from_settings(Settings())
    assert (collector._client_id, collector._secret) == ("dc-id", "dc-secret")
    monkeypatch.setenv("VERDA_CLIENT_ID", "v-id")
    monkeypatch.setenv("VERDA_CLIENT_SECRET", "v-secret")
    assert VerdaCollector.from_settings(Settings())._client_id == "v-id"
    secret = tmp_path / "secret"
    secret.write_text("from-file\n")
    settings = Settings(verda={"client_id": "own", "client_secret_file": secret})
    collector = VerdaCollector.from_settings(settings)
    assert (collector._client_id, collector._secret) == ("own", "from-file")


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"verda\.enabled"):
        VerdaCollector.from_settings(Settings(verda={"enabled": False}))
