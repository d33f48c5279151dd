"""Shared helpers for the AWS collector tests: fixture loading and parsed hardware."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collectors.aws_hardware import InstanceHardware, parse_instance_types

from .conftest import run_context

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "aws"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def gpu_page() -> dict[str, Any]:
    """The derived GPU GetProducts page (PriceList items are JSON strings, as on the wire)."""
    page: dict[str, Any] = load("pricing_get_products_gpu_page_derived.json")
    return page


def gpu_items() -> dict[str, dict[str, Any]]:
    """Decoded derived items by ``instanceType/regionCode-ish`` key (type@location)."""
    items = {}
    for raw in gpu_page()["PriceList"]:
        item = json.loads(raw)
        attrs = item["product"]["attributes"]
        items[f"{attrs['instanceType']}@{attrs['location']}"] = item
    return items


def instance_type_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = load("ec2_describe_instance_types_gpu_page_moto.json")[
        "InstanceTypes"
    ]
    return items


def hardware() -> dict[str, InstanceHardware]:
    ctx = run_context()
    hw = parse_instance_types(instance_type_items(), ctx.skip)
    assert not ctx.skips, ctx.details
    return hw
