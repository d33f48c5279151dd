"""SaladCloud collector over a recorded ``gpu-classes`` answer (tests/fixtures/salad/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.salad import SaladCollector, parse_gpu_classes
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "salad" / "gpu_classes.json"
PATH = "/api/public/organizations/my-org/gpu-classes"


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_gpu_classes(body, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_class_and_priority_at_its_gpu_hour_price() -> None:
    offers, skips = parse(fixture_json(FIXTURE))
    assert skips == []
    got = {(o.instance_type, o.offering_class): o.price_per_hour for o in offers}
    assert got == {  # the decimal strings verbatim, USD per GPU-hour
        ("RTX 3060 (12 GB)", "high"): Decimal("0.08"),
        ("RTX 3060 (12 GB)", "medium"): Decimal("0.067"),
        ("RTX 3060 (12 GB)", "low"): Decimal("0.053"),
        ("RTX 3060 (12 GB)", "batch"): Decimal("0.04"),
        ("RTX 4090 (24 GB)", "high"): Decimal("0.30"),
        ("RTX 4090 (24 GB)", "batch"): Decimal("0.16"),
    }
    batch = next(o for o in offers if o.offering_class == "batch" and "4090" in o.instance_type)
    assert (batch.currency, batch.region, batch.pricing) == (
        "USD",
        "global",
        PricingModel.ON_DEMAND,
    )
    assert batch.gpu_count == Decimal(1)
    assert batch.attributes["gpu_class_id"] == "ed563892-aacd-40f5-80b7-90c9be6c759b"
    assert batch.attributes["gpu_class_type"] == "community"
    # no is_high_demand (4090) or false (3060): the list says nothing of capacity
    assert {o.availability for o in offers} == {Availability.UNKNOWN}


def test_a_class_in_high_demand_is_low_availability() -> None:
    body = fixture_json(FIXTURE)
    body["items"][1]["is_high_demand"] = True
    offers, _ = parse(body)
    low = {o.offering_class for o in offers if o.availability is Availability.LOW}
    assert low == {"high", "batch"} and all(
        "4090" in o.instance_type for o in offers if o.availability is Availability.LOW
    )


def test_every_gpu_name_in_the_fixture_resolves_or_is_knowingly_unknown() -> None:
    offers, _ = parse(fixture_json(FIXTURE))
    resolved = {o.gpu_raw_name: (o.gpu_model, o.gpu_known) for o in offers}
    assert sorted(resolved) == ["RTX 3060 (12 GB)", "RTX 4090 (24 GB)"]
    assert resolved["RTX 4090 (24 GB)"] == ("RTX-4090", True)
    knowingly_unknown = {"RTX 3060 (12 GB)"}  # the catalog has no RTX 3060 entry
    assert {n for n, (_, known) in resolved.items() if not known} == knowingly_unknown


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda p: p.pop("price"), "no_price"),
        (lambda p: p.update(price="0"), "zero_price"),
        (lambda p: p.update(price=0.08), "malformed_item"),  # a number, not a decimal string
        (lambda p: p.update(priority=""), "malformed_item"),
    ],
)
def test_unpriceable_priority_is_a_counted_skip(change: Any, reason: str) -> None:
    body = fixture_json(FIXTURE)
    change(body["items"][0]["prices"][0])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason] and skips[0][1].startswith("RTX 3060 (12 GB): ")
    assert len(offers) == 5  # the other priorities and classes still count


def test_response_without_items_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^salad: response has no 'items' list$"):
        parse([])


def test_missing_key_or_organization_skips_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SALAD_API_KEY", raising=False)
    with pytest.raises(
        MissingCredentials, match=r"no API key: set GPU_TRACKER_SALAD__API_KEY \(or SALAD_API_KEY\)"
    ):
        SaladCollector.from_settings(Settings(salad={"organization": "my-org"}))
    monkeypatch.setenv("SALAD_API_KEY", "env-key")
    with pytest.raises(
        MissingCredentials, match=r"no organization: set GPU_TRACKER_SALAD__ORGANIZATION"
    ):
        SaladCollector.from_settings(Settings())
    collector = SaladCollector.from_settings(Settings(salad={"organization": "my-org"}))
    assert (collector._api_key, collector.organization) == ("env-key", "my-org")


def test_key_goes_in_salad_api_key_and_the_override_keeps_the_path() -> None:
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        settings = Settings(
            salad={"endpoint_url": origin, "api_key": "k-1", "organization": "my-org"}
        )
        offers = list(SaladCollector.from_settings(settings).collect(RunContext(settings=settings)))
    [(method, path, headers)] = replay.calls
    assert (method, path, headers["Salad-Api-Key"]) == ("GET", PATH, "k-1")
    assert "Authorization" not in headers and len(offers) == 6


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PATH: (401, {"title": "Unauthorized", "status": 401})})
    with serve(replay) as origin:
        settings = Settings(
            salad={"endpoint_url": origin, "api_key": "bad", "organization": "my-org"}
        )
        with pytest.raises(CollectorError) as info:
            list(SaladCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "salad: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_SALAD__API_KEY (or SALAD_API_KEY)"
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_salad_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        env = {
            "GPU_TRACKER_SALAD__ENDPOINT_URL": origin,
            "GPU_TRACKER_SALAD__ORGANIZATION": "my-org",
            "SALAD_API_KEY": "secret-salad-key",
        }
        proc = cli("collect", "--provider", "salad", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert "secret-salad-key" not in proc.stdout + proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["instance_type"], r["offering_class"]): r
        for r in json.loads(listed.stdout)
        if r["provider"] == "salad"
    }
    assert len(rows) == 6  # 4 priorities of the 3060 + 2 of the 4090
    batch = rows[("RTX 4090 (24 GB)", "batch")]
    assert (batch["currency"], Decimal(str(batch["price_per_hour"]))) == ("USD", Decimal("0.16"))
    assert Decimal(str(rows[("RTX 3060 (12 GB)", "medium")]["price_per_hour"])) == Decimal("0.067")
