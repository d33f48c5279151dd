"""Stored rows no write would make today never fail a page (issue 44), on both engines.

A memory size stored as 0 (what 0.00000000004 became before the precision check) made
``/offers``, ``/profiles``, ``/api/v1/offers`` and ``/api/v1/recommend`` answer 500; a run
stored at 9999-12-31T23:59:59Z made the offer page 500 (its chart's time axis padded
past the last datetime).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import ClassVar

import httpx
from sqlalchemy import Engine, text

from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tests.web.conftest import serve
from tracker.collect import run_collector
from tracker.settings import Settings


class Acme(ListCollector):
    name: ClassVar[str] = "acme"


def _store(engine: Engine, *instance_types: str, at: datetime | None = None) -> None:
    offers = [
        make_offer(provider="acme", instance_type=i, region="us", gpu_model="H100-SXM",
                   gpu_count=Decimal(1), gpu_memory_gib=Decimal(80), price_per_hour=Decimal(3))
        for i in instance_types
    ]  # fmt: skip
    summary = run_collector(engine, Acme(offers), Settings(), now=at)
    assert summary.status == "succeeded", summary.error


def _get_all(engine: Engine, paths: list[str]) -> dict[str, httpx.Response]:
    url = str(engine.url.render_as_string(hide_password=False))
    server = serve(Settings(database_url=url), engine)
    try:
        return {p: httpx.get(server.url + p, timeout=30) for p in paths}
    finally:
        server.stop()


def test_a_stored_row_the_model_refuses_is_left_out_of_every_page(engine: Engine) -> None:
    _store(engine, "good.1", "zero.1")
    with engine.begin() as conn:
        conn.execute(text("UPDATE series SET memory_gib = 0 WHERE instance_type = 'zero.1'"))
    paths = ["/offers", "/profiles", "/api/v1/offers", "/api/v1/recommend?profile=llm-7b-lora"]
    answers = _get_all(engine, paths)
    assert {p: r.status_code for p, r in answers.items()} == dict.fromkeys(paths, 200)
    listed = answers["/api/v1/offers"].json()
    rows = listed["offers"] if isinstance(listed, dict) else listed
    assert [r["instance_type"] for r in rows] == ["good.1"]
    assert "zero.1" not in answers["/offers"].text and "good.1" in answers["/offers"].text


def test_a_price_stored_at_the_end_of_the_calendar_shows(engine: Engine) -> None:
    _store(engine, "far.1", at=datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC))
    paths = ["/offer?provider=acme&instance_type=far.1&region=us", "/offers", "/api/v1/offers"]
    answers = _get_all(engine, paths)
    assert {p: r.status_code for p, r in answers.items()} == dict.fromkeys(paths, 200)
    assert "9999-12-31" in answers[paths[0]].text
