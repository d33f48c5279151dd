"""Profile validation (one clear line naming the field), built-ins, user files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tracker.recommend import ProfileError, load_profiles, make_profile
from tracker.recommend.profiles import Precision, Task

VALID = dict(params=7e9, task="lora", precision="bf16", tokens=1e8)
BUILTINS = {
    "cv-small-training",
    "bert-base-finetune",
    "llm-7b-inference",
    "llm-7b-lora",
    "llm-7b-full-finetune",
    "llm-13b-pretrain",
    "llm-70b-inference",
    "stable-diffusion-training",
}


def error_of(**fields: Any) -> str:
    with pytest.raises(ProfileError) as info:
        make_profile("x", {**VALID, **fields})
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"task": "foo"},
            "profile 'x': task: 'foo' is not one of inference, lora, qlora, full_finetune, "
            "pretrain, cnn_training",
        ),
        ({"params": -7e9}, "profile 'x': params: must be > 0"),
        ({"gpus": ["H100", "Z9000"]}, "profile 'x': gpus: 'Z9000' is not a known GPU"),
        ({"precision": "int3"}, "profile 'x': precision: 'int3' is not one of fp32, bf16"),
        ({"precision": "int4"}, "profile 'x': precision: 'int4' is not valid for lora"),
        ({"interconnect": "infiniband"}, "profile 'x': interconnect: 'infiniband' is not one"),
        ({"colour": "blue"}, "profile 'x': colour: unknown field"),
        ({"tokens": None, "budget_usd": 100}, "profile 'x': budget_usd: needs a work size"),
        ({"images": 10, "epochs": 1}, "profile 'x': tokens: give exactly one work size"),
        (
            {"reference_gpu_hours": 10, "reference_gpu": "Z9000", "tokens": None},
            "profile 'x': reference_gpu: 'Z9000' is not a known GPU",
        ),
        ({"min_gpus": 8, "max_gpus": 2}, "profile 'x': min_gpus: 8 is more than max_gpus 2"),
        ({"checkpoint_interval_hours": 1}, "profile 'x': checkpoint_interval_hours: only"),
        ({"max_price_per_hour": "cheap"}, "profile 'x': max_price_per_hour: "),
        ({"utilization": 0}, "profile 'x': utilization: must be > 0, got 0"),
        ({"utilization": 1.5}, "profile 'x': utilization: must be <= 1, got 1.5"),
        ({"utilization": "most"}, "profile 'x': utilization: "),
    ],
)
def test_bad_profile_input_gives_one_line_naming_the_field(
    fields: dict[str, Any], expected: str
) -> None:
    assert error_of(**fields).startswith(expected)


def test_a_profile_without_a_work_size_is_valid_and_says_so() -> None:
    p = make_profile("x", {**VALID, "tokens": None})
    assert p.tokens is None and not p.has_work_size
    assert make_profile("y", VALID).has_work_size


def test_utilization_is_a_share_of_the_term() -> None:
    assert make_profile("x", {**VALID, "utilization": 1}).utilization == 1.0
    assert make_profile("x", {**VALID, "utilization": 0.6}).utilization == 0.6
    assert make_profile("x", VALID).utilization is None


def test_cnn_training_takes_images_and_epochs_together() -> None:
    cnn = dict(params=25e6, task="cnn_training", precision="fp16", tokens=None)
    assert error_of(**cnn, images=1e6).startswith("profile 'x': epochs: images and epochs go")
    assert error_of(**{**cnn, "tokens": 5}).startswith("profile 'x': tokens: cnn_training work is")


def test_gpu_allow_list_is_resolved_to_canonical_catalog_names() -> None:
    p = make_profile("x", {**VALID, "gpus": ["H100", "nvidia-tesla-a100", "H100-SXM"]})
    # Issue 10 item 9: a family spelling allows every variant (the H100 family and the
    # H100-<variant> rows; GCP's "nvidia-tesla-a100" is a spelling of the A100 family),
    # in the order given (catalog order within a family), each name once (H100-SXM is
    # already in the H100 family).
    assert p.gpus == (
        "H100-SXM",
        "H100-PCIE",
        "H100-NVL",
        "A100-40GB",
        "A100-80GB",
        "A100-40GB-PCIE",
        "A100-80GB-PCIE",
    )


def test_compute_precision_follows_storage_precision_unless_overridden() -> None:
    qlora = make_profile("q", {**VALID, "task": "qlora", "precision": "int4"})
    assert qlora.compute is Precision.BF16
    served = make_profile("s", {**VALID, "task": "inference", "precision": "int4"})
    assert served.compute is Precision.FP16
    forced = make_profile("f", {**VALID, "compute_precision": "fp16"})
    assert forced.compute is Precision.FP16


def test_builtins_load_and_are_the_documented_set() -> None:
    ps = load_profiles()
    assert set(ps.profiles) == BUILTINS
    assert ps.get("llm-70b-inference").task is Task.INFERENCE
    assert all(source == "built-in" for source in ps.sources.values())


def test_every_profile_with_a_horizon_states_a_utilization_so_reservations_count() -> None:
    example = Path(__file__).parents[2] / "config" / "profiles.toml"
    for ps in (load_profiles(), load_profiles(example)):
        for p in ps.profiles.values():
            if p.horizon_months:
                assert p.utilization is not None and 0 < p.utilization <= 1, p.name


def test_unknown_profile_name_lists_the_known_ones() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'nope' \\(known: bert-base-finetune"):
        load_profiles().get("nope")


def test_user_file_adds_overrides_and_tunes_assumptions(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(
        """
