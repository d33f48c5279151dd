"""Extreme command-line values are one line and exit 2 (issue 44), never a traceback.

Each was a traceback before (OverflowError from datetime or the SQLite driver, Decimal's
InvalidOperation, a math domain error) or, for ``estimate``, ``Infinity`` printed as the
answer with exit 0. They are refused before any database is read, so one engine is
enough here (the ids' bound is the engines' shared 64-bit integer).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import Run, cli_runner
from tests.fresh_db import copy_sqlite


@pytest.fixture
def sqlite_cli(tmp_path: Path, sqlite_template: Path) -> Run:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    copy_sqlite(sqlite_template, Path(str(make_url(url).database)))
    return cli_runner(url, tmp_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("history", "--gpu", "H100", "--since", "99999999999w"), "--since '99999999999w': further back than a time can go"),
        (("history", "--gpu", "H100", "--resample", "99999999999w"), "--resample '99999999999w': longer than any history"),
        (("history", "--gpu", "H100", "--resample", "9999999w"), "--resample 9999999w: no step falls between"),
        (("history", "--gpu", "H100", "--since", "0001-01-01T00:00:00+01:00"), "outside the years 1-9999 once in UTC"),
        (("export", "out.csv", "--since", "10000000d"), "--since '10000000d': further back than a time can go"),
        (("recommend", "--params", "1e400", "--task", "lora", "--precision", "bf16", "--tokens", "1e9"), "params: Input should be a finite number"),
        (("recommend", "-P", "llm-7b-lora", "--tokens", "1e300"), "tokens: must be <= 1e+18"),
        (("plan", "--gpu", "H100", "--steady-gpus", "1e400"), "--steady-gpus: 1E+400 is more than 1,000,000,000"),
        (("alerts", "retry", "999999999999999999999999"), "Input should be less than or equal to 9223372036854775807"),
        (("alerts", "list", "-n", "99999999999999999999999"), "less than or equal to 1000000000"),
        (("runs", "-n", "99999999999999999999999"), "less than or equal to 1000000000"),
        (("estimate", "--params", "1e400", "--task", "lora", "--precision", "bf16"), "params: Input should be a finite number"),
        (("estimate", "--params", "nan", "--task", "inference", "--precision", "bf16"), "params: Input should be a finite number"),
        (("estimate", "--params", "7e9", "--task", "lora", "--precision", "bf16", "--seq-len", "9" * 40), "sequence_length: must be <= 100000000"),
    ],
)  # fmt: skip
def test_an_extreme_value_is_one_line_and_exit_2(
    sqlite_cli: Run, args: tuple[str, ...], message: str
) -> None:
    proc = sqlite_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert message in proc.stderr
    assert "Infinity" not in proc.stdout and "NaN" not in proc.stdout


def test_the_largest_estimate_is_still_a_number(sqlite_cli: Run) -> None:
    """Every bound at once (1e15 parameters, fp32 full fine-tune, a 10^8 x 10^8 step)
    stays finite: 16e18 GiB of activations, absurd but a number."""
    proc = sqlite_cli(
        "estimate", "--params", "1e15", "--task", "full_finetune", "--precision", "fp32",
        "--seq-len", "100000000", "--batch", "100000000", "-f", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for row in json.loads(proc.stdout):
        assert float(row["gib"]) < float("inf")


def test_a_webhook_file_of_two_lines_is_a_config_error(sqlite_cli: Run, tmp_path: Path) -> None:
    """httpx raised InvalidURL (non-printable character) from deep inside the send."""
    hook = tmp_path / "hook.txt"
    hook.write_text("http://127.0.0.1:9/services/T0/B0/xyz\nsecond line\n")
    proc = sqlite_cli(
        "alerts",
        "test",
        "--channel",
        "slack",
        extra_env={"GPU_TRACKER_ALERTS__SLACK_WEBHOOK_URL_FILE": str(hook)},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"gpu-tracker: error: alerts.slack_webhook_url_file: {hook} holds 2 lines; "
        "the secret is one line"
    )
    assert "xyz" not in proc.stderr  # the file's text (a secret) is never echoed
