"""CloudRift collector over its published schema example (tests/fixtures/cloudrift/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.cloudrift import REQUEST, CloudRiftCollector, parse_instance_types
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "cloudrift" / "instance_types_list.json"
URL = "https://api.cloudrift.ai/api/v1/instance-types/list"


def payload(brand: str | None = None) -> Any:
    body = json.loads(FIXTURE.read_text())
    body["data"]["instance_types"][0]["brand_short"] = brand
    return body


def variant(body: Any) -> dict[str, Any]:
    found: dict[str, Any] = body["data"]["instance_types"][0]["variants"][0]
    return found


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    return parse_instance_types(body, lambda r, d: skips.append((r, d))), skips


def test_schema_example_names_no_gpu_and_is_a_counted_skip() -> None:
    offers, skips = parse(payload())  # brand_short null, as the schema allows
    assert offers == []
    assert skips == [("malformed_item", "p4d.24xlarge: brand_short missing, no GPU name (None)")]


def test_variant_price_is_cents_for_the_whole_variant_in_each_datacenter() -> None:
    offers, skips = parse(payload("A100"))
    by_region = {o.region: o for o in offers}
    assert sorted(by_region) == ["us-central-tx-nr-1", "us-east-nc-nr-1"] and skips == []
    east = by_region["us-east-nc-nr-1"]
    # cost_per_hour 3277 cents -> $32.77 per hour for the 2-GPU variant
    assert (east.price_per_hour, east.currency) == (Decimal("32.77"), "USD")
    assert (east.pricing, east.instance_type) == (PricingModel.ON_DEMAND, "p4d.24xlarge")
    # vram 40000000000 bytes per GPU / 1024^3 = 37.252902984619140625 GiB -> the 40 GB A100
    assert (east.gpu_model, east.gpu_known, east.gpu_count) == ("A100-40GB", True, Decimal(2))
    assert east.gpu_memory_gib == Decimal("37.252902984619140625")
    # dram 48000000000 / 1024^3 = 44.70348358154296875 GiB; disk 8796093022208 / 1024^3 = 8192
    assert (east.vcpus, east.memory_gib) == (Decimal(24), Decimal("44.70348358154296875"))
    assert east.attributes["disk_gib"] == Decimal(8192)
    assert (east.attributes["nodes"], east.attributes["free_nodes"]) == (3, 1)
    assert east.attributes["host_provider"] == "Arcane Web Services"
    assert east.attributes["country_code"] == "US"
    assert by_region["us-central-tx-nr-1"].attributes["host_provider"] is None


def test_availability_is_where_a_node_is_free() -> None:
    body = payload("RTX 4090")
    v = variant(body)
    # emmy's recorded rental: rtx49-7c-kn.1, one RTX 4090 (24 GiB), 38.75 cents per hour
    v.update(name="rtx49-7c-kn.1", gpu_count=1, vram=24 * 1024**3, cost_per_hour=38.75)
    v["available_nodes_per_dc"] = {"us-east-nc-nr-1": 1, "us-central-tx-nr-1": 0}
    v["nodes_per_dc"]["eu-west-uk-lo-2"] = 2  # hosted there, none free, not in the free map
    offers, _ = parse(body)
    got = {o.region: (o.price_per_hour, o.availability) for o in offers}
    assert got == {  # 38.75 / 100 = 0.3875
        "us-east-nc-nr-1": (Decimal("0.3875"), Availability.AVAILABLE),
        "us-central-tx-nr-1": (Decimal("0.3875"), Availability.UNAVAILABLE),
        "eu-west-uk-lo-2": (Decimal("0.3875"), Availability.UNAVAILABLE),
    }
    assert {o.gpu_model for o in offers} == {"RTX-4090"}


def test_unknown_gpu_name_is_kept() -> None:
    [offer, _], _ = parse(payload("RTX PRO 6000 Max-Q"))
    assert (offer.gpu_model, offer.gpu_known) == ("RTX PRO 6000 Max-Q", False)
    assert offer.gpu_raw_name == "RTX PRO 6000 Max-Q"
    assert offer.attributes["gpu_unknown_reason"]


def test_variant_without_gpus_is_not_an_offer() -> None:
    body = payload("EPYC")
    variant(body)["gpu_count"] = None  # the schema allows null: a CPU-only variant
    assert parse(body) == ([], [])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda v: v.update(mig_profile="1g.5gb"), "mig_slice"),  # the schema's example
        (lambda v: v.update(cost_per_hour=0), "zero_price"),
        (lambda v: v.update(cost_per_hour="3277"), "malformed_item"),
        (lambda v: v.update(nodes_per_dc={}, available_nodes_per_dc={}), "no_location"),
        (lambda v: v.update(available_nodes_per_dc=["us-east-nc-nr-1"]), "malformed_item"),
    ],
)
def test_unpriceable_variant_is_a_counted_skip(change: Any, reason: str) -> None:
    body = payload("A100")
    change(variant(body))
    good = copy.deepcopy(variant(body))
    good.update(name="p4d.ok", mig_profile=None, cost_per_hour=3277)
    good.update(nodes_per_dc={"us-east-nc-nr-1": 3}, available_nodes_per_dc={})
    body["data"]["instance_types"][0]["variants"].append(good)
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason] and skips[0][1].startswith("p4d.24xlarge: ")
    assert [o.instance_type for o in offers] == ["p4d.ok"]  # the next variant still counts


def test_response_without_the_list_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^cloudrift: response has no 'data.instance_types'"):
        parse({"instance_types": []})


@respx.mock
def test_collect_posts_the_vm_selector_without_a_key() -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(201, json=payload("A100")))
    settings = Settings()
    offers = list(CloudRiftCollector(settings).collect(RunContext(settings=settings)))
    sent = route.calls[0].request
    assert json.loads(sent.content) == REQUEST
    assert "x-api-key" not in sent.headers and len(offers) == 2


@respx.mock
def test_a_key_goes_in_x_api_key_and_a_refused_one_fails_in_one_line() -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(401, text="Unauthorized"))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(CloudRiftCollector(settings, "bad").collect(RunContext(settings=settings)))
    assert route.calls[0].request.headers["X-API-Key"] == "bad"
    assert str(info.value) == (
        "cloudrift: the API key was refused (HTTP 401); "
        "check GPU_TRACKER_CLOUDRIFT__API_KEY (or CLOUDRIFT_API_KEY)"
    )


@respx.mock
def test_a_list_that_starts_asking_for_a_key_says_so() -> None:
    respx.post(URL).mock(return_value=httpx.Response(401, text="Unauthorized"))
    settings = Settings()
    with pytest.raises(CollectorError) as info:
        list(CloudRiftCollector(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "cloudrift: the list now asks for an API key (HTTP 401); "
        "set GPU_TRACKER_CLOUDRIFT__API_KEY (or CLOUDRIFT_API_KEY)"
    )


def test_key_is_optional_and_read_from_its_usual_places(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CLOUDRIFT_API_KEY", raising=False)
    assert CloudRiftCollector.from_settings(Settings())._api_key == ""
    monkeypatch.setenv("CLOUDRIFT_API_KEY", "env-key")
    assert CloudRiftCollector.from_settings(Settings())._api_key == "env-key"
    secret = tmp_path / "key"
    secret.write_text("file-key\n")
    from_file = Settings(cloudrift={"api_key_file": secret})
    assert CloudRiftCollector.from_settings(from_file)._api_key == "file-key"
    with pytest.raises(NotConfigured, match=r"cloudrift.enabled = false"):
        CloudRiftCollector.from_settings(Settings(cloudrift={"enabled": False}))
