"""Fluidstack collector over its documented example (tests/fixtures/fluidstack/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.fluidstack import FluidstackCollector, parse_configurations
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = (
    Path(__file__).parent.parent / "fixtures" / "fluidstack" / "list_available_configurations.json"
)
PATH = "/list_available_configurations"


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_configurations(body, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_gpu_count_and_region_priced_per_gpu_times_count() -> None:
    offers, skips = parse(fixture_json(FIXTURE))
    assert skips == []
    got = {(o.instance_type, o.region): (o.price_per_hour, o.gpu_count) for o in offers}
    assert got == {  # price_per_gpu_hr "5" x the count, per listed region
        ("RTX_A5000_24GB::1", "NORWAY"): (Decimal(5), Decimal(1)),
        ("RTX_A5000_24GB::2", "NORWAY"): (Decimal(10), Decimal(2)),  # 5 x 2
        ("RTX_A5000_24GB::4", "NORWAY"): (Decimal(20), Decimal(4)),  # 5 x 4
        ("RTX_A5000_24GB::8", "NORWAY"): (Decimal(40), Decimal(8)),  # 5 x 8
        ("H100_PCIE_80GB::1", "CANADA"): (Decimal(5), Decimal(1)),
        ("H100_PCIE_80GB::8", "CANADA"): (Decimal(40), Decimal(8)),  # 5 x 8
    }
    h100 = next(o for o in offers if o.instance_type == "H100_PCIE_80GB::8")
    assert (h100.currency, h100.pricing) == ("USD", PricingModel.ON_DEMAND)
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_raw_name) == (
        "H100-PCIE",
        True,
        "H100_PCIE_80GB",
    )
    assert h100.gpu_memory_gib == Decimal(80)  # the name's _80GB
    assert h100.interconnect is Interconnect.PCIE
    assert h100.availability is Availability.UNKNOWN  # the list says nothing of capacity
    assert h100.attributes["price_per_gpu_hour"] == Decimal(5)
    assert h100.attributes["estimated_provisioning_minutes"] == 5


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("price_per_gpu_hr", None, "no_price"),
        ("price_per_gpu_hr", "0", "zero_price"),
        ("price_per_gpu_hr", "five", "malformed_item"),
        ("gpu_counts", [], "malformed_item"),
        ("gpu_counts", [1, "8"], "malformed_item"),
        ("regions", ["CANADA", ""], "malformed_item"),
    ],
)
def test_unpriceable_configuration_is_a_counted_skip(field: str, value: Any, reason: str) -> None:
    body = fixture_json(FIXTURE)
    body[1][field] = value
    offers, skips = parse(body)
    assert [(r, d.split(":", 1)[0]) for r, d in skips] == [(reason, "H100_PCIE_80GB")]
    assert len(offers) == 4  # the RTX A5000 configuration still counts


def test_response_that_is_not_a_list_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^fluidstack: response is not a list"):
        parse({"error": "unauthorized"})


def test_missing_key_skips_with_one_line() -> None:
    with pytest.raises(MissingCredentials) as info:
        FluidstackCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_FLUIDSTACK__API_KEY"


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"fluidstack.enabled = false"):
        FluidstackCollector.from_settings(Settings(fluidstack={"enabled": False}))


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PATH: (401, {"error": "Invalid API key"})})
    with serve(replay) as origin:
        settings = Settings(fluidstack={"endpoint_url": origin, "api_key": "bad"})
        with pytest.raises(CollectorError) as info:
            list(FluidstackCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "fluidstack: the API key was refused (HTTP 401); check GPU_TRACKER_FLUIDSTACK__API_KEY"
    )


def test_override_keeps_the_path_and_sends_the_key_in_api_key() -> None:
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        settings = Settings(fluidstack={"endpoint_url": origin, "api_key": "fs-key"})
        offers = list(
            FluidstackCollector.from_settings(settings).collect(RunContext(settings=settings))
        )
    assert len(offers) == 6
    ((method, path, headers),) = replay.calls
    assert (method, path, headers["api-key"]) == ("GET", PATH, "fs-key")


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_fluidstack_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        env = {
            "GPU_TRACKER_FLUIDSTACK__ENDPOINT_URL": origin,
            "GPU_TRACKER_FLUIDSTACK__API_KEY": "fs-key",
        }
        proc = cli("collect", "--provider", "fluidstack", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["instance_type"], r["region"]): r
        for r in json.loads(listed.stdout)
        if r["provider"] == "fluidstack"
    }
    assert len(rows) == 6
    eight = rows[("H100_PCIE_80GB::8", "CANADA")]
    assert (eight["currency"], Decimal(str(eight["price_per_hour"]))) == ("USD", Decimal(40))
    two = rows[("RTX_A5000_24GB::2", "NORWAY")]
    assert Decimal(str(two["price_per_hour"])) == Decimal(10)  # 5 x 2
