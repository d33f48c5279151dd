"""The rules file: every mistake is one line naming the rule and the key."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tracker.alerts.rules import (
    NewHardwareRule,
    PriceChangeRule,
    RulesError,
    load_rules,
    parse_duration,
    parse_rules,
)

ROOT = Path(__file__).resolve().parents[2]


def error_of(table: dict[str, object], channels: tuple[str, ...] = ("slack",)) -> str:
    with pytest.raises(RulesError) as info:
        parse_rules({"rules": [table]}, "alerts.toml", channels)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_the_shipped_example_loads_with_every_type() -> None:
    rules = load_rules(ROOT / "config" / "alerts.toml", ["slack", "email"])
    assert {r.type for r in rules} == {
        "price_change",
        "spot_discount",
        "new_hardware",
        "ranking_change",
        "collector_health",
    }
    h100 = next(r for r in rules if isinstance(r, PriceChangeRule))
    assert h100.cooldown == timedelta(hours=6)
    assert h100.gpus is not None and {"H100-SXM", "H100-PCIE"} <= set(h100.gpus.models)


def test_unknown_type_names_the_rule() -> None:
    assert error_of({"name": "x", "type": "price_jump", "threshold_percent": 5}) == (
        "alerts.toml: rule 'x': type: expected one of price_change, spot_discount, "
        "new_hardware, ranking_change, collector_health, got 'price_jump'"
    )


def test_threshold_out_of_range() -> None:
    message = error_of({"name": "big", "type": "price_change", "threshold_percent": 150})
    assert message.startswith("alerts.toml: rule 'big': threshold_percent: ")
    assert "100" in message and "(got 150)" in message
    assert "threshold_percent" in error_of(
        {"name": "z", "type": "spot_discount", "threshold_percent": 0}
    )


def test_unknown_filter_key_for_the_type() -> None:
    assert (
        error_of({"name": "s", "type": "spot_discount", "threshold_percent": 50, "pricing": "spot"})
        == "alerts.toml: rule 's': unknown key 'pricing' for a spot_discount rule"
    )
    assert (
        error_of({"name": "p", "type": "price_change", "threshold_percent": 5, "gpu": "H100"})
        == "alerts.toml: rule 'p': unknown key 'gpu' for a price_change rule"
    )


def test_a_channel_that_is_not_configured() -> None:
    assert (
        error_of({"name": "e", "type": "new_hardware", "channels": ["email"]})
        == "alerts.toml: rule 'e': channels: 'email' is not configured (configured: slack)"
    )


def test_missing_threshold_and_bad_cooldown() -> None:
    assert error_of({"name": "m", "type": "price_change"}) == (
        "alerts.toml: rule 'm': threshold_percent: Field required"
    )
    message = error_of({"name": "c", "type": "new_hardware", "cooldown": "soon"})
    assert message.startswith("alerts.toml: rule 'c': cooldown: ")


def test_duplicate_names_and_unnamed_rules() -> None:
    with pytest.raises(RulesError, match="rule 'a': name used twice"):
        parse_rules(
            {"rules": [{"name": "a", "type": "new_hardware"}] * 2}, "alerts.toml", ["slack"]
        )
    assert error_of({"type": "new_hardware"}) == "alerts.toml: rules[0]: name: Field required"


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("30m", 1800), ("6h", 21600), ("1d", 86400), ("0", 0)]
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read"):
        load_rules(tmp_path / "missing.toml", [])
    bad = tmp_path / "bad.toml"
    bad.write_text("[[rules]\n")
    with pytest.raises(RulesError, match="invalid TOML"):
        load_rules(bad, [])


def test_each_problem_is_said_once() -> None:
    # The duration's own message names the value; the line does not repeat it.
    assert error_of({"name": "c", "type": "new_hardware", "cooldown": "6 hours"}) == (
        'alerts.toml: rule \'c\': cooldown: expected a duration like "6h", "30m" or "1d", '
        "got '6 hours'"
    )


def test_gpu_names_are_resolved_through_the_catalog_when_the_rules_load() -> None:
    assert error_of(
        {"name": "g", "type": "price_change", "threshold_percent": 5, "gpu_model": ["H1000"]}
    ) == (
        "alerts.toml: rule 'g': gpu_model: 'H1000' is not a GPU the catalog knows "
        "(a model like H100-SXM, a family like H100, or a provider's spelling of one)"
    )
    # A family, a canonical name in any case and a provider's spelling all resolve.
    (rule,) = parse_rules(
        {
            "rules": [
                {
                    "name": "ok",
                    "type": "new_hardware",
                    "gpu_model": ["H100", "a100-80gb", "Tesla T4"],
                }
            ]
        },
        "alerts.toml",
        ["slack"],
    )
    assert isinstance(rule, NewHardwareRule) and rule.gpus is not None
    assert {"A100-80GB", "T4", "H100-SXM"} <= set(rule.gpus.models)


def test_providers_are_checked_against_the_registered_collectors() -> None:
    table = {"name": "down", "type": "collector_health", "provider": ["aws", "awz"]}
    with pytest.raises(RulesError) as info:
        parse_rules({"rules": [table]}, "alerts.toml", ["slack"], {"aws", "gcp"})
    assert str(info.value) == (
        "alerts.toml: rule 'down': provider: 'awz' is not a registered collector "
        "(registered: aws, gcp)"
    )
    offers = {"name": "p", "type": "price_change", "threshold_percent": 5, "provider": "oracle"}
    with pytest.raises(RulesError, match="rule 'p': provider: 'oracle' is not a registered"):
        parse_rules({"rules": [offers]}, "alerts.toml", ["slack"], {"aws", "oci"})


def test_the_shipped_example_names_registered_collectors_only() -> None:
    from tracker.alerts.setup import collector_names
    from tracker.settings import Settings

    names = collector_names(Settings())
    assert {"aws", "azure", "gcp", "pricesheet"} <= names
    assert load_rules(ROOT / "config" / "alerts.toml", ["slack", "email"], names)
