"""``plan`` over 100,000 stored offers of one GPU family, end to end, on Postgres.

The worst case for a plan: every stored offer sells the GPU asked for, so the whole
table is read, converted and grouped. 25,000 instance types across 10 providers and
25 regions, each sold on-demand, on spot, and on 1- and 3-year terms (100,000 offers),
plus disk and egress prices for every (provider, region), stored through the real
runner first (setup, not timed).

What is timed is what ``gpu-tracker plan`` runs (:func:`tracker.plan.stored_plans`):
read the offers and service prices, convert to USD, group, run the cover search per
instance type, rank. Baseline, in the same run: reading the same offers alone with
the store's ``current_offers`` (what any listing of them costs).

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres python bench/plan.py

Last line: ``plan seconds=X.XX read_seconds=Y.YY ratio=Z.ZZ`` (target: seconds < 2); the
line before it gives the Python CPU seconds of each, which a busy machine does not inflate.
"""

from __future__ import annotations

import random
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recommend import ListCollector
from scratch_db import scratch_database

from tracker.catalog import select_gpus
from tracker.collect import run_collector
from tracker.filters import OfferFilter
from tracker.models import Offer
from tracker.plan.stored import PLAN_PRICING, stored_plans
from tracker.recommend.demand import Demand
from tracker.service_prices import ServiceKind, ServicePrice
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine
from tracker.store.reads import current_offers
from tracker.store.series import record_service_prices

PROVIDERS = ("aws", "azure", "gcp", "lambda", "coreweave", "runpod", "vast", "oci", "ibm", "acme")
REGIONS = tuple(f"region-{i}" for i in range(25))
TERMS = (("on_demand", "1"), ("spot", "0.4"), ("reserved_1y", "0.62"), ("reserved_3y", "0.45"))


def synthetic_offers(types: int, seed: int = 11) -> list[Offer]:
    rng = random.Random(seed)
    out = []
    for i in range(types):
        provider, region = rng.choice(PROVIDERS), rng.choice(REGIONS)
        count = Decimal(rng.choice(("1", "2", "4", "8", "8")))
        hourly = Decimal(f"{rng.uniform(1.8, 4.5):.4f}") * count
        for pricing, share in TERMS:
            price = (hourly * Decimal(share)).quantize(Decimal("0.0001"))
            out.append(
                Offer(
                    provider=provider,
                    instance_type=f"h100-{i}",
                    region=region,
                    zone="z-a" if pricing == "spot" else "",
                    pricing=pricing,  # type: ignore[arg-type]
                    payment_option="no_upfront" if pricing.startswith("reserved") else "",
                    price_per_hour=price,
                    currency="USD",
                    gpu_model=rng.choice(("H100-SXM", "H100-PCIE")),
                    gpu_count=count,
                    gpu_memory_gib=Decimal(80),
                    attributes={"interruption_max_pct": 11} if pricing == "spot" else {},
                )
            )
    return out


def service_prices() -> list[ServicePrice]:
    out = []
    for p in PROVIDERS:
        for r in REGIONS:
            out.append(ServicePrice(p, r, ServiceKind.BLOCK_STORAGE_SSD, ServiceKind.BLOCK_STORAGE_SSD.unit, Decimal("0.08"), "USD"))  # fmt: skip
            for start, end, price in ((0, 10240, "0.09"), (10240, None, "0.085")):
                out.append(
                    ServicePrice(
                        p, r, ServiceKind.EGRESS_INTERNET, ServiceKind.EGRESS_INTERNET.unit,
                        Decimal(price), "USD", Decimal(start), None if end is None else Decimal(end),
                    )
                )  # fmt: skip
    return out


def best_of(runs: int, fn: object) -> tuple[float, float]:
    """Best wall and this process's CPU seconds of ``runs`` calls (CPU time leaves out
    waiting for the database and for a core on a busy machine)."""
    times = []
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return min(times)


def main() -> None:
    types = int(sys.argv[1]) // 4 if len(sys.argv) > 1 else 25_000
    with scratch_database() as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        offers = synthetic_offers(types)
        t = time.perf_counter()
        summary = run_collector(engine, ListCollector(offers), Settings())
        assert summary.status == "succeeded", summary.error
        with engine.begin() as conn:
            record_service_prices(
                conn, service_prices(), source="bench", now=summary.finished_at, complete=True
            )  # type: ignore[arg-type]
        print(f"setup: stored {len(offers)} offers in {time.perf_counter() - t:.1f} s")
        gpu = select_gpus(["H100"])
        demand = Demand(
            steady_gpus=Decimal(64),
            burst_gpu_hours=Decimal(2000),
            interruptible=Decimal("0.5"),
            storage_tb=Decimal(20),
            egress_tb=Decimal(5),
            migration_usd=Decimal(10000),
            current_provider="aws",
        )
        settings = Settings()
        stored_plans(engine, settings, demand, gpu=gpu, top=10)  # warm (imports, catalog)
        rows: list[object] = []

        def plan() -> None:
            rows[:] = stored_plans(engine, settings, demand, gpu=gpu, top=10).rows

        def read() -> None:
            current_offers(engine, OfferFilter.of(gpu=["H100"], pricing=PLAN_PRICING))

        seconds, cpu = best_of(3, plan)
        read_seconds, read_cpu = best_of(3, read)
        print(f"plans: the best {len(rows)} of {types} instance types, from {len(offers)} offers")
        print(f"python cpu: plan {cpu:.2f} s, read {read_cpu:.2f} s")
        print(f"plan seconds={seconds:.2f} read_seconds={read_seconds:.2f} "
              f"ratio={seconds / read_seconds:.2f}")  # fmt: skip
        engine.dispose()


if __name__ == "__main__":
    main()
