"""Charts drawn on the server as SVG: price steps over time, and sparklines.

No JavaScript and no charting library to ship: an SVG of a few hundred path points
is smaller than any library, works on an air-gapped network and under a CSP without
inline script or style (colours are presentation attributes). Each series is a
``<g class="series">`` carrying its name and its points as ``data-`` attributes, so a
test (or a script) reads the chart's data instead of its pixels.

Prices are step functions: an interval holds its price from ``start`` until its
``end`` (the next price, a delisting, or now for an open one: its price is still in
force); a gap between intervals (delisted, then relisted) is drawn as a gap.

Charts scale to the width of their box (a ``viewBox``; the stylesheet sets the width),
keep every axis label inside that box (the first and last time labels are anchored
at their edge, not centred on it), and say "no data" instead of drawing empty axes.

A fresh store must not look broken: the time axis ends at now (never an hour into the
future), spans at least :data:`MIN_SPAN` back from its end so a price seen once sits
at the right edge as a point (a step of no length draws nothing), each line ends in a
dot at its last price, and a chart whose data covers less than an hour, or starts
well after the window it was asked for, says so above the axes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from html import escape
from typing import Any

from markupsafe import Markup

from tracker.format import iso_z, when

__all__ = [
    "MIN_SPAN",
    "PALETTE",
    "Series",
    "Step",
    "bars",
    "chart_steps",
    "sparkline",
    "step_chart",
]

MIN_SPAN = timedelta(hours=1)
"""The shortest time axis: data spanning less is drawn against the hour before its end
(and the chart says there is too little data yet)."""
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


@dataclass(frozen=True, slots=True)
class Step:
    start: datetime
    end: datetime
    value: Decimal


def chart_steps(rows: Sequence[Mapping[str, Any]], value: str) -> list[Step]:
    """History rows (each the price in force at its ``time``, the last one at now) as
    steps: each row's price until the next row; the last row a point, so the line ends
    at the price in force now. Rows without a price (a gap) draw nothing."""
    steps: list[Step] = []
    for a, b in zip(rows, [*rows[1:], None] if rows else [], strict=True):
        if a[value] is not None:
            steps.append(Step(a["time"], a["time"] if b is None else b["time"], a[value]))
    return steps


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    steps: Sequence[Step]


def _iso(t: datetime) -> str:
    return iso_z(t)


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 × 10^k apart) from at or below ``low`` to at or
    above ``high``."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [round(i * step, 10) for i in range(first, last + 1)]


_FIRST_T = datetime(1, 1, 1, tzinfo=UTC).timestamp()
_LAST_T = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def _time_label(t: float, span_seconds: float) -> str:
    # A stored time at the calendar's edge (9999-12-31) puts the axis's padded end past
    # what a datetime holds: the label is clamped to the edge rather than fail the page.
    moment = datetime.fromtimestamp(min(max(t, _FIRST_T), _LAST_T), UTC)
    return moment.strftime("%m-%d %H:%M" if span_seconds < 5 * 86400 else "%Y-%m-%d")


def step_chart(
    series: Sequence[Series],
    *,
    width: int = 760,
    height: int = 300,
    unit: str = "$/h",
    title: str = "",
    empty: str = "No price history stored.",
    now: datetime | None = None,
    window_start: datetime | None = None,
) -> Markup:
    """The series as step lines on shared axes, with a legend; no steps, ``empty``.

    The time axis ends at ``now`` (or the last step's end without it) and starts at
    the first step, at least :data:`MIN_SPAN` earlier. ``window_start`` is where the
    window the caller read begins: data starting more than a day after it is noted."""
    steps = [s for one in series for s in one.steps]
    if not steps:
        return Markup('<p class="empty no-data">{}</p>').format(empty)
    first = min(s.start for s in steps)
    last = max(s.end for s in steps)
    end = max(now, last) if now is not None else last
    start = min(first, end - MIN_SPAN)
    t0, t1 = start.timestamp(), end.timestamp()
    note = _too_little(first, last, window_start)
    left, right, top, bottom = 64, 16, 12, 48 + 18 * ((len(series) + 2) // 3)
    plot_w, plot_h = width - left - right, height - top - 48
    values = [float(s.value) for s in steps]
    ticks = _nice_ticks(min(values) * 0.95 if min(values) > 0 else 0.0, max(values) * 1.05)
    v0, v1 = ticks[0], ticks[-1]

    def x(t: datetime) -> str:
        return _fmt(left + (t.timestamp() - t0) / (t1 - t0) * plot_w)

    def y(v: float) -> str:
        return _fmt(top + plot_h - (v - v0) / (v1 - v0) * plot_h)

    total_h = height - 48 + bottom
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{total_h}" viewBox="0 0 {width} {total_h}" role="img" '
        f'preserveAspectRatio="xMinYMin meet" data-start="{_iso(start)}" '
        f'data-end="{_iso(end)}" '
        f'aria-label="{escape(title or "price history")}" data-unit="{escape(unit)}">'
    ]
    frame = {"left": left, "top": top, "plot_w": plot_w, "plot_h": plot_h}
    out.extend(_axes(ticks, (t0, t1), y, width=width, unit=unit, **frame))
    for n, one in enumerate(series):
        out.extend(_series(n, one, x, y, **frame))
    out.append("</svg>")
    chart = Markup("".join(out))
    if note:
        return Markup('<p class="meta chart-note">{}</p>').format(note) + chart
    return chart


def _too_little(first: datetime, last: datetime, window_start: datetime | None) -> str:
    """What the reader should know before trusting the chart's shape ("" if nothing)."""
    if last - first < MIN_SPAN:
        return (
            f"Too little data for a history yet: prices seen since {when(first)} only; "
            "the chart fills in as collections run."
        )
    if window_start is not None and first - window_start > timedelta(days=1):
        return f"Prices stored since {when(first)} only: the chart starts there."
    return ""


def _axes(
    ticks: Sequence[float],
    span: tuple[float, float],
    y: Any,
    *,
    width: int,
    unit: str,
    left: int,
    top: int,
    plot_w: int,
    plot_h: int,
) -> list[str]:
    """The value grid and its labels, five time labels and the unit."""
    t0, t1 = span
    out = []
    for v in ticks:
        out.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v)}" y2="{y(v)}" stroke="#e3e3e3"/>'
            f'<text x="{left - 6}" y="{y(v)}" text-anchor="end" dominant-baseline="middle" '
            f'font-size="11" fill="#555">{v:g}</text>'
        )
    for i in range(5):
        t = t0 + (t1 - t0) * i / 4
        label = _time_label(t, t1 - t0)
        px = _fmt(left + plot_w * i / 4)
        anchor = ("start", "middle", "middle", "middle", "end")[i]  # the ends stay inside
        out.append(
            f'<text x="{px}" y="{top + plot_h + 16}" text-anchor="{anchor}" font-size="11" '
            f'fill="#555">{label}</text>'
        )
    out.append(
        f'<text x="12" y="{top + plot_h / 2:.0f}" font-size="11" fill="#555" '
        f'transform="rotate(-90 12 {top + plot_h / 2:.0f})" text-anchor="middle">'
        f"{escape(unit)}</text>"
    )
    return out


