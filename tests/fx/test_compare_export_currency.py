"""``compare`` and ``export`` take ``--currency``, and ``compare`` and ``history --gpu``
say how many offers they left out for want of an exchange rate (as ``offers`` does).

Same database as tests/fx/test_views.py (its module fixture: the ECB's 90-day file,
then a sheet with a CNY, a EUR, two USD and an AED offer; the ECB publishes no AED
rate). Latest rates (2020-12-01): 1 EUR = 1.1968 USD = 7.8639 CNY. Every interval is
still open, so "now" (today), 7 and 30 days ago all read the latest prices.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq

from tests.conftest import Run
from tests.fx.test_views import as_json, cli, q  # noqa: F401  (cli: the module fixture)

D = Decimal
AED_LEFT_OUT = "1 offer left out of the USD view: no exchange rate for AED (1)"


def test_compare_reports_the_offer_left_out_for_want_of_a_rate(cli: Run) -> None:  # noqa: F811
    proc = cli("compare", "--format", "json")
    rows = {r["provider"]: r for r in as_json(proc)}
    assert AED_LEFT_OUT in proc.stderr
    assert "aecloud" not in rows
    # 28 CNY × 1.1968 / 7.8639 = 4.26129528…  → 4.261295 per GPU-hour (1 GPU)
    # 2.60 EUR × 1.1968 = 3.11168; USD: the cheaper of 5.00 and 7.00
    assert [(p, rows[p]["on_demand"]) for p in ("eucloud", "cncloud", "uscloud")] == [
        ("eucloud", "3.11168"),
        ("cncloud", "4.261295"),
        ("uscloud", "5"),
    ]
    assert "display_on_demand" not in rows["cncloud"]  # USD view: no display keys
    table = cli("compare")
    assert table.returncode == 0, table.stderr
    assert AED_LEFT_OUT in table.stderr and "USD per GPU-hour" in table.stdout


def test_compare_in_cny(cli: Run) -> None:  # noqa: F811
    proc = cli("compare", "--currency", "cny", "--format", "json")
    rows = {r["provider"]: r for r in as_json(proc)}
    assert {r["display_currency"] for r in rows.values()} == {"CNY"}
    assert rows["cncloud"]["display_on_demand"] == "28"  # its own price, exactly
    # 2.60 EUR × 7.8639 = 20.44614 CNY; 5.00 USD × 7.8639 / 1.1968 = 32.85386029… CNY
    assert rows["eucloud"]["display_on_demand"] == "20.44614"
    assert rows["uscloud"]["display_on_demand"] == "32.85386"
    assert rows["uscloud"]["on_demand"] == "5"  # the USD keys keep their meaning
    assert rows["uscloud"]["display_spot"] is None
    # ranked in USD whatever the view: eucloud (3.11) < cncloud (4.26) < uscloud (5)
    assert list(rows) == ["eucloud", "cncloud", "uscloud"]
    assert AED_LEFT_OUT.replace("USD view", "CNY view") in proc.stderr
    table = cli("compare", "--currency", "CNY")
    assert table.returncode == 0, table.stderr
    assert "CNY per GPU-hour" in table.stdout and "20.45" in table.stdout
    bad = cli("compare", "--currency", "XYZ")
    assert bad.returncode == 2 and "no exchange rate stored for XYZ" in bad.stderr


def test_history_of_a_gpu_reports_the_offer_left_out(cli: Run) -> None:  # noqa: F811
    proc = cli("history", "--gpu", "H100", "--format", "json")
    rows = as_json(proc)
    # the cheapest at every step is the 2.60 EUR offer (3.11168 USD); AED never counts
    assert {r["provider"] for r in rows} == {"eucloud"}
    # counted once although it was left out at each of the 31 daily steps
    assert AED_LEFT_OUT in proc.stderr
    table = cli("history", "--gpu", "H100")
    assert table.returncode == 0 and AED_LEFT_OUT in table.stderr


def _window() -> tuple[str, ...]:
    return ("--since", "2020-11-20", "--until", "2020-12-02")


def test_export_in_cny_at_the_rate_in_force_when_each_interval_began(
    cli: Run,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "cny.csv"
    proc = cli("export", str(out), *_window(), "--currency", "CNY")
    assert proc.returncode == 0, proc.stderr
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    got = {(r["instance_type"], r["price_per_hour"]): r for r in rows}
    assert {r["display_currency"] for r in rows} == {"CNY"}
    shown = {k: r["display_price_per_hour"] for k, r in got.items()}
    # CNY intervals: their own prices
    assert (shown[("gn.h100", "30")], shown[("gn.h100", "28")]) == ("30", "28")
    # 2.50 EUR on 2020-11-25: × 7.8189 = 19.54725 CNY
    # 2.60 EUR on Saturday 2020-11-28: Friday's 7.8422 → 20.38972 CNY
    assert q(shown[("eu.h100", "2.5")]) == D("19.54725000")
    assert q(shown[("eu.h100", "2.6")]) == D("20.38972000")
    # 5.00 USD on 2020-11-30: × 7.8798 / 1.198 = 32.88731218… CNY
    assert q(shown[("us.h100", "5")]) == D("32.88731219")
    # AED: kept (stored data), no CNY figure, counted
    assert shown[("ae.h100", "20")] == ""
    assert "1 interval has no CNY figure: no exchange rate for AED (1)" in proc.stderr

    parquet = tmp_path / "cny.parquet"
    assert cli("export", str(parquet), *_window(), "--currency", "CNY").returncode == 0
    table = pq.read_table(parquet).to_pylist()
    by = {(r["instance_type"], r["price_per_hour"]): r for r in table}
    assert by[("eu.h100", D("2.5"))]["display_price_per_hour"] == D("19.5472500000")
    # no rate: null in both figures (the file is still written, the interval kept)
    aed = by[("ae.h100", D("20"))]
    assert (aed["price_per_hour_usd"], aed["display_price_per_hour"]) == (None, None)


def test_export_in_usd_keeps_its_columns_and_counts_the_interval_without_a_rate(
    cli: Run,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "usd.csv"
    proc = cli("export", str(out), *_window())
    assert proc.returncode == 0, proc.stderr
    header = out.read_text().splitlines()[0].split(",")
    assert "display_currency" not in header and header[-1] == "ended_at"
    assert "1 interval has no USD figure: no exchange rate for AED (1)" in proc.stderr
    parquet = tmp_path / "usd.parquet"
    written = cli("export", str(parquet), *_window())
    # the AED interval's USD figure is null: the Parquet file is written all the same
    assert written.returncode == 0, written.stderr
    assert pq.read_table(parquet).column_names == header
