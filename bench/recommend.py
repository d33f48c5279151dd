"""Recompute every profile's ranking over 100,000 stored offers, end to end.

What is timed is exactly what the scheduler runs after a collection,
``tracker.recommend.recompute_rankings``: load the current offers from the store,
rank 20 profiles (the 8 built-ins and 12 variants), write 20 snapshots. Offers are
synthetic but realistic in mix (catalog GPUs, 1/2/4/8 GPUs and fractions, on-demand,
per-zone spot with Spot Advisor buckets, reserved terms, a few unknown GPUs) and are
stored through the real runner first (setup, not timed).

Baseline, measured in the same run: a plain per-offer Python loop doing the same
cost arithmetic (Workload.hours + Daly re-work) over the same offers for 2 profiles;
the printed ratio extrapolates it to 20 profiles.

    python bench/recommend.py [offers]            # default 100000; SQLite temp file
    GPU_TRACKER_DATABASE_URL=postgresql://... python bench/recommend.py  # a throwaway DB there

Cluster sizing (issue 37): the same 20 rankings over the same loaded offer table, once
as today (one node) and once sizing every offer over node counts 1 to 64 against a
deadline (``nodes = "auto"``, ``fabric = "any"`` so every offer is sized, 8-GPU offers
carry an EFA/InfiniBand fabric); ``cluster_ratio`` = sized ÷ single-node ranking time
(target: at most 1.5).

Last lines: ``recommend seconds=X.XX db_share=0.YY`` (target: seconds < 2) and
``cluster seconds=... single=... cluster_ratio=R``.
"""

from __future__ import annotations

import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import ClassVar, Self

from scratch_db import scratch_database  # bench/ is the script's own directory

from collectors.base import RunContext
from tracker.catalog import all_specs
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.recommend import ProfileSet, load_profiles, make_profile, recompute_rankings
from tracker.recommend.assumptions import HOURS_PER_MONTH, Assumptions
from tracker.recommend.pricing import effective_hourly_usd
from tracker.recommend.rank import rank_table
from tracker.recommend.stored import load_offer_table
from tracker.recommend.table import catalog_lookup
from tracker.recommend.throughput import spec_tflops, workload
from tracker.settings import Settings
from tracker.store import Engine, migrate
from tracker.store.engine import make_engine

PROVIDERS = ("aws", "azure", "gcp", "lambda", "coreweave", "runpod", "vast", "oci", "ibm", "acme")
REGIONS = tuple(f"region-{i}" for i in range(25))
PRICINGS = ("on_demand", "on_demand", "spot", "spot", "reserved_1y", "reserved_3y")
BUCKETS = (5, 11, 16, 22, 100)


def synthetic_offers(n: int, seed: int = 7) -> list[Offer]:
    rng = random.Random(seed)
    gpus = [s for s in all_specs() if s.bf16_tflops or s.fp16_tflops]
    out: list[Offer] = []
    for i in range(n):
        spec = rng.choice(gpus)
        unknown = rng.random() < 0.01
        count = Decimal(rng.choice(("1", "1", "2", "4", "8", "8", "0.5")))
        pricing = rng.choice(PRICINGS)
        base = float(spec.bf16_tflops or spec.fp16_tflops or 1) / 100 * rng.uniform(0.6, 1.6)
        price = Decimal(f"{base * float(count) * (0.4 if pricing == 'spot' else 1):.4f}")
        attrs: dict[str, int | str] = {}
        fabric, gbps = ("unknown", None)
        if count == 8 and rng.random() < 0.5:
            fabric, gbps = rng.choice((("efa", 3200), ("infiniband", 3200), ("efa", 400)))
        if pricing == "spot":
            attrs = {"interruption_max_pct": rng.choice(BUCKETS)}
        out.append(
            Offer(
                provider=rng.choice(PROVIDERS),
                instance_type=f"type-{i}",
                region=rng.choice(REGIONS),
                zone="z-a" if pricing == "spot" else "",
                pricing=pricing,  # type: ignore[arg-type]
                payment_option="no_upfront" if pricing.startswith("reserved") else "",
                price_per_hour=max(price, Decimal("0.01")),
                currency="USD",
                price_per_hour_usd=max(price, Decimal("0.01")),
                gpu_model="Mystery-X" if unknown else spec.name,
                gpu_known=not unknown,
                gpu_count=count,
                gpu_memory_gib=spec.vram_gib * (count if count < 1 else 1),
                interconnect="nvlink" if spec.nvlink and count > 1 else "pcie",
                attributes=attrs,
                fabric=fabric,  # type: ignore[arg-type]
                network_gbps=None if gbps is None else Decimal(gbps),
            )
        )
    return out


class ListCollector:
    name: ClassVar[str] = "bench"
    description: ClassVar[str] = "synthetic offers"

    def __init__(self, offers: list[Offer]) -> None:
        self.offers = offers

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls([])

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        yield from self.offers


