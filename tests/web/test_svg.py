"""The server-drawn charts: steps, gaps, axes that hold every value, sparklines."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from tracker.web.svg import Series, Step, bars, sparkline, step_chart

T = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)


def test_a_change_is_a_vertical_step_and_a_delisting_a_gap() -> None:
    steps = [
        Step(T, T + 2 * H, Decimal("4.00")),
        Step(T + 2 * H, T + 3 * H, Decimal("3.00")),  # changed at +2 h: joined
        Step(T + 5 * H, T + 6 * H, Decimal("3.50")),  # relisted after a gap: a new line
    ]
    svg = str(step_chart([Series("spot", steps)]))
    path = re.search(r'<g class="series"[^>]*><path d="([^"]+)"', svg)
    assert path is not None
    commands = path.group(1).split()
    assert [c[0] for c in commands] == ["M", "L", "L", "L", "M", "L"]
    # x: 64 px left margin + 680 px plot over 6 hours: +2 h → 64 + 680 × 2/6 = 290.7
    assert commands[1].startswith("L290.7,") and commands[2].startswith("L290.7,")
    points = json.loads(re.search(r'data-points="([^"]+)"', svg).group(1).replace("&quot;", '"'))  # type: ignore[union-attr]
    assert points[1] == ["2026-03-01T02:00:00Z", "2026-03-01T03:00:00Z", "3"]


def test_the_value_axis_covers_every_price() -> None:
    svg = str(
        step_chart(
            [Series("x", [Step(T, T + H, Decimal("12")), Step(T + H, T + 2 * H, Decimal("32"))])]
        )
    )
    labels = [float(v) for v in re.findall(r'text-anchor="end"[^>]*>([0-9.]+)</text>', svg)]
    # 12 × 0.95 = 11.4 and 32 × 1.05 = 33.6 with ticks 5 apart: 10 … 35.
    assert labels == [10, 15, 20, 25, 30, 35]


def test_no_history_is_said_not_drawn() -> None:
    assert "No price history" in str(step_chart([Series("on_demand", [])]))
    said = str(step_chart([], empty="No H100 price stored in the last 90 days."))
    assert said == '<p class="empty no-data">No H100 price stored in the last 90 days.</p>'
    assert "<svg" not in said  # no empty axes


def test_sparkline_keeps_gaps_and_needs_two_values() -> None:
    assert str(sparkline([Decimal(1)])) == '<span class="empty no-data">no data</span>'
    svg = str(sparkline([Decimal("2"), None, Decimal("1"), Decimal("1.5")], width=90))
    d = re.search(r'd="([^"]+)"', svg).group(1)  # type: ignore[union-attr]
    assert [c[0] for c in d.split()] == ["M", "M", "L"]
    assert 'data-values="[&quot;2&quot;, null, &quot;1&quot;, &quot;1.5&quot;]"' in svg


def test_time_labels_stay_inside_the_chart() -> None:
    svg = str(step_chart([Series("x", [Step(T, T + 6 * H, Decimal("3"))])], width=400))
    labels = re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" text-anchor="(\w+)"[^>]*>03-01', svg)
    # five labels over a 400 - 64 - 16 = 320 px plot: at 64, 144, 224, 304 and 384 px;
    # the first starts at its x and the last ends at its x (centred, half would be cut).
    assert labels == [
        ("64.0", "start"),
        ("144.0", "middle"),
        ("224.0", "middle"),
        ("304.0", "middle"),
        ("384.0", "end"),
    ]
    assert 'viewBox="0 0 400 ' in svg  # scales to its box's width


def test_bars_are_proportional_to_the_largest_figure() -> None:
    svg = str(bars([("on-demand", Decimal("3")), ("spot", None)], Decimal("4"), width=100))
    # 3 / 4 × 100 = 75 px; a missing figure draws no bar.
    assert re.findall(r'data-name="([^"]+)"[^>]* width="([0-9.]+)"', svg) == [("on-demand", "75.0")]
    assert str(bars([("x", Decimal("1"))], None)) == ""


def _axis(svg: str) -> tuple[str, str]:
    found = re.search(r'data-start="([^"]+)" data-end="([^"]+)"', svg)
    assert found is not None
    return found.group(1), found.group(2)


def test_a_price_seen_once_is_a_point_at_now_on_an_axis_ending_at_now() -> None:
    """A fresh store's GPU chart: one row, at now (the first collection): a step of no
    length. The axis used to run from it to an hour later (into the future) and the
    zero-length path drew nothing."""
    now = T + 18 * H + timedelta(minutes=22)  # the first collection, 18:22
    svg = str(step_chart([Series("on-demand", [Step(now, now, Decimal("2.5"))])], now=now))
    # the axis ends at now and reaches MIN_SPAN (one hour) back: 17:22 → 18:22
    assert _axis(svg) == ("2026-03-01T17:22:00Z", "2026-03-01T18:22:00Z")
    labels = re.findall(
        r'text-anchor="(?:start|middle|end)" font-size="11" fill="#555">([^<]+)<', svg
    )
    assert labels[0] == "03-01 17:22" and labels[-1] == "03-01 18:22"
    # the point: at the right edge of the plot (64 + 680 = 744 px), drawn as a dot
    dots = re.findall(r'<circle cx="([0-9.]+)" cy="[0-9.]+" r="3"', svg)
    assert dots == ["744.0"]
    note = re.search(r'<p class="meta chart-note">([^<]+)</p>', svg)
    assert note is not None and note.group(1).startswith("Too little data for a history yet")
    assert "2026-03-01 18:22 UTC" in note.group(1)


def test_the_axis_ends_at_now_not_at_the_last_change() -> None:
    """An open price runs to now; a later ``now`` stretches the axis to it."""
    steps = [Step(T, T + 2 * H, Decimal("4")), Step(T + 2 * H, T + 3 * H, Decimal("3"))]
    svg = str(step_chart([Series("x", steps)], now=T + 6 * H))
    assert _axis(svg) == ("2026-03-01T00:00:00Z", "2026-03-01T06:00:00Z")
    assert "chart-note" not in svg  # three hours of data: enough to draw
    # a line ends in a dot at its last price: +3 h of 6 → 64 + 680 / 2 = 404 px
    assert re.findall(r'<circle cx="([0-9.]+)"', svg) == ["404.0"]


def test_a_window_longer_than_the_data_says_so() -> None:
    """The GPU page reads 90 days; a store holding two days says where its data starts."""
    steps = [Step(T, T + 48 * H, Decimal("4"))]
    svg = str(step_chart([Series("x", steps)], now=T + 48 * H, window_start=T - 88 * 24 * H))
    assert "Prices stored since 2026-03-01 00:00 UTC only: the chart starts there." in svg
    # data from the window's start (within a day of it): nothing to say
    svg = str(step_chart([Series("x", steps)], now=T + 48 * H, window_start=T - 12 * H))
    assert "chart-note" not in svg
