"""End to end: a real scheduled run on a real store leaves ranking snapshots behind.

No hook is injected or cleared: the service loads the ``gpu_tracker.hooks`` group,
whose built-in rankings plugin recomputes every profile after the committed run.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import select

from tests.service.conftest import COLLECTORS, make_settings
from tests.service.fake_server import FakeProviders
from tests.service.test_service import wait_for
from tracker.recommend import profiles_for
from tracker.service import Service
from tracker.store.schema import CollectionRun
from tracker.store.series import RankingEntry, RankingSnapshot


def test_a_scheduled_run_recomputes_the_ranking_snapshots(
    service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(service_url, ["fakegood"], default_minutes=60)
    service = Service(settings, collectors={"fakegood": COLLECTORS["fakegood"]})
    services.append(service)
    assert "rankings" in service.hooks.names
    profiles = sorted(profiles_for(settings).profiles)
    service.start()

    def snapshots() -> list[RankingSnapshot]:
        with service.engine.connect() as conn:
            return list(conn.execute(select(RankingSnapshot).order_by(RankingSnapshot.profile)))

    wait_for(lambda: len(snapshots()) == len(profiles), timeout=60, what="one snapshot per profile")
    service.stop()
    with service.engine.connect() as conn:
        [run] = conn.execute(select(CollectionRun)).all()
        entries = conn.execute(
            select(
                RankingSnapshot.profile,
                RankingEntry.rank,
                RankingEntry.provider,
                RankingEntry.instance_type,
                RankingEntry.price_per_hour_usd,
                RankingEntry.job_hours,
                RankingEntry.job_cost_usd,
            )
            .join(RankingSnapshot, RankingSnapshot.id == RankingEntry.snapshot_id)
            .order_by(RankingSnapshot.profile, RankingEntry.rank)
        ).all()
    rows = snapshots()

    assert [s.profile for s in rows] == profiles
    # The run stored the fake's two pages of two offers; every profile saw all four,
    # ranked after the run committed.
    assert run.status == "succeeded" and run.offers_seen == 4
    assert {s.offers_considered for s in rows} == {4}
    assert all(s.computed_at >= run.finished_at for s in rows)

    # bert-base-finetune fits one A100-80GB. The fake's first fetch prices each offer
    # at (1.00 + 0.01 x 1) x its GPU count: 1.01 $/h for the two 1-GPU offers and
    # 2.02 $/h for the two 2-GPU ones, so the 1-GPU offers rank first.
    bert = [e for e in entries if e.profile == "bert-base-finetune"]
    assert bert, "bert-base-finetune found no feasible offer"
    assert [e.rank for e in bert] == list(range(1, len(bert) + 1))
    assert {e.provider for e in bert} == {"fakegood"}
    assert {(e.instance_type, e.price_per_hour_usd) for e in bert[:2]} == {
        ("gpu.1x1", Decimal("1.01")),
        ("gpu.2x1", Decimal("1.01")),
    }
    costs = [e.job_cost_usd for e in bert]
    assert costs == sorted(costs)  # ranked by what the whole job costs
