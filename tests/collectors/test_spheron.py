"""Spheron collector over its assembled pages (tests/fixtures/spheron/SOURCES.md)."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.spheron import SpheronCollector, parse_page
from tests.cli.test_small_clouds_cli import offers
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "spheron"
PATH = "/api/gpu-offers"


def page(n: int) -> Any:
    return fixture_json(FIXTURES / f"gpu_offers_page_{n}.json")


def parse(body: Any) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers, _, _ = parse_page(body, lambda r, d: skips.append((r, d)))
    return offers, skips


def by_key(offers: list[Offer]) -> dict[tuple[str, str, str], Offer]:
    return {(o.instance_type, o.region, o.pricing.value): o for o in offers}


def test_price_is_the_whole_instance_one_offer_per_cluster() -> None:
    offers, skips = parse(page(1))
    assert skips == []
    got = by_key(offers)
    assert set(got) == {
        ("sesterce/h100-pcie-8x", "kansascity-usa-1", "on_demand"),
        ("sesterce/h100-pcie-8x", "166e655a:culpeper-usa-1", "on_demand"),  # kept verbatim
        ("spheron-es/uk-b300-spot", "UK South 1", "spot"),
    }
    h100 = got[("sesterce/h100-pcie-8x", "kansascity-usa-1", "on_demand")]
    # the docs: "8x H100 offer priced at 21.52 means 21.52 USD per hour total", so the
    # instance is 21.52 and one GPU-hour 21.52 / 8 = 2.69
    assert (h100.price_per_hour, h100.currency, h100.gpu_count) == (
        Decimal("21.52"),
        "USD",
        Decimal(8),
    )
    assert h100.price_per_hour / h100.gpu_count == Decimal("2.69")
    assert (h100.provider, h100.gpu_model, h100.gpu_known) == ("spheron", "H100-PCIE", True)
    assert (h100.vcpus, h100.memory_gib, h100.gpu_memory_gib) == (
        Decimal(128),
        Decimal(1024),
        Decimal(80),
    )
    assert h100.interconnect is Interconnect.PCIE
    assert h100.availability is Availability.AVAILABLE
    assert h100.attributes["underlying_cloud"] == "sesterce"


def test_spot_instance_type_is_spot_at_its_price() -> None:
    b300 = by_key(parse(page(1))[0])[("spheron-es/uk-b300-spot", "UK South 1", "spot")]
    assert b300.price_per_hour == Decimal("5.8455")  # 1 GPU: 5.8455 per GPU-hour
    assert (b300.gpu_model, b300.gpu_known, b300.gpu_raw_name) == ("B300", True, "B300_SXM6")
    assert b300.interconnect is Interconnect.NVLINK
    assert b300.attributes["units_available"] == 26
    assert b300.attributes["underlying_cloud"] == "spheron-es"


def test_dedicated_offer_with_a_spot_price_is_also_spot_and_maintenance_is_unavailable() -> None:
    offers, skips = parse(page(2))
    assert skips == []
    got = by_key(offers)
    # 57.6071 for 8 B200s: 57.6071 / 8 = 7.2008875 per GPU-hour; spot 23.04 / 8 = 2.88
    on_demand = got[("data-crunch/b200-sxm6-8x", "Finland 3", "on_demand")]
    spot = got[("data-crunch/b200-sxm6-8x", "Finland 3", "spot")]
    assert on_demand.price_per_hour == Decimal("57.6071")
    assert on_demand.price_per_hour / 8 == Decimal("7.2008875")
    assert spot.price_per_hour == Decimal("23.04") and spot.price_per_hour / 8 == Decimal("2.88")
    # the same offerId from another upstream is another offer
    held = got[("sesterce/b200-sxm6-8x", "amsterdam-netherlands-2", "on_demand")]
    assert held.price_per_hour == Decimal("46.32")
    assert held.availability is Availability.UNAVAILABLE  # maintenance: true
    assert held.attributes["maintenance"] is True
    assert on_demand.availability is Availability.AVAILABLE
    assert len(offers) == 3  # sesterce's spot_price is null: no spot offer


def test_not_available_is_unavailable() -> None:
    body = page(1)
    body["data"][0]["offers"][0]["available"] = False
    offers, _ = parse(body)
    assert {o.availability for o in offers if o.instance_type.startswith("sesterce")} == {
        Availability.UNAVAILABLE
    }


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda o: o.update(price=None), "no_price"),
        (lambda o: o.update(price=0), "zero_price"),
        (lambda o: o.update(price="21.52"), "malformed_item"),
        (lambda o: o.update(clusters=[]), "malformed_item"),
        (lambda o: o.pop("offerId"), "malformed_item"),
        (lambda o: o.pop("gpuCount"), "malformed_item"),
    ],
)
def test_unpriceable_offer_is_a_counted_skip(change: Any, reason: str) -> None:
    body = page(1)
    change(body["data"][0]["offers"][0])
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert [o.instance_type for o in offers] == ["spheron-es/uk-b300-spot"]


def test_a_cpu_node_is_dropped_uncounted() -> None:
    # gpuCount 0 is a CPU node (docs/development.md: not this tracker's market, not counted)
    body = page(1)
    body["data"][0]["offers"][0]["gpuCount"] = 0
    offers, skips = parse(body)
    assert skips == []
    assert [o.instance_type for o in offers] == ["spheron-es/uk-b300-spot"]


def test_zero_spot_price_skips_the_spot_offer_only() -> None:
    body = page(2)
    body["data"][0]["offers"][0]["spot_price"] = 0
    offers, skips = parse(body)
    assert [r for r, _ in skips] == ["zero_price"]
    assert skips[0][1].startswith("data-crunch/b200-sxm6-8x spot:")
    assert ("data-crunch/b200-sxm6-8x", "Finland 3", "on_demand") in by_key(offers)


def test_group_without_offers_list_is_counted() -> None:
    body = page(1)
    body["data"].append({"gpuType": "H200_SXM5", "offers": None})
    offers, skips = parse(body)
    assert len(offers) == 3 and [r for r, _ in skips] == ["malformed_item"]


def test_answer_without_data_fails_the_run() -> None:
    with pytest.raises(CollectorError, match="no data list"):
        parse({"message": "Unauthorized"})


def test_missing_key_skips_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPHERON_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as info:
        SpheronCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_SPHERON__API_KEY (or SPHERON_API_KEY)"


@pytest.mark.parametrize("source", ["env", "file"])
def test_key_from_spheron_api_key_or_a_key_file(
    source: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SPHERON_API_KEY", raising=False)
    section: dict[str, Any] = {}
    if source == "env":
        monkeypatch.setenv("SPHERON_API_KEY", "sk-env")
    else:
        (tmp_path / "key").write_text("sk-file\n")
        section["api_key_file"] = tmp_path / "key"
    replay = Replay({PATH: (200, {"data": [], "totalPages": 1})})
    with serve(replay) as origin:
        settings = Settings(spheron={**section, "endpoint_url": origin})
        list(SpheronCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert replay.calls[0][2]["Authorization"] == f"Bearer sk-{source}"


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"spheron.enabled = false"):
        SpheronCollector.from_settings(Settings(spheron={"enabled": False}))


def two_pages() -> Replay:
    return Replay(
        {
            f"{PATH}?page=1&limit=100": (200, page(1)),
            f"{PATH}?page=2&limit=100": (200, page(2)),
        }
    )


def test_pages_until_total_pages_with_the_bearer_key() -> None:
    replay = two_pages()
    with serve(replay) as origin:
        settings = Settings(spheron={"endpoint_url": origin, "api_key": "sk"})
        offers = list(
            SpheronCollector.from_settings(settings).collect(RunContext(settings=settings))
        )
    assert len(offers) == 6  # 3 on page 1 + 3 on page 2; totalPages 2 stops the loop
    assert [path for _, path, _ in replay.calls] == [
        f"{PATH}?page=1&limit=100",
        f"{PATH}?page=2&limit=100",
    ]
    assert {headers["Authorization"] for _, _, headers in replay.calls} == {"Bearer sk"}


@pytest.mark.parametrize(
    ("scope", "kept", "calls"),
    [
        (frozenset({PricingModel.SPOT}), 2, 2),  # the B300 spot and the B200 spot_price
        (frozenset({PricingModel.RESERVED_1Y}), 0, 0),  # nothing Spheron sells: no request
    ],
)
def test_a_run_keeps_only_its_pricing_models(
    scope: frozenset[PricingModel], kept: int, calls: int
) -> None:
    replay = two_pages()
    with serve(replay) as origin:
        settings = Settings(spheron={"endpoint_url": origin, "api_key": "sk"})
        ctx = RunContext(settings=settings, pricing_scope=scope)
        found = list(SpheronCollector.from_settings(settings).collect(ctx))
    assert len(found) == kept and {o.pricing for o in found} <= scope
    assert len(replay.calls) == calls


def test_empty_page_ends_the_paging() -> None:
    first = copy.deepcopy(page(1))
    first["totalPages"] = 5
    replay = Replay({f"{PATH}?page=1&limit=100": (200, first), PATH: (200, {"data": []})})
    with serve(replay) as origin:
        settings = Settings(spheron={"endpoint_url": origin, "api_key": "sk"})
        offers = list(
            SpheronCollector.from_settings(settings).collect(RunContext(settings=settings))
        )
    assert len(offers) == 3 and len(replay.calls) == 2


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PATH: (401, {"message": "Unauthorized"})})
    with serve(replay) as origin:
        settings = Settings(spheron={"endpoint_url": origin, "api_key": "bad"})
        with pytest.raises(CollectorError) as info:
            list(SpheronCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "spheron: the API key was refused (HTTP 401); check GPU_TRACKER_SPHERON__API_KEY"
        " (or SPHERON_API_KEY)"
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_spheron_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    with serve(two_pages()) as origin:
        env = {"GPU_TRACKER_SPHERON__ENDPOINT_URL": origin, "SPHERON_API_KEY": "sk"}
        proc = cli("collect", "--provider", "spheron", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    # every price is the whole instance's USD/h as sent (21.52 = 8 x 2.69; 57.6071 = 8 x
    # 7.2008875; 23.04 = 8 x 2.88; 46.32 = 8 x 5.79; 5.8455 = 1 x 5.8455)
    assert offers(cli, "spheron") == {
        ("sesterce/h100-pcie-8x", "kansascity-usa-1", "on_demand"): Decimal("21.52"),
        ("sesterce/h100-pcie-8x", "166e655a:culpeper-usa-1", "on_demand"): Decimal("21.52"),
        ("spheron-es/uk-b300-spot", "UK South 1", "spot"): Decimal("5.8455"),
        ("data-crunch/b200-sxm6-8x", "Finland 3", "on_demand"): Decimal("57.6071"),
        ("data-crunch/b200-sxm6-8x", "Finland 3", "spot"): Decimal("23.04"),
        ("sesterce/b200-sxm6-8x", "amsterdam-netherlands-2", "on_demand"): Decimal("46.32"),
    }
