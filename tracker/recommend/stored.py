"""The recommender's database side: read the stored offers, rank, store snapshots.

Kept apart from the pure ranking so that ``tracker.recommend.rank`` and the rest of
the arithmetic import nothing that touches a database; every statement runs in the
store, and its failures arrive here as :class:`~tracker.store.engine.DatabaseError`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from tracker.discounts import Discounts
from tracker.fx import Conversion
from tracker.models import OFFER_COLUMNS, Availability, Fabric, Interconnect, Offer, PricingModel
from tracker.recommend.history import RankingChange, fingerprint, record_rankings
from tracker.recommend.net import net_rows
from tracker.recommend.profiles import ProfileSet, load_profiles, user_profiles_path
from tracker.recommend.rank import rank_table
from tracker.recommend.result import Ranking
from tracker.recommend.table import OfferTable, row_to_offer
from tracker.recommend.throughput import WorkloadError
from tracker.settings import Settings
from tracker.store import Engine
from tracker.store import series as fx_store
from tracker.store.reads import current_offers
from tracker.store.series import current_offer_rows, keyed_obtainability
from tracker.unreadable import offer_key_text, skip_unreadable

__all__ = [
    "add_obtainability",
    "load_offer_table",
    "load_offers",
    "profiles_for",
    "recompute_rankings",
    "usd_conversion",
]

log = logging.getLogger(__name__)
_NAMES = [c.name for c in OFFER_COLUMNS]
_PRICE, _CURRENCY = _NAMES.index("price_per_hour"), _NAMES.index("currency")
_USD = _NAMES.index("price_per_hour_usd")


def usd_conversion(engine: Engine, settings: Settings) -> Conversion:
    """Conversion to USD at the latest stored rates (plus ``settings.fx_rates`` for the
    currencies the ECB lacks): the recommender ranks every offer in USD."""
    return Conversion(fx_store.load_rates(engine, settings.fx_rates))


def load_offers(engine: Engine, settings: Settings) -> list[Offer]:
    """Every listed offer at its current price, in USD at the latest rate; offers in a
    currency without a rate are left out and logged (raises DatabaseError)."""
    conversion = usd_conversion(engine, settings)
    offers = conversion.offers(stored.offer for stored in current_offers(engine))
    _log_missing(conversion)
    return offers


def _usd_rows(rows: list[tuple[Any, ...]], conversion: Conversion) -> list[tuple[Any, ...]]:
    result = []
    for r in rows:
        if _suspect(r) and not _readable(r):
            continue
        usd = conversion.usd(Decimal(str(r[_PRICE])), r[_CURRENCY])
        if usd is not None:
            result.append((*r[:_USD], usd, *r[_USD + 1 :]))
    return result


_PRICE_AT, _COUNT_AT = _NAMES.index("price_per_hour"), _NAMES.index("gpu_count")
_VRAM_AT, _VCPUS_AT, _RAM_AT = (_NAMES.index(n) for n in ("gpu_memory_gib", "vcpus", "memory_gib"))
_PRICING_AT, _LINK_AT, _FABRIC_AT, _STOCK_AT = (
    _NAMES.index(n) for n in ("pricing", "interconnect", "fabric", "availability")
)
_GBPS_AT = _NAMES.index("network_gbps")
_PRICINGS = frozenset(p.value for p in PricingModel)
_LINKS = frozenset(i.value for i in Interconnect)
_FABRICS = frozenset(f.value for f in Fabric)
_STOCKS = frozenset(a.value for a in Availability)


def _suspect(r: tuple[Any, ...]) -> bool:
    """A cheap test, once per stored offer, for what a stored row can get wrong (a number
    stored as 0, an unknown choice): the ranking builds no record until one is shown, so
    a row the model refuses would otherwise fail the whole ranking then. Written out, not
    looped or called per value: it runs 100,000 times per ranking. SQLite's numbers are
    10-decimal text, so only one starting with ``-`` or ``0`` can be <= 0 (and is parsed);
    Postgres's are Decimals."""
    p, c, v, n, m = r[_PRICE_AT], r[_COUNT_AT], r[_VRAM_AT], r[_VCPUS_AT], r[_RAM_AT]
    g = r[_GBPS_AT]
    try:
        if type(p) is str:
            numbers_bad = (
                (p[0] in "-0" and float(p) <= 0)
                or (c[0] in "-0" and float(c) <= 0)
                or (v is not None and v[0] in "-0" and float(v) <= 0)
                or (n is not None and n[0] in "-0" and float(n) <= 0)
                or (m is not None and m[0] in "-0" and float(m) <= 0)
                or (g is not None and g[0] in "-0" and float(g) <= 0)
            )
        else:
            numbers_bad = (
                p <= 0
                or c <= 0
                or (v is not None and v <= 0)
                or (n is not None and n <= 0)
                or (m is not None and m <= 0)
                or (g is not None and g <= 0)
            )
    except (ArithmeticError, IndexError, TypeError, ValueError):  # not a number at all
        return True
    return (
        numbers_bad
        or r[_PRICING_AT] not in _PRICINGS
        or r[_LINK_AT] not in _LINKS
        or r[_FABRIC_AT] not in _FABRICS
        or r[_STOCK_AT] not in _STOCKS
    )


