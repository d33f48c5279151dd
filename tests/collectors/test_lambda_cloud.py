"""Lambda Cloud collector over the assembled real response (tests/fixtures/lambda/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.lambda_cloud import LambdaCollector, parse_instance_types
from tracker.models import Interconnect, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "lambda" / "instance_types.json"
URL = "https://cloud.lambda.ai/api/v1/instance-types"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any) -> tuple[dict[tuple[str, str], Any], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_instance_types(body, lambda r, d: skips.append((r, d)))
    return {(o.instance_type, o.region): o for o in offers}, skips


def test_8x_type_cents_to_dollars_and_hardware() -> None:
    offers, skips = parse(payload())
    h100 = offers[("gpu_8x_h100_sxm5gdr", "us-west-1")]
    # price_cents_per_hour 3592 -> 3592 / 100 = $35.92 for the whole 8-GPU machine
    assert h100.price_per_hour == Decimal("35.92")
    assert h100.price_per_hour_usd == Decimal("35.92") and h100.currency == "USD"
    assert h100.pricing is PricingModel.ON_DEMAND
    # specs.gpus 8, and "8x H100 (80 GB SXM5)" agrees
    assert h100.gpu_count == 8
    # gpu_description "H100 (80 GB SXM5)" -> catalog alias "H100 SXM5", 80 GB
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_memory_gib) == ("H100-SXM", True, 80)
    assert h100.interconnect is Interconnect.NVLINK
    assert (h100.vcpus, h100.memory_gib) == (208, 1800)
    assert h100.attributes["storage_gib"] == 24780
    assert h100.price_per_gpu_hour_usd == Decimal("4.49")  # 35.92 / 8
    assert skips == []


def test_1x_type_one_offer_per_region_listed() -> None:
    offers, _ = parse(payload())
    # gpu_1x_a100_sxm4 lists us-west-1 and us-east-1 -> two offers, same price
    a100 = [o for (t, _r), o in offers.items() if t == "gpu_1x_a100_sxm4"]
    assert sorted(o.region for o in a100) == ["us-east-1", "us-west-1"]
    for offer in a100:
        assert offer.price_per_hour == Decimal("1.48")  # 148 cents / 100
        assert offer.gpu_count == 1
        assert (offer.gpu_model, offer.gpu_memory_gib) == ("A100-40GB", 40)


def test_type_without_capacity_listed_nowhere_gives_no_offer() -> None:
    offers, skips = parse(payload())
    # gpu_8x_b200_sxm6 has regions_with_capacity_available [] -> no region to price in
    assert not [k for k in offers if k[0] == "gpu_8x_b200_sxm6"]
    assert skips == []
    assert len(offers) == 3  # 1 H100 region + 2 A100 regions


def test_b200_resolves_through_the_catalog_when_listed() -> None:
    body = payload()
    body["data"]["gpu_8x_b200_sxm6"]["regions_with_capacity_available"] = [
        {"name": "us-east-1", "description": "Virginia, USA"}
    ]
    offers, _ = parse(body)
    b200 = offers[("gpu_8x_b200_sxm6", "us-east-1")]
    assert (b200.gpu_model, b200.gpu_known, b200.gpu_count) == ("B200", True, 8)
    assert b200.price_per_hour == Decimal("45.92")  # 4592 cents


def test_two_digit_count_is_read_whole() -> None:
    # A 16-GPU type: the count is 16, not 1 (a one-digit regex would read "1").
    body = payload()
    item = copy.deepcopy(body["data"]["gpu_8x_h100_sxm5gdr"])
    item["instance_type"]["description"] = "16x H100 (80 GB SXM5)"
    item["instance_type"]["specs"]["gpus"] = 16
    body["data"] = {"gpu_16x_h100": item}
    offers, skips = parse(body)
    assert [o.gpu_count for o in offers.values()] == [16]
    assert skips == []


def test_counts_2_and_4_from_specs() -> None:
    for count in (2, 4):
        body = payload()
        item = copy.deepcopy(body["data"]["gpu_1x_a100_sxm4"])
        item["instance_type"]["description"] = f"{count}x A100 (40 GB SXM4)"
        item["instance_type"]["specs"]["gpus"] = count
        body["data"] = {f"gpu_{count}x_a100_sxm4": item}
        offers, _ = parse(body)
        assert {o.gpu_count for o in offers.values()} == {count}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda it: it["instance_type"].pop("price_cents_per_hour"), "malformed_item"),
        (lambda it: it["instance_type"].update(price_cents_per_hour="148"), "malformed_item"),
        (lambda it: it["instance_type"].update(price_cents_per_hour=0), "zero_price"),
        (lambda it: it["instance_type"]["specs"].update(gpus=2), "inconsistent_gpu_count"),
        (lambda it: it["instance_type"].pop("specs"), "malformed_item"),
    ],
)
def test_malformed_type_is_a_counted_skip_never_a_guess(change: Any, reason: str) -> None:
    body = payload()
    change(body["data"]["gpu_1x_a100_sxm4"])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert "gpu_1x_a100_sxm4" in skips[0][1]
    assert not [k for k in offers if k[0] == "gpu_1x_a100_sxm4"]
    assert ("gpu_8x_h100_sxm5gdr", "us-west-1") in offers  # the rest still parses


def test_response_without_data_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'data' object"):
        parse({"error": {"code": "x"}})


# ----------------------------------------------------------------- collector


def run(collector: LambdaCollector, settings: Settings) -> tuple[list[Any], RunContext]:
    ctx = RunContext(settings=settings, source="lambda")
    return list(collector.collect(ctx)), ctx


@respx.mock
def test_collect_sends_bearer_key_and_parses() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    offers, ctx = run(LambdaCollector(settings, "secret-key"), settings)
    assert route.calls[0].request.headers["Authorization"] == "Bearer secret-key"
    assert len(offers) == 3 and ctx.skipped == 0


@respx.mock
def test_endpoint_override_keeps_the_documented_path() -> None:
    route = respx.get("http://127.0.0.1:8089/api/v1/instance-types").mock(
        return_value=httpx.Response(200, json=payload())
    )
    settings = Settings(**{"lambda": {"endpoint_url": "http://127.0.0.1:8089"}})
    offers, _ = run(LambdaCollector(settings, "k"), settings)
    assert route.called and len(offers) == 3


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
def test_refused_key_is_one_line_naming_provider_and_setting(status: int) -> None:
    respx.get(URL).mock(
        return_value=httpx.Response(status, json={"error": {"code": "global/invalid-api-key"}})
    )
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        run(LambdaCollector(settings, "bad-key"), settings)
    message = str(info.value)
    assert message == (
        f"lambda: the API key was refused (HTTP {status}); "
        "check GPU_TRACKER_LAMBDA__API_KEY (or LAMBDA_API_KEY)"
    )
    assert "bad-key" not in message


@respx.mock
def test_5xx_is_retried_then_parsed() -> None:
    route = respx.get(URL).mock(
        side_effect=[httpx.Response(503), httpx.Response(200, json=payload())]
    )
    settings = Settings()
    offers, _ = run(LambdaCollector(settings, "k", sleep=lambda s: None), settings)
    assert route.call_count == 2 and len(offers) == 3


def test_spot_only_scope_makes_no_request() -> None:
    settings = Settings()
    ctx = RunContext(settings=settings, pricing_scope=frozenset({PricingModel.SPOT}))
    with respx.mock(assert_all_called=False) as mock:
        assert list(LambdaCollector(settings, "k").collect(ctx)) == []
        assert not mock.calls


def test_missing_key_skips_with_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    monkeypatch.delenv("GPU_TRACKER_LAMBDA__API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        LambdaCollector.from_settings(Settings())
    assert str(info.value) == ("no API key: set GPU_TRACKER_LAMBDA__API_KEY (or LAMBDA_API_KEY)")


def test_key_from_prefixed_setting_else_conventional_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPU_TRACKER_LAMBDA__API_KEY", raising=False)
    monkeypatch.setenv("LAMBDA_API_KEY", "conventional")
    assert LambdaCollector.from_settings(Settings())._api_key == "conventional"
    monkeypatch.setenv("GPU_TRACKER_LAMBDA__API_KEY", "prefixed")
    assert LambdaCollector.from_settings(Settings())._api_key == "prefixed"


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"lambda\.enabled"):
        LambdaCollector.from_settings(Settings(**{"lambda": {"enabled": False}}))
