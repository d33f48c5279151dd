"""``compare`` on a hand-built store: cheapest figures, spot discount, 7/30-day change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from tests.history.conftest import h100
from tests.listed_collector import collect
from tracker.catalog import select_gpus
from tracker.history.compare import compare_rows
from tracker.store.engine import Engine

NOW = datetime(2026, 3, 31, tzinfo=UTC)
D = timedelta(days=1)


def test_compare_cheapest_discount_and_change(engine: Engine) -> None:
    def aws(on_demand: str) -> list:  # type: ignore[type-arg]
        return [
            h100("aws", "p5.48xlarge", "H100-SXM", 8, on_demand),
            h100("aws", "p5.48xlarge", "H100-SXM", 8, "32.00", pricing="spot", zone="us-east-1a"),
            h100("aws", "p5.48xlarge", "H100-SXM", 8, "36.00", pricing="spot", zone="us-east-1b"),
            h100("aws", "p5.48xlarge", "H100-SXM", 8, "60.00", pricing="reserved_1y",
                 payment_option="no_upfront"),
            h100("aws", "p5.48xlarge", "H100-SXM", 8, "40.00", pricing="reserved_3y",
                 payment_option="all_upfront"),
            # a dearer on-demand H100 elsewhere does not change the cheapest figure
            h100("aws", "p5.48xlarge", "H100-SXM", 8, "120.00", region="eu-west-1"),
        ]  # fmt: skip

    others = [
        h100("lambda", "gpu_8x_h100_sxm5", "H100-SXM", 8, "23.92"),
        h100("gcp", "a3-highgpu-1g", "H100-SXM", 1, "11.06"),
    ]
    a100 = h100("gcp", "a2-ultragpu-1g", "A100-80GB", 1, "5.07")
    collect(engine, [*aws("98.32"), *others, a100], NOW - 40 * D)
    collect(engine, [*aws("88.00"), *others, a100], NOW - 20 * D)
    # gcp's H100 is delisted 3 days ago: no current price, no row
    collect(engine, [*aws("80.00"), others[0], a100], NOW - 3 * D)

    rows = compare_rows(engine, now=NOW, gpu=select_gpus(["H100"]), fx_rates={})
    assert [(r["gpu_model"], r["provider"]) for r in rows] == [
        ("H100-SXM", "lambda"),  # 23.92 / 8 = 2.99 on demand: listed first
        ("H100-SXM", "aws"),
    ]
    lam, aws_row = rows
    assert lam["on_demand"] == Decimal("2.990000")
    assert lam["spot"] is None and lam["spot_discount_pct"] is None
    assert lam["change_7d_pct"] == Decimal("0.0") and lam["change_30d_pct"] == Decimal("0.0")
    # aws now: 80/8 = 10.00; spot min(32, 36)/8 = 4.00; 1y 60/8 = 7.50; 3y 40/8 = 5.00
    assert (aws_row["on_demand"], aws_row["spot"]) == (Decimal("10.000000"), Decimal("4.000000"))
    assert (aws_row["reserved_1y"], aws_row["reserved_3y"]) == (
        Decimal("7.500000"), Decimal("5.000000")
    )  # fmt: skip
    # spot discount: (1 - 4/10) × 100 = 60.0
    assert aws_row["spot_discount_pct"] == Decimal("60.0")
    # 7 days ago (NOW-7d) on-demand was 88/8 = 11.00: (10/11 - 1) × 100 = -9.0909… → -9.1
    assert aws_row["change_7d_pct"] == Decimal("-9.1")
    # 30 days ago (NOW-30d) it was 98.32/8 = 12.29: (10/12.29 - 1) × 100 = -18.633… → -18.6
    assert aws_row["change_30d_pct"] == Decimal("-18.6")

    everything = compare_rows(engine, now=NOW, fx_rates={})
    assert ("A100-80GB", "gcp") in {(r["gpu_model"], r["provider"]) for r in everything}
    only_aws = compare_rows(engine, now=NOW, provider=["aws"], fx_rates={})
    assert [(r["gpu_model"], r["provider"]) for r in only_aws] == [("H100-SXM", "aws")]
    # 45 days ago nothing existed yet: no row at all
    assert compare_rows(engine, now=NOW - 45 * D, fx_rates={}) == []
