"""Shadeform collector over the documented instance-type example (tests/fixtures/shadeform)."""

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
from collectors.shadeform import DOCUMENTED_URL, ShadeformCollector, parse_instance_types
from tests.cli.recorded_server import serve_recorded
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "shadeform" / "instance_types.json"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_instance_types(body, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_listed_region_priced_in_cents_per_instance() -> None:
    offers, skips = parse(payload())
    by_region = {o.region: o for o in offers}
    assert set(by_region) == {"na-us-bos-1", "na-us-bos-2"} and skips == []
    bos1 = by_region["na-us-bos-1"]
    # hourly_price 210 cents -> $2.10 per hour for the whole 1-GPU instance
    assert (bos1.price_per_hour, bos1.currency) == (Decimal("2.10"), "USD")
    assert bos1.pricing is PricingModel.ON_DEMAND
    assert (bos1.provider, bos1.instance_type) == ("shadeform", "tensordock/A100")
    assert bos1.attributes["underlying_cloud"] == "tensordock"
    assert bos1.attributes["cloud_instance_type"] == "A100_PCIE_40GB"
    assert (bos1.gpu_count, bos1.vcpus, bos1.memory_gib) == (Decimal(1), Decimal(6), Decimal(12))
    assert bos1.interconnect is Interconnect.PCIE
    assert bos1.availability is Availability.AVAILABLE
    assert by_region["na-us-bos-2"].availability is Availability.UNAVAILABLE


def test_documented_a100_with_48_gb_is_kept_as_an_unknown_gpu() -> None:
    # the OpenAPI example pairs "A100" with 48 GB per GPU: no A100 has 48 GB
    offer = parse(payload())[0][0]
    assert (offer.gpu_model, offer.gpu_known, offer.gpu_raw_name) == ("A100", False, "A100")
    assert "48" in str(offer.attributes["gpu_unknown_reason"])


def test_eight_gpu_type_on_another_cloud_is_its_own_offer() -> None:
    body = payload()
    eight = copy.deepcopy(body["instance_types"][0])
    eight.update(cloud="hyperstack", shade_instance_type="A100_80Gx8", hourly_price=1432)
    eight["configuration"].update(num_gpus=8, gpu_type="A100_80G", vram_per_gpu_in_gb=80)
    eight["configuration"]["nvlink"] = True
    body["instance_types"].append(eight)
    offers, _ = parse(body)
    hyper = [o for o in offers if o.instance_type == "hyperstack/A100_80Gx8"]
    assert len(hyper) == 2
    # 1432 cents = $14.32 for the 8-GPU instance ($1.79 per GPU-hour x 8)
    assert hyper[0].price_per_hour == Decimal("14.32")
    assert (hyper[0].gpu_model, hyper[0].gpu_known) == ("A100-80GB", True)
    assert hyper[0].interconnect is Interconnect.NVLINK


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda t: t.update(hourly_price=2.1), "malformed_item"),
        (lambda t: t.update(hourly_price=0), "zero_price"),
        (lambda t: t.update(availability=[]), "malformed_item"),
        (lambda t: t["configuration"].pop("gpu_type"), "malformed_item"),
        (lambda t: t.pop("configuration"), "malformed_item"),
    ],
)
def test_unpriceable_type_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["instance_types"][0])
    offers, skips = parse(body)
    assert offers == [] and [r for r, _ in skips] == [reason]


def test_cpu_only_type_is_no_offer() -> None:
    body = payload()
    body["instance_types"][0]["configuration"]["num_gpus"] = 0
    assert parse(body) == ([], [])


def test_answer_without_the_list_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no instance_types list"):
        parse({"code": "string", "message": "string"})


@respx.mock
def test_key_goes_in_x_api_key_and_a_refusal_names_the_setting() -> None:
    route = respx.get(DOCUMENTED_URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    assert len(list(ShadeformCollector(settings, "sf").collect(RunContext(settings=settings)))) == 2
    assert route.calls[0].request.headers["X-API-KEY"] == "sf"
    route.mock(return_value=httpx.Response(401, json={"code": "string", "message": "string"}))
    with pytest.raises(CollectorError) as info:
        list(ShadeformCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "shadeform: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_SHADEFORM__API_KEY (or SHADEFORM_API_KEY)"
    )


def test_missing_key_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHADEFORM_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        ShadeformCollector.from_settings(Settings())
    assert str(info.value) == (
        "no API key: set GPU_TRACKER_SHADEFORM__API_KEY (or SHADEFORM_API_KEY)"
    )


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_shadeform_into_the_store(cli: Run) -> None:
    routes = {("GET", "/v1/instances/types"): FIXTURE.read_bytes()}
    with serve_recorded(routes) as url:
        env = {"GPU_TRACKER_SHADEFORM__ENDPOINT_URL": url, "SHADEFORM_API_KEY": "sf-key"}
        proc = cli("collect", "--provider", "shadeform", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--provider", "shadeform", "--format", "json", "--limit", "50")
    assert listed.returncode == 0, listed.stderr
    rows = {(r["instance_type"], r["region"]): r for r in json.loads(listed.stdout)}
    # 210 cents -> 2.10 USD in both listed regions (one available, one not)
    assert {k: Decimal(str(r["price_per_hour"])) for k, r in rows.items()} == {
        ("tensordock/A100", "na-us-bos-1"): Decimal("2.10"),
        ("tensordock/A100", "na-us-bos-2"): Decimal("2.10"),
    }
    assert {r["currency"] for r in rows.values()} == {"USD"}
