"""Streaming a regional EC2 bulk offer file against loading it whole with ``json.load``.

A regional offer file of about ``MB`` megabytes (default 300; the real ones are
hundreds of MB to GB) is built in a temp dir from the real-shaped items of
tests/fixtures/aws/bulk_offer_file_us_east_2_derived.json: mostly the non-GPU
m5.large product re-typed over many SKUs (as in the real file, where GPU types
are a few percent), every 40th product the Linux p3.8xlarge re-typed over the
GPU families of :data:`collectors.aws_bulk_hardware.FAMILY_DEVICES`; every product
gets the template's OnDemand and 12 Reserved terms. Then, each in a fresh
subprocess (so peak RSS is that step's own):

1. ``json.load`` of the whole file (stdlib, the fastest JSON reader at hand);
2. ours: :func:`collectors.aws_bulk_stream.extract_offer_file` streaming the file
   and pricing the kept products with :func:`collectors.aws_bulk.bulk_offers`.

    python bench/aws_bulk.py [MB]

The last line is ``aws-bulk ratio=X.XX peak_rss_mib=N``: ratio is json.load time /
our time (target >= 0.5), N our extraction's peak RSS (target <= 300 MiB).
"""

from __future__ import annotations

import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from collectors.aws_bulk import bulk_offers, wanted_product
from collectors.aws_bulk_hardware import FAMILY_DEVICES
from collectors.aws_bulk_stream import extract_offer_file
from collectors.base import RunContext
from tracker.settings import Settings

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "aws"
    / "bulk_offer_file_us_east_2_derived.json"
)
GPU_SKU = "DRVP38XLARGELNX1"
CPU_SKU = "8D49XP354UEYTHGM"
GPU_EVERY = 40
SIZES = ["large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge"]


def _retyped(template: Any, old_sku: str, sku: str) -> Any:
    return json.loads(json.dumps(template).replace(old_sku, sku))


def _product(body: Any, n: int, gpu_types: list[str]) -> tuple[str, Any, Any, Any]:
    """(sku, product, OnDemand terms, Reserved terms) of the n-th product."""
    sku = f"BENCH{n:011d}"
    gpu = n % GPU_EVERY == 0
    product = copy.deepcopy(body["products"][GPU_SKU if gpu else CPU_SKU])
    product["sku"] = sku
    if gpu:
        name = gpu_types[(n // GPU_EVERY) % len(gpu_types)]
    else:
        name = f"m{5 + n % 4}.{SIZES[n % len(SIZES)]}"
    product["attributes"]["instanceType"] = name
    product["attributes"]["usagetype"] = f"USE2-BoxUsage:{name}"
    on_demand = _retyped(body["terms"]["OnDemand"][GPU_SKU], GPU_SKU, sku)
    reserved = _retyped(body["terms"]["Reserved"][GPU_SKU], GPU_SKU, sku)
    return sku, product, on_demand, reserved


def build(path: Path, megabytes: int) -> int:
    """Writes the offer file (indented like AWS's); returns the number of products."""
    body = json.loads(FIXTURE.read_text())
    gpu_types = [f"{family}.{size}" for family in FAMILY_DEVICES for size in ("xlarge", "48xlarge")]
    one = sum(len(json.dumps(x, indent=2)) for x in _product(body, 1, gpu_types)[1:])
    count = megabytes * 1_000_000 // one
    header = {k: body[k] for k in ("formatVersion", "disclaimer", "offerCode", "version")}
    header["publicationDate"] = body["publicationDate"]
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, indent=2)[:-2] + ',\n  "products" : {\n')
        _members(out, ((s, p) for s, p, _, _ in _all(body, count, gpu_types)))
        out.write('  },\n  "terms" : {\n    "OnDemand" : {\n')
        _members(out, ((s, o) for s, _, o, _ in _all(body, count, gpu_types)))
        out.write('    },\n    "Reserved" : {\n')
        _members(out, ((s, r) for s, _, _, r in _all(body, count, gpu_types)))
        out.write('    }\n  },\n  "attributesList" : { }\n}\n')
    return count


def _all(body: Any, count: int, gpu_types: list[str]) -> Any:
    return (_product(body, n, gpu_types) for n in range(count))


def _members(out: IO[str], pairs: Any) -> None:
    first = True
    for key, value in pairs:
        if not first:
            out.write(",\n")
        out.write(f"    {json.dumps(key)} : {json.dumps(value, indent=2)}")
        first = False
    out.write("\n")


def child(mode: str, path: str) -> None:
    start = time.perf_counter()
    if mode == "load":
        with open(path, encoding="utf-8") as fh:
            kept = len(json.load(fh)["products"])
    else:
        with open(path, encoding="utf-8") as fh:
            extract = extract_offer_file(fh, wanted_product, path)
        ctx = RunContext(Settings())
        offers = list(bulk_offers(ctx, "us-east-2", extract, True))
        kept = len(offers)
    elapsed = time.perf_counter() - start
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": elapsed, "rss_mib": rss_mib, "kept": kept}))


def run_child(mode: str, path: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.json"
        products = build(path, megabytes)
        size_mib = path.stat().st_size / 2**20
        print(f"offer file: {size_mib:.0f} MiB, {products} products")
        load = run_child("load", path)
        ours = run_child("extract", path)
    print(f"json.load:        {load['seconds']:7.2f}s  peak {load['rss_mib']:7.0f} MiB")
    print(
        f"stream+extract:   {ours['seconds']:7.2f}s  peak {ours['rss_mib']:7.0f} MiB"
        f"  ({ours['kept']:.0f} offers)"
    )
    ratio = load["seconds"] / ours["seconds"]
    print(f"aws-bulk ratio={ratio:.2f} peak_rss_mib={ours['rss_mib']:.0f}")


if __name__ == "__main__":
    main()
