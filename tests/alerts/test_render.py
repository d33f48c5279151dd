"""Each alert kind says what happened in its own terms, from what evaluation stored.

The alerts are made by the real rules over real collections (SQLite), then rendered
the way every channel renders them (:func:`tracker.alerts.digest.build_digest`). The
expected lines are written by hand from the offers.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.listed_collector import collect
from tracker.alerts.digest import build_digest
from tracker.alerts.evaluate import evaluate, health_change_alerts
from tracker.alerts.render import render
from tracker.alerts.rules import AlertRule, parse_rules
from tracker.hooks import JobHealthChange
from tracker.store.outbox import due_deliveries

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)


def rules(*tables: dict[str, Any]) -> list[AlertRule]:
    return parse_rules({"rules": list(tables)}, "test", ["slack"])


def lines(engine: Engine, at: datetime, rows: int = 50) -> list[str]:
    return [i.line.text for i in build_digest(due_deliveries(engine, at), rows).shown]


def test_a_price_change_names_the_gpu_the_offer_and_both_prices(sqlite_engine: Engine) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(sqlite_engine, [offer("a", "10.00"), offer("b", "0.50")], T0)
    evaluate(sqlite_engine, rule, ["slack"], now=T0)
    # a: 10.00 → 8.50 is -15 %; b: 0.50 → 0.575 is +15 % (below 1: a tenth of a cent).
    collect(sqlite_engine, [offer("a", "8.50"), offer("b", "0.575")], T0 + H)
    evaluate(sqlite_engine, rule, ["slack"], now=T0 + H)
    assert lines(sqlite_engine, T0 + H) == [
        "1× H100-SXM testcloud a (us-east-1, on-demand): 10.00 → 8.50 USD/h (-15 %)",
        "1× H100-SXM testcloud b (us-east-1, on-demand): 0.500 → 0.575 USD/h (+15 %)",
    ]


def test_a_spot_discount_reads_as_spot_below_on_demand(sqlite_engine: Engine) -> None:
    rule = rules({"name": "spot", "type": "spot_discount", "threshold_percent": 60})

    def market(spot: str) -> list[Any]:
        return [
            offer("p5.48xlarge", "55.04"),
            offer("p5.48xlarge", spot, pricing="spot", zone="us-east-1a"),
        ]

    collect(sqlite_engine, market("50.00"), T0)
    evaluate(sqlite_engine, rule, ["slack"], now=T0)  # seeds
    # (55.04 - 16.512) / 55.04 = 38.528 / 55.04 = 0.70: 70 % below; 16.512 reads 16.51.
    collect(sqlite_engine, market("16.512"), T0 + H)
    evaluate(sqlite_engine, rule, ["slack"], now=T0 + H)
    assert lines(sqlite_engine, T0 + H) == [
        "1× H100-SXM spot 16.51 USD/h, 70 % below on-demand 55.04 "
        "(testcloud p5.48xlarge, us-east-1/us-east-1a)"
    ]


def test_new_hardware_puts_the_gpu_first_and_one_machine_is_one_line(
    sqlite_engine: Engine,
) -> None:
    rule = rules({"name": "new", "type": "new_hardware"})
    collect(sqlite_engine, [offer("a100.1", "2.00", gpu="A100-80GB")], T0)
    evaluate(sqlite_engine, rule, ["slack"], now=T0)
    collect(
        sqlite_engine,
        [
            offer("a100.1", "2.00", gpu="A100-80GB"),
            offer("a100.1", "2.10", gpu="A100-80GB", region="eu-west-1"),
            offer("b200.8", "40.00", gpu="B200"),
        ],
        T0 + H,
    )
    evaluate(sqlite_engine, rule, ["slack"], now=T0 + H)
    digest = build_digest(due_deliveries(sqlite_engine, T0 + H), 10)
    # Three alerts (a new GPU model, a new instance type, a new region): two lines,
    # the B200 machine's two alerts in one; the headline counts one new GPU model.
    assert [i.line.text for i in digest.shown] == [
        "new GPU model B200: 1× B200 at testcloud b200.8 (us-east-1, on-demand); "
        "also a new instance type",
        "new region: 1× A100-80GB testcloud a100.1 (eu-west-1, on-demand)",
    ]
    assert [len(i.alert_ids) for i in digest.shown] == [2, 1]
    assert digest.subject == "[gpu-tracker] new GPU model B200, 1 new region"
    assert digest.more == 0


def test_a_ranking_change_names_the_profile_both_leaders_and_both_costs(
    sqlite_engine: Engine,
) -> None:
    from tests.recommend.test_history import gpu_offer, profiles
    from tracker.recommend import recompute_rankings
    from tracker.settings import Settings

    rule = rules(
        {"name": "lora", "type": "ranking_change", "profile": "lora", "threshold_percent": 20}
    )

    def step(offers: list[Any], at: datetime) -> list[str]:
        collect(sqlite_engine, offers, at)
        recompute_rankings(sqlite_engine, Settings(), now=at, profiles=profiles())
        evaluate(sqlite_engine, rule, ["slack"], now=at)
        shown = lines(sqlite_engine, at)
        from tracker.store.outbox import mark_sent

        mark_sent(sqlite_engine, [d.delivery_id for d in due_deliveries(sqlite_engine, at)], at)
        return shown

    step([gpu_offer("A100-80GB", "4.00")], T0)
    # Job cost 11.51 at 4.00 → 8.63 at 3.00 (tests/alerts/test_evaluate.py): -25.02 %.
    assert step([gpu_offer("A100-80GB", "3.00")], T0 + H) == [
        "lora: job cost 11.51 USD → 8.63 USD (-25 %), best offer testcloud a100-80gb.1 "
        "(1× A100-80GB, us-east-1, on-demand)"
    ]
    step([gpu_offer("A100-80GB", "2.70")], T0 + 2 * H)
    shifted = step([gpu_offer("A100-80GB", "2.70"), gpu_offer("H100-SXM", "0.50")], T0 + 3 * H)
    # The A100's job at 2.70: 2.8775 h × 2.70 = 7.77 (to the cent). The H100's at 0.50/h
    # is 0.63 in the rankings snapshot (the recommender's hours for it); the cost alert
    # of the same change, (0.63 - 7.77) / 7.77 = -91.9 %, is said on the leader's line.
    leader = [s for s in shifted if "best offer now" in s]
    assert leader == [
        "lora: best offer now testcloud h100-sxm.1 (1× H100-SXM, us-east-1, on-demand) at "
        "0.630 USD per job, was testcloud a100-80gb.1 (1× A100-80GB, us-east-1, on-demand) "
        "at 7.77 USD (job cost -91.9 %)"
    ]
    assert not [s for s in shifted if "job cost 7.77" in s]  # not a line of its own


def test_collector_health_names_the_schedulers_job_and_the_error(sqlite_engine: Engine) -> None:
    from tests.alerts.test_evaluate import Broken
    from tracker.collect import run_collector
    from tracker.settings import Settings

    rule = rules({"name": "down", "type": "collector_health", "failures": 2})
    collect(sqlite_engine, [offer("a", "1.00")], T0)
    for i in (1, 2):
        run_collector(sqlite_engine, Broken(), Settings(), now=T0 + i * H)  # type: ignore[arg-type]
    evaluate(sqlite_engine, rule, ["slack"], now=T0 + 2 * H, health_only=True)
    change = JobHealthChange("aws:spot", "aws", "spot", True, T0, T0 + 3 * H)
    health_change_alerts(sqlite_engine, rule, ["slack"], change)
    assert lines(sqlite_engine, T0 + 3 * H) == [
        "testcloud:standard failing: 2 failed runs in a row: RuntimeError: provider said 503",
        "aws:spot stale: no successful run since 2026-03-01 00:00 UTC",
    ]


def test_an_alert_without_the_details_of_its_kind_shows_its_title() -> None:
    line = render("price_change", {"kind": "price_change"}, "hand-queued: p5 is cheaper")
    assert (line.text, line.label) == ("hand-queued: p5 is cheaper", "price drop")
    assert render("teams_thing", {}, "a plugin's alert").text == "a plugin's alert"
