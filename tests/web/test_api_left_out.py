"""/api/v1/compare and /api/v1/history read foreign prices as the CLI does: at the
configured ``fx_rates`` too, and an offer left out for want of a rate is logged (as
/api/v1/offers logs it), never dropped silently."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, ClassVar

import httpx
import pytest

from tests.conftest import make_offer
from tests.web.conftest import serve
from tests.web.store import DAY0, Beta, beta_offers
from tracker.collect import run_collector
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine


class Gamma(Beta):
    name: ClassVar[str] = "gamma"


AED_H100 = make_offer(
    provider="gamma",
    instance_type="g.h100",
    region="me-central-1",
    gpu_model="H100-SXM",
    gpu_count=Decimal(1),
    gpu_memory_gib=Decimal(80),
    price_per_hour=Decimal("0.5"),
    currency="AED",
)
HISTORY = {"gpu": "H100", "since": "2026-03-01", "until": "2026-03-02"}
LEFT_OUT = "1 offer left out of the USD view: no exchange rate for AED (1)"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Engine]]:
    """beta's USD offers and gamma's AED H100 (no ECB rate for AED), collected on DAY0."""
    url = f"sqlite:///{tmp_path_factory.mktemp('left_out') / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    settings = Settings(database_url=url)
    for collector in (Beta(beta_offers()), Gamma([AED_H100])):
        assert run_collector(engine, collector, settings, now=DAY0).ok
    yield url, engine
    engine.dispose()


def _get(
    settings: Settings, engine: Engine, path: str, params: dict[str, str]
) -> list[dict[str, Any]]:
    server = serve(settings, engine)
    try:
        r = httpx.get(f"{server.url}{path}", params=params, timeout=30)
    finally:
        server.stop()
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = r.json()
    return rows


def test_compare_and_history_log_offers_without_a_rate(
    store: tuple[str, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    url, engine = store
    caplog.set_level(logging.WARNING)
    settings = Settings(database_url=url)
    compare = _get(settings, engine, "/api/v1/compare", {"gpu": "H100"})
    # only beta is compared: gamma's 0.5 AED has no rate, so it is left out and counted
    assert [(r["provider"], r["on_demand"]) for r in compare] == [("beta", "3.6")]
    history = _get(settings, engine, "/api/v1/history", HISTORY)
    # two daily steps (03-01, 03-02), each the cheapest on-demand: beta 3.60 / 1 GPU
    assert [r["provider"] for r in history] == ["beta", "beta"]
    messages = [r.getMessage() for r in caplog.records]
    assert f"/api/v1/compare: {LEFT_OUT}" in " ".join(messages)
    assert f"/api/v1/history: {LEFT_OUT}" in " ".join(messages)


def test_compare_and_history_use_the_configured_fx_rates(
    store: tuple[str, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    url, engine = store
    caplog.set_level(logging.WARNING)
    settings = Settings(database_url=url, fx_rates={"AED": Decimal("0.27")})
    compare = _get(settings, engine, "/api/v1/compare", {"gpu": "H100"})
    # gamma: 0.5 AED × 0.27 USD/AED = 0.135 USD per GPU-hour, cheaper than beta's 3.60
    assert [(r["provider"], r["on_demand"]) for r in compare] == [
        ("gamma", "0.135"),
        ("beta", "3.6"),
    ]
    history = _get(settings, engine, "/api/v1/history", HISTORY)
    assert [(r["provider"], r["price_per_gpu_hour_usd"]) for r in history] == [
        ("gamma", "0.135"),
        ("gamma", "0.135"),
    ]
    assert "left out" not in caplog.text


def test_gpu_page_chart_uses_the_configured_fx_rates(store: tuple[str, Engine]) -> None:
    """The GPU page's history chart is ``history --gpu`` at the same rates as its table."""
    url, engine = store
    server = serve(Settings(database_url=url, fx_rates={"AED": Decimal("0.27")}), engine)
    try:
        r = httpx.get(f"{server.url}/gpu", params={"name": "H100-SXM"}, timeout=30)
    finally:
        server.stop()
    assert r.status_code == 200, r.text
    found = re.search(r'data-name="on-demand" data-points="([^"]+)"', r.text)
    assert found is not None, r.text
    points = json.loads(found.group(1).replace("&quot;", '"'))
    # every daily step's cheapest on-demand: gamma 0.5 AED × 0.27 = 0.135 USD per GPU-hour
    # (without fx_rates beta's 3.60 would be the cheapest)
    assert {value for _start, _end, value in points} == {"0.135"}


def test_profiles_page_ranks_at_fx_rates_and_says_what_it_left_out(
    store: tuple[str, Engine],
) -> None:
    """The Profiles page ranks as ``recommend`` does: gamma's AED offer is ranked with
    fx_rates.AED and, without it, left out and said so on the page."""
    url, engine = store

    def ranked(settings: Settings) -> tuple[list[str], str]:
        server = serve(settings, engine)
        try:
            r = httpx.get(f"{server.url}/profiles", params={"profile": "llm-7b-lora"}, timeout=30)
        finally:
            server.stop()
        assert r.status_code == 200, r.text
        return re.findall(r'data-value="\d+">\d+</td><td>([a-z]+)</td>', r.text), r.text

    # 0.5 AED × 0.27 = 0.135 USD/h: the cheapest H100 by far, so ranked first
    providers, page = ranked(Settings(database_url=url, fx_rates={"AED": Decimal("0.27")}))
    assert providers[0] == "gamma" and "left out" not in page
    providers, page = ranked(Settings(database_url=url))
    assert "gamma" not in providers
    assert "1 offer left out: no exchange rate for AED (1)" in page
