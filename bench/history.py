"""History reads against hand-written SQL for the same answers, on the same Postgres.

Builds SERIES series × CHANGES price changes (default 2,000 × 1,000 = 2 M intervals,
written in time order as collections would, with a delisted gap every 97 intervals),
then times
  (a) ``history`` of one offer over 90 days at 1-hour steps (tracker.history.views
      .offer_steps: the lookup of the offer plus the resampled rows), and
  (b) the per-GPU daily aggregate over a year for the H100 family (views.gpu_steps),
each against a hand-written LATERAL query giving the same answer (asserted equal).
Ratios are project time / hand-written time (best of REPEAT runs each, the two sides
alternating so both see the same load). Runs in a
throwaway database created next to the one GPU_TRACKER_DATABASE_URL names.

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/history.py [--series 2000] [--changes 1000] [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from scratch_db import scratch_database  # bench/ is the script's own directory
from sqlalchemy import text

from tracker.catalog import select_gpus
from tracker.history import views
from tracker.history.args import Window, make_grid
from tracker.models import PricingModel
from tracker.store import migrate, rollup
from tracker.store.engine import Engine, make_engine
from tracker.store.identity import identity_hash
from tracker.store.reads import SeriesFilter
from tracker.store.reads import probe_offer_steps as store_steps
from tracker.store.schema import IDENTITY_COLUMNS

GPUS = ["H100-SXM", "H100-PCIE", "H100-NVL", "A100-80GB", "A100-40GB", "L4", "A10G", "T4"]
END = datetime(2026, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=400)


def build(engine: Engine, series: int, changes: int) -> None:
    """Series and their intervals, generated in SQL (the write path is bench/ingest.py's)."""
    step = SPAN / changes
    start = END - SPAN
    gpus = "ARRAY[" + ",".join(f"'{g}'" for g in GPUS) + "]"
    with engine.begin() as conn:
        conn.execute(text("SELECT setseed(0.42)"))
        conn.execute(
            text(
                "INSERT INTO series (id, identity_hash, provider, instance_type, region, zone, "
                "pricing, payment_option, offering_class, os, gpu_model, gpu_raw_name, "
                "gpu_known, gpu_count, gpu_memory_gib, vcpus, memory_gib, interconnect, source, "
                "first_seen) SELECT i, -i, 'cloud' || (i % 7), 'gpu.' || i, 'region-' || (i % 10), '', "
                "CASE WHEN i % 5 = 0 THEN 'spot' ELSE 'on_demand' END, '', '', 'linux', "
                f"({gpus})[1 + i % {len(GPUS)}], ({gpus})[1 + i % {len(GPUS)}], true, "
                "(ARRAY[1, 2, 4, 8])[1 + (i / 8) % 4], 80, 8, 64, 'nvlink', 'bench', :start "
                "FROM generate_series(1, :n) AS i"
            ),
            {"start": start, "n": series},
        )
        conn.execute(
            text("SELECT setval(pg_get_serial_sequence('series', 'id'), :n)"), {"n": series}
        )
        # The identity hash the write path computes (in Python), in place of -id.
        identity = ", ".join(IDENTITY_COLUMNS)
        rows = conn.execute(text(f"SELECT id, {identity} FROM series")).all()
        conn.execute(text("CREATE TEMPORARY TABLE gt_bench_hash (id bigint, h bigint)"))
        conn.execute(
            text("INSERT INTO gt_bench_hash VALUES (:id, :h)"),
            [{"id": r[0], "h": identity_hash(tuple(r[1:]))} for r in rows],
        )
        conn.execute(
            text(
                "UPDATE series SET identity_hash = g.h FROM gt_bench_hash g WHERE g.id = series.id"
            )
        )
        conn.execute(text("DROP TABLE gt_bench_hash"))
        # Interval j of series s starts at start + j·step + a per-series offset; it ends
        # where the next starts, except every 97th (delisted for half a step) and the last
        # (open). Written in time order, as runs write them; every price is in USD, so
        # the hand-written queries read ``price`` as the USD figure.
        conn.execute(
            text(
                "INSERT INTO price_points (series_id, price, currency, first_seen, "
                "last_seen, ended_at) "
                "SELECT s.id, x.p, 'USD', t.a, t.a, "
                "CASE WHEN j = :m - 1 THEN NULL WHEN (:m - 1 - j) % 97 = 10 THEN t.a + :step / 2 "
                "ELSE t.a + :step END "
                "FROM generate_series(0, :m - 1) AS j CROSS JOIN series AS s "
                "CROSS JOIN LATERAL (SELECT :start + j * :step "
                "+ make_interval(secs => (s.id * 37) % 3600) AS a) AS t "
                "CROSS JOIN LATERAL (SELECT round(CAST(1 + random() * 9 AS numeric) "
                "* s.gpu_count, 4) AS p) AS x "
                "ORDER BY j, s.id"
            ),
            {"m": changes, "step": step, "start": start},
        )
        conn.execute(text("ANALYZE series"))
        conn.execute(text("ANALYZE price_points"))
    # Written around the write path, so the rollup is built as the migration builds it.
    with engine.begin() as conn:
        rollup.rebuild(conn)
        conn.execute(text("ANALYZE rollup_groups"))
        conn.execute(text("ANALYZE price_rollups"))


HAND_SINGLE = """
SELECT g.t, p.price
FROM generate_series(CAST(%(since)s AS timestamptz), %(until)s, interval '1 hour') AS g(t)
LEFT JOIN LATERAL (
    SELECT price, ended_at FROM price_points
    WHERE series_id = %(sid)s AND first_seen <= g.t
    ORDER BY first_seen DESC LIMIT 1
) AS p ON p.ended_at IS NULL OR p.ended_at > g.t
ORDER BY g.t
"""

HAND_AGGREGATE = """
SELECT DISTINCT ON (g.t) g.t, p.price, s.gpu_count, s.provider, s.instance_type
FROM generate_series(CAST(%(since)s AS timestamptz), %(until)s, interval '1 day') AS g(t)
CROSS JOIN series AS s
JOIN LATERAL (
    SELECT price, ended_at FROM price_points
    WHERE series_id = s.id AND first_seen <= g.t
    ORDER BY first_seen DESC LIMIT 1
) AS p ON p.ended_at IS NULL OR p.ended_at > g.t
WHERE s.gpu_model = ANY(%(models)s) AND s.pricing = 'on_demand'
ORDER BY g.t, p.price / s.gpu_count, s.provider, s.instance_type, s.region, s.zone,
         s.pricing, s.payment_option
"""


def hand(engine: Engine, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())


def race(
    ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int
) -> tuple[float, Any, float, Any]:
    """Best time and answer of each side, runs alternating so both see the same load
    (this machine is shared); one warm-up run each first."""
    ours(), theirs()
    best_ours = best_theirs = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        answer_ours = ours()
        best_ours = min(best_ours, time.perf_counter() - start)
        start = time.perf_counter()
        answer_theirs = theirs()
        best_theirs = min(best_theirs, time.perf_counter() - start)
    return best_ours, answer_ours, best_theirs, answer_theirs


def per_gpu(usd: Decimal, count: Decimal) -> Decimal:
    return views.per_gpu_hour(usd, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per side")
    parser.add_argument("--quick", action="store_true", help="200 series × 200 changes")
    args = parser.parse_args()
    if args.quick:
        args.series, args.changes = 200, 200
    with scratch_database() as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        started = time.perf_counter()
        build(engine, args.series, args.changes)
        built_s = time.perf_counter() - started
        print(f"built {args.series} series × {args.changes} intervals in {built_s:.0f} s")

        # (a) one H100-SXM on-demand series, 90 days at 1-hour steps
        sid = 1
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT provider, instance_type, region FROM series WHERE id = :id"),
                {"id": sid},
            ).one()
        offer = views.OfferKey(row.provider, row.instance_type, row.region)
        window = Window(END - timedelta(days=90), END)
        grid = make_grid(window, timedelta(hours=1))
        where = SeriesFilter(
            provider=[offer.provider],
            instance_type=offer.instance_type,
            region=[offer.region],
            pricing=[offer.pricing],
        )
        params = {"since": window.since, "until": window.until, "sid": sid}
        single_s, rows, hand_single_s, expected = race(
            lambda: views.offer_steps(engine, offer, grid, fx_rates={}),
            lambda: hand(engine, HAND_SINGLE, params),
            args.repeat,
        )
        query_s = race(lambda: store_steps(engine, grid, where), lambda: None, args.repeat)[0]
        got = [(r["time"], r["price_per_hour_usd"]) for r in rows]
        assert got == [(t, p) for t, p in expected], "single-series answers differ"
        assert any(p is None for _, p in got), "the window should hold a delisted gap"

        # (b) the H100 family's cheapest on-demand $/GPU-hour, daily over a year
        selection = select_gpus(["H100"])
        year = Window(END - timedelta(days=365), END)
        days = make_grid(year, timedelta(days=1))
        agg_params = {"since": year.since, "until": year.until, "models": list(selection.models)}
        with engine.connect() as conn:
            family = conn.execute(
                text(
                    "SELECT count(*) FROM series WHERE gpu_model = ANY(:m) "
                    "AND pricing = 'on_demand'"
                ),
                {"m": list(selection.models)},
            ).scalar_one()
        aggregated_s, agg, hand_agg_s, agg_expected = race(
            lambda: views.gpu_steps(
                engine, selection, days, pricing=[PricingModel.ON_DEMAND], fx_rates={}
            ),
            lambda: hand(engine, HAND_AGGREGATE, agg_params),
            args.repeat,
        )
        got_agg = [
            (r["time"], r["price_per_gpu_hour_usd"], r["provider"], r["instance_type"])
            for r in agg
            if r["provider"] is not None
        ]
        want_agg = [(t, per_gpu(u, c), p, i) for t, u, c, p, i in agg_expected]
        assert got_agg == want_agg, "aggregated answers differ"
        assert len(agg) == days.count
        engine.dispose()
    print(f"single series, 90 days hourly ({grid.count} steps): project {single_s * 1000:.1f} ms "
          f"(of which the store's query and typed rows {query_s * 1000:.1f} ms), "
          f"hand-written SQL {hand_single_s * 1000:.1f} ms")  # fmt: skip
    print(f"H100 family daily over a year ({days.count} steps, "
          f"{family} on-demand series): project {aggregated_s * 1000:.0f} ms, "
          f"hand-written SQL {hand_agg_s * 1000:.0f} ms")  # fmt: skip
    print(
        f"history single_ms={single_s * 1000:.1f} ratio_single={single_s / hand_single_s:.2f} "
        f"aggregated_ms={aggregated_s * 1000:.0f} ratio_aggregated={aggregated_s / hand_agg_s:.2f}"
    )


if __name__ == "__main__":
    main()
