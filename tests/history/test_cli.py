"""``history``, ``compare`` and ``export`` through the CLI entry point (a terminal: the script)."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import SCRIPT, Run, cli_runner
from tests.history.conftest import build_day_history
from tracker.store import migrate
from tracker.store.engine import make_engine

WINDOW = ("--since", "2026-03-01T09:00:00Z", "--until", "2026-03-01T16:00:00Z")
P5 = ("-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1")


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    engine = make_engine(db_url)
    migrate.upgrade(engine)
    build_day_history(engine)
    engine.dispose()
    return cli_runner(db_url, tmp_path)


def on_a_terminal(db_url: str, workdir: Path, *args: str) -> str:
    """What ``gpu-tracker ARGS`` prints when its stdout is a terminal (a pseudo-terminal)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env.update(GPU_TRACKER_DATABASE_URL=db_url, XDG_DATA_HOME=str(workdir / "data"),
               XDG_CONFIG_HOME=str(workdir / "config"), COLUMNS="120")  # fmt: skip
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [SCRIPT, *args], env=env, stdout=follower, stderr=subprocess.PIPE, text=True,
            timeout=120, cwd=workdir,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other end is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


def as_json(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_history_compare_export_end_to_end(cli: Run, db_url: str, tmp_path: Path) -> None:
    steps = as_json(cli("history", *P5, *WINDOW, "--resample", "1h", "--format", "json"))
    assert steps[0] == {
        "time": "2026-03-01T09:00:00Z", "price_per_hour": "98.32", "currency": "USD",
        "price_per_hour_usd": "98.32", "provider": "aws", "instance_type": "p5.48xlarge",
        "region": "us-east-1", "zone": "", "pricing": "on_demand", "payment_option": "",
        # issue 42: no discount rule configured, so the net price is the list one
        "net_price_per_hour": "98.32", "net_price_per_hour_usd": "98.32", "discount": None,
    }  # fmt: skip
    # see test_steps: old price until 10:30, delisted 13:00–15:00
    assert [s["price_per_hour"] for s in steps] == [
        "98.32", "98.32", "80", "80", None, None, "80", "80"
    ]  # fmt: skip
    gpu = as_json(cli("history", "--gpu", "H100", *WINDOW, "--resample", "1h", "--format", "json"))
    assert [(g["provider"], g["price_per_gpu_hour_usd"]) for g in gpu] == [
        ("lambda", "12"), ("lambda", "12"), ("aws", "10"), ("aws", "10"),
        ("azure", "11.5"), ("azure", "11.5"), ("aws", "10"), ("aws", "10"),
    ]  # fmt: skip
    csv_out = cli("history", "--gpu", "h100-sxm", "--pricing", "spot", *WINDOW,
                  "--resample", "4h", "--format", "csv")  # fmt: skip
    assert csv_out.returncode == 0, csv_out.stderr
    spot = pd.read_csv(io.StringIO(csv_out.stdout), dtype=str)
    # 4-hour steps from the epoch: 12:00 and 16:00; 40.00 / 8 GPUs = 5
    assert list(spot["time"]) == ["2026-03-01T12:00:00Z", "2026-03-01T16:00:00Z"]
    assert list(spot["price_per_gpu_hour_usd"]) == ["5", "5"]
    plot = tmp_path / "p5.svg"
    table = cli(
        "history", *P5, "--since", "2026-02-27", "--until", "2026-03-03", "--plot", str(plot)
    )
    assert table.returncode == 0, table.stderr
    assert "p5.48xlarge" in table.stdout and plot.read_text().lstrip().startswith("<?xml")
    # on a terminal a sparkline follows the table: 12, 12, 10, 10, 11.5, 11.5, 10, 10
    # (low 10, high 12: 12 → █, 10 → ▁, 11.5 → (1.5/2) × 7 = 5.25 → ▆)
    assert "██▁▁▆▆▁▁" in on_a_terminal(
        db_url, tmp_path, "history", "--gpu", "H100", *WINDOW, "--resample", "1h"
    )
    # intervals (the view without --resample) still work, now limited to the window
    intervals = as_json(cli("history", *P5, "--since", "2026-03-01T14:00:00Z", "--format", "json"))
    assert [(i["price_per_hour"], i["first_seen"]) for i in intervals] == [
        ("80", "2026-03-01T15:00:00Z")
    ]

    compare = as_json(cli("compare", "--gpu", "H100", "--format", "json"))
    assert {(c["gpu_model"], c["provider"]) for c in compare} == {
        ("H100-SXM", "aws"), ("H100-PCIE", "lambda"), ("H100-NVL", "azure")
    }  # fmt: skip

    target = tmp_path / "out.parquet"
    done = cli(
        "export", "--since", "2026-03-01", "--until", "2026-03-02", "--gpu", "H100", str(target)
    )
    assert done.returncode == 0, done.stderr
    frame = pd.read_parquet(target)
    # H100 intervals: aws on-demand ×3, aws spot, lambda, azure = 6
    assert len(frame) == 6 and set(frame["gpu_model"]) == {"H100-SXM", "H100-PCIE", "H100-NVL"}


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_bad_input_is_one_line_and_exit_2(cli: Run, tmp_path: Path) -> None:
    cases = {
        "unknown GPU": (("history", "--gpu", "H1000"), "--gpu 'h1000': unknown GPU"),
        "since after until": (
            ("history", "--gpu", "H100", "--since", "2026-03-02", "--until", "2026-03-01"),
            "--since 2026-03-02T00:00:00Z is not before --until 2026-03-01T00:00:00Z",
        ),
        "bad date": (("history", *P5, "--since", "last week"), "--since 'last week': not a time"),
        "bad resample": (("history", *P5, "--resample", "1 fortnight"), "--resample '1 fortnight'"),
        "no such offer": (
            ("history", "-p", "aws", "-i", "p9.huge", "-r", "us-east-1", "--resample", "1d"),
            "no stored offer aws p9.huge us-east-1 on_demand",
        ),
        "unwritable plot": (
            ("history", *P5, "--plot", str(tmp_path / "no" / "such" / "dir" / "p.png")),
            "does not exist",
        ),
        "export format": (("export", "--since", "7d", str(tmp_path / "x.xlsx")), "--format csv"),
        "gpu with one offer's options": (
            ("history", "--gpu", "H100", "--zone", "us-east-1a"),
            "--gpu reads many offers",
        ),
        "no offer named": (("history", "-p", "aws"), "history needs --gpu G, or one --provider"),
    }
    for name, (args, expected) in cases.items():
        proc = cli(*args)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == 2, (name, proc.stderr)
        assert len(lines) == 1 and "Traceback" not in proc.stderr, (name, proc.stderr)
        assert lines[0].startswith("gpu-tracker: error: ") and expected in lines[0], (name, lines)
    (tmp_path / "dir.png").mkdir()
    proc = cli("history", *P5, "--plot", str(tmp_path / "dir.png"))
    assert proc.returncode == 2 and "dir.png: is a directory" in proc.stderr, proc.stderr
    if os.geteuid() != 0:  # root may write into a read-only folder
        read_only = tmp_path / "ro"
        read_only.mkdir()
        read_only.chmod(0o500)
        try:
            proc = cli("history", *P5, "--plot", str(read_only / "p.png"))
            assert proc.returncode == 2 and "not writable" in proc.stderr, proc.stderr
        finally:
            read_only.chmod(0o700)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_history_without_data_exits_1_in_one_line_and_draws_nothing(
    cli: Run, tmp_path: Path
) -> None:
    plot = tmp_path / "b200.png"
    proc = cli("history", "--gpu", "B200", "--plot", str(plot))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    # a catalog GPU no offer has: no empty axes dated 1970, no file
    assert lines[0].startswith("gpu-tracker: error: no price history for cheapest B200 on_demand")
    assert lines[0].endswith("; nothing stored for it") and not plot.exists()
    # a window that ends before the first observation (2026-03-01 00:00) says since when
    proc = cli("history", *P5, "--since", "2026-02-01", "--until", "2026-02-10",
               "--resample", "1d", "--format", "json")  # fmt: skip
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr.strip() == (
        "gpu-tracker: error: no price history for aws p5.48xlarge us-east-1 on_demand "
        "between 2026-02-01 00:00 UTC and 2026-02-10 00:00 UTC; data since 2026-03-01 00:00 UTC"
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_history_starts_with_its_data_and_ends_at_until(cli: Run) -> None:
    # daily steps from 02-27 to 03-03 12:00: none before the first observation (03-01
    # 00:00), and the last row is the price in force at --until itself (80, since 15:00
    # on 03-01), not only at the midnight before it
    rows = as_json(cli("history", *P5, "--since", "2026-02-27", "--until", "2026-03-03T12:00:00Z",
                       "--resample", "1d", "--format", "json"))  # fmt: skip
    assert [(r["time"], r["price_per_hour"]) for r in rows] == [
        ("2026-03-01T00:00:00Z", "98.32"),
        ("2026-03-02T00:00:00Z", "80"),
        ("2026-03-03T00:00:00Z", "80"),
        ("2026-03-03T12:00:00Z", "80"),
    ]
    table = cli("history", *P5, "--since", "2026-02-27", "--until", "2026-03-03T12:00:00Z",
                "--resample", "1d")  # fmt: skip
    assert table.returncode == 0, table.stderr
    assert "(data since 2026-03-01 00:00 UTC)" in " ".join(table.stdout.split())
