"""End to end through the CLI entry point (`tracker.cli:main`, in process; the bare command and
the lock test run the installed console script), on SQLite and Postgres."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import SCRIPT, Run

HEADER = (
    "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,"
    "vcpus,memory_gib,price_per_hour,currency"
)
SHEET = "\n".join(
    [
        HEADER,
        "aws,p4d.24xlarge,us-east-1,,on_demand,A100,8,40,96,1152,32.7726,USD",
        "aws,g5.xlarge,us-east-1,,on_demand,A10G,1,24,4,16,1.006,USD",
        "aws,g5.xlarge,us-east-1,us-east-1a,spot,A10G,1,24,4,16,0.4312,USD",
        "gcp,a2-highgpu-1g,us-central1,,on_demand,nvidia-tesla-a100,1,40,12,85,3.673385,USD",
        "lambda,gpu_8x_h100_sxm5,us-east-1,,on_demand,H100 SXM,8,80,208,1800,23.92,USD",
        "acme,weird.1,eu-1,,on_demand,Quantum Flux 9000,2,,8,64,4.50,USD",
    ]
)
OFFER_KEYS = {
    "provider", "instance_type", "region", "zone", "pricing", "payment_option", "gpu_model",
    "gpu_count", "gpu_memory_gib", "vcpus", "memory_gib", "interconnect", "price_per_hour",
    "currency", "price_per_hour_usd", "price_per_gpu_hour_usd", "first_seen", "last_seen",
}  # fmt: skip


def one_line_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr
    assert lines[-1].startswith("gpu-tracker: error: ")
    return lines[-1]


def offers(cli: Run, *args: str) -> list[dict[str, object]]:
    proc = cli("offers", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_collect_price_sheet_then_list_offers(cli: Run, sheet: Path) -> None:
    proc = cli(
        "collect",
        "--provider",
        "pricesheet",
        extra_env={"GPU_TRACKER_PRICESHEET__PATH": str(sheet)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "pricesheet" in proc.stdout and "succeeded" in proc.stdout

    rows = offers(cli)
    assert len(rows) == 6
    assert all(set(r) >= OFFER_KEYS for r in rows)
    assert [r["price_per_hour_usd"] for r in rows] == sorted(
        (r["price_per_hour_usd"] for r in rows), key=float
    )
    p4d = next(r for r in rows if r["instance_type"] == "p4d.24xlarge")
    assert p4d["price_per_hour"] == "32.7726" and p4d["currency"] == "USD"
    assert p4d["gpu_model"] == "A100-40GB" and p4d["gpu_count"] == "8"
    assert p4d["price_per_gpu_hour_usd"] == "4.096575"
    assert str(p4d["first_seen"]).endswith("Z")

    def names(*args: str) -> set[object]:
        return {r["instance_type"] for r in offers(cli, *args)}

    assert names("--gpu", "A100-40GB") == {"p4d.24xlarge", "a2-highgpu-1g"}
    assert names("--gpu", "a10g") == {"g5.xlarge"}
    assert names("--provider", "gcp") == {"a2-highgpu-1g"}
    assert names("--region", "us-central1", "--region", "eu-1") == {"a2-highgpu-1g", "weird.1"}
    assert [r["zone"] for r in offers(cli, "--pricing", "spot")] == ["us-east-1a"]
    assert names("--min-vram", "80") == {"gpu_8x_h100_sxm5"}
    assert names("--min-gpus", "8") == {"p4d.24xlarge", "gpu_8x_h100_sxm5"}
    per_gpu = offers(cli, "--sort", "price_per_gpu", "--limit", "2")
    assert [r["instance_type"] for r in per_gpu] == ["g5.xlarge", "g5.xlarge"]
    assert [r["pricing"] for r in per_gpu] == ["spot", "on_demand"]

    csv_out = cli("offers", "--format", "csv", "--provider", "aws")
    assert csv_out.returncode == 0
    assert csv_out.stdout.splitlines()[0].startswith("provider,instance_type,region,zone,pricing")
    assert len(csv_out.stdout.splitlines()) == 4
    table = cli("offers", "--gpu", "H100-SXM")
    assert table.returncode == 0 and "gpu_8x_h100_sxm5" in table.stdout

    unknown = cli("gpus", "--unknown", "--format", "json")
    assert json.loads(unknown.stdout) == [
        {"raw_name": "Quantum Flux 9000", "provider": "acme", "series": 1,
         "example_instance_type": "weird.1"}
    ]  # fmt: skip


def test_reimport_with_changed_price_shows_in_history(
    cli: Run, sheet: Path, tmp_path: Path
) -> None:
    assert cli("import", str(sheet)).returncode == 0
    changed = tmp_path / "changed.csv"
    changed.write_text(SHEET.replace("32.7726", "30.00") + "\n")
    assert cli("import", str(changed)).returncode == 0
    proc = cli("history", "-p", "aws", "-i", "p4d.24xlarge", "-r", "us-east-1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    points = json.loads(proc.stdout)
    assert [p["price_per_hour"] for p in points] == ["32.7726", "30"]
    assert points[0]["ended_at"] == points[1]["first_seen"]
    runs = json.loads(cli("runs", "--format", "json").stdout)
    assert [r["status"] for r in runs] == ["succeeded", "succeeded"]


def test_backfilled_sheet_lands_in_time_order(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    base = {
        "provider": "aws", "instance_type": "g5.xlarge", "region": "us-east-1",
        "zone": "us-east-1a", "pricing": "spot", "gpu_model": "A10G", "gpu_count": 1,
        "currency": "USD",
    }  # fmt: skip
    path.write_text(
        json.dumps(
            [
                {**base, "price_per_hour": "0.45", "observed_at": "2026-03-02T00:00:00Z"},
                {**base, "price_per_hour": "0.40", "observed_at": "2026-03-01T00:00:00Z"},
                {**base, "price_per_hour": "0.40", "observed_at": "2026-03-01T12:00:00Z"},
            ]
        )
    )
    assert cli("import", str(path)).returncode == 0
    proc = cli("history", "-p", "aws", "-i", "g5.xlarge", "-r", "us-east-1", "--pricing", "spot",
               "--format", "json")  # fmt: skip
    points = json.loads(proc.stdout)
    assert [(p["price_per_hour"], p["first_seen"], p["last_seen"]) for p in points] == [
        ("0.4", "2026-03-01T00:00:00Z", "2026-03-01T12:00:00Z"),
        ("0.45", "2026-03-02T00:00:00Z", "2026-03-02T00:00:00Z"),
    ]


def test_bad_rows_are_reported_with_file_and_line(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        "\n".join(
            [
                HEADER,
                "aws,g5.xlarge,us-east-1,,on_demand,A10G,1,24,4,16,1.006,USD",
                "aws,g5.2xlarge,us-east-1,,on_demand,A10G,1,24,8,32,-1.212,USD",
                "aws,g5.4xlarge,us-east-1,,hourly,A10G,1,24,16,64,1.624,USD",
                "aws,g5.8xlarge,us-east-1,,on_demand,A10G,1,24,32,128,2.448,EUR",
            ]
        )
        + "\n"
    )
    proc = cli("import", str(path))
    assert one_line_error(proc, 1).endswith(
        "2 row(s) of " + str(path) + " rejected; 2 other rows were loaded"
    )
    assert f"{path}:3: price_per_hour: must be > 0" in proc.stderr
    assert f"{path}:4: pricing: 'hourly' is not one of" in proc.stderr
    # a EUR row needs no rate to load (stored in EUR); the USD view leaves it out and says so
    listing = cli("offers", "--format", "json")
    assert [r["instance_type"] for r in json.loads(listing.stdout)] == ["g5.xlarge"]
    assert "1 offer left out of the USD view: no exchange rate for EUR (1)" in listing.stderr


def test_usage_errors_are_one_line_with_exit_code_2(cli: Run, tmp_path: Path) -> None:
    msg = one_line_error(cli("import", str(tmp_path / "missing.csv")), 2)
    assert "price sheet not found" in msg
    msg = one_line_error(cli("offers", "--pricing", "hourly"), 2)
    assert "--pricing" in msg and "hourly" in msg
    msg = one_line_error(cli("collect", "--provider", "nosuchcloud"), 2)
    assert "--provider 'nosuchcloud': unknown provider" in msg
    msg = one_line_error(cli("offers", extra_env={"GPU_TRACKER_DATABASE_URL": "mysql://x/y"}), 2)
    assert "unsupported database" in msg


def test_unreachable_database_is_one_line(cli: Run) -> None:
    url = "postgresql://postgres:s3cret@127.0.0.1:1/nowhere"
    proc = cli("offers", extra_env={"GPU_TRACKER_DATABASE_URL": url})
    msg = one_line_error(proc, 1)
    assert (
        "cannot use database postgresql://postgres:***@127.0.0.1:1/nowhere: connection failed"
        in msg
    )
    assert "s3cret" not in proc.stderr


def test_unconfigured_provider_is_skipped_and_explained(cli: Run) -> None:
    proc = cli("collect", "--provider", "pricesheet")
    assert proc.returncode == 0, proc.stderr
    assert "pricesheet: skipped: no price sheet configured" in proc.stderr
    listing = json.loads(cli("providers", "--format", "json").stdout)
    sheet = next(p for p in listing if p["provider"] == "pricesheet")
    assert sheet["configured"] is False and "pricesheet.path" in sheet["status"]


def test_providers_says_which_parts_of_aws_run_without_credentials(cli: Run) -> None:
    """Issue 40: with no AWS credentials (the isolated environment has none), AWS is ready
    in part, on-demand and reserved from the public bulk files, and says what needs keys."""
    listing = json.loads(cli("providers", "--format", "json").stdout)
    aws = next(p for p in listing if p["provider"] == "aws")
    assert aws["status"] == (
        "ready without credentials: on-demand and reserved from the public bulk offer files;"
        " spot, savings plans, capacity blocks and EBS/egress need credentials"
    ), aws


def test_bad_config_file_names_the_setting(cli: Run, tmp_path: Path) -> None:
    config = tmp_path / "tracker.toml"
    config.write_text('[aws]\nspot_lookback_days = "many"\n')
    msg = one_line_error(cli("--config", str(config), "offers"), 2)
    assert str(config) in msg and "aws.spot_lookback_days" in msg


def test_a_setting_that_does_nothing_is_refused(cli: Run, tmp_path: Path) -> None:
    """``alerts_path`` was accepted and read by nothing: a config naming it fails loudly."""
    config = tmp_path / "tracker.toml"
    config.write_text('alerts_path = "alerts.toml"\n')
    msg = one_line_error(cli("--config", str(config), "offers"), 2)
    assert f"invalid configuration in {config}: alerts_path: Extra inputs are not permitted" in msg


def test_manual_collect_waits_for_no_one_while_serve_holds_the_job(
    pg_url: str, tmp_path: Path, sheet: Path
) -> None:
    """On Postgres, `collect` takes the same advisory locks as `serve` and skips if held."""
    from tracker.store import migrate
    from tracker.store.engine import make_engine
    from tracker.store.locks import locks_for

    engine = make_engine(pg_url)
    migrate.upgrade(engine)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env |= {"GPU_TRACKER_DATABASE_URL": pg_url, "GPU_TRACKER_PRICESHEET__PATH": str(sheet)}
    command = [SCRIPT, "collect", "--provider", "pricesheet"]
    with locks_for(engine).hold("pricesheet:standard") as held:
        assert held
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "pricesheet: skipped: a scheduled run of it is in progress" in proc.stderr
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "succeeded" in proc.stdout
    engine.dispose()


def test_one_failing_collector_does_not_stop_the_others(cli: Run, sheet: Path) -> None:
    root = str(Path(__file__).resolve().parents[2])
    proc = cli(
        "collect",
        "--provider",
        "broken",
        "--provider",
        "pricesheet",
        extra_env={
            "GPU_TRACKER_PLUGINS": json.dumps(
                {"broken": "tests.cli.broken_collector:BrokenCollector"}
            ),
            "GPU_TRACKER_PRICESHEET__PATH": str(sheet),
            "PYTHONPATH": root,
        },
    )
    message = one_line_error(proc, 1)
    assert message == "gpu-tracker: error: collection failed for: broken"
    assert "HTTP 503" in proc.stdout  # the summary table carries the error
    providers = {r["provider"] for r in offers(cli)}
    assert "broken" not in providers  # its half-run left nothing
    assert {"aws", "gcp", "lambda", "acme"} <= providers  # the sheet still loaded
    runs = json.loads(cli("runs", "--format", "json").stdout)
    assert sorted((r["provider"], r["status"]) for r in runs) == [
        ("broken", "failed"),
        ("pricesheet", "succeeded"),
    ]
    # --failed: only what failed, each with its error (not a row of zero counts).
    failed = json.loads(cli("runs", "--failed", "--format", "json").stdout)
    assert [(r["provider"], r["status"]) for r in failed] == [("broken", "failed")]
    assert "HTTP 503" in failed[0]["error"]
    table = cli("runs", "--failed").stdout
    assert "broken" in table and "HTTP 503" in table and "pricesheet" not in table
    header = next(line for line in table.splitlines() if "provider" in line)
    assert "error" in header and "offers" not in header and "changed" not in header


def test_history_answers_the_price_at_a_time(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "dated.csv"
    path.write_text(
        HEADER
        + ",observed_at\n"
        + "aws,p5.48xlarge,us-east-1,,on_demand,H100,8,80,192,2048,98.32,USD,2025-01-01T00:00:00Z\n"
        + "aws,p5.48xlarge,us-east-1,,on_demand,H100,8,80,192,2048,55.04,USD,2025-06-05T00:00:00Z\n"
    )
    assert cli("import", str(path)).returncode == 0

    def price_at(when: str) -> list[object]:
        proc = cli("history", "-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1",
                   "--at", when, "--format", "json")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return [p["price_per_hour"] for p in json.loads(proc.stdout)]

    before = cli("history", "-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1",
                 "--at", "2024-12-31T23:59:59", "--format", "json")  # fmt: skip
    # nothing was in force yet: exit 1, one line saying so and since when data exists
    assert before.stdout == ""
    assert one_line_error(before, 1) == (
        "gpu-tracker: error: no price of aws p5.48xlarge us-east-1 on_demand in force at 2024-12-31T23:59:59Z; "
        "data since 2025-01-01 00:00 UTC"
    )
    assert price_at("2025-03-01T00:00:00") == ["98.32"]
    assert price_at("2025-06-05T00:00:00") == ["55.04"]
    assert price_at("2026-01-01T00:00:00+02:00") == ["55.04"]
    msg = one_line_error(cli("history", "-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1",
                             "--at", "last tuesday"), 2)  # fmt: skip
    assert "--at" in msg


def test_bare_command_shows_help_not_an_error() -> None:
    proc = subprocess.run([SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("Usage: gpu-tracker [OPTIONS] COMMAND")
    assert "\n  collect " in proc.stderr and "\n  recommend " in proc.stderr
