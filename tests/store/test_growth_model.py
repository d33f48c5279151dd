"""bench/growth.py's bulk model leaves exactly the rows the real write path leaves.

bench/growth_model.py writes a simulated year straight into the tables with set-based
SQL; its figures are only worth printing if those rows are the ones a year of real runs
would leave. Here the same seeded change process is driven through the real write path
(``tracker.collect.run_collector``, one run per job cadence, complete runs that may
delist) for two days, then the store is emptied and the bulk model writes the same two
days; every table must hold the same rows (ids and wall-clock finish times aside).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from sqlalchemy import Engine, text

from bench.growth_model import Job, Mix, build, catalog_sql, changes_sql
from collectors.base import RunContext
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.last_seen import effective_last_seen_sql

# 2 days; spot every 15 min (192 runs) changing every 2 h (P = 8 runs), standard every
# 6 h (8 runs) changing every 12 h (P = 2 runs); two providers, two regions.
MIX = Mix(
    spot_series=40,
    standard_series=10,
    spot_change_hours=2,
    standard_change_days=0.5,
    providers=2,
    regions=2,
    days=2,
    seed=5,
)


class SimCollector:
    """One provider of the mix: yields the offers the test hands it for this run."""

    name: ClassVar[str] = "sim"
    description: ClassVar[str] = "growth model offers"

    def __init__(self, provider: str, offers: list[Offer]) -> None:
        self.name = provider  # type: ignore[misc]  # each provider is its own collector
        self.offers = offers

    @classmethod
    def from_settings(cls, settings: Settings) -> SimCollector:
        raise NotImplementedError

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return iter(self.offers)


def rows(engine: Engine, sql: str) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def drive_write_path(engine: Engine) -> None:
    """Every run of every job of ``MIX`` through run_collector, in time order."""
    # The catalog's columns are named as Offer fields (all but the price).
    described = [f for f in Offer.__dataclass_fields__ if f != "price_per_hour"]
    runs: list[tuple[datetime, int, str, Job, list[Offer]]] = []
    for order, job in enumerate(MIX.jobs()):
        catalog = {r["n"]: r for r in map(dict, _mappings(engine, catalog_sql(MIX, job)))}
        prices: dict[int, list[tuple[int, Decimal]]] = {}
        for n, _provider, _j, r, _next_r, price in rows(
            engine, changes_sql(MIX, job) + " ORDER BY n, j"
        ):
            prices.setdefault(n, []).append((r, price))
        for k in range(job.runs):
            at = MIX.start + k * job.cadence
            for provider in sorted({c["provider"] for c in catalog.values()}):
                offers = []
                for n, c in catalog.items():
                    if c["provider"] != provider:
                        continue
                    price = [p for r, p in prices[n] if r <= k][-1]
                    fields = {f: c[f] for f in described if f in c}
                    offers.append(
                        Offer(**fields, price_per_hour=price, currency="USD")  # type: ignore[arg-type]
                    )
                runs.append((at, order, provider, job, offers))
    runs.sort(key=lambda run: run[:3])
    for at, _order, provider, job, offers in runs:
        summary = run_collector(
            engine,
            SimCollector(provider, offers),
            Settings(),
            pricing_scope=job.pricing_scope,
            now=at,
        )
        assert summary.ok, summary.error


def _mappings(engine: Engine, sql: str) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(text(sql)).mappings())


def snapshot(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, ids and wall-clock times left out, in a stable order."""
    key = "provider, instance_type, region, zone, pricing, payment_option"
    tables = [
        r[0]
        for r in rows(
            engine,
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_type = 'BASE TABLE' AND table_name <> 'alembic_version' ORDER BY 1",
        )
    ]
    snap = {f"rows in {t}": rows(engine, f"SELECT count(*) FROM {t}") for t in tables}
    snap["series"] = rows(
        engine,
        f"SELECT {key}, offering_class, os, gpu_model, gpu_raw_name, gpu_known, gpu_count, "
        "gpu_memory_gib, vcpus, memory_gib, interconnect, CAST(attributes AS text), source, "
        f"first_seen, delisted_at, identity_hash FROM series ORDER BY {key}",
    )
    snap["price_points"] = rows(
        engine,
        f"SELECT {', '.join('s.' + c for c in key.split(', '))}, p.price, p.currency, "
        "p.first_seen, p.last_seen, p.ended_at, p.ended_at IS NULL, "
        f"{effective_last_seen_sql('p', 's')} FROM price_points p "
        f"JOIN series s ON s.id = p.series_id ORDER BY {key}, p.first_seen",
    )
    snap["collection_runs"] = rows(
        engine,
        "SELECT provider, source, scope, status, started_at, offers_seen, new_series, "
        "price_changes, unchanged, delisted, relisted, skipped, CAST(skip_reasons AS text), "
        "error FROM collection_runs ORDER BY started_at, scope, provider",
    )
    # Ids are compared too: ``max_point_id`` is an id, and the model writes intervals in
    # the order the runs do.
    snap["confirmed_scopes"] = rows(
        engine,
        "SELECT c.source, c.region, c.pricing, r.provider, r.scope, r.started_at, "
        "c.confirmed_at, c.max_point_id, (SELECT max(id) FROM price_points) "
        "FROM confirmed_scopes c JOIN collection_runs r ON r.id = c.run_id ORDER BY 1, 2, 3",
    )
    # The rollup the runs kept against the one the model builds whole (ids aside).
    snap["price_rollups"] = rows(
        engine,
        "SELECT g.gpu_model, g.pricing, g.provider, g.region, g.currency, "
        f"{', '.join('s.' + c for c in key.split(', '))}, r.price, r.first_seen, r.ended_at "
        "FROM price_rollups r JOIN rollup_groups g ON g.id = r.group_id "
        "JOIN series s ON s.id = r.series_id ORDER BY 1, 2, 3, 4, 5, r.first_seen",
    )
    return snap


