"""A NUL in a parameter and a repeated single-valued parameter are a 400 (issue 44.8).

The reproductions: ``/api/v1/history?…&instance_type=%00`` was a 500 with a logged
traceback on Postgres (SQLite: a 400 or an empty answer), and ``?limit=1&limit=10000``
silently took the last value.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from tests.web.conftest import Site, serve
from tests.web.store import fill
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine

ONE_OFFER = {"provider": "alpha", "instance_type": "alpha.8xh100", "region": "us-east-1"}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def any_site(request: pytest.FixtureRequest, site: Site) -> Iterator[Site]:
    """The module's SQLite site, and the same store on Postgres."""
    if request.param == "sqlite":
        yield site
        return
    url = request.getfixturevalue("pg_url")
    engine = make_engine(url)
    migrate.upgrade(engine)
    settings = Settings(database_url=url)
    fill(engine, settings)
    server = serve(settings, engine)
    try:
        yield Site(server.url, engine, settings, url)
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.parametrize(
    "params",
    [
        {**ONE_OFFER, "instance_type": "\x00"},
        {**ONE_OFFER, "zone": "us-east-1a\x00"},
        {**ONE_OFFER, "payment_option": "\x00"},
        {**ONE_OFFER, "since": "30d\x00"},
        {"gpu": "H100\x00"},
        {**ONE_OFFER, "region": "us-east-1\x00"},
    ],
)
def test_a_nul_in_history_is_a_400_on_both_engines(
    any_site: Site, params: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    r = any_site.get("/api/v1/history", params=params)
    assert r.status_code == 400, r.text
    (name,) = [k for k, v in params.items() if "\x00" in v]
    assert r.json() == {"error": f"{name}: a NUL character (%00) is not allowed in a parameter"}
    assert "Traceback" not in caplog.text and not caplog.records


def test_a_nul_anywhere_is_a_400(any_site: Site) -> None:
    for path, params in (
        ("/api/v1/offers", {"currency": "USD\x00"}),
        ("/api/v1/alerts", {"since": "\x00"}),
        ("/api/v1/recommend", {"profile": "x\x00"}),
        ("/api/v1/plan", {"gpu": "H100", "steady_gpus": "1", "current_provider": "\x00"}),
    ):
        r = any_site.get(path, params=params)
        assert r.status_code == 400 and "NUL" in r.json()["error"], (path, r.text)
    page = any_site.get("/offer", params={**ONE_OFFER, "instance_type": "a\x00"})
    assert page.status_code == 400 and "NUL character" in page.text  # a page's error page


def _get(site: Site, path_and_query: str) -> httpx.Response:
    return httpx.get(f"{site.url}{path_and_query}", timeout=30)


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("/api/v1/offers?limit=1&limit=10000", "limit"),
        ("/api/v1/offers?sort=price&sort=price_per_gpu", "sort"),
        ("/api/v1/offers?currency=USD&currency=EUR", "currency"),
        ("/api/v1/history?gpu=H100&since=7d&since=30d", "since"),
        ("/api/v1/alerts?limit=1&limit=2", "limit"),
        ("/api/v1/recommend?profile=a&profile=b", "profile"),
    ],
)
def test_a_repeated_single_value_is_a_400(site: Site, query: str, name: str) -> None:
    r = _get(site, query)
    assert r.status_code == 400
    assert r.json() == {"error": f"{name}: given more than once; this parameter takes one value"}


def test_lists_still_take_several_values(site: Site) -> None:
    # tests/web/store.py: H100-SXM on-demand and spot of alpha and of beta (4), and
    # beta's on-demand L4 (1): 5 rows
    r = _get(site, "/api/v1/offers?gpu=H100-SXM&gpu=L4&pricing=on_demand&pricing=spot")
    assert r.status_code == 200, r.text
    models = sorted({row["gpu_model"] for row in r.json()})
    assert models == ["H100-SXM", "L4"]
    assert len(r.json()) == 5
    # the pages' forms are not checked: the OpenAPI document does not type them
    assert _get(site, "/offers?gpu=H100-SXM&gpu=L4").status_code == 200
