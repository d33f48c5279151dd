"""CUDO Compute collector over a recorded machine type (tests/fixtures/cudo/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.cudo import CudoCollector, parse_machine_types
from tracker.models import Availability, Offer
from tracker.settings import CudoSettings, Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "cudo" / "machine_types.json"
URL = "https://rest.compute.cudo.org/v1/vms/machine-types-2"
SAO_PAULO = "br-saopaulo-1"


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(
    body: Any, shape: CudoSettings | None = None, before: Any = None
) -> tuple[dict[tuple[str, str], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = parse_machine_types(body, lambda r, d: skips.append((r, d)), shape, before)
    return {(o.instance_type, o.region): o for o in offers}, skips


def test_vm_shapes_priced_from_the_per_part_rates() -> None:
    offers, skips = parse(payload())
    # maxGpuFree 5: 1, 2 and 4 GPUs deployable now, 8 not
    assert sorted(offers) == [(f"cascade-lake {n}x nvidia-rtx-3080", SAO_PAULO) for n in (1, 2, 4)]
    one = offers[("cascade-lake 1x nvidia-rtx-3080", SAO_PAULO)]
    # 1 x 0.05 GPU + 8 vCPU x 0.0025 + 32 GiB x 0.0038 + 100 GiB x 0.00013 + IPv4 0.0055
    # = 0.05 + 0.02 + 0.1216 + 0.013 + 0.0055 = 0.2101
    assert one.price_per_hour == Decimal("0.2101") and one.currency == "USD"
    assert (one.vcpus, one.memory_gib, one.gpu_count) == (Decimal(8), Decimal(32), Decimal(1))
    assert one.availability is Availability.AVAILABLE
    four = offers[("cascade-lake 4x nvidia-rtx-3080", SAO_PAULO)]
    # 0.2 + 32 x 0.0025 + 128 x 0.0038 + 0.013 + 0.0055 = 0.2 + 0.08 + 0.4864 + 0.0185
    assert four.price_per_hour == Decimal("0.7849")
    assert skips == []


def test_gpu_names_resolve_unknown_ones_are_kept_and_a_mode_suffix_is_ignored() -> None:
    offers, _ = parse(payload())
    rtx = offers[("cascade-lake 1x nvidia-rtx-3080", SAO_PAULO)]
    assert (rtx.gpu_model, rtx.gpu_known) == ("RTX-3080", True)
    body = payload()
    body["machineTypes"][0].update(gpuModel="RTX 3080 Ti", gpuModelId="nvidia-rtx-3080-ti")
    offers, _ = parse(body)
    odd = offers[("cascade-lake 1x nvidia-rtx-3080-ti", SAO_PAULO)]
    assert (odd.gpu_model, odd.gpu_known) == ("RTX 3080 Ti", False)
    body = payload()
    body["machineTypes"][0].update(gpuModel="A40 (compute mode)", gpuModelId="nvidia-a40")
    offers, _ = parse(body)
    a40 = offers[("cascade-lake 1x nvidia-a40", SAO_PAULO)]
    assert (a40.gpu_model, a40.gpu_known, a40.gpu_raw_name) == ("A40", True, "A40 (compute mode)")


def test_larger_vm_than_free_now_listed_before_stays_unavailable() -> None:
    body = payload()
    body["machineTypes"][0]["maxMemoryGibFree"] = 100  # 4 GPUs want 128 GiB
    before = {("on_demand", "cascade-lake 4x nvidia-rtx-3080"): {SAO_PAULO}}
    offers, _ = parse(body, before=before)
    assert offers[("cascade-lake 2x nvidia-rtx-3080", SAO_PAULO)].availability is (
        Availability.AVAILABLE
    )
    four = offers[("cascade-lake 4x nvidia-rtx-3080", SAO_PAULO)]
    assert four.availability is Availability.UNAVAILABLE
    assert four.price_per_hour == Decimal("0.7849")  # the rates still price it


def test_shape_the_machine_type_forbids_is_a_counted_skip() -> None:
    # maxVcpuPerMemoryGib 1 allows at most 32 vCPUs per 32 GiB; 40 vCPUs per GPU breaks it
    offers, skips = parse(payload(), CudoSettings(vcpus_per_gpu=40))
    assert offers == {}
    assert [r for r, _ in skips] == ["shape_not_allowed"]
    assert skips[0][1].startswith(f"{SAO_PAULO} cascade-lake nvidia-rtx-3080:")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda t: t["gpuPriceHr"].update(value=0.05), "malformed_item"),
        (lambda t: t.pop("ipv4PriceHr"), "malformed_item"),
        (lambda t: t["gpuPriceHr"].update(value="0"), "zero_price"),
        (lambda t: t.pop("dataCenterId"), "malformed_item"),
    ],
)
def test_unpriceable_machine_type_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload()
    change(body["machineTypes"][0])
    offers, skips = parse(body)
    assert offers == {} and [r for r, _ in skips] == [reason]


def test_cpu_machine_type_is_not_a_gpu_offer() -> None:
    body = payload()
    body["machineTypes"][0].update(gpuModel="", gpuModelId="")
    assert parse(body) == ({}, [])


def test_response_without_machine_types_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no 'machineTypes' list"):
        parse({"code": 16, "message": "unauthenticated"})


@respx.mock
def test_collect_honours_the_override_and_sends_no_key() -> None:
    route = respx.get("http://127.0.0.1:8089/v1/vms/machine-types-2").mock(
        return_value=httpx.Response(200, json=payload())
    )
    settings = Settings(cudo={"endpoint_url": "http://127.0.0.1:8089"})
    offers = list(CudoCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert "Authorization" not in route.calls[0].request.headers
    assert len(offers) == 3


@respx.mock
def test_api_error_is_one_line_naming_the_provider() -> None:
    respx.get(URL).mock(return_value=httpx.Response(404, json={"code": 5}))
    settings = Settings()
    with pytest.raises(CollectorError, match=r"^cudo: GET .*machine-types-2: HTTP 404"):
        list(CudoCollector(settings).collect(RunContext(settings=settings)))


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"cudo\.enabled"):
        CudoCollector.from_settings(Settings(cudo={"enabled": False}))
