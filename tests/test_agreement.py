"""Every face gives the same answers for one database and one set of settings.

CLI JSON, /api/v1, the HTML pages and ``tracker.api`` read through one read layer; this
checks them against figures worked out by hand (not only against each other), with a
non-USD offer priced through ``fx_rates``. The store (times relative to now, M = today
00:00 UTC, H = halfway between M and now):

    usdcloud u.h100  1× H100-SXM  3.50 USD/h  observed M-3d+10h and M-1d+10h; 2.96 at H
    aedcloud a.h100  1× H100-SXM  10 AED/h    first observed at H (no ECB AED rate)

    fx_rates.AED = 0.27 USD  ->  the AED offer is 10 × 0.27 = 2.70 USD/h, cheapest now.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

import tracker.api
from tests.conftest import cli_runner, make_offer
from tests.fresh_db import reset_pg
from tests.listed_collector import ListCollector
from tests.web.conftest import serve
from tracker.collect import run_collector
from tracker.settings import load_settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine
from tracker.views.offers import OFFER_ROW_KEYS
from tracker.views.rankings import RANKING_ROW_KEYS

D = Decimal


class UsdCloud(ListCollector):
    name: ClassVar[str] = "usdcloud"


class AedCloud(ListCollector):
    name: ClassVar[str] = "aedcloud"


def _h100(provider: str, instance: str, price: str, currency: str) -> Any:
    return make_offer(
        provider=provider,
        instance_type=instance,
        region="r1",
        gpu_model="H100-SXM",
        gpu_count=D(1),
        gpu_memory_gib=D(80),
        vcpus=D(26),
        memory_gib=D(200),
        price_per_hour=D(price),
        currency=currency,
    )


@dataclass
class World:
    url: str
    engine: Engine
    config: Path
    tmp: Path
    midnight: datetime
    first_seen: datetime
    web: str


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("agreement")
    url: str = (
        f"sqlite:///{tmp / 'tracker.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    config = tmp / "tracker.toml"
    config.write_text('fx_rates = { AED = "0.27" }\n')
    engine = make_engine(url)
    if request.param == "postgres":
        reset_pg(engine)
    migrate.upgrade(engine)
    settings = load_settings(config, database_url=url)
    now = datetime.now(UTC).replace(microsecond=0)
    midnight = now.replace(hour=0, minute=0, second=0)
    halfway = midnight + (now - midnight) / 2
    first = midnight - timedelta(days=3) + timedelta(hours=10)
    for at, collector in [
        (first, UsdCloud([_h100("usdcloud", "u.h100", "3.50", "USD")])),
        (midnight - timedelta(days=1, hours=-10), UsdCloud([_h100("usdcloud", "u.h100", "3.50", "USD")])),
        (halfway, UsdCloud([_h100("usdcloud", "u.h100", "2.96", "USD")])),
        (halfway, AedCloud([_h100("aedcloud", "a.h100", "10", "AED")])),
    ]:  # fmt: skip
        assert run_collector(engine, collector, settings, now=at).ok
    server = serve(settings, engine)
    yield World(url, engine, config, tmp, midnight, first, server.url)
    server.stop()
    engine.dispose()


def _cli(world: World, *args: str) -> Any:
    run = cli_runner(world.url, world.tmp)
    proc = run("--config", str(world.config), *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _api(world: World, path: str, **params: Any) -> Any:
    r = httpx.get(f"{world.web}{path}", params=params, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def _page(world: World, path: str, **params: Any) -> str:
    r = httpx.get(f"{world.web}{path}", params=params, timeout=30)
    assert r.status_code == 200, r.text
    return r.text


class _Rows(HTMLParser):
    """Each table body row's cells as (text, data-value)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, str | None]]] = []
        self._cell: list[str] | None = None
        self._value: str | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append([])
        elif tag == "td" and self._in_body:
            self._cell, self._value = [], dict(attrs).get("data-value")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append(("".join(self._cell).strip(), self._value))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _table(page: str) -> list[list[tuple[str, str | None]]]:
    parser = _Rows()
    parser.feed(page)
    return [r for r in parser.rows if r]


# ---------------------------------------------------------------- offers


