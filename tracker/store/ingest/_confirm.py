"""Write side of ``confirmed_scopes``: which scopes a complete run read in full.

Called by :class:`tracker.store.ingest.Ingest` inside the run's transaction. A scope
(source, region, pricing) is confirmed by a run that was complete for it (a delist
scope covering its pricing model, the region not marked partial), saw at least one
offer in it (an empty run delists and confirms nothing), and saw none of them at a
provider's own timestamp (dated observations keep writing ``last_seen``). The read
side is :mod:`tracker.store.last_seen`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import Connection, text

__all__ = ["Outside", "any_since", "confirmable", "outside", "record"]

Outside = tuple[str, dict[str, str]] | None
"""A where-clause over ``gt_obs o`` and its parameters (:func:`outside`)."""


def confirmable(
    seen: Collection[tuple[str, str]],
    *,
    pricing: Collection[str],
    exclude_regions: Collection[str],
    dated: Collection[tuple[str, str]],
) -> tuple[set[tuple[str, str]], bool]:
    """The (region, pricing) scopes of the run's offers (``seen``) that this run
    confirms (see the module docstring), and whether that is all of them."""
    rows = {(r, str(p)) for r, p in seen}
    scopes = {
        (r, p) for r, p in rows if p in pricing and r not in exclude_regions and (r, p) not in dated
    }
    return scopes, len(scopes) == len(rows)


def any_since(conn: Connection, when: Any) -> bool:
    """Whether some scope was confirmed at or after ``when`` (bound as the ingest binds
    times): then an observation that old may be no newer than its interval's derived
    last sighting."""
    hit = conn.execute(
        text("SELECT 1 FROM confirmed_scopes WHERE confirmed_at >= :t LIMIT 1"), {"t": when}
    )
    return hit.first() is not None


def record(
    conn: Connection, scopes: set[tuple[str, str]], *, source: str, run_id: int, run_time: Any
) -> None:
    """Record ``scopes`` as confirmed by run ``run_id`` at ``run_time`` (in the form the
    ingest binds times), keeping a later confirmation already stored (an earlier-stamped
    run stored afterwards confirms nothing new)."""
    if not scopes:
        return
    newest = conn.execute(text("SELECT MAX(id) FROM price_points")).scalar() or 0
    conn.execute(
        text(
            "INSERT INTO confirmed_scopes (source, region, pricing, run_id, confirmed_at, "
            "max_point_id) VALUES (:source, :region, :pricing, :run_id, :at, :newest) "
            "ON CONFLICT (source, region, pricing) DO UPDATE SET run_id = excluded.run_id, "
            "confirmed_at = excluded.confirmed_at, max_point_id = excluded.max_point_id "
            "WHERE excluded.confirmed_at >= confirmed_scopes.confirmed_at"
        ),
        [
            {
                "source": source,
                "region": r,
                "pricing": p,
                "run_id": run_id,
                "at": run_time,
                "newest": newest,
            }
            for r, p in sorted(scopes)
        ],
    )


def outside(confirmed: set[tuple[str, str]], every: bool) -> Outside:
    """Where-clause (and its parameters) over ``gt_obs o`` for the observations whose
    unchanged price gets its ``last_seen`` written: those outside the ``confirmed``
    scopes (inside, it is derived: tracker.store.last_seen). None: nothing to write
    (``every`` scope of the run is confirmed)."""
    if every:
        return None
    params: dict[str, str] = {}
    terms = []
    for n, (region, pricing) in enumerate(sorted(confirmed)):
        params[f"cr{n}"], params[f"cp{n}"] = region, pricing
        terms.append(f"(o.region = :cr{n} AND o.pricing = :cp{n})")
    return (f"NOT ({' OR '.join(terms)})" if terms else "1 = 1"), params