def _readable(r: tuple[Any, ...]) -> bool:
    """Whether the domain model accepts a suspect row; a refused one is counted and
    logged once (:mod:`tracker.unreadable`)."""
    try:
        row_to_offer(r)
    except ValueError as exc:
        skip_unreadable("offer", offer_key_text(lambda name: r[_NAMES.index(name)]), exc)
        return False
    return True


def load_offer_table(engine: Engine, settings: Settings) -> tuple[OfferTable, Conversion]:
    """The current offers as ranking columns in USD at the latest rates (the stored ECB
    series plus ``settings.fx_rates``: required, so no reader ranks without them), read
    without building every record, and the conversion that says which were left out for
    want of a rate; those are logged too (raises DatabaseError)."""
    rows, conversion = _read_usd_rows(engine, settings)
    return OfferTable.from_rows(rows), conversion


def add_obtainability(engine: Engine, table: OfferTable, at: datetime | None = None) -> OfferTable:
    """``table`` with each offer's share of the last 7 and 30 days (ending at ``at``, now)
    it was reported rentable: what ``min_obtainability`` excludes by and ``--explain``
    shows; one aggregate in the store (raises DatabaseError)."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    found = keyed_obtainability(engine, when)
    return table.with_obtainability({k: (o.share_7d, o.share_30d) for k, o in found.items()})


def _read_usd_rows(engine: Engine, settings: Settings) -> tuple[list[tuple[Any, ...]], Conversion]:
    """The database side of :func:`load_offer_table` (timed apart by recompute_rankings):
    USD at the latest rates, then net of the discount rules in force now (the ranking,
    its plans and alerts cost what the account pays: tracker.recommend.net)."""
    conversion = usd_conversion(engine, settings)
    rows = _usd_rows(current_offer_rows(engine), conversion)
    _log_missing(conversion)
    if settings.discounts:
        discounts = Discounts(tuple(settings.discounts), conversion.rates)
        rows = net_rows(rows, discounts, datetime.now(UTC))
        line = discounts.report()
        if line:
            log.warning("%s", line)
    return rows, conversion


def _log_missing(conversion: Conversion) -> None:
    line = conversion.report("USD ranking")
    if line:
        log.warning("%s", line)


def profiles_for(settings: Settings) -> ProfileSet:
    """Built-in profiles plus the user's file (``settings.profiles_path`` or the default)."""
    return load_profiles(user_profiles_path(settings.profiles_path))


def recompute_rankings(
    engine: Engine,
    settings: Settings,
    *,
    now: datetime | None = None,
    profiles: ProfileSet | None = None,
    timings: dict[str, float] | None = None,
) -> list[RankingChange]:
    """Rank every profile over the stored offers, snapshot each top N, return the changes.

    One transaction for all snapshots. A profile whose work cannot be priced (e.g. its
    reference GPU lacks a figure) is logged and skipped; an unreadable profiles file
    raises :class:`ProfileError` (one line) because every ranking would be wrong.
    ``timings`` (optional) receives seconds spent in ``db_load``, ``rank``, ``db_write``.
    A database failure raises :class:`~tracker.store.engine.DatabaseError` and stores nothing.
    """
    clock = time.perf_counter
    profile_set = profiles or profiles_for(settings)
    a = profile_set.assumptions
    started = clock()
    rows, _ = _read_usd_rows(engine, settings)
    loaded = clock()
    table = OfferTable.from_rows(rows)
    if any(p.min_obtainability is not None for p in profile_set.profiles.values()):
        table = add_obtainability(engine, table, now)
    rankings: list[tuple[Ranking, str]] = []
    for name, profile in sorted(profile_set.profiles.items()):
        if not profile.has_work_size:
            log.info("ranking of %s not snapshotted: it gives no work size to cost", name)
            continue
        try:
            ranking = rank_table(
                profile,
                table,
                a,
                top=profile_set.history_top,
                measurements=profile_set.measurements,
            )
        except WorkloadError as exc:
            log.error("ranking skipped: %s", exc)
            continue
        rankings.append((ranking, fingerprint(profile, a)))
        log.debug("profile %s: %d of %d offers feasible", name, ranking.feasible, len(table))
    ranked = clock()
    computed_at = (now or datetime.now(UTC)).astimezone(UTC)
    changes = record_rankings(engine, rankings, computed_at)
    written = clock()
    if timings is not None:
        timings.update(db_load=loaded - started, rank=ranked - loaded, db_write=written - ranked)
    changed = sum(1 for c in changes if c.changed)
    log.info(
        "rankings recomputed for %d profiles over %d offers (%d changed)",
        len(changes),
        len(table),
        changed,
        extra={
            "event": "rankings_recomputed",
            "profiles": len(changes),
            "offers": len(table),
            "changed": changed,
        },
    )
    return changes
