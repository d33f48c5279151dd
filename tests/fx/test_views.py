"""USD and --currency views through the real ``gpu-tracker`` script (SQLite and Postgres).

The ECB's 90-day file (tests/fixtures/fx) is collected from a local server; a price
sheet back-fills a CNY, a EUR, a USD and an AED (no ECB rate) offer. Rates used, from
the fixture (1 EUR = … USD / … CNY):

    2020-11-25  USD 1.189   CNY 7.8189
    2020-11-27  USD 1.1922  CNY 7.8422   (Friday: in force over the weekend)
    2020-11-30  USD 1.198   CNY 7.8798
    2020-12-01  USD 1.1968  CNY 7.8639   (latest)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import Run, cli_runner
from tests.fresh_db import reset_pg
from tests.fx.ecb_server import EcbServer
from tracker.store.engine import make_engine

D = Decimal
Q = D("1e-8")
HEAD = (
    "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,"
    "vcpus,memory_gib,price_per_hour,currency,observed_at"
)
SHEET = "\n".join(
    [
        HEAD,
        "cncloud,gn.h100,cn-beijing,,on_demand,H100 SXM,1,80,16,128,30,CNY,2020-11-25T10:00:00Z",
        # the yuan moved twice since: the same price must not open an interval
        "cncloud,gn.h100,cn-beijing,,on_demand,H100 SXM,1,80,16,128,30,CNY,2020-11-27T10:00:00Z",
        "cncloud,gn.h100,cn-beijing,,on_demand,H100 SXM,1,80,16,128,28,CNY,2020-11-30T10:00:00Z",
        "eucloud,eu.h100,fr-par,,on_demand,H100 SXM,1,80,16,128,2.50,EUR,2020-11-25T10:00:00Z",
        "eucloud,eu.h100,fr-par,,on_demand,H100 SXM,1,80,16,128,2.60,EUR,2020-11-28T10:00:00Z",
        "uscloud,us.h100,us-east,,on_demand,H100 SXM,1,80,16,128,5.00,USD,2020-11-30T10:00:00Z",
        "uscloud,us.h100b,us-east,,on_demand,H100 SXM,1,80,16,128,7.00,USD,2020-11-30T10:00:00Z",
        "aecloud,ae.h100,me-dubai,,on_demand,H100 SXM,1,80,16,128,20,AED,2020-11-30T10:00:00Z",
    ]
)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def cli(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One database per engine for the whole module (every test only reads it): the
    ECB's 90-day file collected from a local server, then the sheet imported."""
    tmp = tmp_path_factory.mktemp("fx-views")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'cli.db'}"
    else:
        url = request.getfixturevalue("pg_url")
        reset_pg(make_engine(url))
    run = cli_runner(url, tmp)
    assert run("db", "upgrade").returncode == 0
    ecb = EcbServer()
    try:
        fx = run("collect", "-p", "fx", extra_env={"GPU_TRACKER_FX__ENDPOINT_URL": ecb.url})
    finally:
        ecb.stop()
    assert fx.returncode == 0, fx.stderr
    sheet = tmp / "prices.csv"
    sheet.write_text(SHEET + "\n")
    imported = run("import", str(sheet), "--source", "fx-demo")
    assert imported.returncode == 0, imported.stderr
    yield run


