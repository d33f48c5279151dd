"""Thunder Compute collector over its CLI's pricing data (tests/fixtures/thundercompute/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.thundercompute import ThunderComputeCollector, parse_pricing
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "thundercompute" / "pricing.json"
PATH = "/v1/pricing"


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_pricing(body, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_gpu_shape_key_priced_for_the_whole_shape() -> None:
    offers, skips = parse(fixture_json(FIXTURE))
    assert skips == []
    got = {o.instance_type: (o.price_per_hour, o.gpu_count) for o in offers}
    assert got == {  # the table's rates verbatim; additional_vcpus and disk_gb are no shapes
        "a6000_x1": (Decimal("0.50"), Decimal(1)),
        "a100xl_x1": (Decimal("1.10"), Decimal(1)),
        "a100xl_x2": (Decimal("2.20"), Decimal(2)),
        "h100_x1": (Decimal("2.49"), Decimal(1)),
        "h100_x2": (Decimal("4.98"), Decimal(2)),  # 2 x 2.49: both GPUs, not one
    }
    h100 = next(o for o in offers if o.instance_type == "h100_x2")
    assert (h100.currency, h100.region, h100.pricing) == ("USD", "global", PricingModel.ON_DEMAND)
    assert h100.availability is Availability.UNKNOWN  # the table says nothing of capacity
    # the add-on rates ride on every offer: 0.03 per extra vCPU-hour, 0.0001 per extra GB-hour
    assert h100.attributes["additional_vcpu_per_hour"] == Decimal("0.03")
    assert h100.attributes["extra_disk_gb_per_hour"] == Decimal("0.0001")


def test_every_gpu_name_in_the_fixture_resolves_or_is_knowingly_unknown() -> None:
    offers, _ = parse(fixture_json(FIXTURE))
    resolved = {o.gpu_raw_name: (o.gpu_model, o.gpu_known) for o in offers}
    assert sorted(resolved) == ["a100xl", "a6000", "h100"]  # every spelling the table holds
    assert resolved["a6000"] == ("RTX-A6000", True)
    assert resolved["h100"] == ("H100-SXM", True)  # the catalog's default for a bare H100
    knowingly_unknown = {"a100xl"}  # no recorded memory size tells the 40 GB and 80 GB apart
    assert {n for n, (_, known) in resolved.items() if not known} == knowingly_unknown
    a100 = next(o for o in offers if o.gpu_raw_name == "a100xl")
    assert a100.gpu_model == "a100xl" and a100.attributes["gpu_unknown_reason"]


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("h200_x1", 0, "zero_price"),
        ("h200_x1", "3.49", "malformed_item"),
        ("h200", 3.49, "malformed_item"),  # not <gpu>_x<count>
    ],
)
def test_unpriceable_rate_is_a_counted_skip(key: str, value: Any, reason: str) -> None:
    body = fixture_json(FIXTURE)
    body["pricing"][key] = value
    offers, skips = parse(body)
    assert [(r, d.split(":", 1)[0]) for r, d in skips] == [(reason, key)]
    assert len(offers) == 5  # the recorded shapes still count


def test_response_without_the_table_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^thundercompute: response has no 'pricing' table$"):
        parse({"specs": {}})


def test_override_keeps_the_path_and_a_key_is_optional_and_sent_as_bearer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        for key in ("", "tnr-key"):
            settings = Settings(thundercompute={"endpoint_url": origin, "api_key": key or None})
            collector = ThunderComputeCollector.from_settings(settings)
            assert len(list(collector.collect(RunContext(settings=settings)))) == 5
    (m1, p1, h1), (m2, p2, h2) = replay.calls
    assert (m1, p1, m2, p2) == ("GET", PATH, "GET", PATH)
    assert "Authorization" not in h1 and h2["Authorization"] == "Bearer tnr-key"


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PATH: (401, {"message": "authentication failed"})})
    with serve(replay) as origin:
        settings = Settings(thundercompute={"endpoint_url": origin, "api_key": "bad"})
        with pytest.raises(CollectorError) as info:
            list(
                ThunderComputeCollector.from_settings(settings).collect(
                    RunContext(settings=settings)
                )
            )
    assert str(info.value) == (
        "thundercompute: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_THUNDERCOMPUTE__API_KEY"
    )


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"thundercompute.enabled = false"):
        ThunderComputeCollector.from_settings(Settings(thundercompute={"enabled": False}))


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_thundercompute_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        env = {"GPU_TRACKER_THUNDERCOMPUTE__ENDPOINT_URL": origin}
        proc = cli("collect", "--provider", "thundercompute", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {
        r["instance_type"]: r
        for r in json.loads(listed.stdout)
        if r["provider"] == "thundercompute"
    }
    assert sorted(rows) == ["a100xl_x1", "a100xl_x2", "a6000_x1", "h100_x1", "h100_x2"]
    h100 = rows["h100_x2"]
    assert (h100["currency"], Decimal(str(h100["price_per_hour"]))) == ("USD", Decimal("4.98"))
    assert Decimal(str(rows["a6000_x1"]["price_per_hour"])) == Decimal("0.5")  # rate 0.50
