"""OCI collector over a real price-list capture (tests/fixtures/oci/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.oci import OciCollector, parse_offers
from collectors.oci_shapes import SHAPES
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "oci" / "products_usd_gpu_rows_capture.json"
URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT
LICENCE_AND_ON_PREM_PRICES = {
    # NVIDIA AI Enterprise licences, Cloud@Customer, VMware, Roving Edge rows of the capture
    Decimal("2.5"),
    Decimal("0.88"),
    Decimal("1"),
    Decimal("0.76"),
    Decimal("0.6"),
    Decimal("2.9"),
    Decimal("190"),
    Decimal("100"),
    Decimal("13"),
    Decimal("11"),
}


def load() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(body: Any, **kwargs: Any) -> tuple[dict[tuple[str, str], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_offers(body, lambda r, d: skips.append((r, d)), **kwargs)
    return {(o.instance_type, o.pricing.value): o for o in offers}, skips


@pytest.mark.parametrize(
    ("shape", "price", "gpu", "count"),
    [
        ("BM.GPU.H100.8", "80", "H100-SXM", 8),  # B98415 $10 per GPU-hour x 8
        ("BM.GPU.H200.8", "80", "H200", 8),  # B110519 $10 x 8
        ("BM.GPU.B200.8", "112", "B200", 8),  # B110978 $14 x 8
        ("BM.GPU.A100-v2.8", "32", "A100-80GB", 8),  # B95907 $4 x 8
        ("BM.GPU.L40S.4", "14.0", "L40S", 4),  # B109479 $3.5 x 4
        ("BM.GPU.MI300X.8", "48", "MI300X", 8),  # B109485 $6 x 8
        ("BM.GPU.A10.4", "8", "A10", 4),  # B95909 $2 x 4
        ("VM.GPU.A10.1", "2", "A10", 1),  # B95909 $2 x 1
        ("VM.GPU.A10.2", "4", "A10", 2),  # B95909 $2 x 2
    ],
)
def test_per_gpu_part_price_times_gpu_count(shape: str, price: str, gpu: str, count: int) -> None:
    offers, skips = parse(load())
    offer = offers[(shape, "on_demand")]
    assert offer.price_per_hour == Decimal(price) and offer.currency == "USD"
    assert (offer.gpu_model, offer.gpu_known, offer.gpu_count) == (gpu, True, count)
    assert offer.region == "global"
    assert offer.attributes["part_number"] == SHAPES[shape].part_number
    assert skips == []


def test_gb200_priced_per_gpu_times_four() -> None:
    offers, _ = parse(load())
    gb200 = offers[("BM.GPU.GB200.4", "on_demand")]
    assert gb200.price_per_hour == Decimal("64")  # B110979 $16 x 4
    assert (gb200.gpu_model, gb200.gpu_known, gb200.gpu_count) == ("GB200", True, 4)
    assert gb200.vcpus == 144  # Arm: 1 OCPU = 1 vCPU


def test_hardware_from_the_shape_table() -> None:
    h100 = parse(load())[0][("BM.GPU.H100.8", "on_demand")]
    # 112 OCPUs x 2 vCPUs (x86), 2048 GB, 80 GB per GPU
    assert (h100.vcpus, h100.memory_gib, h100.gpu_memory_gib) == (224, 2048, 80)
    assert h100.attributes["ocpus"] == 112


def test_no_offer_is_priced_from_a_licence_cloud_at_customer_or_vmware_row() -> None:
    offers, _ = parse(load())
    for offer in offers.values():
        per_gpu = offer.attributes["price_per_gpu_hour"]
        assert per_gpu not in LICENCE_AND_ON_PREM_PRICES, offer.instance_type
        assert "AI Enterprise" not in str(offer.attributes["part_name"])
        assert "Cloud@Customer" not in str(offer.attributes["part_name"])
    # 10 shapes on demand (spot only for the VM A10 shapes, see below)
    assert len([k for k in offers if k[1] == "on_demand"]) == len(SHAPES) == 10


def test_a_price_list_of_only_lookalike_rows_gives_no_offer() -> None:
    body = load()
    body["items"] = [
        it
        for it in body["items"]
        if "AI Enterprise" in it["displayName"] or "Cloud@Customer" in it["displayName"]
    ]
    assert len(body["items"]) == 8 + 4  # the capture's licence and Cloud@Customer rows
    offers, skips = parse(body)
    assert offers == {}
    assert {r for r, _ in skips} == {"part_not_listed"} and len(skips) == 10


def test_a_shape_part_that_turned_into_a_licence_row_is_a_skip() -> None:
    # If Oracle re-used B98415 for a licence, the H100 shape must not take its price.
    body = load()
    row = next(it for it in body["items"] if it["partNumber"] == "B98415")
    row["displayName"] = "OCI - NVIDIA AI Enterprise - H100"
    offers, skips = parse(body)
    assert ("BM.GPU.H100.8", "on_demand") not in offers
    assert [r for r, _ in skips] == ["part_mismatch"]


def test_preemptible_is_half_price_only_for_supported_shapes() -> None:
    offers, _ = parse(load())
    spot = {k[0]: o for k, o in offers.items() if k[1] == "spot"}
    # Oracle's Preemptible Instances page: "Preemptible capacity does not support bare
    # metal instances" -> only the VM GPU shapes have a preemptible (spot) price
    assert set(spot) == {"VM.GPU.A10.1", "VM.GPU.A10.2"}
    assert spot["VM.GPU.A10.1"].price_per_hour == Decimal("1.0")  # 2 x 0.5
    assert spot["VM.GPU.A10.2"].price_per_hour == Decimal("2.0")  # 2 GPUs x $2 x 0.5
    assert spot["VM.GPU.A10.2"].offering_class == "preemptible"
    assert "50% of on-demand" in str(spot["VM.GPU.A10.2"].attributes["spot_rule"])
    assert ("BM.GPU.H100.8", "spot") not in offers
    assert ("BM.GPU.A100-v2.8", "spot") not in offers and ("BM.GPU.A10.4", "spot") not in offers


def test_preemptible_can_be_switched_off() -> None:
    offers, _ = parse(load(), preemptible=False)
    assert not [k for k in offers if k[1] == "spot"]


@pytest.mark.parametrize(
    "prices",
    [
        [],
        [{"model": "PAY_AS_YOU_GO", "value": 2}, {"model": "PAY_AS_YOU_GO", "value": 3}],
        [{"model": "PAY_AS_YOU_GO", "value": "2"}],
    ],
)
def test_malformed_part_price_is_a_counted_skip(prices: list[Any]) -> None:
    body = load()
    row = next(it for it in body["items"] if it["partNumber"] == "B95909")  # A10
    row["currencyCodeLocalizations"][0]["prices"] = prices
    offers, skips = parse(body)
    assert not [k for k in offers if "A10" in k[0] and "A100" not in k[0]]
    assert skips[0][0] == "malformed_item" and "B95909" in skips[0][1]
    # then the three A10 shapes each lack their part
    assert [r for r, _ in skips[1:]] == ["part_not_listed"] * 3


# ----------------------------------------------------------------- collector


def run(settings: Settings) -> list[Offer]:
    collector = OciCollector.from_settings(settings)
    collector._sleep = lambda s: None
    return list(collector.collect(RunContext(settings=settings, source="oci")))


@respx.mock
def test_collect_asks_for_usd_and_needs_no_credentials() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=load()))
    offers = run(Settings())
    request = route.calls[0].request
    assert request.url.params["currencyCode"] == "USD"
    assert "Authorization" not in request.headers
    assert len(offers) == 10 + 2  # every shape on demand + VM.GPU.A10.1/.2 preemptible


@respx.mock
def test_endpoint_override_keeps_the_documented_path() -> None:
    route = respx.get("http://mirror.internal:8443/pls/apex/cetools/api/v1/products/").mock(
        return_value=httpx.Response(200, json=load())
    )
    run(Settings(oci={"endpoint_url": "http://mirror.internal:8443"}))
    assert route.called


@respx.mock
def test_5xx_is_retried_then_fails_in_one_line() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(503, text="busy"))
    with pytest.raises(CollectorError, match=r"^oci: GET .*HTTP 503"):
        run(Settings(http={"max_retries": 2}))
    assert route.call_count == 3


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"oci\.enabled"):
        OciCollector.from_settings(Settings(oci={"enabled": False}))


def test_shapes_carry_the_documented_rdma_network() -> None:
    offers = parse(load())[0]
    # OCI Compute Shapes, "Max Network Bandwidth": "8 x 2 x 200 Gbps RDMA" = 3,200 over
    # RoCE; the A10 bare metal box has "2 x 50 Gbps" and no cluster network.
    h100 = offers[("BM.GPU.H100.8", "on_demand")]
    assert (h100.fabric, h100.network_gbps) == ("roce", Decimal(3200))
    a100 = offers[("BM.GPU.A100-v2.8", "on_demand")]
    assert (a100.fabric, a100.network_gbps) == ("roce", Decimal(1600))  # 16 × 100
    a10 = offers[("BM.GPU.A10.4", "on_demand")]
    assert (a10.fabric, a10.network_gbps) == ("ethernet", Decimal(100))  # 2 × 50
    b200 = offers[("BM.GPU.B200.8", "on_demand")]
    assert (b200.fabric, b200.network_gbps) == ("unknown", None)  # not in the page read
