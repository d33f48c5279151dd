"""Alert evaluation after a big run, against that run's own ingest, in the same process.

Builds bench/ingest.py's store (OFFERS synthetic offers, one first collection), then
20 rules, four of each type (price_change, spot_discount, new_hardware, ranking_change,
collector_health), filtered on GPU families, providers and currencies (USD and EUR,
EUR at a manual rate). The first evaluation seeds the rules' cursors. Then one run
changes CHANGES prices, and the bench times
  ingest_ms    that run (run_collector: offers in, intervals written, rollup kept,
               committed), and
  evaluate_ms  the alert evaluation after it (tracker.alerts.evaluate.evaluate: every
               rule read and the outbox committed), as the after-collection hook runs it
               (the rankings recompute it follows is the recommend bench's, untimed here).
Also printed: the CPU each of the two used, in Python and in the database's server
processes (on a shared machine the wall-clock ratio moves with the load; the CPU split
says where the work is).
Also counted: the SQL statements the evaluation sent (set-wise: a few per rule, never
one per change) and the process's peak RSS before and after it.

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/alerts.py [--offers 200000] [--changes 100000]
    python bench/alerts.py --sqlite [--offers 50000 --changes 25000]   # a throwaway file

Last line: ``alerts changes=N evaluate_ms=… ingest_ms=… ratio=…`` (target ratio ≤ 0.5).
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from ingest import ROLLUP_S, ListCollector, synthetic_offers, with_changes
from scratch_db import backend_cpu_seconds, scratch_database  # bench/ is the script's directory
from sqlalchemy import event

from tracker.alerts.evaluate import evaluate
from tracker.alerts.rules import parse_rules
from tracker.collect import run_collector
from tracker.recommend.stored import recompute_rankings
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine

CHANNELS = ["slack"]
FAMILIES = [["H100"], ["A100"], ["L4", "A10G"], []]
PROVIDERS = [["cloud0", "cloud1"], ["cloud2"], [], ["cloud3", "cloud4", "cloud5"]]
CURRENCIES = ["USD", "EUR", "USD", "EUR"]
PROFILES = [["llm-7b-lora"], ["llm-7b-inference"], ["cv-small-training"], ["bert-base-finetune"]]


def rules_toml() -> dict[str, Any]:
    """Twenty rules, four of each type, with their filters varied."""
    rules: list[dict[str, Any]] = []
    for n in range(4):
        gpus, providers, currency = FAMILIES[n], PROVIDERS[n], CURRENCIES[n]
        rules += [
            {
                "name": f"moves-{n}",
                "type": "price_change",
                "threshold_percent": 4,
                "gpu_model": gpus,
                "provider": providers,
                "currency": currency,
            },
            {
                "name": f"spot-{n}",
                "type": "spot_discount",
                "threshold_percent": 20 + 10 * n,
                "gpu_model": gpus,
                "provider": providers,
                "currency": currency,
            },
            {"name": f"new-{n}", "type": "new_hardware", "gpu_model": gpus, "provider": providers},
            {
                "name": f"ranking-{n}",
                "type": "ranking_change",
                "profile": PROFILES[n],
                "threshold_percent": 2,
                "currency": currency,
            },
            {"name": f"health-{n}", "type": "collector_health", "provider": ["bench"]},
        ]
    return {"rules": rules}


@contextmanager
def sqlite_file() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'bench.db'}"


@contextmanager
def counted_statements(engine: Engine) -> Iterator[list[int]]:
    """Every statement sent meanwhile, counted in the list's one item: on Postgres each
    psycopg execute and COPY (SQLAlchemy's and the store's own cursors alike), on
    SQLite each SQLAlchemy execute."""
    count = [0]
    if engine.dialect.name != "postgresql":

        def one(*_: Any) -> None:
            count[0] += 1

        event.listen(engine, "before_cursor_execute", one)
        try:
            yield count
        finally:
            event.remove(engine, "before_cursor_execute", one)
        return
    patched = {name: getattr(psycopg.Cursor, name) for name in ("execute", "executemany", "copy")}

    def counting(method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            return method(*args, **kwargs)

        return call

    for name, method in patched.items():
        setattr(psycopg.Cursor, name, counting(method))
    try:
        yield count
    finally:
        for name, method in patched.items():
            setattr(psycopg.Cursor, name, method)


class Cpu:
    """CPU seconds of this process and of the database's server processes over a step."""

    def __init__(self, url: str) -> None:
        self.url, self.python, self.database = url, 0.0, 0.0

    def __enter__(self) -> Cpu:
        self._start = time.process_time(), backend_cpu_seconds(self.url)
        return self

    def __exit__(self, *_: object) -> None:
        self.python = time.process_time() - self._start[0]
        self.database = backend_cpu_seconds(self.url) - self._start[1]

    def __str__(self) -> str:
        return f"Python {self.python:.2f} s + Postgres {self.database:.2f} s"


def run(engine: Engine, offers: Any, at: datetime) -> tuple[float, int]:
    start = time.perf_counter()
    summary = run_collector(engine, ListCollector(offers), Settings(), now=at)
    elapsed = time.perf_counter() - start
    if summary.status != "succeeded":
        sys.exit(f"bench run failed: {summary.error}")
    return elapsed, summary.stats.price_changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=100_000)
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file instead")
    args = parser.parse_args()
    rules = parse_rules(rules_toml(), "bench rules", CHANNELS)
    fx = {"EUR": Decimal("1.0800")}
    settings = Settings()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    t1 = t0 + timedelta(hours=6)
    changed = set(random.Random(5).sample(range(args.offers), args.changes))
    with sqlite_file() if args.sqlite else scratch_database() as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        first_s, _ = run(engine, synthetic_offers(args.offers), t0)
        recompute_rankings(engine, settings, now=t0)
        evaluate(engine, rules, CHANNELS, now=t0 + timedelta(minutes=1), fx_rates=fx)  # seeds
        with Cpu(url) as ingest_cpu:
            moved = with_changes(synthetic_offers(args.offers), [changed])
            ingest_s, changes = run(engine, moved, t1)
        rollup_s = ROLLUP_S[-1]
        recompute_rankings(engine, settings, now=t1)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with Cpu(url) as evaluate_cpu, counted_statements(engine) as statements:
            start = time.perf_counter()
            queued = evaluate(engine, rules, CHANNELS, now=t1 + timedelta(minutes=1), fx_rates=fx)
            evaluate_s = time.perf_counter() - start
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        engine.dispose()
    print(f"first collection of {args.offers:,} offers: {first_s:.2f} s")
    print(
        f"run changing {changes:,} prices: {ingest_s * 1000:.0f} ms "
        f"(of which keeping the rollup {rollup_s * 1000:.0f} ms)"
    )
    print(
        f"evaluation of {len(rules)} rules: {evaluate_s * 1000:.0f} ms, {len(queued):,} alerts "
        f"queued, {statements[0]} SQL statements"
    )
    print(f"peak RSS: {rss_before:.0f} MiB before the evaluation, {rss_after:.0f} MiB after")
    if not args.sqlite:  # SQLite's work is this process's
        print(f"CPU: the run {ingest_cpu}, the evaluation {evaluate_cpu}")
    print(
        f"alerts changes={changes} evaluate_ms={evaluate_s * 1000:.0f} "
        f"ingest_ms={ingest_s * 1000:.0f} ratio={evaluate_s / ingest_s:.2f}"
    )


if __name__ == "__main__":
    main()