def test_offers_agree_and_the_aed_offer_is_priced_with_fx_rates(world: World) -> None:
    # 10 AED x 0.27 = 2.70 USD < 2.96 USD: the AED offer first
    expected = [("aedcloud", "10", "AED", "2.7"), ("usdcloud", "2.96", "USD", "2.96")]
    cli = _cli(world, "offers", "--gpu", "H100")
    api = _api(world, "/api/v1/offers", gpu="H100")
    for rows in (cli, api):
        got = [(r["provider"], r["price_per_hour"], r["currency"], r["price_per_hour_usd"])
               for r in rows]  # fmt: skip
        assert got == expected
    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.offers(gpu="H100")
    assert list(frame["provider"]) == ["aedcloud", "usdcloud"]
    assert list(frame.columns) == list(cli[0]) == list(OFFER_ROW_KEYS)  # the JSON keys
    assert list(frame["price_per_hour_usd"]) == [D("2.7"), D("2.96")]  # exact Decimals
    assert str(frame["last_seen"].dt.tz) == "UTC"
    page = _table(_page(world, "/offers", gpu="H100"))
    # provider, then the USD $/h cell's exact data-value and its text (cents), after the
    # fabric and Gb/s columns
    assert [(r[0][0], D(r[9][1] or ""), r[9][0]) for r in page] == [
        ("aedcloud", D("2.7"), "2.70"),
        ("usdcloud", D("2.96"), "2.96"),
    ]


# ---------------------------------------------------------------- recommend


def test_recommendation_order_and_figures_agree(world: World) -> None:
    # llm-7b-lora fits one 80 GiB H100: ranked by job cost, i.e. by $/h here: AED first
    cli = _cli(world, "recommend", "--profile", "llm-7b-lora")
    api = _api(world, "/api/v1/recommend", profile="llm-7b-lora")
    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.recommend("llm-7b-lora")
    for rows in (cli, api, frame.to_dict("records")):
        got = [(r["provider"], D(str(r["price_per_hour_usd"]))) for r in rows]
        assert got == [("aedcloud", D("2.70")), ("usdcloud", D("2.96"))]
    assert [r["job_cost_usd"] for r in cli] == [r["job_cost_usd"] for r in api]
    assert list(frame.columns) == list(api[0]) == list(RANKING_ROW_KEYS)
    page = _table(_page(world, "/profiles", profile="llm-7b-lora"))
    ranked = [(r[1][0], D(r[6][1] or "")) for r in page if r[0][1] is not None and len(r) > 6]
    assert ranked == [("aedcloud", D("2.70")), ("usdcloud", D("2.96"))]


# ---------------------------------------------------------------- compare


def test_compare_rows_agree(world: World) -> None:
    expected = [("H100-SXM", "aedcloud", "2.7"), ("H100-SXM", "usdcloud", "2.96")]
    cli = _cli(world, "compare", "--gpu", "H100")
    api = _api(world, "/api/v1/compare", gpu="H100")
    for rows in (cli, api):
        assert [(r["gpu_model"], r["provider"], r["on_demand"]) for r in rows] == expected
    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.compare(gpu="H100")
    assert [(r["provider"], r["on_demand"]) for r in frame.to_dict("records")] == [
        ("aedcloud", D("2.7")),
        ("usdcloud", D("2.96")),
    ]
    page = _table(_page(world, "/compare", gpu="H100"))
    assert [(r[1][0], D(r[2][1] or "")) for r in page] == [
        ("aedcloud", D("2.7")),
        ("usdcloud", D("2.96")),
    ]


# ---------------------------------------------------------------- histories


def _steps(rows: list[dict[str, Any]], key: str) -> list[tuple[datetime, str, Decimal]]:
    return [
        (datetime.fromisoformat(str(r["time"]).replace("Z", "+00:00")), r["provider"], D(str(r[key])))
        for r in rows
    ]  # fmt: skip


def test_gpu_history_ends_at_the_cheapest_offer_now(world: World) -> None:
    m = world.midnight
    cli = _cli(world, "history", "--gpu", "H100")
    api = _api(world, "/api/v1/history", gpu="H100")
    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.history(gpu="H100")
    api_rows = frame.to_dict("records")
    for rows in (cli, api, api_rows):
        steps = _steps(rows, "price_per_gpu_hour_usd")
        # no step before the first observation (M-3d+10h): the first is M-2d; the
        # midnights carry usdcloud's 3.50; the last step is now, the AED offer's 2.70
        assert steps[:3] == [
            (m - timedelta(days=2), "usdcloud", D("3.5")),
            (m - timedelta(days=1), "usdcloud", D("3.5")),
            (m, "usdcloud", D("3.5")),
        ]
        assert len(steps) == 4 and steps[3][0] > m
        assert steps[3][1:] == ("aedcloud", D("2.7"))
    # and says since when data exists: the first observation, M-3d+10h
    since = world.first_seen
    r = httpx.get(f"{world.web}/api/v1/history", params={"gpu": "H100"}, timeout=30)
    assert r.headers["X-Data-Since"] == since.isoformat().replace("+00:00", "Z")
    proc = cli_runner(world.url, world.tmp)(
        "--config", str(world.config), "history", "--gpu", "H100", "--format", "json"
    )
    assert proc.stderr.strip() == (
        f"gpu-tracker: data since {since:%Y-%m-%d %H:%M} UTC: no row before it"
    )
    # = offers' cheapest now
    assert (
        _cli(world, "offers", "--gpu", "H100", "--sort", "price_per_gpu")[0][
            "price_per_gpu_hour_usd"
        ]
        == "2.7"
    )
    # the GPU page: the on-demand chart's last point and the "Cheapest now" table
    page = _page(world, "/gpu", name="H100-SXM")
    found = re.search(r'data-name="on-demand" data-points="([^"]*)"', page)
    assert found is not None
    points = json.loads(html.unescape(found.group(1)))
    assert D(points[-1][2]) == D("2.7")
    assert D(points[0][2]) == D("3.5")
    cheapest = _table(page)[0]
    assert cheapest[0][0] == "on-demand" and cheapest[1][0] == "2.70"


