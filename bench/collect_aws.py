"""AWS Price List parsing (and storing) throughput against ``json.loads`` of the same strings.

A synthetic stream of real-shaped ``GetProducts`` items (the derived GPU items of
tests/fixtures/aws/, re-typed over every GPU/accelerator type in moto's real
DescribeInstanceTypes data and spread over regions) is:

1. decoded with ``json.loads`` (the baseline: the least any parser must do);
2. parsed and normalized with ``parse_price_list_item`` (decode + offers);
3. parsed and stored through the real runner (``run_collector``) into a temporary
   SQLite file, or into ``GPU_TRACKER_DATABASE_URL`` when set.

    python bench/collect_aws.py [items]        # default 20000

The last line is ``aws-parse ratio=X.XX items_per_s=N`` where ratio is parse
throughput / json.loads throughput (target >= 0.25) and N is parse items/s.
"""

from __future__ import annotations

import copy
import gc
import gzip
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import moto

from collectors.aws_hardware import InstanceHardware, parse_instance_types
from collectors.aws_pricelist import parse_price_list_item
from collectors.base import RunContext
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine

ROUNDS = 5
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "aws"
REGIONS = [
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
    "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-north-1", "eu-south-1",
    "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-southeast-1",
    "ap-southeast-2", "ap-east-1", "me-south-1", "af-south-1", "il-central-1",
]  # fmt: skip


def hardware() -> dict[str, InstanceHardware]:
    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return parse_instance_types(json.load(fh).values(), _ignore)


def _ignore(reason: str, detail: str) -> None:
    """The benchmark counts offers, not skips."""


def synthetic_items(count: int, types: list[str]) -> list[tuple[str, str]]:
    """(JSON string, region) pairs: each template re-typed, re-priced and re-regioned."""
    page = json.loads((FIXTURES / "pricing_get_products_gpu_page_derived.json").read_text())
    templates = [json.loads(raw) for raw in page["PriceList"]]
    out = []
    for n in range(count):
        item = copy.deepcopy(templates[n % len(templates)])
        name = types[n % len(types)]
        region = REGIONS[(n // len(types)) % len(REGIONS)]
        item["product"]["attributes"]["instanceType"] = name
        item["product"]["attributes"]["usagetype"] = f"BoxUsage:{name}"
        item["product"]["sku"] = f"BENCH{n:011d}"
        for term in item["terms"]["OnDemand"].values():
            for dim in term["priceDimensions"].values():
                dim["pricePerUnit"]["USD"] = f"{1 + (n % 997) / 100:.10f}"
        out.append((json.dumps(item, separators=(",", ":")), region))
    return out


class _Replay:
    """A collector that parses the synthetic stream as the AWS collector would."""

    name: ClassVar[str] = "aws"
    description: ClassVar[str] = "benchmark replay"

    def __init__(self, items: list[tuple[str, str]], hw: dict[str, InstanceHardware]) -> None:
        self.items = items
        self.hw = hw

    @classmethod
    def from_settings(cls, settings: Settings) -> _Replay:  # pragma: no cover - unused
        raise NotImplementedError

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        for raw, region in self.items:
            yield from parse_price_list_item(raw, self.hw, ctx.skip, region_hint=region)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    hw = hardware()
    items = synthetic_items(count, sorted(hw))
    strings = [raw for raw, _ in items]

    # Best of ROUNDS, alternating, after freezing the setup's objects out of the GC:
    # on a shared 2-core machine single timings swing by 2x.
    gc.collect()
    gc.freeze()
    t_json = t_parse = float("inf")
    offers = 0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for raw in strings:
            json.loads(raw)
        t_json = min(t_json, time.perf_counter() - start)

        start = time.perf_counter()
        offers = 0
        for raw, region in items:
            offers += len(parse_price_list_item(raw, hw, _ignore, region_hint=region))
        t_parse = min(t_parse, time.perf_counter() - start)

    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("GPU_TRACKER_DATABASE_URL") or f"sqlite:///{tmp}/bench.db"
        engine = make_engine(url)
        migrate.upgrade(engine)
        start = time.perf_counter()
        summary = run_collector(engine, _Replay(items, hw), settings)
        t_store = time.perf_counter() - start
        engine.dispose()
    if summary.status != "succeeded":
        raise SystemExit(f"store run failed: {summary.error}")

    json_rate = count / t_json
    parse_rate = count / t_parse
    store_rate = count / t_store
    print(
        f"items: {count}  offers: {offers}  stored: {summary.stats.offers_seen}  ({url.split(':')[0]})"
    )
    print(f"json.loads:          {t_json:8.3f}s  {json_rate:12,.0f} items/s")
    print(f"parse+normalize:     {t_parse:8.3f}s  {parse_rate:12,.0f} items/s")
    print(f"parse+store:         {t_store:8.3f}s  {store_rate:12,.0f} items/s")
    print(f"parse+store ratio vs json.loads: {store_rate / json_rate:.3f}")
    print(f"aws-parse ratio={parse_rate / json_rate:.2f} items_per_s={parse_rate:.0f}")


if __name__ == "__main__":
    main()
