"""Issue 26 points 2-4 as a new user meets them, through the CLI entry point: one-line
errors with nothing on stdout, the same answer to an unknown name in every command,
the times people type, and config paths relative to the config file."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run, cli_runner
from tracker.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "examples" / "quickstart.toml")


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The quick start, run from a directory that is not the repository: the config's
    ``path = "prices.csv"`` must be found next to the config file (point 4)."""
    tmp = tmp_path_factory.mktemp("first-minutes")
    plain = cli_runner(f"sqlite:///{tmp / 'quick.db'}", tmp)

    def run(*args: str, extra_env: dict[str, str] | None = None) -> Any:
        return plain("-c", CONFIG, *args, extra_env=extra_env)

    proc = run("collect")
    assert proc.returncode == 0, proc.stderr
    assert "pricesheet" in proc.stdout and "succeeded" in proc.stdout
    return run


def failed(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The one stderr line of a command that failed before its answer (stdout empty)."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gpu-tracker: error: ")
    return lines[0]


def test_a_binary_file_import_is_one_line_and_no_table(quick: Run, tmp_path: Path) -> None:
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes([0x83, 0x41, 0xFF, 0x10]) * 50)  # 0x83 starts no UTF-8 character
    line = failed(quick("import", str(binary)), 1)
    # no "ERROR tracker.collect: ..." line before it, no runs table after it
    assert line == (
        f"gpu-tracker: error: import failed: CollectorError: {binary}: not UTF-8 text "
        "(byte 0x83 at offset 0); nothing was loaded"
    )
    # the failure is still recorded in the run log (-v shows the runner's own line too)
    runs = json.loads(quick("runs", "-f", "json").stdout)
    assert runs[0]["status"] == "failed" and runs[0]["source"] == "import:binary.csv"
    verbose = quick("-v", "import", str(binary))
    assert "run failed" in verbose.stderr and verbose.stdout == ""


def test_an_unknown_gpu_gets_the_same_answer_in_every_command(quick: Run) -> None:
    expected = (
        "gpu-tracker: error: --gpu 'h1000': unknown GPU (not in the catalog, and no stored "
        "offer has it; see 'gpu-tracker gpus')"
    )
    for args in (
        ("offers", "--gpu", "H1000"),
        ("history", "--gpu", "H1000"),
        ("compare", "--gpu", "H1000"),
        ("recommend", "-P", "llm-7b-lora", "--gpu", "H1000"),
    ):
        assert failed(quick(*args), 2) == expected, args


def test_an_unknown_provider_gets_the_same_answer_in_every_command(quick: Run) -> None:
    answers = set()
    for args in (
        ("offers", "--provider", "nosuchcloud"),
        ("history", "--gpu", "H100", "--provider", "nosuchcloud"),
        ("history", "-p", "nosuchcloud", "-i", "x", "-r", "us-east-1"),
        ("compare", "--provider", "nosuchcloud"),
        ("recommend", "-P", "llm-7b-lora", "--provider", "nosuchcloud"),
        ("runs", "--provider", "nosuchcloud"),
        ("export", "out.csv", "--since", "7d", "--provider", "nosuchcloud"),
    ):
        answers.add(failed(quick(*args), 2))
    [answer] = answers
    assert answer.startswith("gpu-tracker: error: --provider 'nosuchcloud': unknown provider (")
    # a provider only a price sheet names is known: scaleway rows are in examples/prices.csv
    assert "scaleway" in answer
    ok = quick("offers", "--provider", "scaleway", "-f", "json")
    assert ok.returncode == 0 and {r["provider"] for r in json.loads(ok.stdout)} == {"scaleway"}
    # a near miss is named
    assert "did you mean 'lambda'?" in failed(quick("offers", "-p", "lamda"), 2)
    assert "did you mean 'lambda'?" in failed(quick("collect", "-p", "lamda"), 2)


def test_a_malformed_region_or_pricing_is_a_usage_error(quick: Run) -> None:
    line = failed(quick("offers", "--region", "us east!"), 2)
    assert line == (
        "gpu-tracker: error: --region 'us east!': not a region name "
        "(e.g. us-east-1, eastus, cn-north-4)"
    )
    assert failed(quick("recommend", "-P", "llm-7b-lora", "-r", " eastus"), 2).startswith(
        "gpu-tracker: error: --region ' eastus'"
    )
    assert "--pricing" in failed(quick("offers", "--pricing", "cheap"), 2)
    # a well-formed region no offer is in matches nothing (exit 0, said on stderr)
    empty = quick("offers", "--region", "mars-north-1")
    assert empty.returncode == 0 and empty.stderr == "no offer matches these filters\n"


