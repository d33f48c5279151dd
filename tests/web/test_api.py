"""/api/v1 answers the CLI's JSON rows; bad input is a one-line 400; the token holds."""

from __future__ import annotations

import base64
import html
import json
import logging
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.conftest import cli_runner
from tests.web.conftest import TOKEN, Site, serve
from tracker.settings import Settings
from tracker.store.engine import Engine, make_engine


def cli_json(site: Site, tmp_path: Path, *args: str) -> object:
    result = cli_runner(site.database_url, tmp_path)(*args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_offers_are_the_cli_rows_for_the_same_filters(site: Site, tmp_path: Path) -> None:
    api = site.get("/api/v1/offers", params={"gpu": "H100", "provider": ["alpha", "beta"]})
    assert api.status_code == 200 and api.headers["content-type"] == "application/json"
    rows = api.json()
    assert rows == cli_json(site, tmp_path, "offers", "--gpu", "H100", "-p", "alpha", "-p", "beta")
    # H100-SXM offers: alpha on-demand, spot, reserved + beta on-demand, spot = 5, cheapest
    # per hour first: beta spot 2.00, beta on-demand 3.60, alpha spot 12.00 (day 2),
    # alpha reserved 24.00, alpha on-demand 32.00.
    assert [(r["provider"], r["pricing"], r["price_per_hour_usd"]) for r in rows] == [
        ("beta", "spot", "2"),
        ("beta", "on_demand", "3.6"),
        ("alpha", "spot", "12"),
        ("alpha", "reserved_1y", "24"),
        ("alpha", "on_demand", "32"),
    ]


def test_offers_sort_limit_and_numeric_filters_match_the_cli(site: Site, tmp_path: Path) -> None:
    query = {"sort": "price_per_gpu", "limit": "2", "min_vram": "40", "pricing": "spot"}
    rows = site.get("/api/v1/offers", params=query).json()
    expected = cli_json(
        site,
        tmp_path,
        "offers",
        "--sort",
        "price_per_gpu",
        "-n",
        "2",
        "--min-vram",
        "40",
        "--pricing",
        "spot",
    )
    assert rows == expected
    # Per GPU: alpha spot 12.00 / 8 = 1.50 before beta spot 2.00 / 1.
    assert [r["price_per_gpu_hour_usd"] for r in rows] == ["1.5", "2"]


def test_offers_in_another_currency_use_the_configured_rate(
    store_url: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = store_url
    server = serve(Settings(database_url=url, fx_rates={"EUR": Decimal("1.25")}), engine)
    try:
        r = httpx.get(
            f"{server.url}/api/v1/offers",
            params={"currency": "eur", "provider": "beta", "pricing": "spot"},
            timeout=30,
        )
    finally:
        server.stop()
    assert r.status_code == 200, r.text
    [row] = r.json()
    # beta spot 2.00 USD at 1.25 USD per EUR: 2.00 / 1.25 = 1.60 EUR; USD keys unchanged
    assert (row["display_currency"], Decimal(row["display_price_per_hour"])) == (
        "EUR",
        Decimal("1.6"),
    )
    assert row["price_per_hour_usd"] == "2"


def test_recommend_is_the_cli_ranking(site: Site, tmp_path: Path) -> None:
    api = site.get("/api/v1/recommend", params={"profile": "bert-base-finetune", "top": 3})
    assert api.status_code == 200
    expected = cli_json(site, tmp_path, "recommend", "--profile", "bert-base-finetune", "-n", "3")
    assert api.json() == expected and len(expected) == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "params", "names"),
    [
        ("/api/v1/offers", {"limit": "0"}, "limit"),
        ("/api/v1/offers", {"limit": "many"}, "limit"),
        ("/api/v1/offers", {"limit": "20000"}, "limit"),
        ("/api/v1/offers", {"pricing": "cheap"}, "pricing"),
        ("/api/v1/offers", {"sort": "name"}, "sort"),
        ("/api/v1/offers", {"min_vram": "-1"}, "min_vram"),
        ("/api/v1/offers", {"min_gpus": "nan"}, "min_gpus"),
        ("/api/v1/offers", {"gpus": "H100"}, "gpus"),
        ("/api/v1/offers", {"gpu": "Z9000"}, "gpu: 'z9000': unknown GPU"),
        ("/api/v1/offers", {"provider": "café"}, "is not a name (printable ASCII)"),
        ("/api/v1/offers", {"currency": "dollars"}, "currency 'dollars': expected a three-letter"),
        ("/api/v1/offers", {"currency": "xyz"}, "currency: no exchange rate stored for XYZ"),
        ("/api/v1/recommend", {}, "profile"),
        ("/api/v1/recommend", {"profile": "nope"}, "nope"),
        ("/api/v1/recommend", {"profile": "bert-base-finetune", "top": "-3"}, "top"),
        ("/offers", {"page": "99"}, "page"),
        ("/offers", {"min_vram": "lots"}, "min_vram"),
        ("/offer", {"provider": "alpha"}, "instance_type"),
        ("/offer", {"provider": "x", "instance_type": "y", "region": "z"}, "no stored offer"),
        ("/profiles", {"profile": "nope"}, "nope"),
        ("/gpu", {"name": "H100"}, "not a canonical GPU model"),
    ],
)
def test_bad_parameters_are_a_one_line_400(
    site: Site, path: str, params: dict[str, str], names: str
) -> None:
    r = site.get(path, params=params)
    assert r.status_code == 400, r.text
    assert "Traceback" not in r.text
    if path.startswith("/api/"):
        assert r.headers["content-type"] == "application/json"
        assert "\n" not in r.text and names in r.json()["error"]
    else:  # a page's error is a page: the navigation, one line saying why, a way back
        assert names in error_reason(r)
        # back to the page without its query; /offer and /gpu need one: the Overview
        back = path if path in ("/offers", "/profiles") else "/"
        assert f'<a id="back" href="{back}">' in r.text