def test_one_offer_history_agrees(world: World) -> None:
    m = world.midnight
    args = {"provider": "usdcloud", "instance_type": "u.h100", "region": "r1"}
    cli = _cli(world, "history", "-p", "usdcloud", "-i", "u.h100", "-r", "r1", "--resample", "1d")
    api = _api(world, "/api/v1/history", **args, resample="1d")
    with tracker.api.connect(world.url, config=world.config) as t:
        frame = t.history(**args, resample="1d")
    for rows in (cli, api, frame.to_dict("records")):
        steps = _steps(rows, "price_per_hour_usd")
        assert [s[0] for s in steps[:3]] == [m - timedelta(days=d) for d in (2, 1, 0)]
        assert [s[2] for s in steps] == [D("3.5"), D("3.5"), D("3.5"), D("2.96")]
    intervals = _cli(world, "history", "-p", "usdcloud", "-i", "u.h100", "-r", "r1")
    assert [r["price_per_hour"] for r in intervals] == ["3.5", "2.96"]
    assert intervals[0]["first_seen"] == world.first_seen.isoformat().replace("+00:00", "Z")
    assert _api(world, "/api/v1/history", **args) == intervals


def test_the_python_api_answers_an_empty_store_with_the_columns(tmp_path: Path) -> None:
    """No row is still a frame with the JSON rows' columns (a notebook can select them)."""
    with tracker.api.connect(f"sqlite:///{tmp_path / 'empty.db'}") as t:
        assert list(t.offers().columns) == list(OFFER_ROW_KEYS)
        assert list(t.recommend("llm-7b-lora").columns) == list(RANKING_ROW_KEYS)
        assert t.history(gpu="H100").empty


def test_tables_and_pages_read_through_one_format(world: World) -> None:
    """What people read (not JSON): money to the cent, "on-demand", times "… UTC"."""
    run = cli_runner(world.url, world.tmp)
    offers = run("--config", str(world.config), "offers", "--gpu", "H100")
    assert offers.returncode == 0, offers.stderr
    aed = next(line for line in offers.stdout.splitlines() if "aedcloud" in line)
    assert "on-demand" in aed and "1× H100-SXM" in aed and aed.split()[-2:] == ["2.70", "2.70"]
    history = run("--config", str(world.config), "history", "--gpu", "H100")
    assert history.returncode == 0, history.stderr
    first = f"{world.midnight - timedelta(days=2):%Y-%m-%d} 00:00 UTC"
    assert any(line.startswith(first) for line in history.stdout.splitlines()), history.stdout
    row = _table(_page(world, "/offers", gpu="H100"))[0]
    assert row[4][0] == "on-demand"  # pricing
    # price since: after provider … VRAM, fabric, Gb/s, $/h, $/GPU·h
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", row[11][0]), row[11]


def test_the_python_api_says_what_was_wrong_in_one_line(tmp_path: Path) -> None:
    with tracker.api.connect(f"sqlite:///{tmp_path / 'empty.db'}") as t:
        cases = [
            (lambda: t.offers(pricing="bogus"), "pricing: 'bogus' is not one of on_demand"),
            (lambda: t.offers(currency="XXX"), "currency: no exchange rate stored for XXX"),
            (lambda: t.history(gpu="H1000"), "--gpu 'h1000': unknown GPU"),
            (lambda: t.recommend("llm-7b-lora", tokenz=1e9), "tokenz: unknown field"),
        ]
        for call, message in cases:
            with pytest.raises(ValueError, match=re.escape(message)) as caught:
                call()
            assert "\n" not in str(caught.value)
