"""``collect`` refreshes storage and egress prices too; ``services`` lists them and ``plan``
prices disks and egress with them (both engines, the real CLI in this process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors.aws import AwsCollector
from tests.cli.test_cli import one_line_error
from tests.collectors.test_aws_services import Pricing
from tests.conftest import Run

ROOT = str(Path(__file__).resolve().parents[2])
DISKS = {
    "GPU_TRACKER_PLUGINS": json.dumps({"fakedisks": "tests.disks_collector:Disks"}),
    "PYTHONPATH": ROOT,
}
OFFERS = """provider,instance_type,region,zone,pricing,payment_option,gpu_model,gpu_count,price_per_hour,currency
aws,p5.48xlarge,us-east-1,,on_demand,,H100 SXM,8,55.04,USD
"""


def _runs(cli: Run) -> list[tuple[str, str, str]]:
    rows = json.loads(cli("runs", "--format", "json").stdout)
    return sorted((r["provider"], r["scope"], r["status"]) for r in rows)


def test_collect_runs_the_services_after_the_instance_prices(cli: Run) -> None:
    proc = cli("collect", "--provider", "fakedisks", extra_env=DISKS)
    assert proc.returncode == 0, proc.stderr
    assert "services" in proc.stdout  # the summary's second row
    assert _runs(cli) == [("fakedisks", "all", "succeeded"), ("fakedisks", "services", "succeeded")]
    listed = json.loads(cli("services", "--format", "json").stdout)
    assert [(r["provider"], r["service"], r["price"], r["source"]) for r in listed] == [
        ("fakedisks", "block_storage_ssd", "0.08", "fakedisks")
    ]


@pytest.mark.parametrize(
    ("options", "scopes"),
    [
        (("--no-services",), ["all"]),
        (("--pricing", "on_demand"), ["on_demand"]),  # a narrowed run leaves disks alone
        (("--pricing", "on_demand", "--services"), ["on_demand", "services"]),
        (("--services-only",), ["services"]),
    ],
)
def test_services_options_choose_the_runs(
    cli: Run, options: tuple[str, ...], scopes: list[str]
) -> None:
    proc = cli("collect", "--provider", "fakedisks", *options, extra_env=DISKS)
    assert proc.returncode == 0, proc.stderr
    assert [scope for _, scope, _ in _runs(cli)] == scopes


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ("--services-only", "--no-services"),
            "--services-only and --no-services contradict each other",
        ),
        (
            ("--services-only", "--pricing", "spot"),
            "--services-only collects no instance prices: drop --pricing",
        ),
        (
            ("--services-only", "--provider", "pricesheet"),
            "pricesheet: collects no storage or egress prices",
        ),
    ],
)
def test_contradicting_services_options_are_usage_errors(
    cli: Run, options: tuple[str, ...], message: str
) -> None:
    proc = cli("collect", "--provider", "fakedisks", *options, extra_env=DISKS)
    assert one_line_error(proc, 2) == f"gpu-tracker: error: {message}"


def test_a_failed_services_run_fails_the_command_with_one_line(cli: Run) -> None:
    env = {**DISKS, "FAKEDISKS_FAIL": "1"}
    proc = cli("collect", "--provider", "fakedisks", extra_env=env)
    assert (
        one_line_error(proc, 1) == "gpu-tracker: error: collection failed for: fakedisks services"
    )
    assert _runs(cli) == [("fakedisks", "all", "succeeded"), ("fakedisks", "services", "failed")]
    failed = json.loads(cli("runs", "--failed", "--format", "json").stdout)
    assert [r["error"] for r in failed] == [
        "CollectorError: fakedisks: the price list answered 503"
    ]


@pytest.fixture
def stubbed_aws(monkeypatch: pytest.MonkeyPatch) -> Pricing:
    """``aws`` as the CLI builds it: the collector whose pricing client is stubbed."""
    aws = Pricing("us-east-1")
    aws.region()
    monkeypatch.setattr(
        AwsCollector, "from_settings", classmethod(lambda cls, settings: aws.collector)
    )
    return aws


def test_aws_storage_and_egress_from_collect_to_services_to_plan(
    cli: Run, stubbed_aws: Pricing, tmp_path: Path
) -> None:
    sheet = tmp_path / "offers.csv"
    sheet.write_text(OFFERS)
    assert cli("import", str(sheet)).returncode == 0
    proc = cli("collect", "--provider", "aws", "--services-only")
    assert proc.returncode == 0, proc.stderr
    stubbed_aws.stubber.assert_no_pending_responses()
    listed = json.loads(cli("services", "--provider", "aws", "--format", "json").stdout)
    assert [
        (r["service"], r["unit"], r["tier_start_gb"], r["tier_end_gb"], r["price"]) for r in listed
    ] == [
        ("block_storage_hdd", "GB-month", "0", None, "0.045"),
        ("block_storage_ssd", "GB-month", "0", None, "0.08"),
        ("egress_internet", "GB", "0", "10240", "0.09"),
        ("egress_internet", "GB", "10240", "51200", "0.085"),
        ("egress_internet", "GB", "51200", "153600", "0.07"),
        ("egress_internet", "GB", "153600", None, "0.05"),
    ]
    rows: list[dict[str, Any]] = json.loads(
        cli(
            "plan", "--gpu", "H100", "--steady-gpus", "8", "--storage-tb", "10",
            "--egress-tb", "15", "--provider", "aws", "--format", "json",
        ).stdout
    )  # fmt: skip
    [row] = rows
    # Disks: 10 TB = 10,240 GB × 0.08 (gp3) = 819.20 a month × 36 = 29,491.20.
    assert row["storage_usd"] == "29491.2"
    # Egress: 15 TB = 15,360 GB a month: 10,240 × 0.09 = 921.60, then 5,120 × 0.085 = 435.20;
    # 1,356.80 a month × 36 = 48,844.80.
    assert row["egress_usd"] == "48844.8"
    # HDD instead: 10,240 × 0.045 (st1) = 460.80 a month × 36 = 16,588.80.
    hdd = json.loads(
        cli(
            "plan", "--gpu", "H100", "--steady-gpus", "8", "--storage-tb", "10",
            "--storage", "hdd", "--provider", "aws", "--format", "json",
        ).stdout
    )  # fmt: skip
    assert hdd[0]["storage_usd"] == "16588.8"
