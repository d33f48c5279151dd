"""Parsing and checking what people type for a history read: times, steps, GPU names.

The CLI and the web API share these: each raises :class:`HistoryArgumentError` with one
line naming the argument and what is wrong, which the CLI turns into exit 2 and the web
app into HTTP 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tracker.catalog import GpuSelection, select_gpus
from tracker.format import iso_z
from tracker.store.reads import Steps

__all__ = [
    "MAX_POINTS",
    "EmptyGrid",
    "Grid",
    "HistoryArgumentError",
    "Window",
    "ending_at",
    "make_grid",
    "parse_step",
    "parse_time",
    "parse_window",
    "require_gpus",
]

MAX_POINTS = 20_000
"""The most steps one read returns (an hourly year is 8,760)."""

_RELATIVE = re.compile(r"^\s*(\d+)\s*(h|d|w)\s*$", re.IGNORECASE)
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)(?:\s+ago)?$", re.IGNORECASE)
_AGE_UNIT = {"s": timedelta(seconds=1), "m": timedelta(minutes=1), **_UNIT}
_WEEK_ANCHOR = datetime(1970, 1, 5, tzinfo=UTC)
"""A Monday: weekly steps fall on Mondays 00:00 UTC, daily on midnights, hourly on hours."""


class HistoryArgumentError(ValueError):
    """A history argument that cannot be used; the message is one line."""


class EmptyGrid(HistoryArgumentError):
    """No step of the resampling falls in the window: the CLI says so (an error, as
    ever); /api/v1's history routes answer no rows (an empty window holds none)."""


def parse_time(value: str, option: str, *, now: datetime) -> datetime:
    """A time as people type it, the one parser of every ``--since``/``--until``/``--at``
    (and the web's ``since``/``until``): ``now``; ``today`` / ``yesterday`` (midnight
    UTC); an age before ``now`` (``30d``, ``12h``, ``2w``, ``30m``, ``90s``, optionally
    followed by ``ago``); or an ISO-8601 date or time (UTC unless it carries an offset)."""
    text = value.strip()
    word = text.lower()
    if word == "now":
        return now
    if word in ("today", "yesterday"):
        midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight - (timedelta(days=1) if word == "yesterday" else timedelta(0))
    age = _AGE.match(text)
    if age:
        try:
            return now - float(age.group(1)) * _AGE_UNIT[age.group(2).lower()]
        except OverflowError:  # more than a timedelta holds, or before the year 1
            raise HistoryArgumentError(
                f"{option} {value!r}: further back than a time can go (the year 1)"
            ) from None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise HistoryArgumentError(
            f"{option} {value!r}: not a time (use now, today, yesterday, an age such as 7d "
            "or 12h, or a date/time such as 2026-01-01 or 2026-01-01T10:30:00Z)"
        ) from None
    try:
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the year 1 in UTC
        raise HistoryArgumentError(
            f"{option} {value!r}: outside the years 1-9999 once in UTC"
        ) from None


@dataclass(frozen=True, slots=True)
class Window:
    since: datetime
    until: datetime


def parse_window(
    since: str | None,
    until: str | None,
    *,
    now: datetime,
    default_span: timedelta = timedelta(days=30),
) -> Window:
    """``--since`` / ``--until`` (``until`` defaults to ``now``, ``since`` to
    ``default_span`` before ``until``); ``since`` must come before ``until``."""
    end = parse_time(until, "--until", now=now) if until else now
    start = parse_time(since, "--since", now=now) if since else end - default_span
    if start >= end:
        raise HistoryArgumentError(f"--since {_show(start)} is not before --until {_show(end)}")
    return Window(start, end)


def parse_step(value: str) -> timedelta:
    """``--resample``: ``<N>h``, ``<N>d`` or ``<N>w`` (N ≥ 1)."""
    match = _RELATIVE.match(value)
    if not match or int(match.group(1)) < 1:
        raise HistoryArgumentError(f"--resample {value!r}: not a step (use e.g. 1h, 6h, 1d or 1w)")
    try:
        return int(match.group(1)) * _UNIT[match.group(2).lower()]
    except OverflowError:  # more days than a timedelta holds (999,999,999)
        raise HistoryArgumentError(
            f"--resample {value!r}: longer than any history (use e.g. 1h, 6h, 1d or 1w)"
        ) from None


Grid = Steps
"""Equally spaced step times (``start + k·step``, ``k < count``) a resampled read covers."""


def make_grid(window: Window, step: timedelta, rule: str = "") -> Grid:
    """The aligned step times within the window (both ends included): hourly steps on
    whole hours, daily on midnights UTC, weekly on Mondays, N-multiples from the epoch."""
    weekly = step % timedelta(weeks=1) == timedelta(0)
    anchor = _WEEK_ANCHOR if weekly else datetime(1970, 1, 1, tzinfo=UTC)
    behind = (window.since - anchor) % step
    try:
        start: datetime | None = (
            window.since if behind == timedelta(0) else window.since + (step - behind)
        )
    except OverflowError:  # the first aligned step is past the calendar's end
        start = None
    count = 0 if start is None or start > window.until else (window.until - start) // step + 1
    shown = rule or _show_step(step)
    if count == 0:
        raise EmptyGrid(
            f"--resample {shown}: no step falls between --since {_show(window.since)} "
            f"and --until {_show(window.until)}"
        )
    if count > MAX_POINTS:
        raise HistoryArgumentError(
            f"--resample {shown} gives {count} points between --since and --until, "
            f"more than {MAX_POINTS}: use a coarser step or a shorter window"
        )
    assert start is not None
    return Grid(start, step, count)


def ending_at(grid: Grid, until: datetime) -> Grid:
    """``grid`` with ``until`` (the window's end: now by default) as its last time when
    the regular steps stop before it, so a history's last row is the price in force then."""
    regular = grid.start + (grid.count - 1) * grid.step
    if until <= regular:
        return grid
    return Grid(grid.start, grid.step, grid.count, end=until)


def require_gpus(names: Sequence[str], stored: Callable[[Sequence[str]], set[str]]) -> GpuSelection:
    """What ``--gpu`` names select; a name that is neither in the catalog nor a stored
    GPU name is an error, since it would silently select nothing. ``stored`` tells which
    of some lower-cased names the store has (:func:`tracker.store.reads.stored_gpu_names`)."""
    selection = select_gpus(names)
    known = stored(selection.names) if selection.names else set()
    for name in selection.names:
        if name not in known:
            raise HistoryArgumentError(
                f"--gpu {name!r}: unknown GPU (not in the catalog, and no stored offer has "
                "it; see 'gpu-tracker gpus')"
            )
    if not selection:
        raise HistoryArgumentError("--gpu: empty GPU name")
    return selection


def _show(t: datetime) -> str:
    return iso_z(t)


def _show_step(step: timedelta) -> str:
    hours = int(step.total_seconds()) // 3600
    return f"{hours // 24}d" if hours % 24 == 0 else f"{hours}h"
