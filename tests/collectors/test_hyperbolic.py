"""Hyperbolic collector over nodes of the CLI's recorded marketplace answer
(tests/fixtures/hyperbolic/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.hyperbolic import HyperbolicCollector, aggregate
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "hyperbolic" / "marketplace.json"
URL = "https://api.hyperbolic.xyz/v1/marketplace"
PATH = "/v1/marketplace"
H100, A100 = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
FULL_NODE_SKIP = ("not_rentable", "node antalpha-super-server100132: 0 of 8 GPUs free")


def payload() -> Any:
    return fixture_json(FIXTURE)


def parse(body: Any) -> tuple[dict[str, Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = aggregate(body, lambda r, d: skips.append((r, d)))
    assert {o.region for o in offers} <= {"region-1"}
    return {o.instance_type: o for o in offers}, skips


def test_one_series_per_rentable_count_priced_in_cents_per_gpu_times_count() -> None:
    offers, skips = parse(payload())
    # the RTX 4090 node is reserved with 8 of 8 GPUs rented: no offer, one counted skip
    assert skips == [FULL_NODE_SKIP]
    # H100: sfc-016 has 8 - 2 = 6 free at 99 cents ($0.99/GPU-h), sfc-032 8 free at 150
    # cents ($1.50): counts 1..6 take the cheaper node, 1 x 0.99 = 0.99 ... 6 x 0.99 = 5.94;
    # 7 and 8 only fit sfc-032: 7 x 1.50 = 10.50, 8 x 1.50 = 12.00.
    # A100: 8 free at 100 cents ($1.00): 1 x 1.00 = 1.00 ... 8 x 1.00 = 8.00.
    expected = {
        **{f"{n}x {H100}": Decimal("0.99") * n for n in range(1, 7)},
        f"7x {H100}": Decimal("10.50"),
        f"8x {H100}": Decimal("12.00"),
        **{f"{n}x {A100}": Decimal(n) for n in range(1, 9)},
    }
    assert {k: o.price_per_hour for k, o in offers.items()} == expected
    assert offers[f"2x {H100}"].price_per_hour == Decimal("1.98")  # 2 x 99 cents
    assert offers[f"6x {H100}"].price_per_hour == Decimal("5.94")  # 6 x 99 cents


def test_series_attributes_hardware_and_pricing_model() -> None:
    offers, _ = parse(payload())
    two = offers[f"2x {H100}"]
    assert (two.gpu_model, two.gpu_known, two.gpu_raw_name) == ("H100-SXM", True, H100)
    assert (two.gpu_count, two.currency, two.pricing) == (Decimal(2), "USD", PricingModel.SPOT)
    assert (two.offering_class, two.availability) == ("marketplace", Availability.AVAILABLE)
    assert two.gpu_memory_gib == Decimal("79.6474609375")  # 81559 MiB / 1024
    # two nodes fit 2 GPUs: min(0.99, 1.50) = 0.99; median (0.99 + 1.50) / 2 = 1.245
    assert two.attributes["median_price_per_gpu_hour"] == Decimal("1.245")
    assert two.attributes["offer_count"] == 2
    # the cheapest node's own hardware (sfc-016: 224 vCPUs, 2165 GB RAM, 2400 GB disk)
    assert (two.attributes["node_vcpus"], two.attributes["node_ram_gb"]) == (224, 2165)
    assert (two.attributes["node_storage_gb"], two.attributes["node_gpus"]) == (2400, 8)
    assert offers[f"8x {H100}"].attributes["offer_count"] == 1  # only sfc-032 has 8 free
    a100 = offers[f"1x {A100}"]
    assert (a100.gpu_model, a100.gpu_memory_gib) == ("A100-80GB", Decimal(80))  # 81920 MiB


def test_a_reserved_node_with_free_gpus_is_still_not_rentable() -> None:
    body = payload()
    body["instances"][2]["reserved"] = True  # the A100 node, 0 of 8 GPUs rented
    offers, skips = parse(body)
    assert skips[1] == (
        "not_rentable",
        "node gpu-cluster-luxembourg-2-y7323-249912e8: 8 of 8 GPUs free",
    )
    assert len(offers) == 8  # the H100 series only


def _set(node: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("pricing.price.amount", None, "malformed_item"),
        ("pricing.price.amount", "100", "malformed_item"),
        ("pricing.price.amount", 0, "zero_price"),
        ("pricing.price.period", "monthly", "unsupported_period"),
        ("pricing", {}, "malformed_item"),
        ("location", {}, "no_location"),
        ("gpus_total", None, "malformed_item"),
        ("gpus_reserved", 1.5, "malformed_item"),
        ("gpus_reserved", 8, "not_rentable"),
        ("hardware.gpus", [], "malformed_item"),
        ("hardware", None, "malformed_item"),
    ],
)
def test_unpriceable_node_is_a_counted_skip(path: str, value: Any, reason: str) -> None:
    body = payload()
    _set(body["instances"][2], path, value)
    offers, skips = parse(body)
    assert skips[0] == FULL_NODE_SKIP and [r for r, _ in skips[1:]] == [reason]
    assert skips[1][1].startswith("node gpu-cluster-luxembourg-2-y7323-249912e8: ")
    assert len(offers) == 8  # the H100 nodes still count


def test_a_node_that_is_not_an_object_is_a_counted_skip() -> None:
    body = payload()
    body["instances"].append("sfc-999")
    _, skips = parse(body)
    assert skips[1:] == [("malformed_item", "node without a hardware object")]


def test_response_without_instances_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^hyperbolic: response has no 'instances' list$"):
        parse({"instances": {}})


def test_without_a_key_the_provider_is_not_configured() -> None:
    with pytest.raises(MissingCredentials) as info:
        HyperbolicCollector.from_settings(Settings())
    assert isinstance(info.value, NotConfigured)
    assert str(info.value) == (
        "no API key: set GPU_TRACKER_HYPERBOLIC__API_KEY (or HYPERBOLIC_API_KEY)"
    )
    with pytest.raises(NotConfigured, match=r"hyperbolic.enabled = false"):
        HyperbolicCollector.from_settings(Settings(hyperbolic={"enabled": False, "api_key": "k"}))


@respx.mock
def test_posts_empty_filters_with_the_key_as_bearer_from_the_fallback_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HYPERBOLIC_API_KEY", "hb-key")
    route = respx.post(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    offers = list(
        HyperbolicCollector.from_settings(settings).collect(RunContext(settings=settings))
    )
    request = route.calls[0].request
    assert json.loads(request.content) == {"filters": {}}
    assert request.headers["Authorization"] == "Bearer hb-key" and len(offers) == 16


@respx.mock
def test_key_file_is_read(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("hb-file-key\n")
    route = respx.post(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings(hyperbolic={"api_key_file": key_file})
    list(HyperbolicCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["Authorization"] == "Bearer hb-file-key"


@respx.mock
def test_a_run_without_spot_in_scope_sends_nothing() -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings(hyperbolic={"api_key": "k"})
    ctx = RunContext(settings=settings, pricing_scope=frozenset({PricingModel.ON_DEMAND}))
    assert list(HyperbolicCollector.from_settings(settings).collect(ctx)) == []
    assert not route.called


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PATH: (401, {"detail": "Unauthorized"})})
    with serve(replay) as origin:
        settings = Settings(hyperbolic={"endpoint_url": origin, "api_key": "bad"})
        with pytest.raises(CollectorError) as info:
            list(HyperbolicCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "hyperbolic: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_HYPERBOLIC__API_KEY (or HYPERBOLIC_API_KEY)"
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_hyperbolic_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay({PATH: (200, payload())})
    with serve(replay) as origin:
        env = {"GPU_TRACKER_HYPERBOLIC__ENDPOINT_URL": origin, "HYPERBOLIC_API_KEY": "hb"}
        proc = cli("collect", "--provider", "hyperbolic", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    (method, path, headers), *_ = replay.calls
    assert (method, path, headers["Authorization"]) == ("POST", PATH, "Bearer hb")
    listed = cli("offers", "--provider", "hyperbolic", "--format", "json", "--limit", "50")
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["instance_type"], r["region"], r["pricing"]): Decimal(str(r["price_per_hour"]))
        for r in json.loads(listed.stdout)
    }
    # the same hand-worked figures: H100 n x $0.99 for n <= 6, then n x $1.50; A100 n x $1.00
    assert rows == {
        **{(f"{n}x {H100}", "region-1", "spot"): Decimal("0.99") * n for n in range(1, 7)},
        (f"7x {H100}", "region-1", "spot"): Decimal("10.5"),
        (f"8x {H100}", "region-1", "spot"): Decimal("12"),
        **{(f"{n}x {A100}", "region-1", "spot"): Decimal(n) for n in range(1, 9)},
    }