def test_the_bulk_model_leaves_the_rows_the_write_path_leaves(pg_engine: Engine) -> None:
    drive_write_path(pg_engine)
    real = snapshot(pg_engine)

    with pg_engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    migrate.upgrade(pg_engine)
    with pg_engine.begin() as conn:
        build(conn, MIX)
    bulk = snapshot(pg_engine)

    # By hand: spot change j >= 1 falls in runs [8j, 8j + 8), so j = 1..23 fit in the
    # 192 runs: 24 prices per spot series, 40 × 24 = 960. Standard change j falls in
    # runs [2j, 2j + 2) of 8: j = 1..3, 4 prices each, 10 × 4 = 40. Runs: 2 providers ×
    # (192 spot + 8 standard) = 400.
    assert real["rows in price_points"] == [(960 + 40,)]
    assert real["rows in collection_runs"] == [(400,)]
    assert real["rows in series"] == [(50,)]
    changes = rows(pg_engine, "SELECT scope, sum(price_changes) FROM collection_runs GROUP BY 1")
    # 40 spot series × 23 changes = 920; 10 standard series × 3 changes = 30.
    assert sorted(changes) == [("on_demand,reserved_1y,reserved_3y", 30), ("spot", 920)]

    # Open intervals are last seen at their job's last run (spot: run 191, 47:45 after
    # the start; standard: run 7, 42:00 after), derived from confirmed_scopes, while
    # their stored last_seen stays the run that opened them.
    last = {row[-1] for row in real["price_points"] if row[-2]}
    assert last == {MIX.start + timedelta(hours=47, minutes=45), MIX.start + timedelta(hours=42)}
    # 2 providers × 2 regions of spot = 4 scopes; standard: each provider's 5 series sit
    # in 5 (region, pricing) pairs (series 0-9 → pricing (m // 2) % 3, region (m // 6) % 2).
    assert real["rows in confirmed_scopes"] == [(4 + 10,)]

    assert real.keys() == bulk.keys()
    for table in real:
        assert real[table] == bulk[table], table
