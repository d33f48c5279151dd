"""IBM Cloud Global Catalog collector over its fixtures (tests/fixtures/ibm/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, NotConfigured, RunContext, SkipItem
from collectors.ibm import IbmCollector
from collectors.ibm_parse import Profile, parse_prices, parse_profile
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ibm"
H100_PLAN = "99548819-fcbc-486c-8eeb-0355a56b035e"
L4_PLAN = "4f2d6c1e-8b3a-4c7e-9a51-2d0e7b6f3c18"
LIST_PATH = "/api/v1"


def profiles() -> Any:
    return fixture_json(FIXTURES / "profiles.json")


def pricing(plan: str) -> Any:
    return fixture_json(FIXTURES / f"pricing_{plan}.json")


def entry(name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in profiles()["resources"] if e["name"] == name)
    return found


def replay(**overrides: tuple[int, Any]) -> Replay:
    answers = {
        LIST_PATH: (200, profiles()),
        f"{LIST_PATH}/{H100_PLAN}/pricing/deployment": (200, pricing(H100_PLAN)),
        f"{LIST_PATH}/{L4_PLAN}/pricing/deployment": (200, pricing(L4_PLAN)),
    }
    return Replay({**answers, **{path: answer for path, answer in overrides.items()}})


def priced(profile: Profile, plan: str, body: Any = None) -> tuple[list[Offer], list[Any]]:
    skips: list[tuple[str, str]] = []
    deployments = (body if body is not None else pricing(plan))["resources"]
    return parse_prices(profile, deployments, lambda r, d: skips.append((r, d))), skips


def h100() -> Profile:
    profile = parse_profile(entry("gx3d-160x1792x8h100"))
    assert profile is not None
    return profile


def test_a_flat_rate_gpu_profile_reads_its_plan_and_shape_from_entry_and_name() -> None:
    assert h100() == Profile(
        name="gx3d-160x1792x8h100",
        plan=H100_PLAN,
        gpu="h100",
        gpu_count=Decimal(8),  # "...x8h100": eight H100s, IBM's "h100 / 8"
        vcpus=Decimal(160),
        memory_gib=Decimal(1792),
    )


def test_cpu_profiles_and_other_kinds_are_no_gpu_offers_and_not_counted() -> None:
    assert parse_profile(entry("bx2-2x8")) is None  # two segments: no GPU in the name
    assert parse_profile(entry("is.instance")) is None  # kind "service"
    for field, value in (("active", False), ("disabled", True)):
        body = entry("gx3-16x80x1l4")
        body[field] = value
        assert parse_profile(body) is None  # withdrawn from sale: not an offer


def test_a_gen2_profile_billed_by_composite_meters_is_a_counted_skip() -> None:
    with pytest.raises(SkipItem) as info:
        parse_profile(entry("gx2-8x64x1v100"))
    assert (info.value.reason, info.value.detail) == (
        "composite_price",
        "billed as a sum of meters (GPU, GPU_CARD, MEMORY, PROFILE, VCPU)",
    )


def test_a_profile_without_one_multi_tenant_deployment_is_malformed() -> None:
    body = entry("gx3-16x80x1l4")
    measures = body["metadata"]["other"]["profile"]["measures"]
    measures[0]["deployments"][0]["type"] = "dedicated-host"
    with pytest.raises(SkipItem, match="0 multi-tenant instance deployments") as info:
        parse_profile(body)
    assert info.value.reason == "malformed_item"


def test_one_on_demand_offer_per_region_at_the_usa_usd_instance_hour_price() -> None:
    offers, skips = priced(h100(), H100_PLAN)
    assert skips == []
    by_region = {o.region: o for o in offers}
    assert sorted(by_region) == ["eu-de", "us-east"]
    eu = by_region["eu-de"]
    # part-is.instance-hours-gx3d-160x1792x8h100, USA/USD, tier 1: 99.6 for the whole
    # instance (all eight GPUs): 99.6 / 8 = 12.45 per GPU-hour, as the collector SOURCES cite
    assert (eu.price_per_hour, eu.currency, eu.pricing) == (
        Decimal("99.6"),
        "USD",
        PricingModel.ON_DEMAND,
    )
    assert eu.price_per_hour / eu.gpu_count == Decimal("12.45")
    assert (eu.gpu_model, eu.gpu_raw_name, eu.gpu_count, eu.gpu_memory_gib) == (
        "H100-SXM",
        "h100",
        Decimal(8),
        Decimal(80),
    )
    assert (eu.vcpus, eu.memory_gib, eu.availability) == (
        Decimal(160),
        Decimal(1792),
        Availability.UNKNOWN,
    )
    assert eu.attributes["plan_id"] == H100_PLAN
    assert eu.attributes["effective_from"] == "2026-10-01T00:00:00Z"
    assert by_region["us-east"].price_per_hour == Decimal("95.2")  # the spot 23.8 is not read


def _metric(body: Any, region: str) -> dict[str, Any]:
    deployment = next(d for d in body["resources"] if d["deployment_region"] == region)
    found: dict[str, Any] = deployment["metrics"][0]
    return found


def _usd(*tiers: tuple[int, int]) -> list[dict[str, Any]]:
    prices = [{"quantity_tier": tier, "price": price} for tier, price in tiers]
    return [{"country": "USA", "currency": "USD", "prices": prices}]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("charge_unit_name", "VCPU_HOURS", "non_hourly_metric"),
        ("charge_unit_quantity", 100, "non_hourly_metric"),  # per 100 hours: never rescaled
        ("tier_model", "block_tier", "non_hourly_metric"),
        ("amounts", [{"country": "DEU", "currency": "EUR", "prices": []}], "no_usd_price"),
        ("amounts", _usd((1, 0)), "zero_price"),
        ("amounts", _usd((1, 2), (730, 1)), "non_hourly_metric"),  # two tiers: no one rate
    ],
)
def test_a_metric_that_is_not_one_instance_hour_in_usd_is_a_counted_skip(
    field: str, value: Any, reason: str
) -> None:
    body = pricing(H100_PLAN)
    _metric(body, "us-east")[field] = value
    offers, skips = priced(h100(), H100_PLAN, body)
    assert [o.region for o in offers] == ["eu-de"]  # the other region still counts
    assert [(r, d.split(":")[0:2]) for r, d in skips] == [
        (reason, ["gx3d-160x1792x8h100", " us-east"])
    ]


def test_a_region_without_the_profile_metric_or_priced_twice_is_a_counted_skip() -> None:
    body = pricing(H100_PLAN)
    body["resources"][1]["metrics"] = body["resources"][1]["metrics"][1:]  # spot only
    body["resources"].append(copy.deepcopy(body["resources"][0]))  # eu-de again
    offers, skips = priced(h100(), H100_PLAN, body)
    assert [o.region for o in offers] == ["eu-de"]
    assert [r for r, _ in skips] == ["malformed_item", "duplicate_region"]


def test_every_gpu_name_in_the_fixtures_resolves() -> None:
    names = {}
    for raw in profiles()["resources"]:
        try:
            profile = parse_profile(raw)
        except SkipItem:
            continue
        if profile is not None:
            plan = L4_PLAN if profile.gpu == "l4" else H100_PLAN
            offers, _ = priced(profile, plan)
            names.update({o.gpu_raw_name: (o.gpu_model, o.gpu_known) for o in offers})
    assert names == {"h100": ("H100-SXM", True), "l4": ("L4", True)}


def collector(origin: str) -> tuple[IbmCollector, RunContext]:
    settings = Settings(ibm={"endpoint_url": origin})
    return IbmCollector.from_settings(settings), RunContext(settings=settings)


def test_collect_pages_the_list_then_each_flat_plan_and_counts_the_gen2_profile() -> None:
    replayed = replay()
    with serve(replayed) as origin:
        ibm, ctx = collector(origin)
        offers = list(ibm.collect(ctx))
    got = sorted((o.instance_type, o.region, o.price_per_hour) for o in offers)
    assert got == [
        ("gx3-16x80x1l4", "eu-de", Decimal("1.31")),
        ("gx3-16x80x1l4", "us-south", Decimal("1.1945")),
        ("gx3d-160x1792x8h100", "eu-de", Decimal("99.6")),
        ("gx3d-160x1792x8h100", "us-east", Decimal("95.2")),
    ]
    assert dict(ctx.skips) == {"composite_price": 1}  # gx2-8x64x1v100
    first = replayed.calls[0][1]
    assert first.startswith(f"{LIST_PATH}?") and "q=is.instance" in first
    assert "include=metadata" in first and "_offset=0" in first and "_limit=200" in first
    assert "Authorization" not in replayed.calls[0][2]  # list prices need no key
    assert len(replayed.calls) == 3  # the gen2 plan is never asked for


def test_profiles_sharing_a_plan_ask_for_its_prices_once() -> None:
    # the L4 profile pointed at the H100's plan: one request for that plan, none for L4's
    shared = json.loads(json.dumps(profiles()).replace(L4_PLAN, H100_PLAN))
    replayed = replay(**{LIST_PATH: (200, shared)})
    with serve(replayed) as origin:
        ibm, ctx = collector(origin)
        offers = list(ibm.collect(ctx))
    asked = [call[1].split("?")[0] for call in replayed.calls[1:]]
    assert asked == [f"{LIST_PATH}/{H100_PLAN}/pricing/deployment"]
    # the H100's two regions; the plan holds no L4 metric, so L4 gets no offer
    assert sorted(o.instance_type for o in offers) == ["gx3d-160x1792x8h100"] * 2


def test_an_unpublished_plan_is_a_counted_skip_and_no_price_at_all_fails() -> None:
    with serve(replay(**{f"{LIST_PATH}/{L4_PLAN}/pricing/deployment": (404, {})})) as origin:
        ibm, ctx = collector(origin)
        assert len(list(ibm.collect(ctx))) == 2
    assert dict(ctx.skips) == {"composite_price": 1, "no_pricing": 1}
    empty = {"resources": [], "resource_count": 0}
    answers = {f"{LIST_PATH}/{p}/pricing/deployment": (200, empty) for p in (H100_PLAN, L4_PLAN)}
    with serve(replay(**answers)) as origin:
        ibm, ctx = collector(origin)
        with pytest.raises(CollectorError, match=r"^ibm: no price read for any of 2 GPU"):
            list(ibm.collect(ctx))


def test_an_answer_without_resources_fails_the_run_and_a_5xx_is_not_a_skip() -> None:
    with serve(replay(**{LIST_PATH: (200, {"error": "?"})})) as origin:
        ibm, ctx = collector(origin)
        with pytest.raises(CollectorError, match=r"answered no 'resources' list$"):
            list(ibm.collect(ctx))
    settings = {"max_retries": 0}
    with serve(replay(**{f"{LIST_PATH}/{L4_PLAN}/pricing/deployment": (500, {})})) as origin:
        s = Settings(ibm={"endpoint_url": origin}, http=settings)
        with pytest.raises(CollectorError, match=r"^ibm: "):
            list(IbmCollector.from_settings(s).collect(RunContext(settings=s)))


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"ibm.enabled = false"):
        IbmCollector.from_settings(Settings(ibm={"enabled": False}))


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_ibm_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    with serve(replay()) as origin:
        proc = cli(
            "collect", "--provider", "ibm", extra_env={"GPU_TRACKER_IBM__ENDPOINT_URL": origin}
        )
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["instance_type"], r["region"]): r
        for r in json.loads(listed.stdout)
        if r["provider"] == "ibm"
    }
    assert sorted(rows) == [
        ("gx3-16x80x1l4", "eu-de"),
        ("gx3-16x80x1l4", "us-south"),
        ("gx3d-160x1792x8h100", "eu-de"),
        ("gx3d-160x1792x8h100", "us-east"),
    ]
    h100 = rows[("gx3d-160x1792x8h100", "eu-de")]
    assert (h100["currency"], Decimal(str(h100["price_per_hour"]))) == ("USD", Decimal("99.6"))
    assert h100["gpu_model"] == "H100-SXM" and Decimal(str(h100["gpu_count"])) == 8
    l4 = rows[("gx3-16x80x1l4", "us-south")]  # 1.1945 USD an hour for one L4 (16 vCPU, 80 GiB)
    assert Decimal(str(l4["price_per_hour"])) == Decimal("1.1945") and l4["gpu_model"] == "L4"
