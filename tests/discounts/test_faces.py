"""Issue 42 points 1-2: a 15 % account discount on AWS on-demand and reserved, applied
when read, through every face (CLI offers/history/compare/export/recommend/plan/
discounts, /api/v1, the dashboard pages, tracker.api), on SQLite and Postgres.

The prices, per hour of a p5.48xlarge (8× H100-SXM) in us-east-1:

* on-demand 55.04 USD and reserved 1y (standard, No Upfront) 34.40 USD: the AWS price
  list entries of tests/fixtures/aws/pricing_get_products_gpu_page_derived.json
  (``"$55.04 per On Demand Linux p5.48xlarge Instance Hour"``; ``4NA7Y494T4`` 1yr
  standard No Upfront ``"USD": "34.4000000000"``), observed 2026-11-01;
* spot 20.00 USD in us-east-1a (a sheet value: spot must stay untouched);
* othercloud's 8× H100 at 52.00 USD (6.50 per GPU-hour): cheaper than AWS's list
  price, dearer than what the account pays AWS.

The rule ``aws-edp``: provider aws, pricing on_demand + reserved_1y, 15 % off, valid
from 2026-11-15. Worked by hand:

    on-demand  55.04 × (1 − 0.15) = 55.04 × 0.85 = 46.784; per GPU 46.784 / 8 = 5.848
    reserved   34.40 × 0.85 = 29.24;                       per GPU 29.24 / 8 = 3.655
    spot       20.00 (no rule covers spot);                per GPU 2.50
    list per GPU: on-demand 55.04 / 8 = 6.88, reserved 34.40 / 8 = 4.30
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Run, cli_runner
from tests.fresh_db import reset_pg
from tests.web.conftest import serve
from tracker.settings import load_settings
from tracker.store.engine import Engine, make_engine

D = Decimal
SHEET = """\
provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,price_per_hour,currency,observed_at
aws,p5.48xlarge,us-east-1,,on_demand,H100 SXM,8,80,192,2048,55.04,USD,2026-11-01T00:00:00Z
aws,p5.48xlarge,us-east-1,,reserved_1y,H100 SXM,8,80,192,2048,34.40,USD,2026-11-01T00:00:00Z
aws,p5.48xlarge,us-east-1,us-east-1a,spot,H100 SXM,8,80,192,2048,20.00,USD,2026-11-01T00:00:00Z
othercloud,h100x8,us-east,,on_demand,H100 SXM,8,80,192,2048,52.00,USD,2026-11-01T00:00:00Z
"""
CONFIG = """\
[[discounts]]
name = "aws-edp"
provider = "aws"
pricing = ["on_demand", "reserved_1y"]
percent = 15
valid_from = 2026-11-15
"""
STEPS = ("--since", "2026-11-13", "--until", "2026-11-17", "--resample", "1d")
P5 = ("-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1")


@dataclass
class World:
    run: Run
    url: str
    config: Path
    tmp: Path

    def json(self, *args: str) -> Any:
        proc = self.run(*args, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """One database per engine for the module (every test only reads it): the sheet
    imported, the rule in the settings file every command reads."""
    tmp = tmp_path_factory.mktemp("discounts")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'cli.db'}"
    else:
        url = request.getfixturevalue("pg_url")
        reset_pg(make_engine(url))
    config = tmp / "tracker.toml"
    config.write_text(CONFIG)
    base = cli_runner(url, tmp)

    def run(*args: str, **env: str) -> Any:
        return base(*args, extra_env={"GPU_TRACKER_CONFIG": str(config), **env})

    assert run("db", "upgrade").returncode == 0
    sheet = tmp / "prices.csv"
    sheet.write_text(SHEET)
    imported = run("import", str(sheet), "--source", "edp-demo")
    assert imported.returncode == 0, imported.stderr
    yield World(run, url, config, tmp)


def _by_pricing(rows: list[dict[str, Any]], provider: str = "aws") -> dict[str, Any]:
    return {r["pricing"]: r for r in rows if r["provider"] == provider}


def test_offers_show_the_net_price_beside_the_list_price(world: World) -> None:
    rows = world.json("offers")
    aws = _by_pricing(rows)
    od, r1, spot = aws["on_demand"], aws["reserved_1y"], aws["spot"]
    # the stored list price is untouched; the net one beside it
    assert (od["price_per_hour"], od["price_per_hour_usd"]) == ("55.04", "55.04")
    assert (od["net_price_per_hour"], od["net_price_per_hour_usd"]) == ("46.784", "46.784")
    assert (od["net_price_per_gpu_hour_usd"], od["discount"]) == ("5.848", "aws-edp")
    assert (r1["net_price_per_hour_usd"], r1["net_price_per_gpu_hour_usd"]) == ("29.24", "3.655")
    assert r1["discount"] == "aws-edp"
    # spot: no rule covers it
    assert (spot["net_price_per_hour_usd"], spot["discount"]) == ("20", None)
    other = _by_pricing(rows, "othercloud")["on_demand"]
    assert (other["net_price_per_hour_usd"], other["discount"]) == ("52", None)
    # ordered by what the account pays: AWS on-demand (46.784) before othercloud (52)
    order = [(r["provider"], r["pricing"]) for r in rows]
    assert order.index(("aws", "on_demand")) < order.index(("othercloud", "on_demand"))
    table = world.run("offers", COLUMNS="160")
    assert table.returncode == 0, table.stderr
    assert "your $/h" in table.stdout and "46.78" in table.stdout and "aws-edp" in table.stdout


def test_without_rules_the_table_has_no_your_price_column(world: World) -> None:
    plain = cli_runner(world.url, world.tmp)("offers")
    assert plain.returncode == 0, plain.stderr
    assert "your" not in plain.stdout and "55.04" in plain.stdout


def test_history_applies_the_rule_in_force_at_each_step(world: World) -> None:
    rows = world.json("history", *P5, *STEPS)
    # steps 11-13 .. 11-17: list 55.04 throughout (one stored interval); net from 11-15
    assert [(r["time"][:10], r["net_price_per_hour_usd"], r["discount"]) for r in rows] == [
        ("2026-11-13", "55.04", None),
        ("2026-11-14", "55.04", None),
        ("2026-11-15", "46.784", "aws-edp"),
        ("2026-11-16", "46.784", "aws-edp"),
        ("2026-11-17", "46.784", "aws-edp"),
    ]
    assert {r["price_per_hour_usd"] for r in rows} == {"55.04"}
    # a rule never opens a price interval: still the one interval from 2026-11-01
    intervals = world.json("history", *P5)
    assert [(i["price_per_hour"], i["ended_at"]) for i in intervals] == [("55.04", None)]
    # the interval began before valid_from: its net figure is the list one then
    assert intervals[0]["discount"] is None
    spot = world.json("history", *P5, "--pricing", "spot", *STEPS)
    assert {(r["net_price_per_hour_usd"], r["discount"]) for r in spot} == {("20", None)}


def test_history_of_a_gpu_ranks_the_cheapest_net_offer_at_each_step(world: World) -> None:
    rows = world.json("history", "--gpu", "H100", *STEPS[:4])
    # before 11-15 othercloud's 6.50 beats AWS's list 6.88; from 11-15 AWS nets 5.848
    got = [(r["time"][:10], r["provider"], r["net_price_per_gpu_hour_usd"]) for r in rows]
    assert got == [
        ("2026-11-13", "othercloud", "6.5"),
        ("2026-11-14", "othercloud", "6.5"),
        ("2026-11-15", "aws", "5.848"),
        ("2026-11-16", "aws", "5.848"),
        ("2026-11-17", "aws", "5.848"),
    ]
    assert rows[2]["price_per_gpu_hour_usd"] == "6.88"  # the list figure kept beside


def test_compare_shows_net_figures_and_sorts_by_them(world: World) -> None:
    rows = world.json("compare")
    assert [r["provider"] for r in rows] == ["aws", "othercloud"]  # 5.848 < 6.50 net
    aws = rows[0]
    assert (aws["on_demand"], aws["net_on_demand"]) == ("6.88", "5.848")
    assert (aws["reserved_1y"], aws["net_reserved_1y"]) == ("4.3", "3.655")
    assert (aws["spot"], aws["net_spot"]) == ("2.5", "2.5")
    assert aws["discount"] == "aws-edp"
    assert rows[1]["net_on_demand"] == "6.5" and rows[1]["discount"] is None


def test_export_adds_the_net_price_at_each_interval_start(world: World) -> None:
    out = world.tmp / f"export-{world.url[:5]}.csv"
    proc = world.run("export", str(out), "--since", "2026-10-01")
    assert proc.returncode == 0, proc.stderr
    with out.open() as f:
        rows = {(r["provider"], r["pricing"]): r for r in csv.DictReader(f)}
    od = rows[("aws", "on_demand")]
    # began 2026-11-01, before the rule: list price then, and the stored price unchanged
    assert (od["price_per_hour"], od["net_price_per_hour_usd"], od["discount"]) == (
        "55.04",
        "55.04",
        "",
    )
    assert set(rows[("aws", "spot")]) >= {"net_price_per_hour", "net_price_per_hour_usd"}


def test_recommend_ranks_and_costs_on_the_net_price(world: World) -> None:
    rows = world.json("recommend", "--profile", "llm-13b-pretrain")
    od = [r for r in rows if r["pricing"] == "on_demand"]
    # AWS's list 55.04 > othercloud's 52.00, but the account pays 46.784: AWS first
    assert [r["provider"] for r in od] == ["aws", "othercloud"]
    aws = od[0]
    assert (aws["price_per_hour_usd"], aws["net_price_per_hour_usd"]) == ("55.04", "46.784")
    assert (aws["effective_price_per_hour_usd"], aws["discount"]) == ("46.784", "aws-edp")
    # the same hours on both: the job costs in the ratio of the hourly prices
    ratio = D(aws["job_cost_usd"]) / D(od[1]["job_cost_usd"])
    assert abs(ratio - D("46.784") / D("52")) < D("0.0001")


def test_plan_prices_the_fleet_at_the_net_price(world: World) -> None:
    rows = world.json("plan", "-g", "H100", "--burst-gpu-hours", "800", "--months", "1")
    # 800 GPU-hours = 100 instance-hours: AWS 100 × 46.784 = 4,678.40 (list: 5,504.00);
    # othercloud 100 × 52.00 = 5,200.00
    assert [(r["provider"], D(r["total_usd"])) for r in rows] == [
        ("aws", D("4678.4")),
        ("othercloud", D("5200")),
    ]


def test_discounts_command_lists_rules_and_flags_one_matching_nothing(world: World) -> None:
    [row] = world.json("discounts")
    assert (row["name"], row["in_force"], row["matches"], row["applies_to"]) == (
        "aws-edp",
        True,
        2,  # on-demand and reserved_1y; spot is not covered
        2,
    )
    assert row["flag"] is None and row["valid_from"] == "2026-11-15T00:00:00Z"
    extra = world.tmp / "two-rules.toml"
    extra.write_text(CONFIG + '\n[[discounts]]\nname = "gcp-cud"\nprovider = "gcp"\npercent = 20\n')
    two = cli_runner(world.url, world.tmp)
    proc = two("discounts", "--format", "json", extra_env={"GPU_TRACKER_CONFIG": str(extra)})
    assert proc.returncode == 0, proc.stderr
    flagged = json.loads(proc.stdout)[1]
    assert (flagged["name"], flagged["matches"], flagged["flag"]) == (
        "gcp-cud",
        0,
        "matches no current offer",
    )
    assert "discount rule 'gcp-cud': matches no current offer" in proc.stderr


@pytest.fixture(scope="module")
def site(world: World) -> Iterator[str]:
    settings = load_settings(world.config, database_url=world.url)
    engine: Engine = make_engine(world.url)
    server = serve(settings, engine)
    yield server.url
    server.stop()
    engine.dispose()


def test_the_api_and_the_pages_show_the_net_price(site: str) -> None:
    offers = httpx.get(f"{site}/api/v1/offers", params={"provider": "aws"}, timeout=30).json()
    od = _by_pricing(offers)["on_demand"]
    assert (od["net_price_per_hour_usd"], od["discount"]) == ("46.784", "aws-edp")
    compare = httpx.get(f"{site}/api/v1/compare", timeout=30).json()
    assert compare[0]["net_on_demand"] == "5.848"
    history = httpx.get(
        f"{site}/api/v1/history",
        params={
            "provider": "aws",
            "instance_type": "p5.48xlarge",
            "region": "us-east-1",
            "since": "2026-11-14T00:00:00Z",
            "until": "2026-11-15T00:00:00Z",
            "resample": "1d",
        },
        timeout=30,
    ).json()
    assert [r["net_price_per_hour_usd"] for r in history] == ["55.04", "46.784"]
    page = httpx.get(f"{site}/offers", timeout=30).text
    assert "your $/h" in page and "46.78" in page and "aws-edp" in page
    assert "your on-demand" in httpx.get(f"{site}/compare", timeout=30).text


def test_the_python_api_has_the_net_columns(world: World) -> None:
    import tracker.api

    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.offers(provider="aws", pricing="on_demand")
        steps = t.history(
            provider="aws",
            instance_type="p5.48xlarge",
            region="us-east-1",
            since="2026-11-14",
            until="2026-11-15",
            resample="1d",
        )
    assert list(frame["net_price_per_hour_usd"]) == [D("46.784")]
    assert list(frame["discount"]) == ["aws-edp"]
    assert list(steps["net_price_per_hour_usd"]) == [D("55.04"), D("46.784")]


def test_net_figures_in_another_view_currency(world: World) -> None:
    proc = world.run(
        "offers", "-p", "aws", "--pricing", "on_demand", "--currency", "EUR", "--format", "json",
        GPU_TRACKER_FX_RATES='{"EUR": "1.25"}',
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [row] = json.loads(proc.stdout)
    # 46.784 USD at 1.25 USD per EUR = 37.4272 EUR; per GPU 37.4272 / 8 = 4.6784
    assert (row["display_net_price_per_hour"], row["display_net_price_per_gpu_hour"]) == (
        "37.4272",
        "4.6784",
    )
    assert row["net_price_per_hour_usd"] == "46.784"  # the USD keys keep their meaning