def error_reason(r: httpx.Response) -> str:
    """The one-line reason of an HTML error page, which must carry the site's navigation."""
    assert r.headers["content-type"].startswith("text/html")
    assert '<nav id="nav">' in r.text and 'href="/offers"' in r.text
    reason = r.text.split('<p class="error-reason" id="reason">')[1].split("</p>")[0]
    assert "\n" not in reason
    return html.unescape(reason)


def test_a_database_that_went_away_is_a_503(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gone' / 'tracker.db'}"  # its folder does not exist
    engine = make_engine(url)
    server = serve(Settings(database_url=url), engine)
    try:
        for path in ("/api/v1/offers", "/", "/offers", "/profiles"):
            r = httpx.get(server.url + path, timeout=30)
            assert r.status_code == 503, (path, r.text)
            if path.startswith("/api/"):
                assert r.json()["error"].startswith("database unavailable: ")
                assert "\n" not in r.text
            else:
                assert "database unavailable: " in error_reason(r)
    finally:
        server.stop()
        engine.dispose()


def test_read_only_and_security_headers(site: Site) -> None:
    for path in ("/", "/api/v1/offers", "/static/sort.js", "/nowhere"):
        r = site.get(path)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
    assert site.get("/api/v1/nowhere").json() == {"error": "not found: /api/v1/nowhere"}
    assert error_reason(site.get("/nowhere")) == "<strong>404</strong> not found: /nowhere"
    for path in ("/api/v1/offers", "/", "/offers"):
        r = httpx.post(f"{site.url}{path}", timeout=30)
        assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD", path
    assert "read-only" in httpx.delete(f"{site.url}/api/v1/offers", timeout=30).json()["error"]


def test_the_token_is_required_and_never_logged(
    locked_site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    for path in ("/", "/api/v1/offers", "/metrics", "/api/openapi.json", "/static/style.css"):
        missing = locked_site.get(path)
        assert missing.status_code == 401 and "www-authenticate" in missing.headers
        wrong = locked_site.get(path, headers={"Authorization": "Bearer not-it"})
        assert wrong.status_code == 401
        if path == "/":  # a page's 401 is a page; the API's stays one line of JSON
            assert missing.headers["content-type"].startswith("text/html")
            assert "<strong>401</strong> authentication required" in missing.text
        elif path.startswith("/api/"):
            assert missing.json() == {"error": "authentication required: send the web token"}
    for auth in (f"Bearer {TOKEN}", f"Basic {basic}"):
        assert locked_site.get("/api/v1/offers", headers={"Authorization": auth}).status_code == 200
        assert locked_site.get("/", headers={"Authorization": auth}).status_code == 200
    # The probes stay open for orchestrators, and carry no prices.
    assert locked_site.get("/livez").status_code == 200
    assert locked_site.get("/healthz").status_code in (200, 503)
    assert any("/api/v1/offers" in r.getMessage() for r in caplog.records)  # requests are logged
    assert TOKEN not in caplog.text and basic not in caplog.text


def test_openapi_documents_the_routes(site: Site) -> None:
    schema = site.get("/api/openapi.json").json()
    offers = schema["paths"]["/api/v1/offers"]["get"]
    assert {p["name"] for p in offers["parameters"]} == {
        "gpu",
        "provider",
        "region",
        "pricing",
        "min_vram",
        "min_gpus",
        "sort",
        "limit",
        "offset",
        "currency",
    }
    page = site.get("/api/docs")
    assert page.status_code == 200 and "/api/v1/recommend" in page.text
