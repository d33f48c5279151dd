"""The run context every collector test uses: the real ``RunContext``, without a store.

``make_ctx(settings, scope=..., last_observed={(pricing, region): when})`` builds one;
``last_observed`` stands in for what the store would hold, for incremental
collection. Tests read back what the collector reported from ``ctx.skips``,
``ctx.details`` and ``ctx.partial``, exactly as the runner does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

import pytest

from collectors.base import ALL_PRICING, RunContext
from tracker.models import PricingModel
from tracker.settings import Settings

Stored = Mapping[tuple[PricingModel, str], datetime]
MakeContext = Callable[..., RunContext]


def run_context(
    settings: Settings | None = None,
    *,
    scope: frozenset[PricingModel] = ALL_PRICING,
    last_observed: Stored | None = None,
) -> RunContext:
    stored = dict(last_observed or {})

    def reader(pricing: PricingModel, region: str) -> datetime | None:
        return stored.get((pricing, region))

    return RunContext(
        settings=settings or Settings(),
        pricing_scope=scope,
        source="test",
        last_observed_reader=reader,
    )


@pytest.fixture
def make_ctx() -> MakeContext:
    return run_context


@pytest.fixture
def ctx() -> RunContext:
    """A context with default settings, every pricing model and nothing stored."""
    return run_context()