@pytest.mark.parametrize("until", ["now", "today", "yesterday", "12h", "1d ago", "2026-12-31"])
def test_every_time_option_takes_what_people_type(quick: Run, until: str) -> None:
    proc = quick("history", "--gpu", "H100", "--since", "30d", "--until", until, "-f", "json")
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if until in ("now", "2026-12-31"):  # the window holds the quick start's collection
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)
    else:  # read as a time, the window ends before the data: exit 1 (exit 2 is "not a time")
        assert proc.returncode == 1, proc.stderr
        assert "no price history for cheapest H100" in proc.stderr
        ends = {"today": today, "yesterday": today - timedelta(days=1)}.get(until)
        if ends is not None:
            assert f"and {ends:%Y-%m-%d} 00:00 UTC;" in proc.stderr
    at = quick(
        "history", "-p", "lambda", "-i", "gpu_1x_h100_sxm5", "-r", "us-east-1", "--at", "now",
        "-f", "json",
    )  # fmt: skip
    assert at.returncode == 0, at.stderr
    # the sheet's price for it, in force now: examples/prices.csv says 3.29 USD
    assert [r["price_per_hour"] for r in json.loads(at.stdout)] == ["3.29"]
    assert quick("alerts", "list", "--since", "yesterday").returncode == 0
    bad = failed(quick("history", "--gpu", "H100", "--until", "soonish"), 2)
    assert bad.startswith("gpu-tracker: error: --until 'soonish': not a time (use now, today")


def test_config_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "tracker.toml"
    config.parent.mkdir()
    (config.parent / "sheets").mkdir()
    (config.parent / "sheets" / "mine.csv").write_text(
        "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,"
        "vcpus,memory_gib,price_per_hour,currency\n"
        "acme,box.1,eu-1,,on_demand,A10G,1,24,4,16,1.25,USD\n"
    )
    config.write_text(
        'database_url = "sqlite:///data/tracker.db"\n'
        'profiles_path = "~/profiles.toml"\n'
        '[pricesheet]\npath = "sheets/mine.csv"\n'
        '[alerts]\nrules_file = "/etc/gpu-tracker/alerts.toml"\n'
        + "".join(f"[{p}]\nenabled = false\n" for p in ("aws", "azure", "gcp", "fx"))
    )
    settings = load_settings(config)
    # relative: joined to the file's folder; absolute and ~ paths: as written
    assert settings.pricesheet.path == config.parent / "sheets" / "mine.csv"
    assert settings.database_url == f"sqlite:///{config.parent / 'data' / 'tracker.db'}"
    assert settings.profiles_path == Path("~/profiles.toml")
    assert settings.alerts.rules_file == Path("/etc/gpu-tracker/alerts.toml")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = cli_runner(f"sqlite:///{tmp_path / 'x.db'}", elsewhere)
    proc = run("-c", str(config), "collect", "-p", "pricesheet")
    # The rules file named there does not exist: the run is stored all the same, and the
    # command says so in one line and exits 1 (tests/alerts/test_operator.py).
    assert proc.returncode == 1, proc.stderr
    assert "alerts rules file /etc/gpu-tracker/alerts.toml: cannot read" in proc.stderr
    rows = json.loads(run("-c", str(config), "offers", "-f", "json").stdout)
    assert [r["instance_type"] for r in rows] == ["box.1"]
    # an environment path stays relative to the working directory
    env = {"GPU_TRACKER_PRICESHEET__PATH": "mine.csv"}
    proc = run("-c", str(config), "collect", "-p", "pricesheet", extra_env=env)
    assert proc.returncode == 1 and "mine.csv" in proc.stderr


def test_a_sqlite_url_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    run = cli_runner(f"sqlite:///{missing / 'x.db'}", tmp_path)
    line = failed(run("offers"), 2)
    assert line == (
        f"gpu-tracker: error: database sqlite:///{missing / 'x.db'}: folder {missing} does "
        "not exist (create it first; only the default location is created for you)"
    )
    assert not (tmp_path / "no").exists()  # nothing was created


def test_stored_providers_are_known_on_both_engines(cli: Run, sheet: Path) -> None:
    """The provider check reads the store (tracker.store.reads.stored_providers): a
    provider only a price sheet names ("acme" in tests/cli/test_cli.py's SHEET) is known
    on SQLite and Postgres alike, an unknown one is exit 2 before anything is read."""
    proc = cli(
        "collect", "-p", "pricesheet", extra_env={"GPU_TRACKER_PRICESHEET__PATH": str(sheet)}
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(cli("offers", "-p", "acme", "-f", "json").stdout)
    assert [r["instance_type"] for r in rows] == ["weird.1"]
    line = failed(cli("offers", "-p", "acmee"), 2)
    assert "did you mean 'acme'?" in line
