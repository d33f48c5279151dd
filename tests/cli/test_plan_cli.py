"""``gpu-tracker plan`` and ``services`` through the real CLI, on both engines.

Every figure is worked out by hand from the two sheets below (arithmetic in comments).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.cli.test_cli import one_line_error
from tests.conftest import Run

OFFER_SHEET = """provider,instance_type,region,zone,pricing,payment_option,gpu_model,gpu_count,price_per_hour,currency
aws,p5.48xlarge,us-east-1,,on_demand,,H100 SXM,8,55.04,USD
aws,p5.48xlarge,us-east-1,us-east-1a,spot,,H100 SXM,8,16.512,USD
aws,p5.48xlarge,us-east-1,,reserved_1y,no_upfront,H100 SXM,8,35.00,USD
aws,p5.48xlarge,us-east-1,,reserved_3y,all_upfront,H100 SXM,8,20.00,USD
lambda,gpu_8x_h100_sxm5,us-east-1,,on_demand,,H100 SXM,8,23.92,USD
scaleway,H100-SXM-8-80G,fr-par-2,,on_demand,,H100 SXM,8,20.00,EUR
aws,g5.xlarge,us-east-1,,on_demand,,A10G,1,1.006,USD
"""
SERVICE_SHEET = """provider,region,service,unit,price,currency,tier_start_gb,tier_end_gb
aws,us-east-1,block_storage_ssd,GB-month,0.08,USD,0,
aws,us-east-1,egress_internet,GB,0.09,USD,0,10240
aws,us-east-1,egress_internet,GB,0.085,USD,10240,51200
aws,us-east-1,egress_internet,GB,0.07,USD,51200,
scaleway,fr-par-2,block_storage_ssd,GB-month,0.086,EUR,0,
scaleway,fr-par-2,egress_internet,GB,0.01,EUR,0,
"""
EUR = {"GPU_TRACKER_FX_RATES": '{"EUR": "1.05"}'}
DEMAND = (
    "--gpu", "H100", "--steady-gpus", "16", "--burst-gpu-hours", "1000",
    "--interruptible", "0.5", "--spot-overhead", "0.1", "--storage-tb", "10",
    "--egress-tb", "15", "--migration-usd", "5000", "--current-provider", "lambda",
)  # fmt: skip


@pytest.fixture
def stocked(cli: Run, tmp_path: Path) -> Run:
    offers, services = tmp_path / "offers.csv", tmp_path / "services.csv"
    offers.write_text(OFFER_SHEET)
    services.write_text(SERVICE_SHEET)
    for path in (offers, services):
        proc = cli("import", str(path))
        assert proc.returncode == 0, proc.stderr
    return cli


def plans(cli: Run, *args: str) -> list[dict[str, object]]:
    proc = cli("plan", *DEMAND, "--format", "json", *args, extra_env=EUR)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_plan_ranks_every_provider_with_hand_worked_totals(stocked: Run) -> None:
    rows = plans(stocked)
    assert [(r["rank"], r["provider"], r["incomplete"]) for r in rows] == [
        (1, "scaleway", []),
        (2, "aws", []),
        (3, "lambda", ["storage", "egress"]),
    ]
    scw, aws, lam = rows
    # scaleway, 20 EUR/h × 1.05 = 21 USD/h, on-demand only, 2 instances:
    # steady 21 × 730 × 36 × 2 = 1,103,760; burst (no spot) 36,000 GPU-h × 21/8 = 94,500;
    # disks 10,240 GB × 0.086 × 1.05 (0.0903) = 924.672 a month × 36 = 33,288.192;
    # egress 15,360 GB × 0.01 × 1.05 (0.0105) = 161.28 × 36 = 5,806.08; migration 5,000.
    assert scw["steady_usd"] == "1103760"
    assert scw["burst_usd"] == "94500"
    assert scw["storage_usd"] == "33288.19"
    assert scw["egress_usd"] == "5806.08"
    assert scw["migration_usd"] == "5000"
    # 1,103,760 + 94,500 + 33,288.19 + 5,806.08 + 5,000 = 1,242,354.27 (/36 = 34,509.84)
    assert scw["total_usd"] == "1242354.27"
    assert scw["monthly_usd"] == "34509.84"
    assert scw["savings_pct"] == "0"  # all on-demand already
    assert scw["commitments"] == [{"pricing": "on_demand", "from_month": 1, "months": 36}]
    # aws: per instance 3y = 20 × 26,280 = 525,600 < 3 × 1y (919,800) < on-demand
    # (1,446,451.20): steady 2 × 525,600 = 1,051,200; burst 18,000 × 2.064 × 1.1
    # + 18,000 × 6.88 = 164,707.20; disks 29,491.20; egress (921.60 + 435.20) × 36 = 48,844.80
    assert aws["steady_usd"] == "1051200"
    assert aws["burst_usd"] == "164707.2"
    assert aws["total_usd"] == "1299243.2"  # + 5,000 migration
    assert aws["commitments"][0]["pricing"] == "reserved_3y"  # type: ignore[index]
    assert aws["break_even_utilization"] == "0.3634"  # 525,600 / 1,446,451.20
    # lambda is where we run: no migration; no disk or egress prices: null, no total.
    assert lam["migration_usd"] == "0"
    assert lam["storage_usd"] is None and lam["total_usd"] is None
    assert lam["steady_usd"] == "1257235.2"  # 23.92 × 730 × 36 × 2


def test_plan_in_another_currency(stocked: Run) -> None:
    [scw, *_] = plans(stocked, "--currency", "EUR")
    assert scw["display_currency"] == "EUR"
    assert scw["total_usd"] == "1242354.27"  # ranked and summed in USD either way
    # 1,242,354.27 / 1.05 = 1,183,194.542 -> 1,183,194.54 EUR
    assert Decimal(str(scw["display_total"])) == Decimal("1183194.54")


def test_plan_explain_shows_the_arithmetic(stocked: Run) -> None:
    proc = stocked("plan", *DEMAND, "--explain", extra_env=EUR)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Plan 1: scaleway fr-par-2 H100-SXM-8-80G (8× H100-SXM), 36 months" in out
    assert "Steady: 16 GPUs on 8 GPUs an instance = 2 instances" in out
    assert "months 1-36: on-demand 21.00 USD/h × 26,280 h = 551,880.00 USD" in out
    assert "= 551,880.00 USD an instance × 2 = 1,103,760.00 USD" in out
    assert "36,000 GPU-h on-demand at 2.62 USD/GPU-h = 94,500.00 USD" in out  # 2.625
    assert "Storage: 10 TB = 10,240 GB block_storage_ssd = 924.67 USD a month × 36" in out
    assert "Migration: 5,000.00 USD once, moving from lambda" in out
    assert "Total: 1,242,354.27 USD = 34,509.84 USD a month over 36" in out


def test_the_horizon_decides_the_commitment(stocked: Run) -> None:
    # aws per instance: on-demand 55.04 × 730 = 40,179.20 a month, 1y 35 × 8,760 = 306,600,
    # 3y 20 × 26,280 = 525,600. Over 6 months on-demand (241,075.20) beats any term.
    [aws] = plans(stocked, "--months", "6", "--provider", "aws")
    assert aws["commitments"] == [{"pricing": "on_demand", "from_month": 1, "months": 6}]
    assert aws["steady_usd"] == "482150.4"  # 2 × 241,075.20
    # Over 18: the 3y term, paid in full past the horizon (525,600), beats 1y + 6 months
    # on-demand (306,600 + 241,075.20 = 547,675.20), two 1y terms (613,200) and 18 months
    # on-demand (723,225.60).
    [aws] = plans(stocked, "--months", "18", "--provider", "aws")
    assert aws["commitments"] == [
        {
            "pricing": "reserved_3y",
            "from_month": 1,
            "months": 18,
            "term_months": 36,
            "payment_option": "all_upfront",
        }
    ]
    assert aws["steady_usd"] == "1051200"  # 2 × 525,600


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--gpu", "H100"), "no demand"),
        (("--gpu", "H100", "--steady-gpus", "8", "--interruptible", "2"), "--interruptible"),
        (("--gpu", "H100", "--steady-gpus", "-8"), "--steady-gpus: must not be negative"),
        (("--gpu", "H100", "--steady-gpus", "8", "--months", "0"), "--months: 0 is not 1-120"),
        (("--gpu", "H100", "--steady-gpus", "eight"), "--steady-gpus: not a number"),
        (("--gpu", "H1000", "--steady-gpus", "8"), "unknown GPU"),
        (("--gpu", "H100", "--steady-gpus", "8", "--storage", "tape"), "--storage"),
    ],
)
def test_bad_input_is_one_line_exit_2(stocked: Run, args: tuple[str, ...], says: str) -> None:
    line = one_line_error(stocked("plan", *args), 2)
    assert says in line
    assert stocked("plan", *args).stdout == ""


def test_service_prices_are_compact_series(stocked: Run, tmp_path: Path) -> None:
    listed = json.loads(stocked("services", "--format", "json").stdout)
    assert len(listed) == 6
    assert listed[0] | {"since": None, "last_seen": None} == {
        "provider": "aws",
        "region": "us-east-1",
        "service": "block_storage_ssd",
        "unit": "GB-month",
        "tier_start_gb": "0",
        "tier_end_gb": None,
        "price": "0.08",
        "currency": "USD",
        "source": "import:services.csv",
        "since": None,
        "last_seen": None,
    }
    # The same sheet again: nothing new. Then one price changed and one tier dropped from
    # a complete sheet: one interval ends and one opens; the dropped tier ends.
    again = tmp_path / "services.csv"
    proc = stocked("import", str(again))
    assert proc.returncode == 0, proc.stderr
    assert "6 service prices read: 0 new, 0 changed, 6 unchanged, 0 ended" in proc.stdout
    lines = again.read_text().splitlines()
    lines[1] = lines[1].replace("0.08", "0.09")
    again.write_text("\n".join(lines[:-1]) + "\n")
    proc = stocked("import", "--full", str(again))
    assert proc.returncode == 0, proc.stderr
    assert "5 service prices read: 0 new, 1 changed, 4 unchanged, 1 ended" in proc.stdout
    now = json.loads(stocked("services", "--format", "json", "--provider", "aws").stdout)
    assert [r["price"] for r in now if r["service"] == "block_storage_ssd"] == ["0.09"]
    scw = json.loads(stocked("services", "--format", "json", "--provider", "scaleway").stdout)
    assert [r["service"] for r in scw] == ["block_storage_ssd"]


def test_a_bad_service_row_is_named_and_the_rest_load(cli: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "svc.csv"
    sheet.write_text(
        "provider,region,service,unit,price,currency\n"
        "aws,us-east-1,block_storage_ssd,GB-month,0.08,USD\n"
        "aws,us-east-1,tape_storage,GB-month,0.001,USD\n"
        "aws,us-east-1,egress_internet,GB-month,0.09,USD\n"
    )
    proc = cli("import", str(sheet))
    line = one_line_error(proc, 1)
    assert line == f"gpu-tracker: error: 2 row(s) of {sheet} rejected; 1 other row was loaded"
    assert f"{sheet}:3: service: 'tape_storage' is not one of" in proc.stderr
    assert f"{sheet}:4: unit: egress_internet is priced per GB" in proc.stderr
    listed = json.loads(cli("services", "--format", "json").stdout)
    assert [r["service"] for r in listed] == ["block_storage_ssd"]


def test_plan_at_a_past_time_uses_the_prices_then(cli: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "history.csv"
    sheet.write_text(
        "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency,"
        "observed_at,os\n"
        "lambda,gpu_8x_h100_sxm5,us-east-1,on_demand,H100 SXM,8,27.92,USD,2026-06-01T00:00:00Z,\n"
        "lambda,gpu_8x_h100_sxm5,us-east-1,on_demand,H100 SXM,8,23.92,USD,2026-09-01T00:00:00Z,\n"
        "lambda,gpu_8x_h100_win,us-east-1,on_demand,H100 SXM,8,1.00,USD,2026-06-01T00:00:00Z,windows\n"
    )
    assert cli("import", str(sheet)).returncode == 0
    args = ("--gpu", "H100", "--steady-gpus", "8", "--months", "12", "--format", "json")
    # The Windows instance is not a fleet's OS: left out however cheap.
    [now] = json.loads(cli("plan", *args).stdout)
    assert now["instance_type"] == "gpu_8x_h100_sxm5"
    assert now["steady_usd"] == "209539.2"  # 23.92 × 730 × 12
    [then] = json.loads(cli("plan", *args, "--at", "2026-07-01").stdout)
    assert then["steady_usd"] == "244579.2"  # 27.92 × 730 × 12
    proc = cli("plan", *args, "--at", "2026-01-01")  # before any price
    assert one_line_error(proc, 1).endswith("of H100 matches these filters at 2026-01-01 00:00 UTC")
    assert "--at 'soon'" in one_line_error(cli("plan", *args, "--at", "soon"), 2)


SAVED = """
[plans.fleet]
description = "the question of DEMAND, kept"
gpu = ["H100"]
steady_gpus = 16
burst_gpu_hours = 1000
interruptible = 0.5
spot_overhead = 0.1
storage_tb = 10
egress_tb = 15
migration_usd = 5000
current_provider = "lambda"
"""


def test_a_saved_plan_runs_by_name(stocked: Run, tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(SAVED)
    args = ("plan", "--profiles-file", str(profiles), "--saved", "fleet", "--format", "json")
    proc = stocked(*args, extra_env=EUR)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    # The same question as DEMAND, so the same hand-worked totals as the first test:
    # scaleway 1,242,354.27, aws 1,299,243.20, lambda incomplete (no total).
    assert [(r["provider"], r["total_usd"]) for r in rows] == [
        ("scaleway", "1242354.27"),
        ("aws", "1299243.2"),
        ("lambda", None),
    ]
    # Output options still apply: --top, --currency (1,242,354.27 / 1.05 = 1,183,194.54 EUR).
    proc = stocked(*args, "--top", "1", "--currency", "EUR", extra_env=EUR)
    [scw] = json.loads(proc.stdout)
    assert Decimal(str(scw["display_total"])) == Decimal("1183194.54")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--saved", "nope"), "--saved: no plan 'nope' in {profiles} (saved plans: fleet)"),
        (("--saved", "fleet", "--gpu", "A100"), "--saved takes the plan's own --gpu"),
        (("--saved", "fleet", "--steady-gpus", "8"), "--saved takes the plan's own --steady-gpus"),
        ((), "--gpu: required, or --saved NAME"),
    ],
)
def test_saved_plan_misuse_is_one_line_exit_2(
    stocked: Run, tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(SAVED)
    proc = stocked("plan", "--profiles-file", str(profiles), *args)
    assert says.format(profiles=profiles) in one_line_error(proc, 2)


FABRIC_SHEET = """provider,instance_type,region,zone,pricing,gpu_model,gpu_count,price_per_hour,currency,interconnect,fabric,network_gbps
pcie,h100-pcie-1x,us-east-1,,on_demand,H100 PCIe,1,2.00,USD,pcie,ethernet,25
aws,p5.48xlarge,us-east-1,,on_demand,H100 SXM,8,20.00,USD,nvlink,efa,3200
"""


def test_plan_fabric_required_keeps_the_fleet_on_rdma_nodes(cli: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "fabric.csv"
    sheet.write_text(FABRIC_SHEET)
    assert cli("import", str(sheet)).returncode == 0
    args = ("plan", "--gpu", "H100", "--steady-gpus", "16", "--months", "1", "--format", "json")
    anyway = json.loads(cli(*args).stdout)
    # Without the fabric: 16 single-GPU boxes × 2.00 × 730 h = 23,360 beat
    # 2 p5 nodes × 20.00 × 730 h = 29,200.
    assert [(r["instance_type"], r["instances"], r["steady_usd"]) for r in anyway] == [
        ("h100-pcie-1x", 16, "23360"),
        ("p5.48xlarge", 2, "29200"),
    ]
    required = json.loads(cli(*args, "--fabric", "required").stdout)
    assert [(r["instance_type"], r["fabric"], r["steady_usd"]) for r in required] == [
        ("p5.48xlarge", "efa", "29200")
    ]
    bad = cli(*args, "--fabric", "fast")
    assert bad.returncode == 2
    assert "--fabric: 'fast' is not any or required" in bad.stderr
