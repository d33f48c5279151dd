"""/api/v1/offers pages in SQL, and a burst waits its turn (issue 44.3).

The reproductions: ``?limit=1`` read, converted and sorted every matching offer in
Python (7.7 s at 100,000 offers; bench/api_offers.py measures it now), and 200
requests 20 at a time emptied the connection pool: ``QueuePool limit … reached``
503s for everyone else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.web.conftest import Site, serve
from tests.web.store import fill
from tracker.settings import Settings, WebSettings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine
from tracker.web.admission import Admission

# The store's 8 listed offers, cheapest first ($/hour; tests/web/store.py, day 2):
# beta.l4 0.80, beta.h100 spot 2.00, beta.a100 2.20, alpha.1xa100 2.50,
# beta.h100 3.60, alpha.8xh100 spot 12.00, reserved 24.00, on-demand 32.00.
CHEAPEST_FIRST = [
    "0.80",
    "2.00",
    "2.20",
    "2.50",
    "3.60",
    "12.00",
    "24.00",
    "32.00",
]


def _prices(rows: list[dict[str, Any]]) -> list[str]:
    return [f"{float(r['price_per_hour']):.2f}" for r in rows]


def test_offset_and_limit_page_through_the_cli_order(site: Site) -> None:
    first = site.get("/api/v1/offers", params={"limit": "3"})
    assert first.status_code == 200
    assert _prices(first.json()) == CHEAPEST_FIRST[:3]
    assert first.headers["x-total-count"] == "8"
    assert first.headers["link"] == '</api/v1/offers?limit=3&offset=3>; rel="next"'
    second = site.get("/api/v1/offers", params={"limit": "3", "offset": "3"})
    assert _prices(second.json()) == CHEAPEST_FIRST[3:6]
    last = site.get("/api/v1/offers", params={"limit": "3", "offset": "6"})
    assert _prices(last.json()) == CHEAPEST_FIRST[6:]
    assert "link" not in last.headers  # nothing after the last page
    past = site.get("/api/v1/offers", params={"offset": "8"})
    assert past.json() == [] and past.headers["x-total-count"] == "8"
    everything = site.get("/api/v1/offers")
    assert _prices(everything.json()) == CHEAPEST_FIRST and "link" not in everything.headers


def test_the_filters_travel_to_the_next_page(site: Site) -> None:
    # on-demand offers: 0.80, 2.20, 2.50, 3.60, 32.00 (five of them)
    r = site.get("/api/v1/offers", params={"pricing": "on_demand", "limit": "2"})
    assert _prices(r.json()) == ["0.80", "2.20"]
    assert r.headers["x-total-count"] == "5"
    assert r.headers["link"] == '</api/v1/offers?pricing=on_demand&limit=2&offset=2>; rel="next"'


def test_the_listing_is_not_read_whole(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """``current_offers`` is the CLI's whole-listing read; the route must not use it."""
    from tracker.store import reads

    def whole(*_a: object, **_k: object) -> None:
        raise AssertionError("/api/v1/offers read every matching offer")

    monkeypatch.setattr(reads, "current_offers", whole)
    r = site.get("/api/v1/offers", params={"limit": "1"})
    assert r.status_code == 200, r.text
    assert _prices(r.json()) == ["0.80"]


@pytest.fixture
def small_max_limit(site: Site) -> Iterator[Site]:
    settings = Settings(database_url=site.database_url, web=WebSettings(max_limit=3))
    server = serve(settings, site.engine)
    yield Site(server.url, site.engine, settings, site.database_url)
    server.stop()


def test_without_a_limit_one_page_of_max_limit_rows(small_max_limit: Site) -> None:
    r = small_max_limit.get("/api/v1/offers")
    assert _prices(r.json()) == CHEAPEST_FIRST[:3]
    assert r.headers["link"] == '</api/v1/offers?offset=3>; rel="next"'


@pytest.mark.parametrize("bad", ["-1", "x", "10000001"])
def test_a_bad_offset_is_a_400(site: Site, bad: str) -> None:
    r = site.get("/api/v1/offers", params={"offset": bad})
    assert r.status_code == 400 and r.json()["error"].startswith("offset:")


