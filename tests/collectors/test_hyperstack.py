"""Hyperstack collector over SDK-shaped flavors and pricebook (tests/fixtures/hyperstack/SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials, NotConfigured, RunContext
from collectors.hyperstack import HyperstackCollector, parse_flavors, parse_pricebook
from tests.collectors.json_replay import Replay, fixture_json, serve
from tests.conftest import Run, cli_runner
from tracker.models import Availability, Interconnect, Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hyperstack"
FLAVORS, PRICEBOOK = FIXTURES / "flavors.json", FIXTURES / "pricebook.json"
FLAVORS_PATH, PRICEBOOK_PATH = "/v1/core/flavors", "/v1/pricebook"


def parse(flavors: Any = None, pricebook: Any = None) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    rates = parse_pricebook(fixture_json(PRICEBOOK) if pricebook is None else pricebook)
    body = fixture_json(FLAVORS) if flavors is None else flavors
    return parse_flavors(body, rates, lambda r, d: skips.append((r, d))), skips


def test_one_offer_per_gpu_flavor_priced_gpu_rate_times_count() -> None:
    offers, skips = parse()
    got = {o.instance_type: (o.price_per_hour, o.gpu_count, o.availability) for o in offers}
    assert got == {
        # pricebook H100-80G-PCIe original_value "1.900000000" x gpu_count 1
        "n3-H100x1": (Decimal("1.90"), Decimal(1), Availability.AVAILABLE),
        # 1.90 x 2 = 3.80; stock_available false -> unavailable, still an offer
        "n3-H100x2": (Decimal("3.80"), Decimal(2), Availability.UNAVAILABLE),
    }  # n1-cpu-small (gpu "", gpu_count 0) is no GPU offer
    # H200-141G-SXM5 is listed but the pricebook has no rate for it: counted, not guessed
    assert skips == [("no_price", "n3-H200x8: the pricebook has no rate for GPU 'H200-141G-SXM5'")]
    h100 = next(o for o in offers if o.instance_type == "n3-H100x1")
    assert (h100.region, h100.currency, h100.pricing) == ("CANADA-1", "USD", PricingModel.ON_DEMAND)
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_raw_name) == (
        "H100-PCIE",
        True,
        "H100-80G-PCIe",
    )
    assert (h100.vcpus, h100.memory_gib) == (Decimal(28), Decimal(180))  # cpu 28, ram 180.0
    assert h100.interconnect is Interconnect.PCIE
    assert h100.attributes["root_disk_gb"] == Decimal(100)
    assert h100.attributes["ephemeral_disk_gb"] == Decimal(750)
    assert h100.attributes["price_per_gpu_hour"] == Decimal("1.90")


def test_the_list_rate_is_stored_and_an_accounts_discount_kept_beside_it() -> None:
    book = fixture_json(PRICEBOOK)
    book[1] |= {"value": "1.52", "discount_applied": True}  # a contract: 20 % off 1.90
    offers, _ = parse(pricebook=book)
    two = next(o for o in offers if o.instance_type == "n3-H100x2")
    assert two.price_per_hour == Decimal("3.80")  # 2 x original_value 1.90, not 2 x 1.52
    assert two.attributes["account_price_per_gpu_hour"] == Decimal("1.52")


def test_a_discounted_entry_without_its_list_rate_is_a_counted_skip() -> None:
    book = fixture_json(PRICEBOOK)
    book[1] = {"name": "H100-80G-PCIe", "value": 1.52, "discount_applied": True}
    offers, skips = parse(pricebook=book)
    assert offers == [] and [r for r, _ in skips] == ["no_price"] * 3
    # without a discount, value is the list rate: the docs' example entry, 0.58
    assert parse_pricebook([{"name": "RTX-A4000", "value": 0.58}]) == {
        "RTX-A4000": (Decimal("0.58"), Decimal("0.58"))
    }


def test_the_apis_decimal_strings_and_its_zero_are_read_exactly() -> None:
    # Hyperstack sends rates as 9-decimal strings and zero as "0E-9" (see SOURCES.md)
    rates = parse_pricebook(
        [
            {"name": "A100-80G-SXM4", "value": "1.350000000", "original_value": "1.350000000"},
            {"name": "H100-80G-PCIe", "value": "0E-9", "original_value": "0E-9"},
        ]
    )
    assert rates["A100-80G-SXM4"] == (Decimal("1.35"), Decimal("1.35"))
    book = [{"name": "H100-80G-PCIe", "value": "0E-9", "original_value": "0E-9"}]
    offers, skips = parse(pricebook=book)
    assert offers == []
    assert [(r, d.split(":", 1)[0]) for r, d in skips] == [
        ("zero_price", "n3-H100x1"),
        ("zero_price", "n3-H100x2"),
        ("no_price", "n3-H200x8"),
    ]


def test_failed_status_or_no_data_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^hyperstack: flavors request failed: 'denied'$"):
        parse(flavors={"status": False, "message": "denied", "data": []})
    with pytest.raises(CollectorError, match=r"^hyperstack: flavors response has no 'data' list$"):
        parse(flavors={"status": True})
    with pytest.raises(CollectorError, match=r"^hyperstack: pricebook is not a list$"):
        parse(pricebook={"data": []})


def test_a_malformed_stock_flag_is_a_counted_skip() -> None:
    body = fixture_json(FLAVORS)
    body["data"][0]["flavors"][1]["stock_available"] = "yes"
    offers, skips = parse(flavors=body)
    assert [o.instance_type for o in offers] == ["n3-H100x1"]
    assert ("malformed_item", "n3-H100x2: stock_available is 'yes'") in skips


def test_missing_key_skips_with_one_line() -> None:
    with pytest.raises(MissingCredentials) as info:
        HyperstackCollector.from_settings(Settings())
    assert str(info.value) == "no API key: set GPU_TRACKER_HYPERSTACK__API_KEY"


def test_disabled_section_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"hyperstack.enabled = false"):
        HyperstackCollector.from_settings(Settings(hyperstack={"enabled": False}))


def test_refused_key_fails_in_one_line_naming_the_setting() -> None:
    replay = Replay({PRICEBOOK_PATH: (401, {"status": False, "message": "Unauthorized"})})
    with serve(replay) as origin:
        settings = Settings(hyperstack={"endpoint_url": origin, "api_key": "bad"})
        with pytest.raises(CollectorError) as info:
            list(HyperstackCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert str(info.value) == (
        "hyperstack: the API key was refused (HTTP 401); check GPU_TRACKER_HYPERSTACK__API_KEY"
    )
    assert "bad" not in str(info.value)


def test_override_keeps_both_paths_and_sends_the_key_in_api_key() -> None:
    replay = Replay(
        {
            FLAVORS_PATH: (200, fixture_json(FLAVORS)),
            PRICEBOOK_PATH: (200, fixture_json(PRICEBOOK)),
        }
    )
    with serve(replay) as origin:
        settings = Settings(hyperstack={"endpoint_url": origin, "api_key": "hs-key"})
        offers = list(
            HyperstackCollector.from_settings(settings).collect(RunContext(settings=settings))
        )
    assert len(offers) == 2
    assert [(m, p) for m, p, _ in replay.calls] == [("GET", PRICEBOOK_PATH), ("GET", FLAVORS_PATH)]
    assert all(h["api_key"] == "hs-key" for _, _, h in replay.calls)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_hyperstack_into_the_store(db_url: str, tmp_path: Path) -> None:
    cli: Run = cli_runner(db_url, tmp_path)
    assert cli("db", "upgrade").returncode == 0
    replay = Replay(
        {
            FLAVORS_PATH: (200, fixture_json(FLAVORS)),
            PRICEBOOK_PATH: (200, fixture_json(PRICEBOOK)),
        }
    )
    with serve(replay) as origin:
        env = {
            "GPU_TRACKER_HYPERSTACK__ENDPOINT_URL": origin,
            "GPU_TRACKER_HYPERSTACK__API_KEY": "hs-key",
        }
        proc = cli("collect", "--provider", "hyperstack", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = {
        r["instance_type"]: r for r in json.loads(listed.stdout) if r["provider"] == "hyperstack"
    }
    assert sorted(rows) == ["n3-H100x1", "n3-H100x2"]
    one, two = rows["n3-H100x1"], rows["n3-H100x2"]
    assert (one["currency"], Decimal(str(one["price_per_hour"]))) == ("USD", Decimal("1.90"))
    assert Decimal(str(two["price_per_hour"])) == Decimal("3.80")  # 2 x 1.90
    assert (one["region"], one["gpu_model"]) == ("CANADA-1", "H100-PCIE")
