"""``ranking_change`` rules watching a saved plan, on both engines, figures by hand.

The saved plan: 8 H100s busy all the time for 12 months, nothing else. Each offer below
is one 8-GPU instance on-demand, so a plan's total is price × 730 h × 12 = price × 8,760.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate
from tracker.alerts.render import render
from tracker.alerts.rules import AlertRule, RulesError, parse_rules
from tracker.models import Offer
from tracker.recommend.profiles import load_profiles
from tracker.store.outbox import list_alerts, read_state

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)
PROFILES = """
[plans.h100-fleet]
description = "8 H100s around the clock for a year"
gpu = "H100"
steady_gpus = 8
months = 12
"""


def h100(provider: str, instance: str, price: str) -> Offer:
    return make_offer(
        provider=provider,
        instance_type=instance,
        gpu_model="H100-SXM",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal(80),
        price_per_hour=Decimal(price),
    )


def market(test: str, other: str = "11.00") -> list[Offer]:
    return [h100("testcloud", "gpu.8xh100", test), h100("othercloud", "h100x8", other)]


def plan_rules(
    tmp_path: Path, *tables: dict[str, Any], profiles: str = PROFILES
) -> list[AlertRule]:
    path = tmp_path / "profiles.toml"
    path.write_text(profiles)
    return parse_rules(
        {"rules": list(tables)}, "alerts.toml", ["slack"], profiles=lambda: load_profiles(path)
    )


def fleet_rule(**extra: Any) -> dict[str, Any]:
    return {
        "name": "fleet",
        "type": "ranking_change",
        "plan": "h100-fleet",
        "threshold_percent": 5,
        **extra,
    }


@dataclass
class Fired:
    rule: str
    kind: str
    title: str
    details: dict[str, Any]


def step(engine: Engine, rules: list[AlertRule], offers: list[Offer], at: datetime) -> list[Fired]:
    """Collect ``offers`` at ``at``, evaluate, and return the alerts it queued."""
    before = {a.alert_id for a in list_alerts(engine)}
    collect(engine, offers, at)
    evaluate(engine, rules, ["slack"], now=at)
    return [
        Fired(a.rule, a.kind, a.title, a.details or {})
        for a in reversed(list_alerts(engine))
        if a.alert_id not in before
    ]


def test_a_plan_fires_when_its_best_total_moves_past_the_threshold_or_provider_changes(
    engine: Engine, tmp_path: Path
) -> None:
    rules = plan_rules(tmp_path, fleet_rule())
    # testcloud 10.00 × 8,760 = 87,600.00 beats othercloud 11.00 × 8,760 = 96,360.00.
    assert step(engine, rules, market("10.00"), T0) == []  # the first evaluation seeds
    # 10.40 × 8,760 = 91,104.00: (91,104 - 87,600) / 87,600 = 3,504 / 87,600 = +4 % < 5 %.
    assert step(engine, rules, market("10.40"), T0 + H) == []
    # 10.60 × 8,760 = 92,856.00: against the baseline the rule last told about (87,600),
    # 5,256 / 87,600 = +6 % >= 5 %: the two small moves add up to one alert.
    [cost] = step(engine, rules, market("10.60"), T0 + 2 * H)
    assert cost.rule == "fleet" and cost.kind == "ranking_change"
    assert cost.title == "plan h100-fleet total 87600.00 → 92856.00 USD (+6.00%)"
    d = cost.details
    assert (d["plan"], d["event"], d["old"], d["new"], d["change_pct"]) == (
        "h100-fleet", "cost", "87600.00", "92856.00", "6.00",
    )  # fmt: skip
    assert (d["provider"], d["instance_type"], d["region"], d["previous"]) == (
        "testcloud", "gpu.8xh100", "us-east-1", None,
    )  # fmt: skip
    assert render(cost.kind, d, cost.title).text == (
        "h100-fleet: plan total 87,600.00 USD → 92,856.00 USD over 12 months (+6 %), "
        "best plan testcloud gpu.8xh100 (8× H100-SXM, us-east-1)"
    )
    # testcloud 11.20 × 8,760 = 98,112.00; othercloud's 96,360.00 is the best now.
    # Against 92,856.00: 3,504 / 92,856 = +3.77 %, under 5 %: the provider change fires.
    [leader] = step(engine, rules, market("11.20"), T0 + 3 * H)
    assert leader.details["event"] == "leader"
    assert leader.details["provider"] == "othercloud"
    assert leader.details["previous"]["provider"] == "testcloud"
    assert (leader.details["old"], leader.details["new"]) == ("92856.00", "96360.00")
    assert render(leader.kind, leader.details, leader.title).text == (
        "h100-fleet: best plan now othercloud h100x8 (8× H100-SXM, us-east-1) at "
        "96,360.00 USD over 12 months, was testcloud gpu.8xh100 (8× H100-SXM, us-east-1) "
        "at 92,856.00 USD (total +3.8 %)"
    )
    # The same prices evaluated again: the baseline is the new best, nothing moves.
    assert step(engine, rules, market("11.20"), T0 + 4 * H) == []


def test_a_plan_below_the_threshold_and_without_a_leader_event_stays_quiet(
    engine: Engine, tmp_path: Path
) -> None:
    rules = plan_rules(tmp_path, fleet_rule(events=["cost"], threshold_percent=20))
    assert step(engine, rules, market("10.00"), T0) == []
    # othercloud 9.00 × 8,760 = 78,840.00 takes the lead: (78,840 - 87,600) / 87,600 = -10 %,
    # under 20 %, and the rule does not ask for leader events.
    assert step(engine, rules, market("10.00", other="9.00"), T0 + H) == []
    # othercloud 7.00 × 8,760 = 61,320.00: -30 % from 87,600: a cost alert naming the move.
    [cost] = step(engine, rules, market("10.00", other="7.00"), T0 + 2 * H)
    assert (cost.details["event"], cost.details["change_pct"]) == ("cost", "-30.00")
    assert cost.details["previous"]["provider"] == "testcloud"
    assert render(cost.kind, cost.details, cost.title).text.endswith(
        "best plan othercloud h100x8 (8× H100-SXM, us-east-1), "
        "was testcloud gpu.8xh100 (8× H100-SXM, us-east-1)"
    )


def test_a_cooldown_keeps_the_baseline_so_the_move_fires_once_it_is_over(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    rules = plan_rules(tmp_path, fleet_rule(cooldown="6h"))
    # othercloud at 13.00 stays dearer throughout: only testcloud's total moves.
    step(sqlite_engine, rules, market("10.00", "13.00"), T0)
    assert len(step(sqlite_engine, rules, market("10.60", "13.00"), T0 + H)) == 1  # +6 %
    # 10.60 → 11.30: 11.30 × 8,760 = 98,988.00 vs 92,856.00, 6,132 / 92,856 = +6.6 %,
    # but within 6 h of the last alert about this plan: held back.
    assert step(sqlite_engine, rules, market("11.30", "13.00"), T0 + 2 * H) == []
    # 7 h later, still at 11.30: the baseline was kept (92,856.00), so it fires now.
    [late] = step(sqlite_engine, rules, market("11.30", "13.00"), T0 + 8 * H)
    assert (late.details["old"], late.details["new"]) == ("92856.00", "98988.00")


def test_editing_the_plan_starts_over_silently(sqlite_engine: Engine, tmp_path: Path) -> None:
    rules = plan_rules(tmp_path, fleet_rule())
    step(sqlite_engine, rules, market("10.00"), T0)
    # Two years instead of one: 10.00 × 730 × 24 = 175,200.00, twice the total, but the
    # question changed, not the market: recorded, not an alert.
    longer = plan_rules(tmp_path, fleet_rule(), profiles=PROFILES.replace("12", "24"))
    assert step(sqlite_engine, longer, market("10.00"), T0 + H) == []
    remembered = read_state(sqlite_engine, "fleet")["plan:h100-fleet"]
    assert '"total_usd": "175200.00"' in remembered
    # 10.60 × 730 × 24 = 185,712.00: +6 % from 175,200: fires against the new baseline.
    [cost] = step(sqlite_engine, longer, market("10.60"), T0 + 2 * H)
    assert (cost.details["old"], cost.details["new"]) == ("175200.00", "185712.00")


def test_a_plan_in_another_currency_shows_both_totals_at_one_rate(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    from tests.alerts.test_currency import store_rates

    rules = plan_rules(tmp_path, fleet_rule(currency="EUR"))
    store_rates(sqlite_engine, (T0.date(), "USD", "1.25"))  # 1 EUR = 1.25 USD
    step(sqlite_engine, rules, market("10.00"), T0)
    [cost] = step(sqlite_engine, rules, market("10.60"), T0 + H)
    # 1 EUR = 1.25 USD: 87,600 / 1.25 = 70,080.00 EUR and 92,856 / 1.25 = 74,284.80 EUR,
    # +6 % as in USD (one rate for both).
    assert (cost.details["old"], cost.details["new"], cost.details["currency"]) == (
        "70080.00", "74284.80", "EUR",
    )  # fmt: skip
    assert cost.details["change_pct"] == "6.00"


# -- the rules file ----------------------------------------------------------------


def error_of(tmp_path: Path, table: dict[str, Any], profiles: str = PROFILES) -> str:
    with pytest.raises(RulesError) as info:
        plan_rules(tmp_path, table, profiles=profiles)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_rule_naming_a_profile_and_a_plan_is_one_line_naming_the_rule(tmp_path: Path) -> None:
    assert error_of(tmp_path, fleet_rule(profile="llm-7b-lora")) == (
        "alerts.toml: rule 'fleet': plan: a rule watches profiles or saved plans, not both"
    )


def test_an_unknown_plan_is_one_line_listing_the_saved_ones(tmp_path: Path) -> None:
    assert error_of(tmp_path, fleet_rule(plan="h100-flet")) == (
        "alerts.toml: rule 'fleet': plan: 'h100-flet' is not a saved plan "
        "(saved: h100-fleet; [plans.NAME] in the profiles file)"
    )


def test_top_n_is_refused_for_a_plan(tmp_path: Path) -> None:
    assert error_of(tmp_path, fleet_rule(events=["leader", "top_n"])) == (
        "alerts.toml: rule 'fleet': events: top_n is for profiles (a plan has one best plan)"
    )
    assert error_of(tmp_path, fleet_rule(top_n=5)).startswith("alerts.toml: rule 'fleet': top_n:")


def test_a_broken_saved_plan_names_the_rule_the_plan_the_key_and_the_file(tmp_path: Path) -> None:
    broken = PROFILES.replace("steady_gpus = 8", "steady_gpus = 8\ninterruptible = 1.5")
    message = error_of(tmp_path, fleet_rule(), profiles=broken)
    assert message == (
        "alerts.toml: rule 'fleet': plan: plan 'h100-fleet': interruptible: 1.5 is not a "
        f"share 0-1 (in {tmp_path / 'profiles.toml'})"
    )


def test_rules_without_a_plan_never_read_the_profiles_file(tmp_path: Path) -> None:
    def unreadable() -> Any:
        raise AssertionError("the profiles file was read")

    rules = parse_rules(
        {"rules": [{"name": "r", "type": "ranking_change", "profile": "llm-7b-lora"}]},
        "alerts.toml",
        ["slack"],
        profiles=unreadable,
    )
    assert [r.name for r in rules] == ["r"]


# -- in a digest ---------------------------------------------------------------------


def test_plan_alerts_in_a_digest_are_lines_of_their_own_beside_a_profiles() -> None:
    from tests.alerts.test_digest_counts import check_slack_limits, due, leader
    from tracker.alerts.channels.slack import slack_payload
    from tracker.alerts.digest import build_digest

    fleet = {
        "plan": "h100-fleet", "provider": "aws", "instance_type": "p5.48xlarge",
        "region": "us-east-1", "gpu_model": "H100-SXM", "gpu_count": "8", "instances": 2,
        "currency": "USD", "months": 36,
    }  # fmt: skip
    was = {**fleet, "provider": "lambda", "instance_type": "gpu_8x_h100_sxm5"}
    alerts = [
        leader(1),  # a profile's new leader (llm-7b-lora)
        due(2, "ranking_change", **fleet, event="leader", old="1257235.20", new="1051200.00",
            change_pct="-16.39", previous=was),
        # another plan's cost move: its own line, not merged into either leader's
        due(3, "ranking_change", **{**fleet, "plan": "a100-fleet"}, event="cost",
            old="100000.00", new="88000.00", change_pct="-12.00"),
    ]  # fmt: skip
    digest = build_digest(alerts, rows=15)
    assert digest.headline == (
        "best for llm-7b-lora now gcp a2-ultragpu-1g, "
        "best plan for h100-fleet now aws p5.48xlarge, 1 ranking change"
    )
    assert [i.alert_ids for i in digest.items] == [(1,), (2,), (3,)]
    assert digest.items[2].line.text == (
        "a100-fleet: plan total 100,000.00 USD → 88,000.00 USD over 36 months (-12 %), "
        "best plan aws p5.48xlarge × 2 (16× H100-SXM, us-east-1)"
    )
    check_slack_limits(slack_payload(digest))