# -- a burst ---------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def tight_pool(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A filled store behind a pool of 2 connections that waits 0.05 s for one: a
    burst of 20 without admission control asks for 20 connections and gets 503s."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('burst') / 'tracker.db'}"
    else:
        url = request.getfixturevalue("pg_url")
        request.getfixturevalue("pg_engine")  # freshly migrated, empty
    setup = make_engine(url)
    migrate.upgrade(setup)
    fill(setup, Settings(database_url=url))
    setup.dispose()
    engine = make_engine(url, pool_size=2, max_overflow=0, pool_timeout=0.05)
    yield url, engine
    engine.dispose()


def _burst(url: str, total: int = 200, at_once: int = 20) -> list[httpx.Response]:
    with httpx.Client(timeout=60) as client, ThreadPoolExecutor(at_once) as pool:
        return list(pool.map(lambda _: client.get(f"{url}/api/v1/offers?limit=5"), range(total)))


def test_a_burst_never_becomes_503s(tight_pool: tuple[str, Engine]) -> None:
    url, engine = tight_pool
    settings = Settings(database_url=url, web=WebSettings(max_concurrent=2, queue_seconds=30))
    server = serve(settings, engine)
    try:
        answers = _burst(server.url)
    finally:
        server.stop()
    statuses = [r.status_code for r in answers]
    assert 503 not in statuses
    assert statuses.count(200) + statuses.count(429) == 200
    assert all(r.headers.get("retry-after") for r in answers if r.status_code == 429)
    assert statuses.count(200) == 200  # 20 at once fit the queue (100) within 30 s


def test_the_same_burst_without_a_bound_fails(tight_pool: tuple[str, Engine]) -> None:
    """The control: the store and burst of the test above, admission opened wide. Its
    pool is one connection that waits a millisecond, so any two of the 20 requests in
    flight at once that read together make a 503 (with the test's 2 connections and
    0.05 s, a fast machine could serve a burst without ever needing a third)."""
    url, _ = tight_pool
    engine = make_engine(url, pool_size=1, max_overflow=0, pool_timeout=0.001)
    settings = Settings(database_url=url, web=WebSettings(max_concurrent=1000))
    server = serve(settings, engine)
    try:
        statuses = [r.status_code for r in _burst(server.url)]
    finally:
        server.stop()
        engine.dispose()
    assert 503 in statuses


def _app_holding(release: asyncio.Event) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    return app


async def _call(app: Any, path: str = "/api/v1/offers") -> tuple[int, dict[bytes, bytes]]:
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    await app({"type": "http", "path": path, "method": "GET"}, receive, send)
    return sent[0]["status"], dict(sent[0]["headers"])


def test_past_the_queue_a_429_with_retry_after() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        guarded = Admission(_app_holding(release), limit=1, queued=1, wait=30)
        running = asyncio.create_task(_call(guarded))
        await asyncio.sleep(0.01)
        waiting = asyncio.create_task(_call(guarded))
        await asyncio.sleep(0.01)
        status, headers = await _call(guarded)  # the queue (1) is full
        assert status == 429 and headers[b"retry-after"] == b"15"
        assert not waiting.done()
        # the probes never queue, even now
        probe = asyncio.create_task(_call(guarded, "/livez"))
        await asyncio.sleep(0.01)
        assert not probe.done()  # it reached the app (which holds every request)
        release.set()
        assert (await running)[0] == 200 and (await waiting)[0] == 200
        assert (await probe)[0] == 200

    asyncio.run(scenario())


def test_a_request_that_waits_too_long_is_a_429() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        guarded = Admission(_app_holding(release), limit=1, queued=5, wait=0.05)
        running = asyncio.create_task(_call(guarded))
        await asyncio.sleep(0.01)
        status, headers = await _call(guarded)
        assert status == 429 and headers[b"retry-after"] == b"1"
        assert guarded.waiting == 0
        release.set()
        assert (await running)[0] == 200
        assert (await _call(guarded))[0] == 200  # the turn it gave up is not lost

    asyncio.run(scenario())
