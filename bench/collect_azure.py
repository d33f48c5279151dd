"""How much does turning Retail Prices items into offers cost next to decoding them?

Baseline, measured in the same run: ``json.loads`` of the same pages. The ratio says
whether parsing (size lookup, catalog resolution, Decimal maths, Offer validation)
could ever matter next to the network (a page is ~100 items and takes ~0.5 s to fetch).

    python bench/collect_azure.py [pages]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from collectors.azure import parse_items
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures" / "azure"


def main() -> None:
    pages = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    items = []
    for number in (1, 2, 3):
        items += json.loads(
            (FIXTURES / f"retail_prices_gpu_page{number}_derived.json").read_text()
        )["Items"]
    # ~100 items per page, each a distinct identity (varying region) so dedupe keeps them all.
    per_page = [dict(item, armRegionName=f"r{i}") for i, item in enumerate(items * 6)][:100]
    blob = json.dumps({"Items": per_page})
    settings = Settings()

    start = time.perf_counter()
    decoded = [json.loads(blob)["Items"] for _ in range(pages)]
    baseline = time.perf_counter() - start

    skipped = 0

    def skip(reason: str, detail: str) -> None:
        nonlocal skipped
        skipped += 1

    start = time.perf_counter()
    offers = sum(len(parse_items(page, settings, skip)) for page in decoded)
    parse = time.perf_counter() - start

    n = pages * len(per_page)
    print(f"items: {n}  offers: {offers}  skips: {skipped}")
    print(f"json.loads baseline: {baseline:.3f}s  ({n / baseline:,.0f} items/s)")
    print(f"parse_items:         {parse:.3f}s  ({n / parse:,.0f} items/s)")
    print(f"parse / decode ratio: {parse / baseline:.1f}x")
    # Same form as bench/collect_aws.py: parse throughput as a share of json.loads'.
    print(f"azure-parse ratio={baseline / parse:.2f} items_per_s={n / parse:.0f}")


if __name__ == "__main__":
    main()
