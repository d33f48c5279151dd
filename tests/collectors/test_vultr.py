"""Vultr collector over recorded ``/v2/plans`` and ``/v2/plans-metal`` (fixtures/vultr/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.vultr import VultrCollector, parse_plans
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "vultr"
PLANS = "https://api.vultr.com/v2/plans"
METAL = "https://api.vultr.com/v2/plans-metal"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def with_counts() -> Any:
    """plans.json with the ``gpu_count`` strings live ``/v2/plans`` carries on vcg plans:
    4 GB of an 80 GB A100 is "1/20", the 80 GB plan "1", the 40 GB one "1/2"."""
    body = load("plans.json")
    for plan, count in zip(body["plans"][:3], ("1/20", "1", "1/2"), strict=True):
        plan["gpu_count"] = count
    return body


def parse(
    plans: Any | None = None, metal: Any | None = None, before: Any = None
) -> tuple[dict[tuple[str, str, PricingModel], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    pages = {
        "plans": [load("plans.json") if plans is None else plans],
        "plans_metal": [load("plans_metal.json") if metal is None else metal],
    }
    offers = parse_plans(pages, lambda r, d: skips.append((r, d)), before)
    return {(o.instance_type, o.region, o.pricing): o for o in offers}, skips


def test_bare_metal_gpu_plans_on_demand_and_preemptible() -> None:
    offers, _ = parse()
    mi300x = offers[("vbm-256c-2048gb-8-mi300x-gpu", "ord", OD)]
    assert mi300x.price_per_hour == Decimal("17.52") and mi300x.currency == "USD"
    assert mi300x.price_per_gpu_hour_usd == Decimal("2.19")  # 17.52 / 8
    assert offers[("vbm-256c-2048gb-8-mi300x-gpu", "ord", SPOT)].price_per_hour == Decimal("14.72")
    # model and count from the id "...-8-mi300x-gpu", flagged as such
    assert (mi300x.gpu_model, mi300x.gpu_count) == ("MI300X", Decimal(8))
    assert mi300x.attributes["gpu_from_plan_id"] is True
    assert mi300x.vcpus == Decimal(256)  # cpu_threads
    h100 = offers[("vbm-112c-2048gb-8-h100-gpu", "sea", OD)]
    assert (h100.gpu_model, h100.price_per_hour) == ("H100-SXM", Decimal("23.92"))
    assert h100.memory_gib == Decimal(2048)  # ram 2097152 MB / 1024
    assert h100.availability is Availability.AVAILABLE


def test_cloud_gpu_plans_without_gpu_count_are_counted_skips_not_guesses() -> None:
    offers, skips = parse()
    assert not [k for k in offers if k[0].startswith("vcg-")]
    assert sorted(skips) == [
        ("no_gpu_count", "vcg-a100-12c-120g-80vram: NVIDIA_A100 plan without gpu_count"),
        ("no_gpu_count", "vcg-a100-1c-6g-4vram: NVIDIA_A100 plan without gpu_count"),
        ("no_gpu_count", "vcg-a100-6c-60g-40vram: NVIDIA_A100 plan without gpu_count"),
        ("no_gpu_type", "vcg-a40-24c-120g-48vram: vdm plan without gpu_type"),
    ]  # the CPU plan vc2-2c-4gb is not a GPU offer at all


def test_cloud_gpu_counts_whole_and_fractional() -> None:
    offers, _ = parse(with_counts())
    whole = offers[("vcg-a100-12c-120g-80vram", "ewr", OD)]
    # gpu_count "1", gpu_vram_gb 80 -> one 80 GB A100 at hourly_cost 2.397
    assert (whole.gpu_model, whole.gpu_count, whole.gpu_memory_gib) == (
        "A100-80GB",
        Decimal(1),
        Decimal(80),
    )
    assert whole.price_per_hour == Decimal("2.397")
    share = offers[("vcg-a100-1c-6g-4vram", "ewr", OD)]
    # "1/20" -> 0.05 GPU; 4 GB / 0.05 = 80 GB per whole GPU; $0.123 / 0.05 = $2.46 per GPU-hour
    assert share.gpu_count == Decimal("0.05")
    assert (share.gpu_model, share.gpu_memory_gib) == ("A100-80GB", Decimal(80))
    assert share.price_per_gpu_hour_usd == Decimal("2.46")
    half = offers[("vcg-a100-6c-60g-40vram", "ewr", OD)]
    assert (half.gpu_count, half.gpu_model) == (Decimal("0.5"), "A100-80GB")  # 40 / 0.5 = 80


def test_monthly_cost_over_vultrs_billed_hours_when_no_hourly_cost() -> None:
    plans = with_counts()
    del plans["plans"][1]["hourly_cost"]
    metal = load("plans_metal.json")
    del metal["plans_metal"][1]["hourly_cost"]
    offers, _ = parse(plans, metal)
    # Cloud GPU: 1750 / 730 = 2.39726... -> 2.397 (Vultr's own hourly_cost for this plan)
    assert offers[("vcg-a100-12c-120g-80vram", "ewr", OD)].price_per_hour == Decimal("2.397")
    # Bare Metal: 16074.24 / 672 = 23.92 exactly (again Vultr's hourly_cost)
    assert offers[("vbm-112c-2048gb-8-h100-gpu", "sea", OD)].price_per_hour == Decimal("23.92")


def test_deploy_flags_and_locations_listed_before() -> None:
    metal = load("plans_metal.json")
    metal["plans_metal"][0]["deploy_ondemand"] = False
    metal["plans_metal"][1]["locations"] = []
    before = {("spot", "vbm-112c-2048gb-8-h100-gpu"): {"sea"}}
    offers, _ = parse(metal=metal, before=before)
    assert ("vbm-256c-2048gb-8-mi300x-gpu", "ord", OD) not in offers  # not sold on demand
    assert ("vbm-256c-2048gb-8-mi300x-gpu", "ord", SPOT) in offers
    # sea no longer listed: the spot offer listed there before stays, unavailable
    gone = offers[("vbm-112c-2048gb-8-h100-gpu", "sea", SPOT)]
    assert gone.availability is Availability.UNAVAILABLE
    assert ("vbm-112c-2048gb-8-h100-gpu", "sea", OD) not in offers


def test_unknown_gpu_type_is_kept_and_flagged() -> None:
    plans = with_counts()
    plans["plans"][1]["gpu_type"] = "NVIDIA_Z900"
    offers, _ = parse(plans)
    odd = offers[("vcg-a100-12c-120g-80vram", "ewr", OD)]
    assert (odd.gpu_model, odd.gpu_known) == ("NVIDIA_Z900", False)


def test_response_without_plans_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'plans' list"):
        parse({"error": "x", "status": 500})


# ----------------------------------------------------------------- collector


def run(settings: Settings) -> list[Offer]:
    return list(VultrCollector(settings).collect(RunContext(settings=settings)))


@respx.mock
def test_follows_meta_links_next_cursors_without_a_key() -> None:
    first = with_counts()
    second = {"plans": [first["plans"].pop(1)], "meta": first["meta"]}
    first["meta"] = {"total": 5, "links": {"next": "bmV4dF9fdmNn", "prev": ""}}
    plans = respx.get(PLANS).mock(
        side_effect=[httpx.Response(200, json=first), httpx.Response(200, json=second)]
    )
    respx.get(METAL).mock(return_value=httpx.Response(200, json=load("plans_metal.json")))
    offers = run(Settings())
    assert plans.calls[0].request.url.params["type"] == "all"
    assert "cursor" not in plans.calls[0].request.url.params
    assert plans.calls[1].request.url.params["cursor"] == "bmV4dF9fdmNn"
    assert "Authorization" not in plans.calls[0].request.headers
    # 3 vcg plans (one from page 2) + 2 metal plans x (on-demand, preemptible)
    assert len(offers) == 3 + 4


@respx.mock
def test_endpoint_override_keeps_both_documented_paths() -> None:
    plans = respx.get("http://127.0.0.1:8089/v2/plans").mock(
        return_value=httpx.Response(200, json=load("plans.json"))
    )
    metal = respx.get("http://127.0.0.1:8089/v2/plans-metal").mock(
        return_value=httpx.Response(200, json=load("plans_metal.json"))
    )
    assert len(run(Settings(vultr={"endpoint_url": "http://127.0.0.1:8089"}))) == 4
    assert plans.called and metal.called


@respx.mock
def test_an_api_error_is_one_line_naming_the_provider() -> None:
    respx.get(PLANS).mock(return_value=httpx.Response(400, json={"error": "bad", "status": 400}))
    with pytest.raises(CollectorError, match=r"^vultr: GET .*/v2/plans: HTTP 400"):
        run(Settings())


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"vultr\.enabled"):
        VultrCollector.from_settings(Settings(vultr={"enabled": False}))
