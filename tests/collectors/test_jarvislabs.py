"""JarvisLabs collector over a recorded ``server_meta`` (tests/fixtures/jarvislabs/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.jarvislabs import JarvisLabsCollector, parse_server_meta
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "jarvislabs" / "server_meta.json"
URL = "https://backendprod.jarvislabs.net/misc/server_meta"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT
NOIDA = "india-noida-01"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(
    body: Any, scope: frozenset[PricingModel] = frozenset(PricingModel)
) -> tuple[dict[tuple[str, str, str, PricingModel], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_server_meta(body, lambda r, d: skips.append((r, d)), scope)
    return {(o.instance_type, o.region, o.offering_class, o.pricing): o for o in offers}, skips


def test_per_gpu_price_times_count_with_resources_per_gpu() -> None:
    offers, skips = parse(payload())
    two = offers[("2x L4", NOIDA, "vm", OD)]
    # price_per_hour 0.44 per GPU x 2 = 0.88; 28 vCPUs and 124 GB per GPU
    assert two.price_per_hour == Decimal("0.88") and two.currency == "USD"
    assert (two.vcpus, two.memory_gib) == (Decimal(56), Decimal(248))
    assert (two.gpu_model, two.gpu_memory_gib) == ("L4", Decimal(24))  # vram "24"
    assert offers[("2x L4", NOIDA, "vm", SPOT)].price_per_hour == Decimal("0.58")  # 2 x 0.29
    assert skips == []


def test_counts_up_to_num_gpus_and_free_devices_decide_availability() -> None:
    offers, _ = parse(payload())
    # num_gpus "8": 1, 2, 4, 8; effective_num_free_devices 3: 1 and 2 available now
    assert [offers[(f"{n}x L4", NOIDA, "vm", OD)].availability for n in (1, 2, 4, 8)] == [
        Availability.AVAILABLE,
        Availability.AVAILABLE,
        Availability.UNAVAILABLE,
        Availability.UNAVAILABLE,
    ]
    # A100-80GB: num_gpus "4" -> no 8x offer; 1 free
    a100 = [k for k in offers if k[0].endswith("A100-80GB") and k[3] is OD]
    assert sorted(k[0] for k in a100) == ["1x A100-80GB", "2x A100-80GB", "4x A100-80GB"]
    assert offers[("1x A100-80GB", NOIDA, "vm", OD)].gpu_model == "A100-80GB"
    assert offers[("4x A100-80GB", NOIDA, "vm", SPOT)].price_per_hour == Decimal("3.56")


def test_workload_type_is_the_offering_class_and_null_spot_is_no_spot() -> None:
    offers, _ = parse(payload())
    assert ("1x L4", NOIDA, "container", OD) in offers
    # H100 in europe-01: workload_type null, num_gpus absent (1), spot_price null
    h100 = offers[("1x H100", "europe-01", "", OD)]
    assert h100.price_per_hour == Decimal("2.99")
    assert not [k for k in offers if k[0] == "1x H100" and k[1] == "europe-01" and k[3] is SPOT]
    assert len(offers) == 24  # 2 L4 rows x 8 + A100 6 + H100 2 regions x 1


def test_spot_only_scope_keeps_spot_offers_only() -> None:
    offers, _ = parse(payload(), frozenset({SPOT}))
    assert {k[3] for k in offers} == {SPOT} and len(offers) == 4 + 4 + 3


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda r: r.update(price_per_hour="bad", spot_price=None), "malformed_item"),
        (lambda r: r.update(vram="bad"), "malformed_item"),
        (lambda r: r.pop("gpu_type"), "malformed_item"),
        (lambda r: r.pop("price_per_hour") and r.update(spot_price=None), "malformed_item"),
    ],
)
def test_unpriceable_row_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["server_meta"][2])  # the A100-80GB row
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert not [k for k in offers if "A100" in k[0]]


def test_response_without_server_meta_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'server_meta' list"):
        parse({"detail": "Not authenticated"})


@respx.mock
def test_collect_sends_the_bearer_key_and_honours_the_override() -> None:
    route = respx.get("http://127.0.0.1:8089/misc/server_meta").mock(
        return_value=httpx.Response(200, json=payload())
    )
    settings = Settings(jarvislabs={"endpoint_url": "http://127.0.0.1:8089"})
    offers = list(JarvisLabsCollector(settings, "jl-key").collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["Authorization"] == "Bearer jl-key"
    assert len(offers) == 24


@respx.mock
def test_refused_key_is_one_line_naming_provider_and_setting() -> None:
    respx.get(URL).mock(return_value=httpx.Response(403, json={"detail": "Forbidden"}))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(JarvisLabsCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "jarvislabs: the API key was refused (HTTP 403); "
        "check GPU_TRACKER_JARVISLABS__API_KEY (or JL_API_KEY)"
    )


def test_missing_key_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JL_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        JarvisLabsCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_JARVISLABS__API_KEY (or JL_API_KEY)"
    monkeypatch.setenv("JL_API_KEY", "from-env")
    assert JarvisLabsCollector.from_settings(Settings())._api_key == "from-env"