def twenty_profiles() -> ProfileSet:
    builtins = load_profiles()
    profiles = dict(builtins.profiles)
    variants = {
        "lora-aws-gcp": ("llm-7b-lora", {"providers": ["aws", "gcp"]}),
        "lora-no-spot": (
            "llm-7b-lora",
            {"interruptible": False, "checkpoint_interval_hours": None},
        ),
        "lora-1gpu": ("llm-7b-lora", {"max_gpus": 1}),
        "qlora-70b": ("llm-7b-lora", {"params": 70e9, "task": "qlora", "precision": "int4"}),
        "ft-any-ic": ("llm-7b-full-finetune", {"interconnect": "any"}),
        "ft-nvlink": ("llm-7b-full-finetune", {"interconnect": "required"}),
        "inf-int8": ("llm-7b-inference", {"precision": "int8"}),
        "inf-3y": ("llm-7b-inference", {"horizon_months": 36}),
        "inf-70b-int4": ("llm-70b-inference", {"precision": "int4"}),
        "bert-budget": ("bert-base-finetune", {"budget_usd": "5"}),
        "cv-regions": ("cv-small-training", {"regions": list(REGIONS[:5])}),
        "sd-h100": ("stable-diffusion-training", {"gpus": ["H100-SXM", "H200"]}),
    }
    for name, (base, changes) in variants.items():
        data = builtins.profiles[base].model_dump(exclude={"name"}, exclude_none=True)
        data.update(changes)
        profiles[name] = make_profile(name, {k: v for k, v in data.items() if v is not None})
    assert len(profiles) == 20
    return ProfileSet(profiles, builtins.assumptions, history_top=10)


def naive_loop(offers: list[Offer], profiles: ProfileSet, how_many: int) -> float:
    """The same estimate per offer in plain Python (no table, no numpy)."""
    a: Assumptions = profiles.assumptions
    start = time.perf_counter()
    for profile in list(profiles.profiles.values())[:how_many]:
        w = workload(profile, a)
        best = math.inf
        for o in offers:
            spec = catalog_lookup(o.gpu_model) if o.gpu_known else None
            if spec is None:
                continue
            rate = spec_tflops(spec, profile.compute)
            if rate is None or o.gpu_memory_gib is None:
                continue
            n = float(o.gpu_count)
            need = w.vram.per_gpu(max(int(n), 1), n > 1 and o.interconnect.value == "nvlink")
            if need / 2**30 > float(o.gpu_memory_gib):
                continue
            bw = float(spec.memory_bandwidth_gbs) if spec.memory_bandwidth_gbs else None
            scale = a.multi_gpu_scaling[o.interconnect.value] ** math.log2(max(n, 1))
            hours = w.hours(n, rate, bw, scale, a)
            if o.pricing.value == "spot":
                lam = float(o.attributes.get("interruption_max_pct") or 10) / 100 / HOURS_PER_MONTH
                tau = min(profile.checkpoint_interval_hours or hours, hours)
                hours = hours / tau * math.exp(lam * a.restart_hours) * math.expm1(lam * tau) / lam
            best = min(best, float(effective_hourly_usd(o)) * hours)
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    if os.environ.get("GPU_TRACKER_DATABASE_URL"):  # a throwaway database on that server
        with scratch_database() as url:
            bench(url, n)
        return
    with tempfile.TemporaryDirectory() as tmp:
        bench(f"sqlite:///{Path(tmp) / 'bench.db'}", n)


def bench(url: str, n: int) -> None:
    engine = make_engine(url)
    migrate.upgrade(engine)

    offers = synthetic_offers(n)
    t = time.perf_counter()
    summary = run_collector(engine, ListCollector(offers), Settings())
    assert summary.status == "succeeded", summary.error
    print(f"setup: stored {summary.stats.offers_seen} offers in {time.perf_counter() - t:.1f} s "
          f"({engine.dialect.name})")  # fmt: skip

    profiles = twenty_profiles()
    recompute_rankings(engine, Settings(), profiles=profiles)  # warm caches (catalog, imports)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    changes = recompute_rankings(engine, Settings(), profiles=profiles, timings=timings)
    total = time.perf_counter() - start
    db = timings["db_load"] + timings["db_write"]
    print(f"profiles: {len(changes)}  offers: {n}  evaluations: {len(changes) * n:,}")
    print(f"  load offers  {timings['db_load']:.3f} s")
    print(f"  rank         {timings['rank']:.3f} s  (table build + 20 rankings)")
    print(f"  snapshots    {timings['db_write']:.3f} s")

    sample = 2
    naive = naive_loop(offers, profiles, sample) * len(changes) / sample
    print(f"baseline: per-offer Python loop, {sample} profiles timed, x{len(changes) // sample} "
          f"= {naive:.2f} s for 20; ranking speedup x{naive / timings['rank']:.1f}")  # fmt: skip
    print(f"recommend seconds={total:.2f} db_share={db / total:.2f}")
    cluster_bench(engine, profiles)
    engine.dispose()


def sized(profiles: ProfileSet) -> ProfileSet:
    """The same 20 profiles, each sized over 1..64 nodes against a deadline."""
    out = {}
    for name, p in profiles.profiles.items():
        data = p.model_dump(exclude={"name"}, exclude_none=True)
        data.update(nodes="auto", max_nodes=64, fabric="any", deadline_hours=72)
        out[name] = make_profile(name, data)
    return ProfileSet(out, profiles.assumptions, history_top=10)


def cluster_bench(engine: Engine, profiles: ProfileSet) -> None:
    table, _ = load_offer_table(engine, Settings())
    clustered = sized(profiles)
    a, measured = profiles.assumptions, profiles.measurements

    def timed(chosen: ProfileSet) -> float:
        start = time.perf_counter()
        for p in chosen.profiles.values():
            rank_table(p, table, a, top=10, measurements=measured)
        return time.perf_counter() - start

    timed(clustered)  # warm (the scaling fit is computed once per process)
    singles, clusters = [], []
    for _ in range(7):  # interleaved, best of 7: the machine is shared
        singles.append(timed(profiles))
        clusters.append(timed(clustered))
    single, cluster = min(singles), min(clusters)
    print(f"cluster sizing: 20 profiles x nodes 1..64 over {len(table)} offers")
    print(f"cluster seconds={cluster:.3f} single={single:.3f} cluster_ratio={cluster / single:.2f}")


if __name__ == "__main__":
    main()
