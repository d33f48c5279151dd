"""What a year of collection costs in storage, and how fast reads are at that size.

Writes a simulated year of a realistic mix into a throwaway Postgres database with the
bulk model of bench/growth_model.py (the rows the write path leaves, proved so by
tests/store/test_growth_model.py): by default 10,000 spot series re-collected every
15 minutes whose prices change every 6 hours on average, and 50,000 on-demand/reserved
series re-collected every 6 hours whose prices change monthly, over two providers.
Then it prints each table's rows and bytes (heap, indexes, total), bytes per 1,000
series per year, the database size, and the median latency of
  * ``offers``: the listing the CLI prints with no filter (tracker.views.offers.offer_rows,
    every current offer, USD), and with ``--gpu H100``;
  * a one-year ``history`` of one series (a spot one if any) at 1-hour steps (tracker.history.views
    .offer_steps, what ``history … --since 365d --resample 1h`` prints), and its stored
    intervals over that year (views.offer_intervals, ``history … --since 365d``);
and, last, the write path at that size: one provider's next run of each job through
``run_collector`` with 10% of its prices moved, against a raw COPY of the same rows
(bench/ingest.py's baseline).

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/growth.py [--scale 0.1] [--days 365] [--spot-series 10000] …
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

from growth_model import PROVIDERS, Mix, build  # bench/ is the script's own directory
from ingest import ListCollector, raw_copy
from scratch_db import scratch_database
from sqlalchemy import text

from tracker.collect import run_collector
from tracker.filters import OfferFilter
from tracker.history import views
from tracker.history.args import Window, make_grid
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store import reads as queries
from tracker.store import series as fx_store
from tracker.store.engine import Engine, make_engine
from tracker.views.currency import CurrencyView
from tracker.views.offers import offer_rows

MIB = 1024 * 1024


def parse_args() -> tuple[Mix, argparse.Namespace]:
    d = Mix()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spot-series", type=int, default=d.spot_series)
    p.add_argument("--spot-minutes", type=int, default=d.spot_minutes, help="spot cadence")
    p.add_argument("--spot-change-hours", type=float, default=d.spot_change_hours)
    p.add_argument("--standard-series", type=int, default=d.standard_series)
    p.add_argument("--standard-minutes", type=int, default=d.standard_minutes)
    p.add_argument("--standard-change-days", type=float, default=d.standard_change_days)
    p.add_argument("--providers", type=int, default=d.providers)
    p.add_argument("--regions", type=int, default=d.regions, help="per provider")
    p.add_argument("--days", type=float, default=d.days)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--scale", type=float, default=1.0, help="multiply both series counts")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per read (median)")
    p.add_argument("--keep", action="store_true", help="keep the database (prints its URL)")
    p.add_argument(
        "--fillfactor",
        type=int,
        help="set price_points' fillfactor before the load (default: as migrated)",
    )
    a = p.parse_args()
    mix = Mix(
        spot_series=a.spot_series,
        spot_minutes=a.spot_minutes,
        spot_change_hours=a.spot_change_hours,
        standard_series=a.standard_series,
        standard_minutes=a.standard_minutes,
        standard_change_days=a.standard_change_days,
        providers=a.providers,
        regions=a.regions,
        days=a.days,
        seed=a.seed,
    ).scaled(a.scale)
    return mix, a


def median_ms(read: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of ``repeat`` runs after one warm-up, and the last answer."""
    answer = read()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        answer = read()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, answer


def table_sizes(engine: Engine) -> list[tuple[str, int, int, int, int]]:
    """(table, rows, heap bytes, index bytes, total bytes) of every store table."""
    with engine.connect() as conn:
        names = conn.execute(
            text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'alembic_version' ORDER BY tablename"
            )
        ).scalars()
        out = []
        for name in list(names):
            count = conn.execute(text(f'SELECT count(*) FROM "{name}"')).scalar_one()
            heap, idx, total = conn.execute(
                text(
                    "SELECT pg_table_size(CAST(:t AS regclass)), "
                    "pg_indexes_size(CAST(:t AS regclass)), "
                    "pg_total_relation_size(CAST(:t AS regclass))"
                ),
                {"t": name},
            ).one()
            out.append((name, count, heap, idx, total))
    return out


