"""One renderer per alert kind: what an alert says, in its own terms, for every medium.

Slack, email and the dashboard's alerts page all show an alert as the line
:func:`render` makes from its stored ``kind`` and ``details`` (not its stored title,
so alerts queued by an older version read the same as new ones), with the figures
formatted by :mod:`tracker.format`. A line is plain text: each medium escapes the
*whole* line for itself (:func:`slack_escape`, HTML escaping, Jinja's autoescape),
so no text from a provider, a price sheet or the catalog can reach a medium
unescaped, whichever field it came in.

Each line also carries where it sorts in a digest (:attr:`Line.group`, then
:attr:`Line.size`): what changes a decision first (collectors down, a new best
offer, a new GPU model), then spot discounts, then price drops, then rises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from tracker.format import amount, count, gpus, money, percent, pricing_label, when

__all__ = [
    "GROUPS",
    "MAX_LINE",
    "Line",
    "heading",
    "health_job",
    "render",
    "slack_escape",
]

MAX_LINE = 500
"""A line is cut here (an error message can be long): escaped for Slack it still fits
a 3,000-character section several times over."""

GROUPS = (
    "Collector health",
    "Ranking changes and new GPU models",
    "Spot discounts",
    "Price drops",
    "Price rises",
    "New instance types and regions",
    "Other alerts",
)
"""The order of a digest (index = :attr:`Line.group`)."""
HEALTH, LEADING, SPOT, DROP, RISE, HARDWARE, OTHER = range(len(GROUPS))
PLAIN = len(GROUPS)
LEADER_FIRST = Decimal(10) ** 9
"""A new leader's size: first in its group, above any cost change (a percentage)."""
"""A line under no heading (``alerts test``'s message)."""


def heading(group: int) -> str:
    """``Price drops``: what a digest writes above a group's lines ("" for none)."""
    return GROUPS[group] if 0 <= group < len(GROUPS) else ""


@dataclass(frozen=True, slots=True)
class Line:
    """One alert (or one new machine's alerts) as a person reads it."""

    text: str
    """Plain text; escape it for the medium."""
    group: int
    """Where it sorts (an index into :data:`GROUPS`)."""
    size: Decimal = Decimal(0)
    """Within a group, larger first (the size of a change or discount, in percent)."""
    label: str = ""
    """What the headline counts it as (``price drop``, ``new GPU model`` …)."""


