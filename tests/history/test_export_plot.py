"""Exports round-trip through pandas; plots hold the expected lines and labels."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from tests.history.conftest import DAY
from tracker.catalog import select_gpus
from tracker.history import views
from tracker.history.args import HistoryArgumentError, Window, make_grid
from tracker.history.export import write_export
from tracker.history.files import ExportFormat
from tracker.history.plot import check_plot_path, plot_steps
from tracker.history.spark import sparkline
from tracker.models import PricingModel
from tracker.store.engine import Engine
from tracker.store.reads import EXPORT_COLUMNS, SeriesFilter, export_batches

WINDOW = (DAY + timedelta(hours=9), DAY + timedelta(hours=16))


def test_parquet_and_csv_exports_round_trip_through_pandas(
    day_history: Engine, tmp_path: Path
) -> None:
    where = SeriesFilter(gpu=select_gpus(["H100"]), provider=["aws"])
    # batches of 2 rows, so several batches are written one after the other
    parquet, csv = tmp_path / "h.parquet", tmp_path / "h.csv"
    n = write_export(
        parquet, ExportFormat.parquet, export_batches(day_history, where, *WINDOW, batch_rows=2)
    )
    assert write_export(csv, ExportFormat.csv, export_batches(day_history, where, *WINDOW)) == n
    # aws H100 intervals in force during 09:00–16:00: on-demand 98.32 (00:00–10:30),
    # 80.00 (10:30–13:00, delisted), 80.00 (from 15:00); spot 40.00 (from 00:00)
    expected = [
        ("on_demand", Decimal("98.32"), "2026-03-01 00:00", "2026-03-01 10:30"),
        ("on_demand", Decimal("80.00"), "2026-03-01 10:30", "2026-03-01 13:00"),
        ("on_demand", Decimal("80.00"), "2026-03-01 15:00", None),
        ("spot", Decimal("40.00"), "2026-03-01 00:00", None),
    ]
    frame = pd.read_parquet(parquet)
    assert list(frame.columns) == list(EXPORT_COLUMNS) and len(frame) == n == 4

    def key(pricing: str, price: Decimal, first: str, ended: str | None) -> tuple[object, ...]:
        return (pricing, price, pd.Timestamp(first, tz="UTC"),
                pd.Timestamp(ended, tz="UTC") if ended else None)  # fmt: skip

    got = sorted(
        (r.pricing, r.price_per_hour, r.first_seen, None if pd.isna(r.ended_at) else r.ended_at)
        for r in frame.itertuples()
    )
    assert got == sorted(key(*e) for e in expected)
    assert {d for d in frame["gpu_count"]} == {Decimal(8)}
    text = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert list(text.columns) == list(EXPORT_COLUMNS) and len(text) == 4
    assert sorted(text["price_per_hour"]) == ["40", "80", "80", "98.32"]
    assert "2026-03-01T10:30:00Z" in set(text["ended_at"])
    assert not list(tmp_path.glob("*.partial"))


def test_an_empty_export_still_has_its_columns(day_history: Engine, tmp_path: Path) -> None:
    where = SeriesFilter(provider=["nobody"])
    path = tmp_path / "none.parquet"
    assert (
        write_export(path, ExportFormat.parquet, export_batches(day_history, where, *WINDOW)) == 0
    )
    assert list(pd.read_parquet(path).columns) == list(EXPORT_COLUMNS)


def test_plot_draws_one_step_line_per_provider_and_pricing(
    day_history: Engine, tmp_path: Path
) -> None:
    grid = make_grid(Window(*WINDOW), timedelta(hours=1))
    rows = views.gpu_steps(
        day_history, select_gpus(["H100"]), grid, pricing=[PricingModel.ON_DEMAND], fx_rates={}
    )
    for suffix in ("png", "svg"):
        path = tmp_path / f"h100.{suffix}"
        fig = plot_steps(
            rows,
            value="price_per_gpu_hour_usd",
            line=lambda r: f"{r['provider']} {r['pricing']}",
            title="cheapest H100 on_demand",
            ylabel="USD per GPU-hour",
            path=path,
        )
        assert path.stat().st_size > 1000
    assert path.read_text().lstrip().startswith("<?xml")
    ax = fig.axes[0]
    assert ax.get_title() == "cheapest H100 on_demand"
    assert ax.get_ylabel() == "USD per GPU-hour"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"aws on_demand", "azure on_demand", "lambda on_demand"}
    assert lines["aws on_demand"].get_drawstyle() == "steps-post"
    ys = [None if y != y else y for y in lines["azure on_demand"].get_ydata()]
    # azure is the cheapest at 13:00 and 14:00 only (see test_steps)
    assert ys == [None, None, None, None, 11.5, 11.5, None, None]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == sorted(lines)


def test_plot_path_must_be_png_or_svg_in_a_writable_folder(tmp_path: Path) -> None:
    with pytest.raises(HistoryArgumentError, match=r"^--plot .*\.png or \.svg"):
        check_plot_path(tmp_path / "chart.pdf")
    with pytest.raises(HistoryArgumentError, match=r"^--plot .*does not exist"):
        check_plot_path(tmp_path / "missing" / "chart.png")


def test_sparkline() -> None:
    values = [Decimal(1), Decimal(2), None, Decimal(8), Decimal(1)]
    # low 1, high 8: 2 → (2-1)/7 × 7 = 1 → ▂; 8 → █; None → space
    assert sparkline(values) == "▁▂ █▁"
    assert sparkline([Decimal(3)] * 3) == "▁▁▁"
    assert sparkline([None, None]) == "  "
    assert len(sparkline([Decimal(i) for i in range(200)], width=50)) == 50
