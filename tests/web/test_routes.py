"""Routes every reader expects: HEAD on each GET, ``Allow`` on a 405, ``/docs``,
``/api/v1/`` as an index, error pages with the navigation, the Overview's order and
the Collectors page's status column."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from fastapi.routing import APIRoute
from starlette.routing import Route

from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tests.web.conftest import Site, serve
from tracker.collect import run_collector
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine
from tracker.web import WebContext, create_app
from tracker.web.pages import job_status

GET_ROUTES = {
    "/": "",
    "/offers": "",
    "/offer": "?provider=alpha&instance_type=alpha.8xh100&region=us-east-1",
    "/gpu": "?name=H100-SXM",
    "/compare": "",
    "/profiles": "",
    "/plan": "?gpu=H100&steady_gpus=8",
    "/alerts": "",
    "/collectors": "",
    "/api/docs": "",
    "/docs": "",
    "/api/v1/": "",
    "/api/v1/offers": "",
    "/api/v1/recommend": "?profile=bert-base-finetune",
    "/api/v1/plan": "?gpu=H100&steady_gpus=8",
    "/api/v1/history": "?gpu=H100",
    "/api/v1/history/gpu": "?gpu=H100",
    "/api/v1/history/offer": "?provider=alpha&instance_type=alpha.8xh100&region=us-east-1",
    "/api/v1/history/offer/at": "?provider=alpha&instance_type=alpha.8xh100&region=us-east-1"
    "&at=now",
    "/api/v1/plan/burst": "?gpu=H100&burst_gpu_hours=100",
    "/api/v1/compare": "",
    "/api/v1/obtainability": "?gpu=H100",
    "/api/v1/alerts": "",
    "/api/v1/sync/offers": "",
    "/api/v1/sync/service-prices": "",
    "/api/openapi.json": "",
}
"""Each GET route of the app, with the query it needs to answer 200 (or 308)."""


def test_every_get_route_is_listed_here(site: Site) -> None:
    app = create_app(WebContext(site.settings, site.engine))
    paths = set()
    for route in app.routes:
        router = getattr(route, "original_router", None)  # an included router
        for r in router.routes if router is not None else [route]:
            if isinstance(r, APIRoute | Route) and "GET" in (r.methods or ()):
                paths.add(r.path)
    assert paths == set(GET_ROUTES)  # a new route must be added above (and to the tests)


@pytest.mark.parametrize("path", sorted(GET_ROUTES))
def test_head_answers_like_get_without_a_body(site: Site, path: str) -> None:
    url = site.url + path + GET_ROUTES[path]
    get = httpx.get(url, timeout=30)
    head = httpx.head(url, timeout=30)
    assert get.status_code in (200, 308), get.text
    assert head.status_code == get.status_code
    assert head.content == b""
    assert head.headers.get("content-type") == get.headers.get("content-type")
    assert head.headers["content-security-policy"] == get.headers["content-security-policy"]


def test_head_of_static_files_probes_and_errors(site: Site) -> None:
    css = site.get("/static/style.css")
    head = httpx.head(site.url + "/static/style.css", timeout=30)
    assert head.status_code == 200 and head.headers["content-length"] == str(len(css.content))
    assert httpx.head(site.url + "/livez", timeout=30).status_code == 200
    missing = httpx.head(site.url + "/nowhere", timeout=30)
    assert missing.status_code == 404 and missing.content == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_other_methods_are_a_405_with_allow(site: Site, method: str) -> None:
    for path in ("/", "/offers", "/api/v1/offers", "/api/v1/"):
        r = httpx.request(method, site.url + path, timeout=30)
        assert r.status_code == 405, (method, path)
        assert r.headers["allow"] == "GET, HEAD"


def test_docs_leads_to_the_api_docs(site: Site) -> None:
    r = site.get("/docs")
    assert r.status_code == 308 and r.headers["location"] == "/api/docs"
    followed = site.get("/docs", follow_redirects=True)
    assert followed.status_code == 200 and "<h1>API</h1>" in followed.text


def test_api_v1_lists_its_routes(site: Site) -> None:
    index = site.get("/api/v1/").json()
    listed = {r["path"]: r for r in index["routes"]}
    # /api/v1/history answers as ever but is not in the OpenAPI document (its parameters
    # combine in ways a schema cannot state): /api/v1/history/gpu, /offer, /offer/at are
    legacy = {"/api/v1/history"}
    assert set(listed) == {p for p in GET_ROUTES if p.startswith("/api/v1/")} - legacy
    assert listed["/api/v1/recommend"]["parameters"] == ["profile", "top", "explain"]
    assert listed["/api/v1/offers"]["methods"] == ["GET", "HEAD"]
    assert index["openapi"] == "/api/openapi.json" and index["docs"] == "/api/docs"
    bare = site.get("/api/v1")  # without the slash: sent to the index
    assert bare.status_code in (307, 308) and bare.headers["location"].endswith("/api/v1/")


@pytest.mark.parametrize(
    ("path", "status", "reason"),
    [
        ("/nowhere", 404, "not found: /nowhere"),
        ("/gpu?name=H100", 400, "name: 'H100' is not a canonical GPU model (see 'gpus')"),
        ("/offer?provider=x&instance_type=y&region=z", 400, "no stored offer x y z"),
        ("/profiles?profile=nope", 400, "unknown profile 'nope'"),
        ("/offers?page=99", 400, "page: 99 is past the last page (3)"),
        # the same answer as the CLI and the API give an unknown GPU name
        ("/offers?gpu=Z9000", 400, "gpu: 'z9000': unknown GPU"),
        ("/?gpu=Z9000", 400, "gpu: 'z9000': unknown GPU"),
    ],
)
def test_a_page_error_is_a_page_with_the_navigation(
    site: Site, path: str, status: int, reason: str
) -> None:
    r = site.get(path)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("text/html")
    nav = re.search(r'<nav id="nav">(.*?)</nav>', r.text)
    assert nav is not None and nav.group(1).count("<a ") == 8  # the whole navigation
    shown = re.search(r'<p class="error-reason" id="reason">(.*?)</p>', r.text)
    assert shown is not None and reason in shown.group(1).replace("&#39;", "'")
    assert re.search(r'<a id="back" href="[^"]+">← Back to ', r.text)


def test_overview_sorts_by_any_price_column(site: Site) -> None:
    def order(query: str) -> list[str]:
        return re.findall(r'<tr data-gpu="([^"]+)">', site.get("/" + query).text)

    # Cheapest on-demand $/GPU-h first by default: L4 0.80 < A100 2.20 < H100 3.60 (beta).
    assert order("") == ["L4", "A100-80GB", "H100-SXM"]
    # Spot: only H100-SXM has one (alpha 12.00 / 8 = 1.50); models without it last, by name.
    assert order("?sort=spot") == ["H100-SXM", "A100-80GB", "L4"]
    assert order("?sort=gpu") == ["A100-80GB", "H100-SXM", "L4"]
    # The filter keeps the order: alpha alone, A100 2.50 < H100 32.00 / 8 = 4.00.
    assert order("?provider=alpha&sort=on_demand") == ["A100-80GB", "H100-SXM"]
    assert site.get("/?sort=price").status_code == 400


def test_overview_marks_the_cheapest_figure_of_each_column(site: Site) -> None:
    page = site.get("/").text
    marked = re.findall(r'<td class="num (\w+)(?: price)? cheapest" data-value="([0-9.]+)"', page)
    # on-demand: L4 0.80; spot: H100 alpha 1.50; reserved: H100 alpha 24.00 / 8 = 3.00.
    assert [(g, v.rstrip("0")) for g, v in marked] == [
        ("on_demand", "0.8"),
        ("spot", "1.5"),
        ("reserved", "3."),
    ]


def test_gpu_names_link_to_their_page(site: Site) -> None:
    for path in ("/", "/offers?gpu=H100-SXM", "/compare", "/profiles"):
        assert 'href="/gpu?name=H100-SXM"' in site.get(path).text or path == "/profiles", path
    offers = site.get("/offers?gpu=H100-SXM").text
    assert '<a class="gpu" href="/gpu?name=H100-SXM">8× H100-SXM</a>' in offers


def test_job_status_is_the_later_outcome() -> None:
    early, late = "2026-03-01T00:00:00+00:00", "2026-03-01T00:00:00.500000+00:00"
    assert job_status({"last_success": late, "last_failure": early}) == "succeeded"
    assert job_status({"last_success": early, "last_failure": late}) == "failed"
    assert job_status({"last_success": None, "last_failure": None}) == "never run"
    assert job_status({"last_status": "failed", "last_success": late}) == "failed"
    assert job_status({"running_since": late, "last_status": "succeeded"}) == "running"


class Lambda(ListCollector):
    name: ClassVar[str] = "lambda"


@pytest.fixture
def ran_site(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    at = datetime.now(UTC) - timedelta(minutes=5)
    offer = make_offer(provider="lambda", instance_type="gpu_1x_h100_sxm5")
    assert run_collector(engine, Lambda([offer]), Settings(database_url=url), now=at).ok
    server = serve(Settings(database_url=url), engine)
    yield server.url
    server.stop()
    engine.dispose()


def test_collectors_page_fills_the_status_column(ran_site: str) -> None:
    page = httpx.get(ran_site + "/collectors", timeout=30).text
    rows = re.findall(r"<tr[^>]*><td>(\w+)</td><td>(\w+)</td>.*?job-status[^>]*>([^<]*)<", page)
    status = {(c, s): st for c, s, st in rows}
    # The dashboard alone reads the run log: lambda's run (scope all) succeeded.
    assert status[("lambda", "standard")] == "succeeded"
    assert all(st for st in status.values())
    assert status.get(("runpod", "standard"), "never run") == "never run"


def test_api_docs_write_types_in_words(site: Site) -> None:
    page = site.get("/api/docs").text
    types = set(re.findall(r'<td class="type wrap">([^<]*)</td>', page))
    # /api/v1/recommend?top: Query(ge=1, le=1000); ?pricing: tracker.models.PricingModel.
    assert "integer, ≥ 1, ≤ 1000" in types
    assert (
        "list of one of on_demand | spot | reserved_1y | reserved_3y | savings_plan_1y | "
        "savings_plan_3y | capacity_block"
    ) in types
    assert "one of price | price_per_gpu" in types
    assert "list of text, up to 200 characters, printable ASCII" in types  # provider
    assert not any("{" in t for t in types)  # no raw JSON schema
    # the plan's move object: the two query parameters it stands for, each in words
    assert (
        "query parameters migration_usd (text, up to 24 characters, a decimal from 0 to "
        "1,000,000,000), current_provider (text, up to 64 characters)"
    ) in types
    # a time in words, not its pattern
    assert "text, a time: now, today, yesterday, an age (7d, 12h) or an ISO date 2000-2999" in types
    # a docstring's ``code`` is set as code (api_offers' description)
    assert "the rows of <code>gpu-tracker offers --format json [--currency C]</code>" in page


def test_a_gpu_without_prices_says_no_data(site: Site) -> None:
    page = site.get("/gpu?name=B200").text  # in the catalog; the store sells none
    assert '<p class="empty no-data">No B200 price stored in the last 90 days.</p>' in page
    assert '<svg class="chart"' not in page  # no empty axes