def _series(
    n: int, one: Series, x: Any, y: Any, *, left: int, top: int, plot_w: int, plot_h: int
) -> list[str]:
    """One series: its step path, a dot at each step of no length and at its last
    price (a price seen once is a point, not an invisible zero-length line), and its
    legend entry."""
    colour = PALETTE[n % len(PALETTE)]
    ordered = sorted(one.steps, key=lambda s: s.start)
    path: list[str] = []
    dots: list[tuple[str, str]] = []
    previous: Step | None = None
    for s in ordered:
        if previous is not None and previous.end >= s.start:
            path.append(f"L{x(s.start)},{y(float(s.value))}")  # the price changed here
        else:
            path.append(f"M{x(s.start)},{y(float(s.value))}")  # first, or after a gap
        path.append(f"L{x(s.end)},{y(float(s.value))}")
        if s.end <= s.start:
            dots.append((x(s.start), y(float(s.value))))
        previous = s
    end_dot = (x(ordered[-1].end), y(float(ordered[-1].value)))
    if end_dot not in dots:
        dots.append(end_dot)
    points = json.dumps(
        [[_iso(s.start), _iso(s.end), format(s.value.normalize(), "f")] for s in ordered]
    )
    circles = "".join(f'<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>' for cx, cy in dots)
    lx, ly = left + (n % 3) * (plot_w / 3), top + plot_h + 36 + 18 * (n // 3)
    return [
        f'<g class="series" data-name="{escape(one.name)}" data-points="{escape(points)}">'
        f'<path d="{" ".join(path)}" fill="none" stroke="{colour}" stroke-width="2"/>'
        f"{circles}</g>",
        f'<rect x="{lx:.0f}" y="{ly - 9:.0f}" width="12" height="4" fill="{colour}"/>'
        f'<text x="{lx + 16:.0f}" y="{ly - 4:.0f}" font-size="11" fill="#222">'
        f"{escape(one.name)}</text>",
    ]


def sparkline(values: Sequence[Decimal | None], *, width: int = 100, height: int = 22) -> Markup:
    """A tiny line of ``values`` (None: a gap); fewer than two numbers, nothing."""
    numbers = [float(v) for v in values if v is not None]
    if len(numbers) < 2:
        return Markup('<span class="empty no-data">no data</span>')
    low, high = min(numbers), max(numbers)
    span = high - low or 1.0
    step = width / (len(values) - 1)
    parts: list[str] = []
    pen_up = True
    for i, v in enumerate(values):
        if v is None:
            pen_up = True
            continue
        py = height - 2 - (float(v) - low) / span * (height - 4)
        parts.append(f"{'M' if pen_up else 'L'}{i * step:.1f},{py:.1f}")
        pen_up = False
    data = json.dumps([None if v is None else format(v.normalize(), "f") for v in values])
    return Markup(
        f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" data-values="{escape(data)}"><path d="{" ".join(parts)}" '
        f'fill="none" stroke="#1f77b4" stroke-width="1.5"/></svg>'
    )


def bars(
    values: Sequence[tuple[str, Decimal | None]], maximum: Decimal | None, *, width: int = 120
) -> Markup:
    """One thin horizontal bar per named value, its length ``value / maximum`` of the
    width (the row's figures against the largest in the table); None, no bar."""
    if not maximum or maximum <= 0:
        return Markup("")
    height = 6 * len(values) + 2
    out = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(", ".join(n for n, v in values if v is not None))}">'
    ]
    for n, (name, value) in enumerate(values):
        if value is None:
            continue
        length = float(value / maximum) * width
        out.append(
            f'<rect class="bar" data-name="{escape(name)}" data-value="{value}" x="0" '
            f'y="{1 + 6 * n}" width="{max(length, 1.0):.1f}" height="5" '
            f'fill="{PALETTE[n % len(PALETTE)]}"><title>{escape(name)}</title></rect>'
        )
    out.append("</svg>")
    return Markup("".join(out))