def slack_escape(text: str) -> str:
    """Slack mrkdwn's three control characters as its documented entities.

    ``<!channel>``, ``<@U123>`` and ``<https://x|y>`` then arrive as text, not as a
    mention or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def health_job(provider: str, scope: str) -> str:
    """The scheduler's name of the job behind a run-log scope: ``aws:spot``, ``aws:standard``.

    The run log stores what a run priced (``spot``, ``all``, ``on_demand,reserved_1y``…);
    the scheduler (logs, /healthz, metrics) names its two jobs ``spot`` and ``standard``,
    the latter covering everything but spot, or everything for a collector that cannot
    fetch spot apart (a price sheet: ``pricesheet:standard``). Storage and egress price
    runs are their own job, ``services`` (``aws:services``).
    """
    return f"{provider}:{scope if scope in ('spot', 'services') else 'standard'}"


def _dec(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _str(d: Mapping[str, Any], key: str) -> str:
    value = d.get(key)
    return "" if value is None else str(value)


def _gpu(d: Mapping[str, Any]) -> str:
    """``8× H100-SXM`` from ``gpu_count``/``gpu_model``, or the older ``gpu`` (``8x H100``)."""
    n, model = _dec(d.get("gpu_count")), _str(d, "gpu_model")
    if (n is None or not model) and "x " in _str(d, "gpu"):
        head, _, model = _str(d, "gpu").partition("x ")
        n = _dec(head)
    return gpus(n, model) if n is not None and model else _str(d, "gpu")


def _price(value: Any) -> str:
    d = _dec(value)
    return amount(d) if d is not None else str(value)


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _since(value: Any) -> str:
    """A stored ISO time as people read times (``2026-03-01 00:00 UTC``); else as stored."""
    try:
        return when(datetime.fromisoformat(str(value)))
    except ValueError:
        return str(value)


def _offer(d: Mapping[str, Any]) -> str:
    """``aws p5.48xlarge (us-east-1, on-demand)``."""
    where = [_str(d, "region"), pricing_label(_str(d, "pricing"))]
    inside = ", ".join(w for w in where if w)
    name = f"{_str(d, 'provider')} {_str(d, 'instance_type')}".strip()
    return f"{name} ({inside})" if inside else name


def _price_change(d: Mapping[str, Any], title: str) -> Line:
    pct = _dec(d.get("change_pct")) or Decimal(0)
    cur = _str(d, "currency") or "USD"
    own = f" [{d['own']}]" if d.get("own") else ""
    text = (
        f"{_join(_gpu(d), _offer(d))}: {_price(d.get('old'))} → {_price(d.get('new'))} {cur}/h "
        f"({percent(pct, signed=True)}){own}"
    )
    drop = pct < 0
    return Line(text, DROP if drop else RISE, abs(pct), "price drop" if drop else "price rise")


def _spot_discount(d: Mapping[str, Any], title: str) -> Line:
    discount = abs(_dec(d.get("change_pct")) or Decimal(0))
    cur = _str(d, "currency") or "USD"
    own = f" [{d['own']}]" if d.get("own") else ""
    text = (
        f"{_join(_gpu(d), 'spot')} {_price(d.get('new'))} {cur}/h, {percent(discount)} below on-demand "
        f"{_price(d.get('old'))} ({_str(d, 'provider')} {_str(d, 'instance_type')}, "
        f"{_str(d, 'region')}){own}"
    )
    return Line(text, SPOT, discount, "spot discount")


_NEW = {"gpu_model": "new GPU model", "instance_type": "new instance type", "region": "new region"}


def _new_hardware(d: Mapping[str, Any], title: str) -> Line:
    events = [e for e in d.get("events") or [d.get("event")] if e in _NEW]
    own = d.get("event")
    event = own if own in _NEW else next((e for e in _NEW if e in events), "instance_type")
    also = [_NEW[e] for e in _NEW if e in events and e != event]
    tail = f"; also a {' and a '.join(also)}" if also else ""
    if event == "gpu_model":
        model = _str(d, "gpu_model") or _gpu(d).partition("× ")[2]
        text = f"new GPU model {model}: {_gpu(d)} at {_offer(d)}{tail}"
        return Line(text, LEADING, Decimal(0), "new GPU model")
    if event == "region":
        text = f"new region: {_join(_gpu(d), _offer(d))}{tail}"
        return Line(text, HARDWARE, Decimal(0), "new region")
    return Line(
        f"new instance type: {_gpu(d)} {_offer(d)}{tail}", HARDWARE, Decimal(0), _NEW[event]
    )


def _job_cost(d: Mapping[str, Any], key: str, cur: str) -> str:
    value = _dec(d.get(key))
    return money(value, cur) if value is not None else ""


def _ranked(e: Mapping[str, Any]) -> str:
    """``gcp a2-ultragpu-1g (1× A100-80GB, us-central1, on-demand)``."""
    where = ", ".join(
        w for w in (_gpu(e), _str(e, "region"), pricing_label(_str(e, "pricing"))) if w
    )
    return f"{_str(e, 'provider')} {_str(e, 'instance_type')} ({where})"


def _ranking_change(d: Mapping[str, Any], title: str) -> Line:
    profile, event, cur = _str(d, "profile"), _str(d, "event"), _str(d, "currency") or "USD"
    new_cost = _job_cost(d, "new", cur) or _job_cost(d, "job_cost_usd", "USD")
    previous = d.get("previous")
    was = ""
    if isinstance(previous, Mapping):
        old_cost = _job_cost(d, "old", cur)
        was = f", was {_ranked(previous)}" + (f" at {old_cost}" if old_cost else "")
    if event == "leader":
        text = f"{profile}: best offer now {_ranked(d)} at {new_cost} per job{was}"
        if not was and " (was " in title:  # an alert queued before the previous leader was kept
            text += f", was {title.split(' (was ', 1)[1].rstrip(')')} at {_job_cost(d, 'old', cur)}"
        pct = _dec(d.get("change_pct"))  # a cost alert of the same change, merged in
        if pct is not None:
            text += f" (job cost {percent(pct, signed=True)})"
        return Line(text, LEADING, LEADER_FIRST, "new leader")
    if event == "top_n":
        rank, top = _str(d, "rank"), _str(d, "top_n")
        text = (
            f"{profile}: {_str(d, 'gpu_model') or _gpu(d)} entered the top{' ' + top if top else ''} (#{rank}: "
            f"{_ranked(d)} at {_job_cost(d, 'job_cost_usd', 'USD')} per job)"
        )
        return Line(text, LEADING, Decimal(0), "ranking change")
    pct = _dec(d.get("change_pct")) or Decimal(0)
    text = (
        f"{profile}: job cost {_job_cost(d, 'old', cur)} → {new_cost} "
        f"({percent(pct, signed=True)}), best offer {_ranked(d)}{was}"
    )
    return Line(text, LEADING, abs(pct), "ranking change")


def _planned(d: Mapping[str, Any]) -> str:
    """``aws p5.48xlarge × 2 (16× H100-SXM, us-east-1)``: where a plan buys its fleet."""
    n, each = _dec(d.get("instances")), _dec(d.get("gpu_count"))
    name = f"{_str(d, 'provider')} {_str(d, 'instance_type')}"
    fleet = _gpu(d)
    if n is not None and n > 1 and each is not None:
        name, fleet = f"{name} × {n:f}", gpus(n * each, _str(d, "gpu_model"))
    where = ", ".join(w for w in (fleet, _str(d, "region")) if w)
    return f"{name} ({where})"


def _plan_change(d: Mapping[str, Any], title: str) -> Line:
    """A saved plan's best provider changed, or its best total moved."""
    plan, cur = _str(d, "plan"), _str(d, "currency") or "USD"
    old, new = _job_cost(d, "old", cur), _job_cost(d, "new", cur)
    pct = _dec(d.get("change_pct")) or Decimal(0)
    months = f" over {_str(d, 'months')} months" if d.get("months") else ""
    previous = d.get("previous")
    was = f"{_planned(previous)} at {old}" if isinstance(previous, Mapping) else old
    if d.get("event") == "leader":
        text = (
            f"{plan}: best plan now {_planned(d)} at {new}{months}, was {was} "
            f"(total {percent(pct, signed=True)})"
        )
        return Line(text, LEADING, LEADER_FIRST, "new leader")
    text = f"{plan}: plan total {old} → {new}{months} ({percent(pct, signed=True)}), best plan {_planned(d)}"
    if isinstance(previous, Mapping):
        text += f", was {_planned(previous)}"
    return Line(text, LEADING, abs(pct), "ranking change")


