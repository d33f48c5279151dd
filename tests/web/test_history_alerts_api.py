"""/api/v1/history, /compare and /alerts answer the CLI's JSON rows; the Alerts page
marks the failing channel."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.web.conftest import Site
from tests.web.test_api import cli_json

SPOT = {
    "provider": "alpha",
    "instance_type": "alpha.8xh100",
    "region": "us-east-1",
    "pricing": "spot",
}
SPOT_ARGS = ("-p", "alpha", "-i", "alpha.8xh100", "-r", "us-east-1", "--pricing", "spot")
WINDOW = {"since": "2026-03-01", "until": "2026-03-03"}
WINDOW_ARGS = ("--since", "2026-03-01", "--until", "2026-03-03")


def test_offer_intervals_and_steps_are_the_cli_rows(site: Site, tmp_path: Path) -> None:
    intervals = site.get("/api/v1/history", params=SPOT).json()
    assert intervals == cli_json(site, tmp_path, "history", *SPOT_ARGS)
    # 16.00 (day 0), 14.00 (day 1), 12.00 (day 2, open).
    assert [r["price_per_hour"] for r in intervals] == ["16", "14", "12"]
    steps = site.get("/api/v1/history", params={**SPOT, **WINDOW, "resample": "1d"}).json()
    assert steps == cli_json(
        site, tmp_path, "history", *SPOT_ARGS, *WINDOW_ARGS, "--resample", "1d"
    )
    assert [r["price_per_hour_usd"] for r in steps] == ["16", "14", "12"]


def test_gpu_aggregate_and_compare_are_the_cli_rows(site: Site, tmp_path: Path) -> None:
    query = {"gpu": "H100", "pricing": "spot", **WINDOW}
    rows = site.get("/api/v1/history", params=query).json()
    assert rows == cli_json(
        site, tmp_path, "history", "--gpu", "H100", "--pricing", "spot", *WINDOW_ARGS
    )
    # Per GPU-hour, spot: alpha 16/8 = 2.00 ties beta 2.00 on day 0 (alpha first by
    # provider), then alpha 14/8 = 1.75 and 12/8 = 1.50.
    assert [(r["provider"], r["price_per_gpu_hour_usd"]) for r in rows] == [
        ("alpha", "2"),
        ("alpha", "1.75"),
        ("alpha", "1.5"),
    ]
    compare = site.get("/api/v1/compare", params={"gpu": "H100"}).json()
    assert compare == cli_json(site, tmp_path, "compare", "--gpu", "H100")
    assert {(r["provider"], r["spot"]) for r in compare} == {("alpha", "1.5"), ("beta", "2")}


def test_alerts_are_the_cli_rows(site: Site, tmp_path: Path) -> None:
    rows = site.get("/api/v1/alerts").json()
    assert rows == cli_json(site, tmp_path, "alerts", "list")
    assert [(r["channel"], r["status"]) for r in rows] == [
        ("email", "dead"),
        ("slack", "sent"),
        ("email", "sent"),
        ("slack", "sent"),
    ]
    failed = site.get("/api/v1/alerts", params={"failed": "true"}).json()
    assert [r["title"] for r in failed] == ["beta.h100 leads bert-base-finetune"]


@pytest.mark.parametrize(
    ("path", "params", "names"),
    [
        ("/api/v1/history", {"provider": "alpha"}, "one provider, instance_type"),
        ("/api/v1/history", {"gpu": "H100", "zone": "a"}, "drop instance_type"),
        ("/api/v1/history", {**SPOT, "resample": "fortnight"}, "fortnight"),
        ("/api/v1/history", {**SPOT, "since": "yesterday-ish"}, "yesterday-ish"),
        ("/api/v1/history", {"gpu": "Z9000"}, "unknown GPU"),
        ("/api/v1/compare", {"gpu": "Z9000"}, "unknown GPU"),
        ("/api/v1/alerts", {"since": "a while"}, "a while"),
        # beyond what a datetime holds: a 400 naming the parameter, never a 500 or 503
        ("/api/v1/alerts", {"since": "99999999999w"}, "since: not a time"),
        ("/api/v1/alerts", {"since": "0001-01-01T00:00:00+05:00"}, "since: not a time"),
        (
            "/api/v1/history",
            {"gpu": "H100", "since": "99999999999d"},
            "further back than a time can go",
        ),
        ("/api/v1/history", {**SPOT, "at": "0001-01-01T00:00:00+05:00"}, "at: 0001-01-01T00"),
        ("/api/v1/alerts", {"limit": "0"}, "limit"),
    ],
)
def test_bad_history_and_alert_parameters_are_a_one_line_400(
    site: Site, path: str, params: dict[str, str], names: str
) -> None:
    r = site.get(path, params=params)
    assert r.status_code == 400, r.text
    assert "\n" not in r.text and names in r.json()["error"]


def test_alerts_page_marks_the_failing_channel(site: Site) -> None:
    page = site.get("/alerts")
    assert page.status_code == 200
    assert 'id="failing">Failing channels: email ' in page.text  # its newest delivery is dead
    assert page.text.count('<tr class="bad">') == 2  # both email rows


def test_compare_page_shows_the_compare_rows(site: Site) -> None:
    page = site.get("/compare", params={"gpu": "H100"})
    assert page.status_code == 200
    # alpha: on-demand 32.00/8 = 4.00, spot 1.50, discount (4 - 1.5)/4 = 62.5 %;
    # the prices have not changed for 7 or 30 days: 0 %.
    row = page.text.split("<td>alpha</td>")[1].split("</tr>")[0]
    assert ">4.00<" in row and ">1.50<" in row and ">62.5 %<" in row
    assert row.count(">0 %<") == 2
    # spot 1.50 is the cheapest spot of the table (beta's is 2.00): marked; 4.00 is not.
    assert 'class="num cheapest" data-value="1.50' in row
    assert 'class="num price" data-value="4.00' in row  # the price a phone keeps in sight
    # A bar per figure, against the table's largest (alpha on-demand 4.00, 120 px):
    # on-demand 4.00 / 4.00 × 120 = 120.0 px, spot 1.50 / 4.00 × 120 = 45.0 px.
    bars = dict(
        re.findall(
            r'data-name="([a-z-]+)" data-value="[0-9.]+" x="0" y="\d+" width="([0-9.]+)"', row
        )
    )
    assert bars == {"on-demand": "120.0", "spot": "45.0"}


def test_the_history_routes_answer_the_legacy_rows(site: Site) -> None:
    """/api/v1/history/gpu, /offer and /offer/at: one question each, same rows."""
    old = site.get("/api/v1/history", params={"gpu": "H100", "pricing": "spot", **WINDOW})
    new = site.get("/api/v1/history/gpu", params={"gpu": "H100", "pricing": "spot", **WINDOW})
    assert new.status_code == 200 and new.json() == old.json() and new.json()
    assert new.headers["X-Data-Since"] == old.headers["X-Data-Since"] == "2026-03-01T00:00:00Z"
    for params in (SPOT, {**SPOT, **WINDOW, "resample": "1d"}):
        old = site.get("/api/v1/history", params=params)
        new = site.get("/api/v1/history/offer", params=params)
        assert new.status_code == 200 and new.json() == old.json() and new.json(), params
    at = {**SPOT, "at": "2026-03-02T12:00:00Z"}
    new = site.get("/api/v1/history/offer/at", params=at).json()
    assert new == site.get("/api/v1/history", params=at).json()
    assert [r["price_per_hour"] for r in new] == ["14"]  # day 1's price, 14.00


def test_the_history_routes_answer_what_was_a_400_between_valid_parameters(site: Site) -> None:
    # a window whose since is after its until holds nothing (the legacy route: a 400)
    crossed = {"gpu": "H100", "since": "2026-03-03", "until": "2026-03-01"}
    assert site.get("/api/v1/history", params=crossed).status_code == 400
    r = site.get("/api/v1/history/gpu", params=crossed)
    assert r.status_code == 200 and r.json() == []
    # hourly since 2000: 26 years of hours (over 20,000) before, but the store's data
    # starts on 2026-03-01, so the steps run from there: 16.00/8 = 2.00 at 00:00
    hourly = {"gpu": "H100", "pricing": "spot", "since": "2000-01-01", "resample": "1h"}
    assert site.get("/api/v1/history", params=hourly).status_code == 400
    rows = site.get("/api/v1/history/gpu", params=hourly).json()
    assert rows[0]["time"] == "2026-03-01T00:00:00Z"
    assert rows[0]["price_per_gpu_hour_usd"] == "2"
    # an until after now reads to now: the last row is no later than this request
    future = site.get("/api/v1/history/gpu", params={"gpu": "H100", "until": "2999-01-01"})
    assert future.status_code == 200 and future.json()[-1]["time"] < "2999"
    # no such offer: a 404, not a 400 and not an empty list
    missing = site.get("/api/v1/history/offer", params={**SPOT, "instance_type": "nope"})
    assert missing.status_code == 404 and "no stored offer" in missing.json()["error"]
    # a time outside the pattern: a 400 in words, not the pattern
    bad = site.get("/api/v1/history/offer", params={**SPOT, "since": "1999-12-31"})
    assert bad.status_code == 400 and "not a time" in bad.json()["error"]
