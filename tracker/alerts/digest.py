"""One message per channel for everything due: a subject that says what changed, one
line per alert in the order that matters, the rest as an exact count, and the alert ids.

What each alert says is decided once by :mod:`tracker.alerts.render`; the digest
orders the lines (collector health, new leaders and GPU models, spot discounts,
price drops, price rises, other new hardware; larger changes first), merges the
alerts of one new machine into one line, and keeps the arithmetic: a channel that
shows the first ``k`` lines says ``and more_after(k)`` more, the alerts not shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracker.alerts.render import HEALTH, PLAIN, Line, render
from tracker.store.outbox import DueDelivery

__all__ = ["Digest", "Item", "build_digest", "id_ranges", "sample_digest"]

PREFIX = "[gpu-tracker]"
MAX_SUBJECT = 150
"""Slack's header block takes 150 characters; a mail subject should not be longer."""
MAX_IDS_TEXT = 1000
"""Past this the ids are given as a span and a count (a context block takes 2,000)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One digest line and the alerts it stands for (several for one new machine)."""

    line: Line
    alert_ids: tuple[int, ...]
    details: dict[str, Any]


@dataclass(frozen=True)
class Digest:
    alert_ids: tuple[int, ...]
    headline: str
    """What changed, e.g. ``best for llm-7b-lora now gcp a2-ultragpu-1g, 3 price drops``."""
    items: tuple[Item, ...]
    """Every line, in digest order."""
    rows: int
    """Lines a channel shows at most (``digest_rows``)."""

    @property
    def shown(self) -> tuple[Item, ...]:
        return self.items[: self.rows]

    def more_after(self, shown: int) -> int:
        """Alerts not among the first ``shown`` lines: the exact "and N more"."""
        covered = sum(len(i.alert_ids) for i in self.items[:shown])
        return len(self.alert_ids) - covered

    @property
    def more(self) -> int:
        return self.more_after(len(self.shown))

    @property
    def subject(self) -> str:
        text = " ".join(f"{PREFIX} {self.headline}".split())  # a mail header: one line
        return text if len(text) <= MAX_SUBJECT else text[: MAX_SUBJECT - 1] + "…"

    @property
    def ids_text(self) -> str:
        if not self.alert_ids:
            return "no alert ids (test message)"
        text = f"alert ids {id_ranges(self.alert_ids)}"
        if len(text) <= MAX_IDS_TEXT:
            return text
        first, last = min(self.alert_ids), max(self.alert_ids)
        return f"{len(self.alert_ids)} alerts, ids {first} to {last}"


def id_ranges(ids: Sequence[int]) -> str:
    """``1-3, 7``: every id, compactly (a receiver dedupes on them)."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    start = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _leader(item: Item) -> str:
    d = item.details
    if d.get("plan") and d.get("provider"):
        return f"best plan for {d['plan']} now {d['provider']} {d.get('instance_type')}"
    if d.get("provider"):
        return f"best for {d.get('profile')} now {d['provider']} {d.get('instance_type')}"
    return item.line.text.split(" (was ")[0]


def _headline(items: Sequence[Item], alerts: int) -> str:
    parts: list[str] = []
    health = [i.line.label for i in items if i.line.group == HEALTH]
    parts += health[:3]
    if len(health) > 3:
        parts.append(_plural(len(health) - 3, "more collector alert"))
    leaders = [_leader(i) for i in items if i.line.label == "new leader"]
    parts += leaders[:2]
    labels = Counter(i.line.label for i in items)
    labels["ranking change"] += max(len(leaders) - 2, 0)
    models = [i.details.get("gpu_model") for i in items if i.line.label == "new GPU model"]
    if len(models) == 1 and models[0]:
        parts.append(f"new GPU model {models[0]}")
    elif models:
        parts.append(_plural(len(models), "new GPU model"))
    for label in (
        "ranking change",
        "spot discount",
        "price drop",
        "price rise",
        "new instance type",
        "new region",
        "other alert",
    ):
        if labels[label]:
            parts.append(_plural(labels[label], label))
    return ", ".join(parts) or _plural(alerts, "alert")


def _machine(a: DueDelivery) -> tuple[str, ...] | None:
    """New-hardware alerts of one machine (series) share this key: one line for them."""
    if a.kind != "new_hardware":
        return None
    d = a.details
    return tuple(str(d.get(k, "")) for k in ("provider", "instance_type", "region"))


def _leader_and_cost(alerts: Sequence[DueDelivery]) -> dict[int, DueDelivery]:
    """A profile's cost alert that came with a new leader (same snapshot): the leader's
    line says the cost change, so the two are one line. Cost alert id → leader alert.
    (A saved plan's leader alert says its cost change itself: never merged.)"""
    leaders = {
        (a.details.get("profile"), a.details.get("snapshot")): a
        for a in alerts
        if a.kind == "ranking_change"
        and a.details.get("event") == "leader"
        and not a.details.get("plan")
    }
    return {
        a.alert_id: leaders[key]
        for a in alerts
        if a.kind == "ranking_change"
        and a.details.get("event") == "cost"
        and not a.details.get("plan")
        and (key := (a.details.get("profile"), a.details.get("snapshot"))) in leaders
    }


_EVENT_RANK = {"gpu_model": 0, "instance_type": 1, "region": 2}


def _items(alerts: Sequence[DueDelivery]) -> list[Item]:
    merged: dict[tuple[str, ...], list[DueDelivery]] = {}
    items: list[Item] = []
    costs = _leader_and_cost(alerts)
    with_cost = {leader.alert_id: cost for cost, leader in costs.items()}
    by_id = {a.alert_id: a for a in alerts}
    for a in alerts:
        if a.alert_id in costs:
            continue  # said by its leader's line
        if a.alert_id in with_cost:
            cost = by_id[with_cost[a.alert_id]]
            details = {**a.details, "change_pct": cost.details.get("change_pct")}
            line = render(a.kind, details, a.title)
            items.append(Item(line, (a.alert_id, cost.alert_id), details))
            continue
        key = _machine(a)
        if key is not None:
            merged.setdefault(key, []).append(a)
            continue
        items.append(Item(render(a.kind, a.details, a.title), (a.alert_id,), a.details))
    for group in merged.values():
        events = [str(a.details.get("event")) for a in group]
        first = min(group, key=lambda a: _EVENT_RANK.get(str(a.details.get("event")), 3))
        details = {**first.details, "events": sorted(set(events), key=events.index)}
        line = render(first.kind, details, first.title)
        items.append(Item(line, tuple(a.alert_id for a in group), details))
    items.sort(key=lambda i: (i.line.group, -i.line.size, i.alert_ids[0]))
    return items


def build_digest(alerts: Sequence[DueDelivery], rows: int) -> Digest:
    """The digest of ``alerts`` (one channel's due deliveries), ``rows`` lines at most."""
    items = _items(alerts)
    ids = tuple(sorted({a.alert_id for a in alerts}))
    return Digest(alert_ids=ids, headline=_headline(items, len(ids)), items=tuple(items), rows=rows)


def sample_digest() -> Digest:
    """What ``alerts test`` sends: no alert behind it, nothing to dedupe."""
    line = Line("a test from gpu-tracker", PLAIN)
    return Digest((), "test message: this channel works", (Item(line, (), {}),), 1)