def measure_reads(engine: Engine, mix: Mix, repeat: int) -> dict[str, float]:
    view = CurrencyView("USD", fx_store.load_rates(engine))
    listing_ms, listed = median_ms(lambda: offer_rows(engine, view), repeat)
    assert len(listed) == mix.series, f"offers listed {len(listed)} of {mix.series}"
    h100_ms, h100 = median_ms(lambda: offer_rows(engine, view, gpu=["H100"]), repeat)

    def store_query() -> list[Any]:
        with engine.connect() as conn:
            return list(conn.execute(queries.current_offers_select()).all())

    sql_ms, _ = median_ms(store_query, repeat)
    print(f"offers (all {len(listed):,}): {listing_ms:.0f} ms, of which the store's query "
          f"{sql_ms:.0f} ms; --gpu H100 ({len(h100):,}): {h100_ms:.0f} ms")  # fmt: skip

    with engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT provider, instance_type, region, pricing, zone, payment_option "
                "FROM series ORDER BY id LIMIT 1"  # a spot series when the mix has any
            )
        ).one()
    offer = views.OfferKey(row[0], row[1], row[2], PricingModel(row[3]), row[4], row[5])
    end = mix.start + timedelta(days=mix.days)
    year = Window(end - timedelta(days=365), end)
    hourly = make_grid(year, timedelta(hours=1))
    steps_ms, steps = median_ms(
        lambda: views.offer_steps(engine, offer, hourly, fx_rates={}), repeat
    )
    assert len(steps) == hourly.count
    intervals_ms, intervals = median_ms(
        lambda: views.offer_intervals(engine, offer, window=year, fx_rates={}), repeat
    )
    print(f"history of {offer.describe()} over a year: hourly steps ({len(steps):,}) "
          f"{steps_ms:.1f} ms; stored intervals ({len(intervals):,}) {intervals_ms:.1f} ms")  # fmt: skip
    return {"offers": listing_ms, "history": steps_ms}


