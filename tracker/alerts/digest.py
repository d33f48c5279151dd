"""One message per channel for everything due: a subject that says what changed, the
largest changes as table rows, the rest as a count, and the alert ids.

Channels render a :class:`Digest` (Slack blocks, an email's text and HTML parts);
what the digest says is decided once here, so every channel says the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from tracker.store.alerts import DueDelivery

__all__ = ["Digest", "Row", "build_digest", "id_ranges", "sample_digest"]

PREFIX = "[gpu-tracker]"
MAX_SUBJECT = 150
"""Slack's header block takes 150 characters; a mail subject should not be longer."""


@dataclass(frozen=True, slots=True)
class Row:
    """A digest line with a price: instance, region, pricing, old → new, change."""

    instance: str
    region: str
    pricing: str
    old: str
    new: str
    currency: str
    change_pct: str
    alert_id: int

    @property
    def price_text(self) -> str:
        unit = "$" if self.currency == "USD" else ""
        suffix = "" if self.currency == "USD" else f" {self.currency}"
        old = f"{unit}{self.old} → " if self.old else ""
        return f"{old}{unit}{self.new}{suffix}/h"

    @property
    def change_text(self) -> str:
        return f"{Decimal(self.change_pct):+}%" if self.change_pct else ""


@dataclass(frozen=True)
class Digest:
    alert_ids: tuple[int, ...]
    headline: str
    """What changed, e.g. ``3 price drops, best for llm-7b-lora now gcp a2-ultragpu-1g``."""
    rows: tuple[Row, ...]
    """The largest price changes first, at most ``digest_rows``."""
    lines: tuple[str, ...]
    """Alerts without a price row (new hardware, collectors), at most ``digest_rows``."""
    more: int
    """Alerts neither shown as a row nor as a line."""

    @property
    def subject(self) -> str:
        text = f"{PREFIX} {self.headline}"
        return text if len(text) <= MAX_SUBJECT else text[: MAX_SUBJECT - 1] + "…"

    @property
    def ids_text(self) -> str:
        if not self.alert_ids:
            return "no alert ids (test message)"
        return f"alert ids {id_ranges(self.alert_ids)}"

    def table_text(self) -> str:
        """The rows as a fixed-width table (Slack code block, email text part)."""
        header = ("instance", "region", "pricing", "price", "change")
        body = [(r.instance, r.region, r.pricing, r.price_text, r.change_text) for r in self.rows]
        widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
        return "\n".join(
            "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
            for line in [header, *body]
        )


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


def _pct(details: dict[str, Any]) -> Decimal:
    try:
        return Decimal(str(details.get("change_pct") or 0))
    except InvalidOperation:
        return Decimal(0)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _headline(alerts: Sequence[DueDelivery]) -> str:
    kinds = Counter(a.kind for a in alerts)
    parts: list[str] = []
    prices = [a for a in alerts if a.kind == "price_change"]
    drops = sum(1 for a in prices if _pct(a.details) < 0)
    if drops:
        parts.append(_plural(drops, "price drop"))
    if len(prices) - drops:
        parts.append(_plural(len(prices) - drops, "price rise"))
    if kinds["spot_discount"]:
        parts.append(_plural(kinds["spot_discount"], "spot discount"))
    ranking = [a for a in alerts if a.kind == "ranking_change"]
    leaders = [a.title for a in ranking if a.details.get("event") == "leader"]
    parts.extend(t.split(" (was ")[0] for t in leaders[:2])
    others = len(ranking) - len(leaders[:2])
    if others:
        parts.append(_plural(others, "ranking change"))
    if kinds["new_hardware"] == 1:
        parts.extend(a.title for a in alerts if a.kind == "new_hardware")
    elif kinds["new_hardware"]:
        parts.append(f"{kinds['new_hardware']} new hardware")
    for a in alerts:
        if a.kind == "collector_health":
            parts.append(f"{a.details.get('job')} {a.details.get('state')}")
    known = {"price_change", "spot_discount", "ranking_change", "new_hardware", "collector_health"}
    rest = sum(n for k, n in kinds.items() if k not in known)
    if rest:
        parts.append(_plural(rest, "other alert"))
    return ", ".join(parts) or _plural(len(alerts), "alert")


def _row(a: DueDelivery) -> Row | None:
    d = a.details
    if "new" not in d or "instance_type" not in d:
        return None
    return Row(
        instance=f"{d.get('provider', '')} {d['instance_type']}".strip(),
        region=str(d.get("region", "")),
        pricing=str(d.get("pricing", "")),
        old=str(d.get("old", "")),
        new=str(d["new"]),
        currency=str(d.get("currency", "")),
        change_pct=str(d.get("change_pct", "")),
        alert_id=a.alert_id,
    )


def build_digest(alerts: Sequence[DueDelivery], rows: int) -> Digest:
    """The digest of ``alerts`` (one channel's due deliveries), ``rows`` rows at most."""
    priced = [(a, r) for a in alerts if (r := _row(a)) is not None]
    priced.sort(key=lambda ar: (-abs(_pct(ar[0].details)), ar[0].alert_id))
    shown = [r for _, r in priced[:rows]]
    with_row = {a.alert_id for a, _ in priced}
    lines = [a.title for a in alerts if a.alert_id not in with_row][:rows]
    return Digest(
        alert_ids=tuple(sorted({a.alert_id for a in alerts})),
        headline=_headline(alerts),
        rows=tuple(shown),
        lines=tuple(lines),
        more=len(alerts) - len(shown) - len(lines),
    )


def sample_digest() -> Digest:
    """What ``alerts test`` sends: no alert behind it, nothing to dedupe."""
    return Digest((), "test message: this channel works", (), ("a test from gpu-tracker",), 0)
