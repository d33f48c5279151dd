"""The skip protocol every parser follows, and the run context collectors report to."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from collectors.base import MAX_SKIP_DETAILS, RunContext, SkipItem, parse_each
from tracker.models import PricingModel

from .conftest import MakeContext


def _half(n: int) -> int | None:
    """A toy parser: odd numbers cannot be priced, zero is not our market."""
    if n == 0:
        return None
    if n % 2:
        raise SkipItem("odd", f"item {n}")
    return n // 2


def test_parse_each_reports_skips_leaves_out_none_and_goes_on(ctx: RunContext) -> None:
    assert list(parse_each([4, 3, 0, 8, 5], _half, ctx.skip)) == [2, 4]
    assert ctx.skips == Counter({"odd": 2})
    assert ctx.details == ["odd: item 3", "odd: item 5"]
    assert ctx.skipped == 2


def test_skip_item_reads_as_one_line() -> None:
    assert str(SkipItem("zero_price", "g5.xlarge us-east-1: price 0")) == (
        "zero_price: g5.xlarge us-east-1: price 0"
    )
    assert str(SkipItem("bad_json")) == "bad_json"


def test_details_are_capped_but_counts_cover_every_skip(ctx: RunContext) -> None:
    for n in range(MAX_SKIP_DETAILS + 7):
        ctx.skip("odd", str(n))
    assert ctx.skips["odd"] == MAX_SKIP_DETAILS + 7
    assert len(ctx.details) == MAX_SKIP_DETAILS


def test_the_fixture_context_reads_back_what_the_store_would_hold(
    make_ctx: MakeContext,
) -> None:
    when = datetime(2021, 2, 9, 1, 0, tzinfo=UTC)
    ctx = make_ctx(last_observed={(PricingModel.SPOT, "us-east-1"): when})
    assert ctx.last_observed(PricingModel.SPOT, "us-east-1") == when
    assert ctx.last_observed(PricingModel.SPOT, "eu-west-1") is None
    assert ctx.last_observed(PricingModel.ON_DEMAND, "us-east-1") is None
    ctx.mark_partial("eu-west-1", "throttled")
    assert ctx.partial == {"eu-west-1": "throttled"}