def as_json(proc: Any) -> list[dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def q(value: Any) -> Decimal:
    return D(str(value)).quantize(Q)


def test_history_shows_usd_at_the_rate_in_force_at_each_step(cli: Run) -> None:
    cny = as_json(
        cli("history", "-p", "cncloud", "-i", "gn.h100", "-r", "cn-beijing", "--format", "json")
    )
    # two intervals, not three: the 2020-11-27 observation only moved the rate
    assert [(r["price_per_hour"], r["currency"]) for r in cny] == [("30", "CNY"), ("28", "CNY")]
    # 30 × 1.189 / 7.8189 = 4.56202279… ; 28 × 1.198 / 7.8798 = 4.25696083…
    assert [q(r["price_per_hour_usd"]) for r in cny] == [D("4.56202279"), D("4.25696084")]
    eur = as_json(
        cli("history", "-p", "eucloud", "-i", "eu.h100", "-r", "fr-par", "--format", "json")
    )
    # 2.50 × 1.189 = 2.9725 ; a Saturday change uses Friday's rate: 2.60 × 1.1922 = 3.09972
    assert [q(r["price_per_hour_usd"]) for r in eur] == [D("2.97250000"), D("3.09972000")]
    # in CNY: the CNY steps are their own prices, exactly
    key = ("-p", "cncloud", "-i", "gn.h100", "-r", "cn-beijing")
    in_cny = as_json(cli("history", *key, "--currency", "cny", "--format", "json"))
    assert [(r["display_currency"], r["display_price_per_hour"]) for r in in_cny] == [
        ("CNY", "30"),
        ("CNY", "28"),
    ]


def test_offers_in_usd_and_in_cny_and_a_missing_rate_is_reported(cli: Run) -> None:
    proc = cli("offers", "--format", "json")
    rows = as_json(proc)
    by = {r["provider"]: r for r in rows}
    # AED: the ECB publishes no rate and fx_rates has none: left out, counted, never 1.0
    assert "aecloud" not in by
    assert "1 offer left out of the USD view: no exchange rate for AED (1)" in proc.stderr
    # latest rates (2020-12-01): 28 × 1.1968 / 7.8639 = 4.26129528… ; 2.60 × 1.1968 = 3.11168
    assert q(by["cncloud"]["price_per_hour_usd"]) == D("4.26129529")
    assert q(by["eucloud"]["price_per_hour_usd"]) == D("3.11168000")
    assert (by["cncloud"]["price_per_hour"], by["cncloud"]["currency"]) == ("28", "CNY")
    assert [r["provider"] for r in rows] == ["eucloud", "cncloud", "uscloud", "uscloud"]

    cny = as_json(cli("offers", "--currency", "CNY", "--format", "json"))
    by = {r["instance_type"]: r for r in cny}
    assert {r["display_currency"] for r in cny} == {"CNY"}
    assert by["gn.h100"]["display_price_per_hour"] == "28"  # its own price, exactly
    # 5.00 USD = 5.00 × 7.8639 / 1.1968 = 32.85386029… CNY
    assert q(by["us.h100"]["display_price_per_hour"]) == D("32.85386029")
    assert by["us.h100"]["price_per_hour_usd"] == "5"  # JSON keys keep their meaning
    table = cli("offers", "--currency", "CNY")
    assert table.returncode == 0 and "CNY/h" in table.stdout and "$/h" not in table.stdout

    # a manual rate fills the gap for a currency the ECB lacks: 20 AED × 0.27 = 5.40 USD
    aed = as_json(
        cli("offers", "--format", "json", extra_env={"GPU_TRACKER_FX_RATES": '{"AED": "0.27"}'})
    )
    assert q(next(r for r in aed if r["provider"] == "aecloud")["price_per_hour_usd"]) == D(
        "5.40000000"
    )
    bad = cli("offers", "--currency", "XYZ")
    assert bad.returncode == 2 and "no exchange rate stored for XYZ" in bad.stderr


def test_the_recommender_ranks_a_cny_offer_against_usd_offers_in_usd(cli: Run) -> None:
    proc = cli("recommend", "--profile", "llm-7b-lora", "--format", "json")
    rows = as_json(proc)
    # in USD: 3.11168 (2.60 EUR) < 4.2613 (28 CNY) < 5.00 < 7.00; at "1.0" the 28 CNY
    # offer would have come last
    assert [r["instance_type"] for r in rows] == ["eu.h100", "gn.h100", "us.h100", "us.h100b"]
    assert q(rows[1]["price_per_hour_usd"]) == D("4.26129529")
    assert "no exchange rate for AED (1)" in proc.stderr
    in_cny = as_json(
        cli("recommend", "--profile", "llm-7b-lora", "--currency", "CNY", "--format", "json")
    )
    assert [r["instance_type"] for r in in_cny] == [r["instance_type"] for r in rows]
    assert {r["display_currency"] for r in in_cny} == {"CNY"}
