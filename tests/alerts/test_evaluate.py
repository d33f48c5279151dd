"""Each rule type fires exactly when it should on hand-built histories, and not otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select

from tests.alerts.conftest import offer
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate, health_change_alerts
from tracker.alerts.rules import AlertRule, parse_rules
from tracker.hooks import JobHealthChange
from tracker.store.outbox import AlertDelivery, AlertOutbox, list_alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)


def rules(*tables: dict[str, Any]) -> list[AlertRule]:
    return parse_rules({"rules": list(tables)}, "test", ["slack"])


def fired(engine: Engine) -> list[tuple[str, str]]:
    """(rule, title) of every queued alert, oldest first."""
    return [(a.rule, a.title) for a in reversed(list_alerts(engine))]


# -- price_change ------------------------------------------------------------------


def test_price_change_fires_at_the_threshold_either_way_and_not_below(
    engine: Engine,
) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [offer("a", "10.00"), offer("b", "10.00"), offer("c", "10.00")], T0)
    assert evaluate(engine, rule, ["slack"], now=T0) == []  # seeds silently
    # a: 10.00 → 9.00 is (9 - 10) / 10 = -10 %: at the threshold, fires.
    # b: 10.00 → 9.50 is -5 %: below, quiet.  c: 10.00 → 11.00 is +10 %: fires.
    collect(engine, [offer("a", "9.00"), offer("b", "9.50"), offer("c", "11.00")], T0 + H)
    queued = evaluate(engine, rule, ["slack"], now=T0 + H)
    assert len(queued) == 2
    assert fired(engine) == [
        ("moves", "testcloud a us-east-1 on_demand: 10.00 → 9.00 USD/h (-10.00%)"),
        ("moves", "testcloud c us-east-1 on_demand: 10.00 → 11.00 USD/h (+10.00%)"),
    ]
    # Every queued alert has one pending delivery per channel.
    with engine.connect() as conn:
        rows = conn.execute(select(AlertDelivery.channel, AlertDelivery.status)).all()
    assert sorted(rows) == [("slack", "pending"), ("slack", "pending")]


def test_price_change_direction_down_ignores_rises(engine: Engine) -> None:
    rule = rules(
        {"name": "drops", "type": "price_change", "threshold_percent": 10, "direction": "down"}
    )
    collect(engine, [offer("a", "10.00"), offer("c", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    # a: -20 % (a drop) fires; c: +50 % (a rise) does not.
    collect(engine, [offer("a", "8.00"), offer("c", "15.00")], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 10.00 → 8.00 USD/h (-20.00%)"
    ]


def test_price_change_family_filter_matches_every_variant_only(engine: Engine) -> None:
    rule = rules(
        {"name": "h100", "type": "price_change", "threshold_percent": 5, "gpu_model": "h100"}
    )
    start = [
        offer("sxm", "10.00", gpu="H100-SXM"),
        offer("pcie", "10.00", gpu="H100-PCIE"),
        offer("a100", "10.00", gpu="A100-80GB"),
    ]
    collect(engine, start, T0)
    evaluate(engine, rule, ["slack"], now=T0)
    halved = [offer(o.instance_type, "5.00", gpu=o.gpu_model) for o in start]
    collect(engine, halved, T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    titles = [t for _, t in fired(engine)]
    assert len(titles) == 2
    assert titles[0].startswith("testcloud sxm ") and titles[1].startswith("testcloud pcie ")


def test_price_change_filters_by_provider_region_and_pricing(engine: Engine) -> None:
    rule = rules(
        {
            "name": "east-spot",
            "type": "price_change",
            "threshold_percent": 5,
            "region": ["us-east-1"],
            "pricing": "spot",
            "provider": "testcloud",
        }
    )
    start = [
        offer("x", "10.00", pricing="spot"),
        offer("x", "10.00", pricing="spot", region="eu-west-1"),
        offer("x", "10.00"),
    ]
    collect(engine, start, T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(
        engine,
        [offer(o.instance_type, "5.00", pricing=o.pricing, region=o.region) for o in start],
        T0 + H,
    )
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert [t for _, t in fired(engine)] == [
        "testcloud x us-east-1 spot: 10.00 → 5.00 USD/h (-50.00%)"
    ]


def test_cooldown_holds_back_the_same_offer_then_lets_it_fire(engine: Engine) -> None:
    rule = rules(
        {"name": "cool", "type": "price_change", "threshold_percent": 10, "cooldown": "6h"}
    )
    collect(engine, [offer("a", "10.00"), offer("b", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "8.00"), offer("b", "10.00")], T0 + H)
    assert len(evaluate(engine, rule, ["slack"], now=T0 + H)) == 1
    # 2 h later a moves again (inside a's 6 h cooldown), b moves for the first time.
    collect(engine, [offer("a", "6.00"), offer("b", "8.00")], T0 + 3 * H)
    evaluate(engine, rule, ["slack"], now=T0 + 3 * H)
    assert [t.split(":")[0] for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand",
        "testcloud b us-east-1 on_demand",
    ]
    # 7 h after a's alert the cooldown is over: its next move fires.
    collect(engine, [offer("a", "4.00"), offer("b", "8.00")], T0 + 8 * H)
    evaluate(engine, rule, ["slack"], now=T0 + 8 * H)
    assert fired(engine)[-1][1] == "testcloud a us-east-1 on_demand: 6.00 → 4.00 USD/h (-33.33%)"


def test_evaluating_one_run_twice_queues_each_event_once(engine: Engine) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "5.00")], T0 + H)
    assert len(evaluate(engine, rule, ["slack"], now=T0 + H)) == 1
    # The cursor is rewound as if a crash lost it: the same interval is seen again.
    from tracker.store.outbox import queue_alerts

    queue_alerts(engine, [], T0 + H, state={("moves", "@price_points"): "0"})
    assert evaluate(engine, rule, ["slack"], now=T0 + 2 * H) == []
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(AlertOutbox)).scalar_one() == 1
        assert conn.execute(select(func.count()).select_from(AlertDelivery)).scalar_one() == 1


def test_a_change_of_currency_without_a_rate_is_not_compared(engine: Engine) -> None:
    """No EUR rate stored: 10 USD and 5 EUR cannot be compared (tests/alerts/
    test_currency.py compares them once a rate is there), never at 1.0."""
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "5.00", currency="EUR")], T0 + H)
    assert evaluate(engine, rule, ["slack"], now=T0 + H) == []


# -- spot_discount -----------------------------------------------------------------


def test_spot_discount_fires_when_it_crosses_not_while_it_stays(engine: Engine) -> None:
    rule = rules({"name": "spot", "type": "spot_discount", "threshold_percent": 60})

    def market(spot: str) -> list[Any]:
        return [offer("g", "10.00"), offer("g", spot, pricing="spot", zone="us-east-1a")]

    steps = [
        # (spot price, alert expected); discount = (10 - spot) / 10
        ("5.00", False),  # 50 %: under the threshold (first evaluation seeds anyway)
        ("3.50", True),  # 65 %: crosses 60 %
        ("3.00", False),  # 70 %: still crossed, no new alert
        ("5.00", False),  # 50 %: back under
        ("3.90", True),  # 61 %: crosses again
    ]
    for i, (spot, expected) in enumerate(steps):
        at = T0 + i * H
        collect(engine, market(spot), at)
        assert bool(evaluate(engine, rule, ["slack"], now=at)) is expected, spot
    assert [t for _, t in fired(engine)] == [
        "testcloud g us-east-1/us-east-1a spot 3.50 USD/h is 65.00% below on-demand 10.00",
        "testcloud g us-east-1/us-east-1a spot 3.90 USD/h is 61.00% below on-demand 10.00",
    ]


def test_spot_discount_already_crossed_at_seeding_stays_quiet(engine: Engine) -> None:
    rule = rules({"name": "spot", "type": "spot_discount", "threshold_percent": 60})
    market = [offer("g", "10.00"), offer("g", "2.00", pricing="spot")]
    collect(engine, market, T0)
    assert evaluate(engine, rule, ["slack"], now=T0) == []
    collect(engine, market, T0 + H)
    assert evaluate(engine, rule, ["slack"], now=T0 + H) == []


# -- new_hardware --------------------------------------------------------------------


def test_new_hardware_seeds_then_reports_model_instance_and_region(engine: Engine) -> None:
    rule = rules({"name": "new", "type": "new_hardware"})
    collect(engine, [offer("a100.1", "2.00", gpu="A100-80GB")], T0)
    assert evaluate(engine, rule, ["slack"], now=T0) == []  # day one: no storm
    collect(
        engine,
        [
            offer("a100.1", "2.00", gpu="A100-80GB"),
            offer("a100.1", "2.10", gpu="A100-80GB", region="eu-west-1"),
            offer("h200.1", "5.00", gpu="H200"),
            offer("h200.1", "4.00", gpu="H200", pricing="spot"),
        ],
        T0 + H,
    )
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert sorted(t for _, t in fired(engine)) == [
        "new GPU model H200 at testcloud (h200.1, us-east-1)",
        "new instance type testcloud h200.1 (1x H200)",
        "testcloud offers GPUs in eu-west-1 now (a100.1)",
    ]
    collect(engine, [offer("h200.2", "9.00", gpu="H200")], T0 + 2 * H)
    evaluate(engine, rule, ["slack"], now=T0 + 2 * H)
    assert fired(engine)[-1][1] == "new instance type testcloud h200.2 (1x H200)"
    assert len(fired(engine)) == 4


def test_new_hardware_filtered_by_family_and_event(engine: Engine) -> None:
    rule = rules(
        {"name": "h100s", "type": "new_hardware", "gpu_model": "H100", "events": ["gpu_model"]}
    )
    collect(engine, [offer("a100.1", "2.00", gpu="A100-80GB")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(
        engine,
        [offer("h100.1", "4.00", gpu="H100-NVL"), offer("l4.1", "0.80", gpu="L4")],
        T0 + H,
    )
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert [t for _, t in fired(engine)] == [
        "new GPU model H100-NVL at testcloud (h100.1, us-east-1)"
    ]


# -- ranking_change ------------------------------------------------------------------


def test_ranking_change_leader_top_n_and_cost(engine: Engine) -> None:
    from tests.recommend.test_history import gpu_offer, profiles
    from tracker.recommend import recompute_rankings
    from tracker.settings import Settings

    rule = rules(
        {
            "name": "lora",
            "type": "ranking_change",
            "profile": "lora",
            "threshold_percent": 20,
            "top_n": 3,
        }
    )

    def step(offers: list[Any], at: datetime) -> list[str]:
        before = len(fired(engine))
        collect(engine, offers, at)
        recompute_rankings(engine, Settings(), now=at, profiles=profiles())
        evaluate(engine, rule, ["slack"], now=at)
        return [t for _, t in fired(engine)[before:]]

    base = [gpu_offer("A100-80GB", "4.00")]
    assert step(base, T0) == []
    # The only offer's price 4.00 → 3.00: the job cost (hours × price) drops by a quarter.
    # Snapshots keep costs to the cent: 11.51 at $4.00, 11.51 × 3/4 = 8.6325 → 8.63, and
    # (8.63 - 11.51) / 11.51 = -25.02 %, over the 20 % threshold.
    cost = step([gpu_offer("A100-80GB", "3.00")], T0 + H)
    assert cost == ["lora job cost 11.51 → 8.63 USD (-25.02%)"]
    # 3.00 → 2.70 is -10 %: under the 20 % threshold.
    assert step([gpu_offer("A100-80GB", "2.70")], T0 + 2 * H) == []
    # An H100 at $0.50 takes the lead and enters the top 3.
    shifted = step([gpu_offer("A100-80GB", "2.70"), gpu_offer("H100-SXM", "0.50")], T0 + 3 * H)
    assert "best for lora now testcloud h100-sxm.1 (was testcloud a100-80gb.1)" in shifted
    assert any(t.startswith("H100-SXM entered the top 3 for lora") for t in shifted)


# -- collector_health ----------------------------------------------------------------


class Broken:
    name = "testcloud"
    description = "fails"

    @classmethod
    def from_settings(cls, settings: Any) -> Broken:
        return cls()

    def collect(self, ctx: Any) -> Any:
        raise RuntimeError("provider said 503")


def test_collector_health_fires_after_n_failures_and_on_recovery(engine: Engine) -> None:
    from tracker.collect import run_collector
    from tracker.settings import Settings

    rule = rules({"name": "down", "type": "collector_health", "failures": 3})
    collect(engine, [offer("a", "1.00")], T0)
    for i in range(1, 5):
        run_collector(engine, Broken(), Settings(), now=T0 + i * H)
        queued = evaluate(engine, rule, ["slack"], now=T0 + i * H, health_only=True)
        assert bool(queued) is (i == 3), i  # the 3rd failure in a row, once
    # Broken's runs price everything (scope "all"): the scheduler's standard job.
    assert fired(engine)[-1][1] == (
        "testcloud:standard failed 3 runs in a row: RuntimeError: provider said 503"
    )
    collect(engine, [offer("a", "1.00")], T0 + 5 * H)
    evaluate(engine, rule, ["slack"], now=T0 + 5 * H, health_only=True)
    assert fired(engine)[-1][1] == "testcloud:standard recovered: its latest run succeeded"
    assert len(fired(engine)) == 2


def test_collector_health_stale_and_fresh_from_the_service(engine: Engine) -> None:
    rule = rules({"name": "down", "type": "collector_health", "provider": "aws"})
    change = JobHealthChange("aws:spot", "aws", "spot", True, T0, T0 + 3 * H)
    assert len(health_change_alerts(engine, rule, ["slack"], change)) == 1
    assert health_change_alerts(engine, rule, ["slack"], change) == []  # same event
    other = JobHealthChange("gcp:all", "gcp", "all", True, T0, T0 + 3 * H)
    assert health_change_alerts(engine, rule, ["slack"], other) == []  # filtered out
    fresh = JobHealthChange("aws:spot", "aws", "spot", False, T0 + 4 * H, T0 + 4 * H)
    assert len(health_change_alerts(engine, rule, ["slack"], fresh)) == 1
    assert [t for _, t in fired(engine)] == [
        "aws:spot is stale: no successful run since 2026-03-01T00:00:00+00:00",
        "aws:spot is fresh again (last success 2026-03-01T04:00:00+00:00)",
    ]
