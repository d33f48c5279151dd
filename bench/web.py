"""Dashboard server time over a store of 100,000 offers with a year of history (Postgres).

Builds SERIES series (default 100,000) × CHANGES price intervals over 400 days (default
24: a change every ~17 days, 2.4 M intervals) with bench/history.py's own generator
(the same data: 7 providers, 10 regions, 8 GPU models, on-demand and spot, a delisted
gap every 97th interval). Then, against a real uvicorn server on 127.0.0.1, times
  overview_ms  GET /        (cheapest on-demand/spot/reserved $/GPU-h per GPU model, with
                            the 7/30-day change and the 30-day sparkline)
  offers_ms    GET /offers  (all current offers sorted, the first page rendered)
  gpu_ms       GET /gpu?name=H100-SXM (its datasheet, offers and the year's cheapest
                            history chart, read from the rollup)
as the best of REPEAT requests each, and in the same run a hand-written SQL query
returning the overview's figures (asserted equal to what the page shows): the ratio
says what the page costs on top of the database's own answer. ``--discounts`` also
times /offers with one account discount rule (15 % off cloud0's on-demand, issue 42):
the SQL then orders by the net price (a CASE over the rules in force,
tracker.store.reads._net_order) instead of the list price (``offers_net_ms``, and its
ratio to ``offers_ms`` measured in the same run).

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/web.py [--series 100000] [--changes 24] [--quick]

Last line: ``web overview_ms=X offers_ms=Y gpu_ms=Z`` (target: overview under 300 ms).

The generator's history ends on 2026-01-01, so at the real now nothing moved in the
Overview's 30-day window: the trend costs its spanning aggregate only (see
tracker.store.reads for the cost when every price moved).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from tracker.fx import Rates
from tracker.service.web import WebServer
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine
from tracker.views.overview import overview
from tracker.web import WebContext, create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scratch_db import scratch_database

from bench.history import GPUS, build  # the same data as bench/history.py

HAND_OVERVIEW = """
SELECT s.gpu_model,
       CASE WHEN s.pricing LIKE 'reserved%%' THEN 'reserved' ELSE s.pricing END AS grp,
       min(p.price / s.gpu_count)  -- every bench price is USD
FROM series AS s JOIN price_points AS p ON p.series_id = s.id AND p.ended_at IS NULL
WHERE s.delisted_at IS NULL
GROUP BY 1, 2
"""


def hand(engine: Engine) -> dict[tuple[str, str], Decimal]:
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur:
            cur.execute(HAND_OVERVIEW)
            return {(m, g): Decimal(v).quantize(Decimal("1e-6")) for m, g, v in cur.fetchall()}


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fn()  # warm caches and plans alike for both sides
    times, answer = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        answer = fn()
        times.append(time.perf_counter() - start)
    return min(times), answer


def page(url: str) -> Callable[[], str]:
    def get() -> str:
        r = httpx.get(url, timeout=120)
        r.raise_for_status()
        return r.text

    return get


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10,000 series × 12 changes")
    parser.add_argument(
        "--discounts", action="store_true", help="also /offers under a discount rule"
    )
    args = parser.parse_args()
    if args.quick:
        args.series, args.changes = 10_000, 12
    with scratch_database() as url:
        engine = make_engine(url)
        try:
            run(engine, url, args)
        finally:
            engine.dispose()


def run(engine: Engine, url: str, args: argparse.Namespace) -> None:
    """Build the data in ``url``, then time the pages against the hand-written SQL."""
    migrate.upgrade(engine)
    started = time.perf_counter()
    build(engine, args.series, args.changes)
    built = time.perf_counter() - started
    print(f"built {args.series:,} series × {args.changes} intervals in {built:.0f} s")

    settings = Settings(database_url=url)
    app = create_app(WebContext(settings, engine))
    server = WebServer("127.0.0.1:0", app)
    server.start()
    try:
        sql_s, expected = best(lambda: hand(engine), args.repeat)
        shown = {
            (row.gpu_model, group): cheapest.price_per_gpu_hour_usd
            for row in overview(engine, Rates(), datetime.now(UTC)).rows  # all USD: no rates
            for group, cheapest in row.cheapest.items()
        }
        assert shown == expected, "the overview's figures differ from the SQL answer"
        overview_s, html = best(page(f"{server.url}/"), args.repeat)
        assert all(g in html for g in GPUS)
        offers_s, html = best(page(f"{server.url}/offers"), args.repeat)
        assert f"{args.series:,}".replace(",", "") in html.replace(",", "")
        gpu_s, html = best(page(f"{server.url}/gpu?name=H100-SXM"), args.repeat)
        assert "H100-SXM" in html
    finally:
        server.stop()
    print(f"hand-written SQL of the overview's figures: {sql_s * 1000:.0f} ms")
    print(f"overview page: {overview_s * 1000:.0f} ms (ratio {overview_s / sql_s:.2f} of SQL)")
    print(f"offers page (first of {args.series // 50:,} pages): {offers_s * 1000:.0f} ms")
    print(f"GPU page (H100-SXM, its year's cheapest history): {gpu_s * 1000:.0f} ms")
    print(
        f"web overview_ms={overview_s * 1000:.0f} offers_ms={offers_s * 1000:.0f} "
        f"gpu_ms={gpu_s * 1000:.0f}"
    )
    if getattr(args, "discounts", False):
        net_s = _offers_net(engine, url, args)
        print(
            f"web offers_net_ms={net_s * 1000:.0f} offers_ms={offers_s * 1000:.0f} "
            f"ratio={net_s / offers_s:.2f}"
        )


def _offers_net(engine: Engine, url: str, args: argparse.Namespace) -> float:
    """/offers with one discount rule configured: ordered by the net price."""
    rule = {"name": "edp", "provider": "cloud0", "pricing": ["on_demand"], "percent": 15}
    settings = Settings(database_url=url, discounts=[rule])  # type: ignore[list-item]
    server = WebServer("127.0.0.1:0", create_app(WebContext(settings, engine)))
    server.start()
    try:
        net_s, html = best(page(f"{server.url}/offers"), args.repeat)
        assert "your $/h" in html
    finally:
        server.stop()
    return net_s


if __name__ == "__main__":
    main()
