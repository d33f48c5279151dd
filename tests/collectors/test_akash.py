"""Akash collector over recorded ``/v1/gpu-prices`` answers (tests/fixtures/akash/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.akash import AkashCollector, parse_gpu_prices
from collectors.base import CollectorError, NotConfigured, RunContext
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "akash" / "gpu_prices.json"
PATH = "/v1/gpu-prices"


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_gpu_prices(body, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_gpu_model_priced_at_the_cheapest_providers_best_bid() -> None:
    offers, skips = parse(fixture_json(FIXTURE))
    assert skips == []
    by_type = {o.instance_type: o for o in offers}
    assert sorted(by_type) == ["nvidia h100 80Gi SXM5", "nvidia h200 141Gi SXM5"]
    h100 = by_type["nvidia h100 80Gi SXM5"]
    # price.min 2.04 USD per GPU-hour: the cheapest of the 4 providers' best bids
    assert (h100.price_per_hour, h100.currency) == (Decimal("2.04"), "USD")
    assert (h100.pricing, h100.region, h100.gpu_count) == (
        PricingModel.ON_DEMAND,
        "global",
        Decimal(1),
    )
    # ram "80Gi" -> 80 GiB; "h100 SXM5" is the catalog's H100 SXM5 alias
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_memory_gib) == ("H100-SXM", True, Decimal(80))
    assert h100.gpu_raw_name == "h100 SXM5" and h100.interconnect is Interconnect.NVLINK
    # availability 15 of 68 GPUs free -> available
    assert h100.availability is Availability.AVAILABLE
    assert h100.attributes["price_med"] == Decimal("2.56")
    assert h100.attributes["price_weightedAverage"] == Decimal("2.72")
    assert h100.attributes["price_max"] == Decimal("3.16")
    assert (h100.attributes["gpus_total"], h100.attributes["gpus_available"]) == (68, 15)
    assert h100.attributes["providers_total"] == 4
    h200 = by_type["nvidia h200 141Gi SXM5"]
    # price.min 2.24; "h200 SXM5" is no alias, the model "h200" with 141 GiB is the H200
    assert (h200.price_per_hour, h200.gpu_model, h200.gpu_known) == (Decimal("2.24"), "H200", True)
    assert h200.gpu_raw_name == "h200 SXM5"


def test_no_free_gpu_is_unavailable_and_an_unknown_model_is_kept() -> None:
    body = fixture_json(FIXTURE)
    body["models"][0]["availability"]["available"] = 0
    body["models"][1].update(model="mi300x2", ram="192Gi", interface="PCIe")
    offers, _ = parse(body)
    assert offers[0].availability is Availability.UNAVAILABLE
    assert (offers[1].gpu_model, offers[1].gpu_known) == ("mi300x2 PCIe", False)
    assert offers[1].attributes["gpu_unknown_reason"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda m: m.update(price=None), "no_price"),  # the schema's nullable price
        (lambda m: m["price"].update(min=0), "zero_price"),
        (lambda m: m["price"].update(min="2.04"), "malformed_item"),
        (lambda m: m.update(availability={"total": 68}), "malformed_item"),
    ],
)
def test_unpriceable_model_is_a_counted_skip(change: Any, reason: str) -> None:
    body = fixture_json(FIXTURE)
    change(body["models"][0])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert skips[0][1].startswith("nvidia h100 80Gi SXM5: ")
    assert [o.instance_type for o in offers] == ["nvidia h200 141Gi SXM5"]


def test_response_without_models_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^akash: response has no 'models' list$"):
        parse({"availability": {"total": 0, "available": 0}})


def test_endpoint_override_keeps_the_path_and_sends_no_key() -> None:
    replay = Replay({PATH: (200, fixture_json(FIXTURE))})
    with serve(replay) as origin:
        settings = Settings(akash={"endpoint_url": origin})
        offers = list(AkashCollector.from_settings(settings).collect(RunContext(settings=settings)))
    [(method, path, headers)] = replay.calls
    assert (method, path) == ("GET", PATH) and "Authorization" not in headers
    assert len(offers) == 2


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"akash.enabled = false"):
        AkashCollector.from_settings(Settings(akash={"enabled": False}))


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_akash_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay({PATH: (200, copy.deepcopy(fixture_json(FIXTURE)))})
    with serve(replay) as origin:
        env = {"GPU_TRACKER_AKASH__ENDPOINT_URL": origin}
        proc = cli("collect", "--provider", "akash", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {r["instance_type"]: r for r in json.loads(listed.stdout) if r["provider"] == "akash"}
    assert sorted(rows) == ["nvidia h100 80Gi SXM5", "nvidia h200 141Gi SXM5"]
    h100, h200 = rows["nvidia h100 80Gi SXM5"], rows["nvidia h200 141Gi SXM5"]
    assert (h100["currency"], Decimal(str(h100["price_per_hour"]))) == ("USD", Decimal("2.04"))
    assert Decimal(str(h200["price_per_hour"])) == Decimal("2.24")  # price.min of the h200


def test_every_gpu_name_in_the_fixture_resolves_or_is_knowingly_unknown() -> None:
    body = fixture_json(FIXTURE)
    names = sorted(f"{m['model']} {m['interface']}" for m in body["models"])
    assert names == ["h100 SXM5", "h200 SXM5"]  # every spelling the recording holds
    knowingly_unknown: set[str] = set()
    offers, _ = parse(body)
    resolved = {o.gpu_raw_name: (o.gpu_model, o.gpu_known) for o in offers}
    assert resolved == {"h100 SXM5": ("H100-SXM", True), "h200 SXM5": ("H200", True)}
    assert {n for n, (_, known) in resolved.items() if not known} == knowingly_unknown
