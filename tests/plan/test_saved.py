"""Saved plans, ``[plans.NAME]`` of the profiles file: the ``plan`` options as a table,
checked as strictly; every mistake one line naming the plan, the key and the file."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tracker.recommend.demand import Demand
from tracker.recommend.profiles import ProfileError, load_profiles
from tracker.service_prices import ServiceKind

ROOT = Path(__file__).resolve().parents[2]
FLEET = """
[plans.fleet]
description = "what we run"
gpu = ["H100"]
steady_gpus = 16
burst_gpu_hours = 1000
interruptible = 0.5
months = 18
spot_overhead = 0.1
checkpoint_minutes = 30
storage_tb = 10
storage = "hdd"
egress_tb = 15
migration_usd = 5000
current_provider = "lambda"
provider = ["aws", "lambda"]
region = "us-east-1"
"""


def test_a_saved_plan_carries_every_plan_option_exactly(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(FLEET)
    plan = load_profiles(path).plans["fleet"]
    assert plan.gpu == ["H100"]
    assert (plan.provider, plan.region) == (["aws", "lambda"], ["us-east-1"])
    # TOML's 0.5 and 0.1 are floats: taken by their shortest repr, never binary noise.
    assert plan.demand == Demand(
        steady_gpus=Decimal(16),
        burst_gpu_hours=Decimal(1000),
        interruptible=Decimal("0.5"),
        months=18,
        spot_overhead=Decimal("0.1"),
        checkpoint_minutes=Decimal(30),
        storage_tb=Decimal(10),
        storage=ServiceKind.BLOCK_STORAGE_HDD,
        egress_tb=Decimal(15),
        migration_usd=Decimal(5000),
        current_provider="lambda",
    )


def test_the_fingerprint_follows_the_question_not_its_description(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    prints = []
    for text in (FLEET, FLEET.replace("what we run", "ours"), FLEET.replace("18", "24")):
        path.write_text(text)
        prints.append(load_profiles(path).plans["fleet"].fingerprint())
    assert prints[0] == prints[1] != prints[2]


def test_a_saved_plan_takes_the_fabric_key(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(FLEET + 'fabric = "required"\n')
    required = load_profiles(path).plans["fleet"]
    assert required.demand.fabric == "required"
    path.write_text(FLEET)
    before = load_profiles(path).plans["fleet"]
    path.write_text(FLEET + 'fabric = "any"\n')
    explicit_any = load_profiles(path).plans["fleet"]
    # "any" is what a plan saved before the key meant: the same question, the same hash
    # (a watching alert rule does not start over); "required" is another question.
    assert before.fingerprint() == explicit_any.fingerprint() != required.fingerprint()
    assert before.demand.fabric == "any"


def test_the_shipped_example_has_a_saved_plan() -> None:
    plans = load_profiles(ROOT / "config" / "profiles.toml").plans
    assert plans["h100-fleet"].demand.steady_gpus == 16


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("steady_gpus = 8\n", "plan 'p': gpu: required"),
        ("gpu = 'H1000'\nsteady_gpus = 8\n", "plan 'p': gpu: 'H1000' is not a known GPU"),
        (
            "gpu = 'H100'\n",
            "plan 'p': steady_gpus: no demand: give steady_gpus and/or burst_gpu_hours above zero",
        ),
        ("gpu = 'H100'\nsteady_gpus = -8\n", "plan 'p': steady_gpus: must not be negative"),
        (
            "gpu = 'H100'\nburst_gpu_hours = 10\ninterruptible = 2\n",
            "plan 'p': interruptible: 2 is not a share 0-1",
        ),
        ("gpu = 'H100'\nsteady_gpus = 8\nmonths = 121\n", "plan 'p': months: 121 is not 1-120"),
        (
            "gpu = 'H100'\nsteady_gpus = 8\nmigration_usd = 10\n",
            "plan 'p': migration_usd: needs current_provider",
        ),
        ("gpu = 'H100'\nsteady_gpus = 8\nstorage = 'tape'\n", "plan 'p': storage: "),
        ("gpu = 'H100'\nsteady_gpus = 8\nspot = 1\n", "plan 'p': spot: unknown field"),
        ("gpu = 'H100'\nsteady_gpus = nan\n", "plan 'p': steady_gpus: "),
        ("gpu = 'H100'\nsteady_gpus = 8\nfabric = 'fast'\n", "plan 'p': fabric: "),
    ],
)
def test_a_bad_saved_plan_is_one_line_naming_the_plan_the_key_and_the_file(
    tmp_path: Path, body: str, expected: str
) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text("[plans.p]\n" + body)
    with pytest.raises(ProfileError) as info:
        load_profiles(path)
    message = str(info.value)
    assert message.startswith(expected)
    assert message.endswith(f"(in {path})")
    assert "\n" not in message


def test_plans_must_be_named_tables(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text("plans = 3\n")
    with pytest.raises(ProfileError, match=r"'plans' must be tables like \[plans\.NAME\]"):
        load_profiles(path)
    path.write_text("[plans.Big]\ngpu = 'H100'\nsteady_gpus = 1\n")
    with pytest.raises(ProfileError, match="plan 'Big': must be lower-case"):
        load_profiles(path)