def steady_runs(url: str, engine: Engine, mix: Mix) -> None:
    """The next run of each job of the first provider, through the real write path, with
    10% of its offers' prices 5% higher; against a raw COPY of the same rows."""
    end = mix.start + timedelta(days=mix.days)
    for job in mix.jobs():
        where = OfferFilter.of(provider=PROVIDERS[0], pricing=sorted(job.pricing_scope))
        stored = queries.current_offers(engine, where)
        if not stored:
            continue
        offers = [s.offer for s in stored]
        moved = set(random.Random(mix.seed).sample(range(len(offers)), len(offers) // 10))
        for i in moved:
            new = offers[i].price_per_hour * Decimal("1.05")
            offers[i] = replace(offers[i], price_per_hour=new, price_per_hour_usd=new)
        raw_s = raw_copy(url, iter(offers))
        start = time.perf_counter()
        summary = run_collector(
            engine,
            ListCollector(iter(offers)),
            Settings(),
            pricing_scope=job.pricing_scope,
            now=end + job.cadence,
            source=PROVIDERS[0],
        )
        took = time.perf_counter() - start
        assert summary.status == "succeeded", summary.error
        assert summary.stats.price_changes == len(moved), summary.stats
        print(f"next {job.name} run of {PROVIDERS[0]} ({len(offers):,} offers, "
              f"{len(moved):,} moved): {took:.2f} s; raw COPY of its rows {raw_s:.2f} s "
              f"(ratio {raw_s / took:.2f})")  # fmt: skip
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS raw_copy"))


def report(engine: Engine, mix: Mix) -> float:
    """Print the per-table figures; returns bytes per 1,000 series per year."""
    sizes = table_sizes(engine)
    years = mix.days / 365
    print(f"{'table':<22}{'rows':>13}{'heap MiB':>11}{'index MiB':>11}{'total MiB':>11}"
          f"{'B/row':>8}")  # fmt: skip
    for name, count, heap, idx, total in sizes:
        if count:
            print(f"{name:<22}{count:>13,}{heap / MIB:>11.1f}{idx / MIB:>11.1f}"
                  f"{total / MIB:>11.1f}{total / count:>8.0f}")  # fmt: skip
    empty = [n for n, c, *_ in sizes if not c]
    total = sum(s[4] for s in sizes)
    print(f"{len(empty)} empty tables ({sum(s[4] for s in sizes if not s[1]) / 1024:.0f} KiB)")
    by_table = {s[0]: s for s in sizes}
    with engine.connect() as conn:
        spot_points = conn.execute(
            text(
                "SELECT count(*) FROM price_points p JOIN series s ON s.id = p.series_id "
                "WHERE s.pricing = 'spot'"
            )
        ).scalar_one()
        spot_runs = conn.execute(
            text("SELECT count(*) FROM collection_runs WHERE scope = 'spot'")
        ).scalar_one()
    # Each class's share: its intervals of price_points, its runs of the run log (and
    # per-run tables), its series of series.
    rollup_tables = [by_table[t] for t in ("price_rollups", "rollup_groups") if t in by_table]
    rollup_bytes = sum(t[4] for t in rollup_tables)
    per_run = total - sum(by_table[t][4] for t in ("price_points", "series")) - rollup_bytes
    runs = by_table["collection_runs"][1]
    points, series = by_table["price_points"], by_table["series"]
    for label, n, pts, rns in (
        ("spot", mix.spot_series, spot_points, spot_runs),
        ("on-demand/reserved", mix.standard_series, points[1] - spot_points, runs - spot_runs),
    ):
        if not n:
            continue
        share = (
            points[4] * pts / max(points[1], 1)
            + series[4] * n / max(series[1], 1)
            + per_run * rns / max(runs, 1)
        )
        print(f"{label}: {share / (n / 1000) / years / MIB:.1f} MiB per 1,000 series per year "
              f"({pts / n / years:,.0f} intervals per series per year)")  # fmt: skip
    if rollup_tables:
        print(f"rollup: {rollup_bytes / MIB:.1f} MiB ({rollup_tables[0][1]:,} intervals in "
              f"{rollup_tables[-1][1]:,} groups), {rollup_bytes / (mix.series / 1000) / years / MIB:.2f} "
              "MiB per 1,000 series per year")  # fmt: skip
    return total / (mix.series / 1000) / years


def main() -> None:
    mix, args = parse_args()
    spot, standard = mix.jobs()
    print(f"mix: {mix.spot_series:,} spot series every {mix.spot_minutes} min (change every "
          f"{spot.period} runs on average), {mix.standard_series:,} on-demand/reserved every "
          f"{mix.standard_minutes} min (change every {standard.period} runs), "
          f"{mix.providers} providers × {mix.regions} regions, {mix.days:g} days")  # fmt: skip
    started = time.perf_counter()
    with scratch_database(keep=args.keep) as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        with engine.begin() as conn:
            if args.fillfactor:
                conn.exec_driver_sql(
                    f"ALTER TABLE price_points SET (fillfactor = {int(args.fillfactor)})"
                )
            took = build(conn, mix)
        built = time.perf_counter() - started
        print("written: " + ", ".join(f"{t} {s:.0f} s" for t, s in took.items()))
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))  # what autovacuum leaves: maps and stats
        print(f"built in {built:.0f} s, vacuumed in {time.perf_counter() - started - built:.0f} s")
        per_1000 = report(engine, mix)
        with engine.connect() as conn:
            db_bytes = conn.execute(
                text("SELECT pg_database_size(current_database())")
            ).scalar_one()
        reads = measure_reads(engine, mix, args.repeat)
        steady_runs(url, engine, mix)
        engine.dispose()
    print(f"total {time.perf_counter() - started:.0f} s")
    print(
        f"growth bytes_per_1000_series_year={per_1000:.0f} db_mib={db_bytes / MIB:.0f} "
        f"offers_ms={reads['offers']:.0f} history_year_ms={reads['history']:.1f}"
    )


if __name__ == "__main__":
    main()
