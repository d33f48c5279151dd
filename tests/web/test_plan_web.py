"""/api/v1/plan and the Plan page answer the CLI's plan rows; bad demand is a 400."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from tests.cli.test_plan_cli import OFFER_SHEET, SERVICE_SHEET
from tests.conftest import cli_runner
from tests.web.conftest import Site, serve
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine

EUR = {"GPU_TRACKER_FX_RATES": '{"EUR": "1.05"}'}
QUERY = {
    "gpu": "H100",
    "steady_gpus": "16",
    "burst_gpu_hours": "1000",
    "interruptible": "0.5",
    "spot_overhead": "0.1",
    "storage_tb": "10",
    "egress_tb": "15",
    "migration_usd": "5000",
    "current_provider": "lambda",
}


@pytest.fixture(scope="module")
def plan_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("plan")
    url = f"sqlite:///{folder / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    cli = cli_runner(url, folder)
    for name, text in (("offers.csv", OFFER_SHEET), ("services.csv", SERVICE_SHEET)):
        (folder / name).write_text(text)
        assert cli("import", str(folder / name)).returncode == 0
    settings = Settings(database_url=url, fx_rates={"EUR": Decimal("1.05")})
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url)
    server.stop()
    engine.dispose()


def cli_plan(site: Site, tmp_path: Path, *args: str) -> object:
    options = [a for k, v in QUERY.items() for a in (f"--{k.replace('_', '-')}", v)]
    result = cli_runner(site.database_url, tmp_path)(
        "plan", *options, *args, "--format", "json", extra_env=EUR
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_api_answers_the_cli_rows(plan_site: Site, tmp_path: Path) -> None:
    api = plan_site.get("/api/v1/plan", params=QUERY | {"currency": "EUR"})
    assert api.status_code == 200, api.text
    rows = api.json()
    assert rows == cli_plan(plan_site, tmp_path, "--currency", "EUR")
    # The hand-worked totals of tests/cli/test_plan_cli.py: scaleway 1,242,354.27 USD
    # (1,183,194.54 EUR at 1.05), aws 1,299,243.20, lambda incomplete.
    assert [(r["provider"], r["total_usd"]) for r in rows] == [
        ("scaleway", "1242354.27"),
        ("aws", "1299243.2"),
        ("lambda", None),
    ]
    assert rows[0]["display_total"] == "1183194.54"


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"gpu": "H100"}, "steady_gpus: Field required"),  # bursts only: /api/v1/plan/burst
        ({"gpu": "H100", "steady_gpus": "0"}, "steady_gpus: not a decimal above zero"),
        (
            {"gpu": "H100", "steady_gpus": "8", "interruptible": "2"},
            "interruptible: String should match",
        ),
        ({"gpu": "H100", "steady_gpus": "8", "months": "0"}, "months"),
        ({"gpu": "H1000", "steady_gpus": "8"}, "gpu: 'h1000': unknown GPU"),
        ({"gpu": "H100", "steady_gpus": "8", "currency": "XYZ"}, "currency"),
        ({"gpu": "H100", "steady_gpus": "8", "at": "soon"}, "at: not a time"),
        ({"gpu": "H100", "steady_gpus": "8", "migration_usd": "9"}, "current_provider"),
        ({"gpu": "H100", "steady_gpus": "8", "color": "red"}, "unknown query parameter"),
        ({"gpu": "H100", "steady_gpus": "8", "fabric": "fast"}, "fabric"),
    ],
)
def test_bad_demand_is_a_one_line_400(plan_site: Site, params: dict[str, str], says: str) -> None:
    answer = plan_site.get("/api/v1/plan", params=params)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert says in error and "\n" not in error


def test_fabric_required_keeps_only_stated_rdma_nodes(plan_site: Site) -> None:
    # The sample sheet states no fabric: every instance type is unknown, so none is a node.
    anyway = plan_site.get("/api/v1/plan", params=QUERY)
    assert [r["fabric"] for r in anyway.json()] == ["unknown"] * 3
    required = plan_site.get("/api/v1/plan", params=QUERY | {"fabric": "required"})
    assert required.status_code == 200 and required.json() == []


def test_the_plan_page_shows_the_rows_and_a_bar_per_plan(plan_site: Site) -> None:
    empty = plan_site.get("/plan")
    assert empty.status_code == 200 and '<form class="filters"' in empty.text
    page = plan_site.get("/plan", params=QUERY)
    assert page.status_code == 200, page.text
    body = page.text
    assert body.index("scaleway") < body.index("p5.48xlarge") < body.index("gpu_8x_h100_sxm5")
    assert "1,242,354.27" in body  # the total, in USD
    # One stacked bar a plan: scaleway's five parts and aws's, lambda's two known ones.
    assert body.count('class="part part-steady"') == 3
    assert body.count('class="part part-storage"') == 2  # lambda has no disk price
    assert "no price" in body  # lambda's storage and egress cells say so
    bad = plan_site.get("/plan", params={"gpu": "H100"})
    assert bad.status_code == 400 and "<nav" in bad.text and "no demand" in bad.text


def test_a_fleet_of_bursts_only_has_its_own_route(plan_site: Site, tmp_path: Path) -> None:
    """/api/v1/plan needs steady GPUs; bursts alone are /api/v1/plan/burst, the CLI's
    plan --burst-gpu-hours without --steady-gpus."""
    query = {"gpu": "H100", "burst_gpu_hours": "1000"}
    rows = plan_site.get("/api/v1/plan/burst", params={**query, "currency": "EUR"})
    assert rows.status_code == 200, rows.text
    cli = cli_runner(plan_site.database_url, tmp_path)(
        "plan", "--gpu", "H100", "--burst-gpu-hours", "1000", "--currency", "EUR",
        "--format", "json", extra_env=EUR,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert rows.json() == json.loads(cli.stdout) and rows.json()
    assert all(r["steady_usd"] in (None, "0") and r["instances"] == 0 for r in rows.json())
    steady = plan_site.get("/api/v1/plan/burst", params={**query, "steady_gpus": "8"})
    assert steady.status_code == 400 and "unknown query parameter" in steady.json()["error"]


@pytest.mark.parametrize(
    "text", ["0", "16", "0.5", "00.50", "999999999.99", "1000000000", "1000000000.000",
             "1000000000.5", "64602902914.72", "1924168717133076082.8444"],
)  # fmt: skip
def test_the_documented_quantity_patterns_take_exactly_what_the_plan_accepts(text: str) -> None:
    """The OpenAPI patterns carry the plans' cap (MAX_QUANTITY, 10^9): schemathesis once
    sent 64602902914.72 as storage_tb, which the pattern allowed and the plan refused."""
    from decimal import Decimal

    from tracker.recommend.demand import MAX_QUANTITY
    from tracker.web.params import DECIMAL, POSITIVE

    value = Decimal(text)
    assert bool(re.fullmatch(DECIMAL, text)) is (value <= MAX_QUANTITY)
    assert bool(re.fullmatch(POSITIVE, text)) is (Decimal(0) < value <= MAX_QUANTITY)
