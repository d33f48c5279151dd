"""RunPod collector over the SDK docs example (tests/fixtures/runpod/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, RunContext
from collectors.runpod import GPU_TYPES_QUERY, RunPodCollector, parse_gpu_types
from tracker.models import PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "runpod"
URL = "https://api.runpod.io/graphql"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT


def load(name: str = "gpuTypes_sdk_docs_example.json") -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(
    body: Any, scope: frozenset[PricingModel] = frozenset(PricingModel)
) -> tuple[dict[tuple[str, str, str], Decimal], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_gpu_types(body, lambda r, d: skips.append((r, d)), scope)
    keyed = {(o.instance_type, o.pricing.value, o.offering_class): o.price_per_hour for o in offers}
    assert len(keyed) == len(offers), "two offers share one identity"
    return keyed, skips


def test_secure_community_and_spot_are_kept_apart_per_gpu_times_count() -> None:
    offers, skips = parse(load())
    pcie = "NVIDIA A100 80GB PCIe"
    # securePrice 1.89 per GPU: x1, x2, x4, x8 (maxGpuCount 8)
    assert offers[(f"1x {pcie}", "on_demand", "secure")] == Decimal("1.89")
    assert offers[(f"2x {pcie}", "on_demand", "secure")] == Decimal("3.78")
    assert offers[(f"4x {pcie}", "on_demand", "secure")] == Decimal("7.56")
    assert offers[(f"8x {pcie}", "on_demand", "secure")] == Decimal("15.12")
    # communityPrice 1.59 per GPU
    assert offers[(f"1x {pcie}", "on_demand", "community")] == Decimal("1.59")
    assert offers[(f"8x {pcie}", "on_demand", "community")] == Decimal("12.72")
    # communitySpotPrice 0.89 per GPU -> spot, community
    assert offers[(f"1x {pcie}", "spot", "community")] == Decimal("0.89")
    assert offers[(f"4x {pcie}", "spot", "community")] == Decimal("3.56")
    # secureSpotPrice null -> no secure spot offer (absence is normal, not a skip)
    assert not [k for k in offers if k[0].endswith(pcie) and k[1:] == ("spot", "secure")]
    assert skips == []


def test_zero_price_means_not_offered_and_counts_stop_at_max() -> None:
    offers, _ = parse(load())
    sxm = "NVIDIA A100-SXM4-80GB"
    mine = {k: v for k, v in offers.items() if k[0].endswith(sxm)}
    # maxGpuCount 4 -> counts 1, 2, 4; communityPrice 0 and communitySpotPrice 0 -> nothing
    assert mine == {
        (f"1x {sxm}", "on_demand", "secure"): Decimal("2.39"),
        (f"2x {sxm}", "on_demand", "secure"): Decimal("4.78"),  # 2.39 x 2
        (f"4x {sxm}", "on_demand", "secure"): Decimal("9.56"),  # 2.39 x 4
        (f"1x {sxm}", "spot", "secure"): Decimal("1.49"),
        (f"2x {sxm}", "spot", "secure"): Decimal("2.98"),  # 1.49 x 2
        (f"4x {sxm}", "spot", "secure"): Decimal("5.96"),  # 1.49 x 4
    }
    # 4 counts x (secure, community, community spot) + 3 counts x (secure, secure spot)
    assert len(offers) == 12 + 6


def test_offer_hardware_resolves_through_the_catalog() -> None:
    skips: list[tuple[str, str]] = []
    offers = parse_gpu_types(load(), lambda r, d: skips.append((r, d)))
    eight = next(o for o in offers if o.instance_type == "8x NVIDIA A100 80GB PCIe")
    assert (eight.gpu_model, eight.gpu_known, eight.gpu_count) == ("A100-80GB-PCIE", True, 8)
    assert eight.gpu_memory_gib == 80 and eight.region == "global"
    assert eight.attributes["price_per_gpu"] == Decimal("1.89")
    sxm = next(o for o in offers if o.instance_type == "1x NVIDIA A100-SXM4-80GB")
    assert sxm.gpu_model == "A100-80GB"


def test_scope_limits_pricing_models() -> None:
    offers, _ = parse(load(), frozenset({OD}))
    assert {k[1] for k in offers} == {"on_demand"}
    offers, _ = parse(load(), frozenset({SPOT}))
    assert {k[1] for k in offers} == {"spot"}


def test_entry_without_prices_is_a_counted_skip() -> None:
    # The docs example asked only for lowestPrice: no price field, no maxGpuCount.
    offers, skips = parse(load("graphql_gpuTypes_by_id_lowestPrice_docs_example.json"))
    assert offers == {}
    assert skips == [("malformed_item", "NVIDIA GeForce RTX 3090: no price field in the response")]


@pytest.mark.parametrize(
    ("field", "value"),
    [("maxGpuCount", None), ("maxGpuCount", 0), ("securePrice", "1.89"), ("securePrice", -1)],
)
def test_malformed_entry_is_a_counted_skip(field: str, value: Any) -> None:
    body = load()
    body["data"]["gpuTypes"][0][field] = value
    offers, skips = parse(body)
    assert [r for r, _ in skips] == ["malformed_item"]
    assert not [k for k in offers if "PCIe" in k[0]]  # nothing guessed for that type
    assert [k for k in offers if "SXM4" in k[0]]  # the other type still parses


def test_graphql_errors_fail_the_run() -> None:
    with pytest.raises(CollectorError, match="runpod: GraphQL error: boom"):
        parse({"errors": [{"message": "boom"}]})


# ----------------------------------------------------------------- collector


def run(collector: RunPodCollector) -> list[Any]:
    return list(collector.collect(RunContext(settings=collector.settings, source="runpod")))


@respx.mock
def test_collect_posts_the_query_with_a_bearer_key() -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(200, json=load()))
    offers = run(RunPodCollector(Settings(), "rp-key"))
    request = route.calls[0].request
    assert request.headers["Authorization"] == "Bearer rp-key"
    assert "rp-key" not in str(request.url)
    assert json.loads(request.content) == {"query": GPU_TYPES_QUERY}
    assert len(offers) == 18


@respx.mock
def test_endpoint_override_keeps_the_documented_path() -> None:
    route = respx.post("http://localhost:7000/graphql").mock(
        return_value=httpx.Response(200, json=load())
    )
    settings = Settings(runpod={"endpoint_url": "http://localhost:7000"})
    assert len(run(RunPodCollector(settings, "k"))) == 18 and route.called


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
def test_refused_key_is_one_line_naming_provider_and_setting(status: int) -> None:
    respx.post(URL).mock(return_value=httpx.Response(status, text="Unauthorized"))
    with pytest.raises(CollectorError) as info:
        run(RunPodCollector(Settings(), "bad"))
    assert str(info.value) == (
        f"runpod: the API key was refused (HTTP {status}); "
        "check GPU_TRACKER_RUNPOD__API_KEY (or RUNPOD_API_KEY)"
    )


@respx.mock
def test_429_is_retried() -> None:
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "1"}),
            httpx.Response(200, json=load()),
        ]
    )
    assert len(run(RunPodCollector(Settings(), "k", sleep=lambda s: None))) == 18
    assert route.call_count == 2


def test_missing_key_skips_with_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    monkeypatch.delenv("GPU_TRACKER_RUNPOD__API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        RunPodCollector.from_settings(Settings())
    assert str(info.value) == ("no API key: set GPU_TRACKER_RUNPOD__API_KEY (or RUNPOD_API_KEY)")
    monkeypatch.setenv("RUNPOD_API_KEY", "conventional")
    assert RunPodCollector.from_settings(Settings())._api_key == "conventional"
