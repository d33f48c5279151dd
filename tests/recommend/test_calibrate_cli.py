"""Your own measured throughput: ``[[measured]]`` and ``gpu-tracker calibrate`` (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Run
from tests.recommend.test_cli import json_rows, one_line_error
from tests.recommend.test_cli_ranking import sheet_cli

SHEET = """\
provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,price_per_hour,currency,interconnect,payment_option
aws,g5.xlarge,us-east-1,,on_demand,NVIDIA A10G,1,24,4,16,1.006,USD,pcie,
aws,g6.xlarge,us-east-1,,on_demand,L4,1,24,4,16,0.8048,USD,pcie,
"""
MY_PROFILES = """\
[profiles.my-lora]
params = 1e9
task = "lora"
precision = "bf16"
tokens = 36e6
"""


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    return sheet_cli(tmp_path, SHEET)


def test_an_a10g_ranks_from_your_measurement_and_says_so(cli: Run, tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(MY_PROFILES)
    before = json_rows(
        cli("recommend", "-P", "my-lora", "--profiles-file", str(mine), "--explain", "-f", "json")
    )
    a10g = next(r for r in before if r["instance_type"] == "g5.xlarge")
    # AWS's A10G has no vendor TFLOPS and nothing measured it: it is costed by its stated
    # stand-in rule (as the A10), basis modelled
    assert a10g["rank"] is not None and a10g["basis"] == "modelled"
    assert str(a10g["basis_source"]).startswith("A10G modelled as the A10")

    proc = cli(
        "calibrate", "-P", "my-lora", "--gpu", "NVIDIA A10G", "--throughput", "2500",
        "--unit", "tokens/s", "--profiles-file", str(mine),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"in {mine}" in proc.stdout
    text = mine.read_text()
    assert text.startswith(MY_PROFILES)  # the user's file is appended to, not rewritten
    assert '[[measured]]\nprofile = "my-lora"\ngpu = "NVIDIA A10G"\n' in text

    rows = json_rows(cli("recommend", "-P", "my-lora", "--profiles-file", str(mine), "-f", "json"))
    row = next(r for r in rows if r["instance_type"] == "g5.xlarge")
    # 36e6 tokens / 2500 tokens/s = 14,400 s = 4 h; $1.006/h x 4 h = $4.024 -> $4.02
    assert row["basis"] == "measured (yours)"
    assert float(str(row["job_hours"])) == pytest.approx(4.0)
    assert str(row["job_cost_usd"]) == "4.02"
    assert str(row["basis_source"]).startswith("yours-1: your measurement")


def test_calibrate_without_a_file_writes_the_user_config_profiles(cli: Run, tmp_path: Path) -> None:
    # cli_runner sets XDG_CONFIG_HOME to tmp_path/config: the documented default location
    default = tmp_path / "config" / "gpu-tracker" / "profiles.toml"
    assert not default.exists()
    proc = cli(
        "calibrate", "-P", "cv-small-training", "--gpu", "A10G", "--throughput", "700",
        "--unit", "images/s",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert default.is_file() and "[[measured]]" in default.read_text()
    rows = json_rows(cli("recommend", "-P", "cv-small-training", "-f", "json"))
    row = next(r for r in rows if r["instance_type"] == "g5.xlarge")
    # 1,281,167 images x 90 epochs / 700 images/s = 164,721.5 s = 45.756 h (JSON: 2 decimals)
    assert row["basis"] == "measured (yours)"
    assert str(row["job_hours"]) == "45.76"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gpu", "Quantum 9000"), "gpu: 'Quantum 9000' is not a GPU in the catalog"),
        (("--unit", "img/s"), "unit: 'img/s' is not one of images/s, sequences/s, tokens/s"),
        (("--unit", "images/s"), "unit: llm_training is measured in sequences/s, tokens/s"),
        (("-P", "nope"), "profile: unknown profile 'nope'"),
    ],
)
def test_a_bad_calibration_is_one_line_and_leaves_the_file_alone(
    cli: Run, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(MY_PROFILES)
    base = {"-P": "my-lora", "--gpu": "A10G", "--throughput": "2500", "--unit": "tokens/s"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    flat = [part for pair in base.items() for part in pair]
    line = one_line_error(cli("calibrate", *flat, "--profiles-file", str(mine)))
    assert message in line
    assert mine.read_text() == MY_PROFILES


def test_a_measured_table_spelled_out_in_full_is_validated(cli: Run, tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(
        MY_PROFILES
        + '\n[[measured]]\nclass = "llm_training"\nmodel = "mine"\nparams = 1e9\n'
        + 'gpu = "A10G"\nprecision = "bf16"\nthroughput = 3000\nunit = "furlongs"\n'
    )
    line = one_line_error(cli("recommend", "-P", "my-lora", "--profiles-file", str(mine)))
    assert "measurement 'yours-1': unit: 'furlongs' is not one of" in line
    assert str(mine) in line
