"""``history --plot FILE.png|FILE.svg``: the series as steps, one line per offer kind.

matplotlib with the headless Agg backend (no display needed, safe in a server). Prices
are step functions, so lines are drawn as steps that hold each value until the next
point (``where="post"``); an empty step (nothing in force) breaks the line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
from matplotlib.figure import Figure

from tracker.history.args import HistoryArgumentError
from tracker.history.files import check_writable

__all__ = ["PLOT_FORMATS", "check_plot_path", "plot_steps"]

PLOT_FORMATS = ("png", "svg")


def check_plot_path(path: Path) -> None:
    """A PNG or SVG file name in a writable folder, checked before the query runs."""
    if path.suffix.lower().lstrip(".") not in PLOT_FORMATS:
        raise HistoryArgumentError(f"--plot {path}: name a .png or .svg file")
    check_writable(path, "--plot")


def plot_steps(
    rows: Sequence[Mapping[str, Any]],
    *,
    value: str,
    line: Callable[[Mapping[str, Any]], str],
    title: str,
    ylabel: str,
    path: Path | None = None,
) -> Figure:
    """One step line per ``line(row)`` label over the rows' ``time``; each line has the
    row's ``value`` where the row is its own and a gap elsewhere. Saved to ``path``
    (format from its suffix) when given; the figure is returned for inspection."""
    times = sorted({r["time"] for r in rows})
    where = {t: i for i, t in enumerate(times)}
    lines: dict[str, list[float]] = {}
    for r in rows:
        if r[value] is None:
            continue
        ys = lines.setdefault(line(r), [float("nan")] * len(times))
        ys[where[r["time"]]] = float(r[value])
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for label, ys in sorted(lines.items()):
        ax.step(times, ys, where="post", label=label)
    ax.set_title(title)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel(ylabel)
    locator = ax.xaxis.get_major_locator()
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.grid(True, alpha=0.3)
    if lines:
        ax.legend(loc="best", fontsize="small")
    if path is not None:
        try:
            fig.savefig(path, format=path.suffix.lower().lstrip("."))
        except OSError as exc:
            raise HistoryArgumentError(
                f"--plot {path}: cannot write ({exc.strerror or exc})"
            ) from None
    return fig
