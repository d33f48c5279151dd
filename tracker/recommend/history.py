"""Ranking snapshots and what changed since the previous one.

After each collection every profile's top N is stored; comparing it with that
profile's previous snapshot yields a :class:`RankingChange` (new leader, hardware
entering the top N, leader cost delta) that the alerts module turns into
notifications. A snapshot taken with a different profile definition or different
assumptions (its fingerprint differs) is not compared against: the job changed,
not the market.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from decimal import Decimal

from tracker.models import OFFER_KEY_FIELDS
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.profiles import Profile
from tracker.recommend.result import Ranking
from tracker.store import Engine, quantize_money
from tracker.store import series as store

__all__ = [
    "RankedEntry",
    "RankingChange",
    "diff",
    "entries_of",
    "fingerprint",
    "record_rankings",
]


@dataclass(frozen=True, slots=True)
class RankedEntry:
    rank: int
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str
    payment_option: str
    offering_class: str
    os: str
    gpu_model: str
    gpu_count: Decimal
    price_per_hour_usd: Decimal
    job_hours: Decimal
    job_cost_usd: Decimal

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(getattr(self, name) for name in OFFER_KEY_FIELDS)

    @property
    def hardware(self) -> str:
        """e.g. ``8x H100-SXM``: what "new hardware in the top N" compares."""
        return f"{self.gpu_count.normalize():f}x {self.gpu_model}"


_ENTRY_FIELDS = tuple(f.name for f in fields(RankedEntry))


@dataclass(frozen=True)
class RankingChange:
    """One profile's ranking now versus its previous comparable snapshot."""

    profile: str
    snapshot_id: int
    computed_at: datetime
    entries: tuple[RankedEntry, ...]
    previous_snapshot_id: int | None
    previous_computed_at: datetime | None
    previous_entries: tuple[RankedEntry, ...]
    profile_changed: bool
    """A previous snapshot exists but was taken with another profile/assumptions."""

    @property
    def leader(self) -> RankedEntry | None:
        return self.entries[0] if self.entries else None

    @property
    def previous_leader(self) -> RankedEntry | None:
        return self.previous_entries[0] if self.previous_entries else None

    @property
    def has_previous(self) -> bool:
        return self.previous_snapshot_id is not None

    @property
    def new_leader(self) -> bool:
        """The cheapest offer is a different offer than last time (needs a previous)."""
        if not self.has_previous:
            return False
        now, before = self.leader, self.previous_leader
        if now is None or before is None:
            return now is not before
        return now.key != before.key

    @property
    def entered(self) -> tuple[RankedEntry, ...]:
        """Offers in the top N now that were not in it before."""
        if not self.has_previous:
            return ()
        before = {e.key for e in self.previous_entries}
        return tuple(e for e in self.entries if e.key not in before)

    @property
    def left(self) -> tuple[RankedEntry, ...]:
        if not self.has_previous:
            return ()
        now = {e.key for e in self.entries}
        return tuple(e for e in self.previous_entries if e.key not in now)

    @property
    def new_hardware(self) -> tuple[str, ...]:
        """GPU shapes (count x model) in the top N now that were absent before."""
        if not self.has_previous:
            return ()
        before = {e.hardware for e in self.previous_entries}
        return tuple(dict.fromkeys(e.hardware for e in self.entries if e.hardware not in before))

    @property
    def leader_cost_delta_usd(self) -> Decimal | None:
        """Leader's job cost now minus before (negative: the job got cheaper)."""
        now, before = self.leader, self.previous_leader
        if not self.has_previous or now is None or before is None:
            return None
        return now.job_cost_usd - before.job_cost_usd

    @property
    def leader_cost_delta_pct(self) -> Decimal | None:
        delta, before = self.leader_cost_delta_usd, self.previous_leader
        if delta is None or before is None or not before.job_cost_usd:
            return None
        return (delta / before.job_cost_usd * 100).quantize(Decimal("0.01"))

    @property
    def changed(self) -> bool:
        return bool(self.new_leader or self.entered or self.left or self.leader_cost_delta_usd)


def fingerprint(profile: Profile, assumptions: Assumptions) -> str:
    data = profile.fingerprint() + assumptions.model_dump_json()
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def entries_of(ranking: Ranking) -> tuple[RankedEntry, ...]:
    entries = []
    for c in ranking.candidates:
        if c.job_hours is None or c.job_cost_usd is None:
            # snapshots compare job costs; recompute_rankings skips such profiles
            raise ValueError(f"profile {ranking.profile.name!r} has no work size to snapshot")
        entries.append(
            RankedEntry(
                rank=c.rank,
                provider=c.offer.provider,
                instance_type=c.offer.instance_type,
                region=c.offer.region,
                zone=c.offer.zone,
                pricing=c.offer.pricing.value,
                payment_option=c.offer.payment_option,
                offering_class=c.offer.offering_class,
                os=c.offer.os,
                gpu_model=c.offer.gpu_model,
                gpu_count=c.offer.gpu_count,
                price_per_hour_usd=c.effective_hourly_usd,
                job_hours=quantize_money(Decimal(f"{c.job_hours:.6f}")),
                job_cost_usd=c.job_cost_usd,
            )
        )
    return tuple(entries)


@dataclass(frozen=True)
class _Snapshot:
    id: int
    fingerprint: str
    computed_at: datetime
    entries: tuple[RankedEntry, ...]

    @classmethod
    def of(cls, stored: store.StoredSnapshot) -> _Snapshot:
        entries = tuple(RankedEntry(*row) for row in stored.entries)
        return cls(stored.id, stored.fingerprint, stored.computed_at, entries)


def diff(
    profile: str,
    snapshot_id: int,
    computed_at: datetime,
    entries: tuple[RankedEntry, ...],
    previous: _Snapshot | None,
    current_fingerprint: str,
) -> RankingChange:
    comparable = previous is not None and previous.fingerprint == current_fingerprint
    return RankingChange(
        profile=profile,
        snapshot_id=snapshot_id,
        computed_at=computed_at,
        entries=entries,
        previous_snapshot_id=previous.id if comparable and previous else None,
        previous_computed_at=previous.computed_at if comparable and previous else None,
        previous_entries=previous.entries if comparable and previous else (),
        profile_changed=previous is not None and not comparable,
    )


def record_rankings(
    engine: Engine,
    rankings: Sequence[tuple[Ranking, str]],
    computed_at: datetime,
) -> list[RankingChange]:
    """Store one snapshot per (ranking, fingerprint) and diff each against its previous.

    One transaction (in the store), so a failure stores nothing and raises
    :class:`~tracker.store.engine.DatabaseError`.
    """
    entries = [entries_of(ranking) for ranking, _ in rankings]
    snapshots = [
        store.NewSnapshot(
            {
                "profile": ranking.profile.name,
                "fingerprint": fp,
                "computed_at": computed_at,
                "offers_considered": ranking.considered,
                "feasible": ranking.feasible,
                "excluded": ranking.excluded_counts,
            },
            [{n: getattr(e, n) for n in _ENTRY_FIELDS} for e in ranked],
        )
        for (ranking, fp), ranked in zip(rankings, entries, strict=True)
    ]
    previous, ids = store.save_snapshots(engine, snapshots, _ENTRY_FIELDS)
    return [
        diff(
            ranking.profile.name,
            snapshot_id,
            computed_at,
            ranked,
            _Snapshot.of(previous[ranking.profile.name])
            if ranking.profile.name in previous
            else None,
            fp,
        )
        for (ranking, fp), ranked, snapshot_id in zip(rankings, entries, ids, strict=True)
    ]
