"""DigitalOcean collector over recorded ``/v2/sizes`` pages (tests/fixtures/digitalocean/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.digitalocean import DigitalOceanCollector, parse_sizes
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "digitalocean"
URL = "https://api.digitalocean.com/v2/sizes"


def page(n: int) -> Any:
    return json.loads((FIXTURES / f"sizes_page{n}.json").read_text())


def parse(
    pages: list[Any], known: dict[str, set[str]] | None = None
) -> tuple[dict[tuple[str, str], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_sizes(pages, lambda r, d: skips.append((r, d)), known)
    return {(o.instance_type, o.region): o for o in offers}, skips


def test_only_gpu_sizes_one_offer_per_region() -> None:
    offers, skips = parse([page(1), page(2)])
    # 6 sizes, 3 with gpu_info, each in one region; the CPU sizes are not offers
    assert sorted(offers) == [
        ("gpu-h100x8-640gb", "nyc1"),
        ("gpu-h100x8-640gb-200", "tor1"),
        ("gpu-mi300x8-1536gb", "nyc1"),
    ]
    assert skips == []


def test_h100x8_price_is_the_whole_droplet_and_vram_is_split_per_gpu() -> None:
    offers, _ = parse([page(2)])
    h100 = offers[("gpu-h100x8-640gb", "nyc1")]
    assert h100.price_per_hour == Decimal("23.92") and h100.currency == "USD"
    assert h100.price_per_gpu_hour_usd == Decimal("2.99")  # 23.92 / 8
    assert h100.pricing is PricingModel.ON_DEMAND
    # gpu_info.vram.amount 640 GiB over count 8 -> 80 GiB each -> the SXM H100
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_count) == ("H100-SXM", True, Decimal(8))
    assert h100.gpu_memory_gib == 80
    assert h100.gpu_raw_name == "nvidia_h100"
    # memory 1966080 MiB / 1024 = 1920 GiB; 160 vCPUs
    assert (h100.vcpus, h100.memory_gib) == (Decimal(160), Decimal(1920))
    assert h100.availability is Availability.AVAILABLE
    assert h100.attributes["gpu_vram_total_gib"] == 640


def test_amd_slug_resolves_with_per_gpu_memory() -> None:
    offers, _ = parse([page(2)])
    mi300x = offers[("gpu-mi300x8-1536gb", "nyc1")]
    # 1536 GiB / 8 = 192 GiB, the MI300X's datasheet size
    assert (mi300x.gpu_model, mi300x.gpu_known, mi300x.gpu_memory_gib) == (
        "MI300X",
        True,
        Decimal(192),
    )
    assert mi300x.price_per_hour == Decimal("15.92")  # $1.99 per GPU-hour x 8


def test_unknown_model_slug_is_kept_and_flagged() -> None:
    body = page(2)
    body["sizes"][1]["gpu_info"]["model"] = "nvidia_rtx4000_ada_next"
    offers, skips = parse([body])
    odd = offers[("gpu-h100x8-640gb", "nyc1")]
    assert (odd.gpu_model, odd.gpu_known) == ("nvidia_rtx4000_ada_next", False)
    assert "gpu_unknown_reason" in odd.attributes
    assert skips == []


def test_not_creatable_size_is_unavailable_and_known_region_stays_unavailable() -> None:
    body = page(2)
    body["sizes"][2]["available"] = False
    offers, _ = parse([body], known={"gpu-h100x8-640gb": {"nyc1", "tor1"}})
    assert offers[("gpu-mi300x8-1536gb", "nyc1")].availability is Availability.UNAVAILABLE
    # tor1 listed this size before and is no longer named: kept, marked unavailable
    assert offers[("gpu-h100x8-640gb", "tor1")].availability is Availability.UNAVAILABLE
    assert offers[("gpu-h100x8-640gb", "nyc1")].availability is Availability.AVAILABLE


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.pop("price_hourly"), "malformed_item"),
        (lambda s: s.update(price_hourly="23.92"), "malformed_item"),
        (lambda s: s.update(price_hourly=0), "zero_price"),
        (lambda s: s["gpu_info"].update(count=0), "malformed_item"),
        (lambda s: s["gpu_info"]["vram"].update(unit="mb"), "malformed_item"),
        (lambda s: s.update(regions="nyc1"), "malformed_item"),
    ],
)
def test_malformed_gpu_size_is_a_counted_skip(change: Any, reason: str) -> None:
    body = page(2)
    change(body["sizes"][1])
    offers, skips = parse([body])
    assert [r for r, _ in skips] == [reason]
    assert skips[0][1].startswith("gpu-h100x8-640gb:")
    assert ("gpu-mi300x8-1536gb", "nyc1") in offers


def test_response_without_sizes_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'sizes' list"):
        parse([{"id": "unauthorized", "message": "x"}])


# ----------------------------------------------------------------- collector


def run(collector: DigitalOceanCollector, settings: Settings) -> list[Offer]:
    return list(collector.collect(RunContext(settings=settings, source="digitalocean")))


@respx.mock
def test_follows_links_pages_next_with_the_bearer_token() -> None:
    route = respx.get(URL).mock(
        side_effect=[httpx.Response(200, json=page(1)), httpx.Response(200, json=page(2))]
    )
    settings = Settings()
    offers = run(DigitalOceanCollector(settings, "do-token"), settings)
    assert [str(call.request.url) for call in route.calls] == [
        f"{URL}?per_page=200",
        f"{URL}?page=2&per_page=200",  # page 1's links.pages.next
    ]
    assert route.calls[0].request.headers["Authorization"] == "Bearer do-token"
    assert len(offers) == 3


@respx.mock
def test_override_serves_every_page_on_its_origin() -> None:
    base = "http://127.0.0.1:8089/v2/sizes"
    route = respx.get(base).mock(
        side_effect=[httpx.Response(200, json=page(1)), httpx.Response(200, json=page(2))]
    )
    settings = Settings(digitalocean={"endpoint_url": "http://127.0.0.1:8089"})
    offers = run(DigitalOceanCollector(settings, "k"), settings)
    assert str(route.calls[1].request.url) == f"{base}?page=2&per_page=200"
    assert len(offers) == 3


@respx.mock
def test_a_next_link_pointing_back_is_an_error_not_a_loop() -> None:
    body = page(1)
    body["links"]["pages"]["next"] = f"{URL}?per_page=200"
    respx.get(URL).mock(return_value=httpx.Response(200, json=body))
    settings = Settings()
    with pytest.raises(CollectorError, match="pagination loop"):
        run(DigitalOceanCollector(settings, "k"), settings)


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
def test_refused_token_is_one_line_naming_provider_and_setting(status: int) -> None:
    respx.get(URL).mock(
        return_value=httpx.Response(
            status, json={"id": "Unauthorized", "message": "Unable to authenticate you"}
        )
    )
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        run(DigitalOceanCollector(settings, "bad-token"), settings)
    assert str(info.value) == (
        f"digitalocean: the API key was refused (HTTP {status}); "
        "check GPU_TRACKER_DIGITALOCEAN__API_KEY (or DIGITALOCEAN_TOKEN)"
    )
    assert "bad-token" not in str(info.value)


def test_missing_token_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIGITALOCEAN_TOKEN", raising=False)
    with pytest.raises(MissingCredentials) as info:
        DigitalOceanCollector.from_settings(Settings())
    assert str(info.value) == (
        "no API key: set GPU_TRACKER_DIGITALOCEAN__API_KEY (or DIGITALOCEAN_TOKEN)"
    )


def test_token_from_section_file_or_conventional_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DIGITALOCEAN_TOKEN", "conventional")
    assert DigitalOceanCollector.from_settings(Settings())._api_key == "conventional"
    secret = tmp_path / "token"
    secret.write_text("from-file\n")
    settings = Settings(digitalocean={"api_key_file": secret})
    assert DigitalOceanCollector.from_settings(settings)._api_key == "from-file"


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"digitalocean\.enabled"):
        DigitalOceanCollector.from_settings(Settings(digitalocean={"enabled": False}))


def test_mi350x_slug_resolves_through_the_catalog() -> None:
    body = page(2)
    size = body["sizes"][2]
    size["gpu_info"].update(model="amd_mi350x", vram={"amount": 2304, "unit": "gib"})
    offers, _ = parse([body])
    mi350x = offers[("gpu-mi300x8-1536gb", "nyc1")]
    # 2304 GiB over 8 GPUs = 288 GiB each: AMD's MI350X (288 GB HBM3E)
    assert (mi350x.gpu_model, mi350x.gpu_known, mi350x.gpu_memory_gib) == (
        "MI350X",
        True,
        Decimal(288),
    )


def test_rtx4000_ada_slug_resolves_through_the_catalog() -> None:
    body = page(2)
    size = body["sizes"][1]
    size["gpu_info"].update(model="nvidia_rtx4000_ada", vram={"amount": 20, "unit": "gib"}, count=1)
    offers, _ = parse([body])
    rtx = offers[("gpu-h100x8-640gb", "nyc1")]
    # 20 GiB over 1 GPU: NVIDIA's RTX 4000 Ada (20 GB GDDR6)
    assert (rtx.gpu_model, rtx.gpu_known, rtx.gpu_memory_gib) == ("RTX-4000-Ada", True, Decimal(20))