def _collector_health(d: Mapping[str, Any], title: str) -> Line:
    job, state = _str(d, "job"), _str(d, "state")
    if state == "failing":
        error = f": {_str(d, 'error')}" if d.get("error") else ""
        failures = _dec(d.get("failures"))
        runs = count(failures, "failed run") if failures is not None else "failed runs"
        text = f"{job} failing: {runs} in a row{error}"
    elif state == "stale":
        since = _since(d["since"]) if d.get("since") not in (None, "", "never") else "it started"
        text = f"{job} stale: no successful run since {since}"
    elif d.get("since") not in (None, "", "never"):
        text = f"{job} {'fresh again' if state == 'recovered' else state}: "
        text += f"last success {_since(d['since'])}"
    else:
        text = f"{job} {state}: its latest run succeeded"
    return Line(text, HEALTH, Decimal(0), f"{job} {state}")


RENDERERS: dict[str, Callable[[Mapping[str, Any], str], Line]] = {
    "price_change": _price_change,
    "spot_discount": _spot_discount,
    "new_hardware": _new_hardware,
    "ranking_change": _ranking_change,
    "collector_health": _collector_health,
}


NEEDS: dict[str, tuple[str, ...]] = {
    "price_change": ("provider", "instance_type", "new"),
    "spot_discount": ("provider", "instance_type", "new", "old"),
    "new_hardware": ("provider", "instance_type"),
    "ranking_change": ("profile", "provider", "instance_type"),
    "collector_health": ("job", "state"),
}
"""What each renderer reads; an alert without it (hand-queued, or from a plugin) shows
its stored title, in its kind's place."""
_PLACE = {
    "price_change": (DROP, "price drop"),
    "spot_discount": (SPOT, "spot discount"),
    "new_hardware": (HARDWARE, "new instance type"),
    "ranking_change": (LEADING, "ranking change"),
    "collector_health": (HEALTH, "collector alert"),
}


PLAN_NEEDS = ("plan", "provider", "instance_type", "old", "new")
"""What a ``ranking_change`` alert about a saved plan (``plan`` in its details) needs."""


def render(kind: str, details: Mapping[str, Any], title: str) -> Line:
    """The line for one alert. A kind without a renderer (a plugin's) shows its title."""
    renderer, needs = RENDERERS.get(kind), NEEDS.get(kind, ())
    if kind == "ranking_change" and details.get("plan"):
        renderer, needs = _plan_change, PLAN_NEEDS
    if renderer is not None and all(details.get(k) not in (None, "") for k in needs):
        line = renderer(details, title)
    else:
        group, label = _PLACE.get(kind, (OTHER, "other alert"))
        if kind == "ranking_change" and details.get("event") == "leader":
            label = "new leader"
        line = Line(title, group, Decimal(0), label)
    # One line, whatever the provider sent: a newline would break a Slack bullet list, a
    # mail header or a table row.
    text = " ".join(line.text.split())
    if len(text) > MAX_LINE:
        text = text[: MAX_LINE - 1] + "…"
    return Line(text, line.group, line.size, line.label)