[assumptions]
efficiency = { lora = 0.25 }
default_interruption_pct = 3

[history]
top = 5

[profiles.llm-7b-lora]
params = 7e9
task = "lora"
precision = "bf16"
tokens = 2e8

[profiles.my-job]
params = 1.3e9
task = "qlora"
precision = "int4"
tokens = 1e8
""",
        encoding="utf-8",
    )
    ps = load_profiles(path)
    assert set(ps.profiles) == BUILTINS | {"my-job"}
    assert ps.get("llm-7b-lora").tokens == 2e8
    assert ps.sources["llm-7b-lora"] == str(path)
    assert ps.assumptions.efficiency["lora"] == 0.25
    assert ps.assumptions.efficiency["pretrain"] == 0.40  # other defaults kept
    assert ps.assumptions.default_interruption_pct == 3
    assert ps.history_top == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[profiles.a]\nparams = 1e9\ntask = 'lora'\nprecision = 'bf16'\ntokens = 1\nfoo = 1\n",
            "profile 'a': foo: unknown field (in ",
        ),
        ("[assumptions]\nmfu = 0.5\n", "assumptions.mfu: unknown assumption"),
        ("[assumptions]\nefficiency = { lora = 1.5 }\n", "assumptions.efficiency: lora: must be"),
        ("[assumptions]\nefficiency = { sleep = 0.5 }\n", "assumptions.efficiency: unknown key"),
        ("[history]\ntop = 0\n", "history.top: must be a whole number >= 1"),
        (
            "[profiles.a]\nparams = 1e9\ntask = 'lora'\nprecision = 'bf16'\nhorizon_months = 12\n"
            "utilization = 60\n",
            "profile 'a': utilization: must be <= 1, got 60 (in ",
        ),
        ("[profile.a]\n", "unknown table [profile]"),
        ("[profiles\n", "invalid TOML in "),
    ],
)
def test_bad_profiles_file_gives_one_line_naming_file_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        load_profiles(path)
    assert expected in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_profiles_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"profiles file not found: .*nope\.toml"):
        load_profiles(tmp_path / "nope.toml")


def test_example_config_file_is_valid() -> None:
    example = Path(__file__).parents[2] / "config" / "profiles.toml"
    ps = load_profiles(example)
    assert "my-13b-qlora" in ps.profiles


def test_fingerprint_ignores_the_description_but_not_the_job() -> None:
    a = make_profile("x", {**VALID, "description": "one"})
    b = make_profile("x", {**VALID, "description": "two"})
    c = make_profile("x", {**VALID, "tokens": 2e8})
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
