"""Every GPU model the collectors see in the shipped fixtures, through their own parsers.

Each provider's recorded payloads (tests/fixtures/<provider>/, SOURCES.md there) go
through the collector's pure parse functions, as the collector tests drive them; GCP's
accelerators come from the table its parser prices (``GPU_TYPES``, the spellings it
hands the catalog). The result maps each catalog name (or raw name, when unknown) to the
providers that sold it, so a test can say where a GPU that does not rank came from.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from tracker.catalog import resolve_gpu
from tracker.models import PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _load(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text(encoding="utf-8"))


def _skip(reason: str, detail: str) -> None:
    """Skips are the collector tests' concern; here only what parses counts."""


def _models(offers: Iterable[Any]) -> set[str]:
    return {o.gpu_model for o in offers}


def _aws() -> set[str]:
    from collectors.aws_hardware import parse_instance_types

    items = _load("aws", "ec2_describe_instance_types_gpu_page_moto.json")["InstanceTypes"]
    items += list(_load("catalog", "ec2_instance_types_items_moto_gpu_subset.json").values())
    hardware = parse_instance_types(items, _skip)
    return {h.gpu_model for h in hardware.values() if h.kind == "gpu"}


def _azure() -> set[str]:
    from collectors.azure import parse_items

    items: list[Any] = []
    for page in sorted((FIXTURES / "azure").glob("retail_prices_*.json")):
        items += json.loads(page.read_text(encoding="utf-8")).get("Items", [])
    return _models(parse_items(items, Settings(), _skip))


def _gcp() -> set[str]:
    from collectors.gcp_machines import GPU_TYPES

    return {resolve_gpu(g.catalog_name, g.memory_gib).name for g in GPU_TYPES.values()}


def _oci() -> set[str]:
    from collectors.oci import parse_offers

    return _models(parse_offers(_load("oci", "products_usd_gpu_rows_capture.json"), _skip))


def _lambda() -> set[str]:
    from collectors.lambda_cloud import parse_instance_types

    return _models(parse_instance_types(_load("lambda", "instance_types.json"), _skip))


def _runpod() -> set[str]:
    from collectors.runpod import parse_gpu_types

    found: set[str] = set()
    for page in sorted((FIXTURES / "runpod").glob("*.json")):
        body = json.loads(page.read_text(encoding="utf-8"))
        found |= _models(parse_gpu_types(body, _skip, frozenset(PricingModel)))
    return found


def _vastai() -> set[str]:
    from collectors.vastai import aggregate

    found: set[str] = set()
    for name, pricing in (
        ("bundles_on_demand_page_derived.json", PricingModel.ON_DEMAND),
        ("bundles_bid_page_derived.json", PricingModel.SPOT),
    ):
        offers = _load("vastai", name)["offers"]
        found |= _models(aggregate(offers, pricing, Decimal("10"), _skip))
    return found


def _alibaba() -> set[str]:
    from collectors.alibaba_parse import instance_type_items, parse_instance_types

    items = instance_type_items(_load("alibaba", "DescribeInstanceTypes_page1.json"))
    items += instance_type_items(_load("alibaba", "DescribeInstanceTypes_page2.json"))
    hardware = parse_instance_types(items, _skip)
    return {resolve_gpu(h.gpu_name, h.gpu_memory_gib).name for h in hardware.values()}


def _huawei() -> set[str]:
    from collectors.base import SkipItem
    from collectors.huawei_families import catalog_spelling
    from collectors.huawei_flavors import parse_flavor

    found = set()
    for flavor in _load("huawei", "ecs_list_flavors_gpu_edited.json")["flavors"]:
        try:
            hardware = parse_flavor(flavor)
        except SkipItem:
            continue  # a counted skip in the collector (vGPU slices, unreadable flavors)
        if hardware is not None:
            spelling = catalog_spelling(hardware.gpu_name, hardware.generation)
            found.add(resolve_gpu(spelling, hardware.vram_gib).name)
    return found


def _tencent() -> set[str]:
    from collectors.base import parse_each
    from collectors.tencent_parse import describe_item, parse_item

    found: set[str] = set()
    for page in sorted((FIXTURES / "tencent").glob("zone_configs_*.json")):
        items = json.loads(page.read_text(encoding="utf-8"))["Response"]["InstanceTypeQuotaSet"]
        for batch in parse_each(
            items,
            lambda item: parse_item(item, "ap-guangzhou", Settings(), frozenset(PricingModel)),
            _skip,
            describe_item,
        ):
            found |= _models(batch)
    return found


PROVIDERS = {
    "aws": _aws,
    "azure": _azure,
    "gcp": _gcp,
    "oci": _oci,
    "lambda": _lambda,
    "runpod": _runpod,
    "vastai": _vastai,
    "alibaba": _alibaba,
    "huawei": _huawei,
    "tencent": _tencent,
}


def fixture_gpus() -> dict[str, set[str]]:
    """GPU model -> the providers whose fixtures sell it."""
    seen: dict[str, set[str]] = defaultdict(set)
    for provider, models in PROVIDERS.items():
        for model in models():
            seen[model].add(provider)
    return dict(seen)
