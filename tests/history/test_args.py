"""Parsing what people type: times, windows, steps, grids and GPU names (pure, no store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tracker.history.args import (
    MAX_POINTS,
    HistoryArgumentError,
    Window,
    make_grid,
    parse_step,
    parse_time,
    parse_window,
    require_gpus,
)

NOW = datetime(2026, 3, 18, 10, 52, tzinfo=UTC)  # a Wednesday


def test_times_relative_dates_and_offsets() -> None:
    assert parse_time("30d", "--since", now=NOW) == NOW - timedelta(days=30)
    # 10:52 on the 18th minus 12 hours is 22:52 on the 17th
    assert parse_time("12h", "--since", now=NOW) == datetime(2026, 3, 17, 22, 52, tzinfo=UTC)
    assert parse_time("2w", "--since", now=NOW) == datetime(2026, 3, 4, 10, 52, tzinfo=UTC)
    assert parse_time("2026-01-01", "--since", now=NOW) == datetime(2026, 1, 1, tzinfo=UTC)
    # 12:00 at +02:00 is 10:00 UTC
    assert parse_time("2026-01-01T12:00+02:00", "--until", now=NOW) == datetime(
        2026, 1, 1, 10, tzinfo=UTC
    )
    assert parse_time("2026-01-01T10:30:00Z", "--until", now=NOW).minute == 30


def test_times_people_type_words_and_ages_with_ago() -> None:
    """Issue 26: now, today, yesterday and "7d ago" in every --since/--until/--at."""
    assert parse_time("now", "--until", now=NOW) == NOW
    assert parse_time(" NOW ", "--until", now=NOW) == NOW
    # NOW is 2026-03-18 10:52 UTC: today is its midnight, yesterday the one before
    assert parse_time("today", "--since", now=NOW) == datetime(2026, 3, 18, tzinfo=UTC)
    assert parse_time("Yesterday", "--since", now=NOW) == datetime(2026, 3, 17, tzinfo=UTC)
    # 10:52 - 7 days = 2026-03-11 10:52; 10:52 - 30 minutes = 10:22; - 90 s = 10:50:30
    assert parse_time("7d ago", "--since", now=NOW) == datetime(2026, 3, 11, 10, 52, tzinfo=UTC)
    assert parse_time("30m", "--since", now=NOW) == datetime(2026, 3, 18, 10, 22, tzinfo=UTC)
    assert parse_time("90s", "--since", now=NOW) == datetime(2026, 3, 18, 10, 50, 30, tzinfo=UTC)


@pytest.mark.parametrize("bad", ["last week", "tomorrowish", "2026-13-01", "30x", "7d hence", ""])
def test_an_unparsable_time_names_the_option(bad: str) -> None:
    with pytest.raises(HistoryArgumentError, match=r"^--since .*not a time"):
        parse_time(bad, "--since", now=NOW)


def test_window_defaults_and_order() -> None:
    assert parse_window(None, None, now=NOW) == Window(NOW - timedelta(days=30), NOW)
    assert parse_window("7d", None, now=NOW).since == NOW - timedelta(days=7)
    with pytest.raises(
        HistoryArgumentError,
        match=r"^--since 2026-02-01T00:00:00Z is not before --until 2026-01-01T00:00:00Z$",
    ):
        parse_window("2026-02-01", "2026-01-01", now=NOW)


def test_steps() -> None:
    assert parse_step("1h") == timedelta(hours=1)
    assert parse_step("6H") == timedelta(hours=6)
    assert parse_step("1d") == timedelta(days=1)
    assert parse_step("1w") == timedelta(weeks=1)
    for bad in ("0d", "1m", "daily", "1.5h"):
        with pytest.raises(HistoryArgumentError, match=r"^--resample .*not a step"):
            parse_step(bad)


def test_grids_are_aligned_and_include_both_ends() -> None:
    window = Window(datetime(2026, 3, 1, 10, 30, tzinfo=UTC), datetime(2026, 3, 1, 13, tzinfo=UTC))
    hourly = make_grid(window, timedelta(hours=1))
    # first whole hour at or after 10:30 is 11:00; 11, 12, 13 (until included)
    assert hourly.times() == [datetime(2026, 3, 1, h, tzinfo=UTC) for h in (11, 12, 13)]
    daily = make_grid(Window(NOW - timedelta(days=3), NOW), timedelta(days=1))
    # since = 2026-03-15 10:52 → midnights of the 16th, 17th and 18th
    assert daily.times() == [datetime(2026, 3, d, tzinfo=UTC) for d in (16, 17, 18)]
    weekly = make_grid(Window(datetime(2026, 3, 1, tzinfo=UTC), NOW), timedelta(weeks=1))
    # Mondays: 2026-03-02 and 2026-03-09 and 2026-03-16
    assert weekly.times() == [datetime(2026, 3, d, tzinfo=UTC) for d in (2, 9, 16)]


def test_grids_too_fine_or_empty_are_refused() -> None:
    year = Window(NOW - timedelta(days=3 * 365), NOW)
    with pytest.raises(HistoryArgumentError, match=f"more than {MAX_POINTS}"):
        make_grid(year, timedelta(hours=1), "1h")
    short = Window(
        datetime(2026, 3, 1, 10, 10, tzinfo=UTC), datetime(2026, 3, 1, 10, 50, tzinfo=UTC)
    )
    with pytest.raises(HistoryArgumentError, match="no step falls between"):
        make_grid(short, timedelta(hours=1), "1h")


def test_gpu_names_family_model_and_unknown() -> None:
    def nothing_stored(names: object) -> set[str]:
        return set()

    assert set(require_gpus(["H100"], nothing_stored).models) == {
        "H100-SXM", "H100-PCIE", "H100-NVL"
    }  # fmt: skip
    assert require_gpus(["h100-sxm"], nothing_stored).models == ("H100-SXM",)
    assert require_gpus(["a100 80gb"], nothing_stored).models == ("A100-80GB",)
    with pytest.raises(HistoryArgumentError, match=r"^--gpu 'quantum flux 9000': unknown GPU"):
        require_gpus(["Quantum Flux 9000"], nothing_stored)
    stored = require_gpus(["Quantum Flux 9000"], lambda names: {"quantum flux 9000"})
    assert stored.names == ("quantum flux 9000",)
