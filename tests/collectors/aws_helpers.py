"""Shared helpers for the AWS collector tests: fixture loading and a recording RunContext."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from collectors.aws_parse import InstanceHardware, parse_instance_types
from tracker.models import PricingModel
from tracker.settings import Settings

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
    hw, skips = parse_instance_types(instance_type_items())
    assert skips == []
    return hw


class FakeContext:
    """A RunContext that records what the collector reports (for tests without a store)."""

    def __init__(
        self,
        settings: Settings,
        *,
        scope: frozenset[PricingModel] = frozenset(PricingModel),
        last: dict[tuple[PricingModel, str], datetime] | None = None,
    ) -> None:
        self._settings = settings
        self._scope = scope
        self.skips: Counter[str] = Counter()
        self.details: list[tuple[str, str]] = []
        self.partial: dict[str, str] = {}
        self.last = last or {}

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def pricing_scope(self) -> frozenset[PricingModel]:
        return self._scope

    def skip(self, reason: str, detail: str = "") -> None:
        self.skips[reason] += 1
        self.details.append((reason, detail))

    def mark_partial(self, region: str, reason: str) -> None:
        self.partial[region] = reason

    def last_observed(self, pricing: PricingModel, region: str) -> datetime | None:
        return self.last.get((pricing, region))
