"""What an operator does through the real ``gpu-tracker`` entry point, with a local Slack
receiver and aiosmtpd: a broken rules file during an import, retries, dead deliveries."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.alerts.test_cli import RULES, setup, sheet  # noqa: F401  (the fixture)
from tests.conftest import Run

DROP_LINE = "• 8× H100-SXM aws p5.48xlarge (us-east-1, on-demand): 55.04 → 44.03 USD/h (-20 %)"


def test_a_broken_rules_file_loses_no_run_and_its_changes_go_out_once_fixed(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
    smtp: SmtpServer,
) -> None:
    run, env = setup
    rules = Path(env["GPU_TRACKER_ALERTS__RULES_FILE"])
    path = tmp_path / "deals.csv"
    assert run("import", str(sheet(path, "55.04")), extra_env=env).returncode == 0  # seeds
    rules.write_text(RULES + 'gpu_model = ["H1000"]\n')
    # 55.04 → 44.032: -20 %, while the rules file names a GPU the catalog does not know.
    broken = run("import", str(sheet(path, "44.032")), extra_env=env)
    assert broken.returncode == 1
    assert broken.stderr.strip().splitlines() == [
        f"gpu-tracker: error: {rules}: rule 'drops': gpu_model: 'H1000' is not a GPU the "
        "catalog knows (a model like H100-SXM, a family like H100, or a provider's spelling "
        "of one) (alerts not evaluated: the run is stored, and its changes are evaluated "
        "once the file is fixed)"
    ]
    assert slack.posts == [] and smtp.messages == []
    # The run is stored: the offer reads its new price.
    offers = json.loads(run("offers", "--format", "json", extra_env=env).stdout)
    p5 = [o for o in offers if o["instance_type"] == "p5.48xlarge"]
    assert [o["price_per_hour"] for o in p5] == ["44.032"]
    # Checking the rules says the same problem, once, exit 2.
    checked = run("alerts", "rules", extra_env=env)
    assert checked.returncode == 2
    assert checked.stderr.count("H1000") == 1
    # Fixed: the next send evaluates the held-back change and delivers it.
    rules.write_text(RULES)
    sent = run("alerts", "send", extra_env=env)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.splitlines() == ["email: sent 1 alert(s)", "slack: sent 1 alert(s)"]
    (post,) = slack.posts
    assert post["json"]["blocks"][1]["text"]["text"] == f"*Price drops*\n{DROP_LINE}"


def test_list_shows_the_next_attempt_send_says_what_waits_retry_sends_now(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
) -> None:
    run, env = setup
    env = {**env, "GPU_TRACKER_ALERTS__SMTP_HOST": "", "GPU_TRACKER_ALERTS__EMAIL_TO": ""}
    env["GPU_TRACKER_ALERTS__BACKOFF_BASE_SECONDS"] = "3600"
    env["GPU_TRACKER_ALERTS__MAX_ATTEMPTS"] = "2"
    path = tmp_path / "deals.csv"
    assert run("import", str(sheet(path, "55.04")), extra_env=env).returncode == 0
    slack.answer((500, "rollup_error", 0.0))
    before = datetime.now(UTC)
    failed = run("import", str(sheet(path, "44.032")), extra_env=env)
    assert failed.returncode == 0, failed.stderr  # the import itself succeeded
    (row,) = json.loads(run("alerts", "list", "--format", "json", extra_env=env).stdout)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    assert row["message"] == DROP_LINE.removeprefix("• ")
    # Backoff after the first failure: 3600 s.
    waits = datetime.fromisoformat(row["next_attempt_at"])
    assert 3590 <= (waits - before).total_seconds() <= 3700
    table = run("alerts", "list", extra_env={**env, "COLUMNS": "300"})
    assert "next attempt" in table.stdout and waits.strftime("%Y-%m-%d %H:%M") in table.stdout
    # send: nothing due, and it says how many wait and until when.
    sent = run("alerts", "send", extra_env=env)
    assert sent.returncode == 0, sent.stderr
    first = waits.strftime("%Y-%m-%d %H:%M UTC")
    (said,) = sent.stdout.splitlines()
    # 3600 s after the failure, read a few seconds later: 59 or 60 min.
    assert re.fullmatch(
        f"slack: 1 delivery\\(ies\\) wait for a retry, the first at {first} "
        "\\(in (59|60) min; gpu-tracker alerts retry sends them now\\)",
        said,
    ), said
    # retry: now; the receiver fails again, which is the 2nd of max_attempts = 2: dead.
    slack.answer((500, "rollup_error", 0.0))
    again = run("alerts", "retry", extra_env=env)
    assert again.returncode == 1
    assert again.stdout.splitlines() == ["requeued 1 delivery(ies) of 1 alert(s)"]
    (row,) = json.loads(run("alerts", "list", "--format", "json", extra_env=env).stdout)
    assert (row["status"], row["attempts"], row["next_attempt_at"]) == ("dead", 2, None)
    # A dead one is not retried without --dead; naming it says why.
    plain = run("alerts", "retry", str(row["id"]), extra_env=env)
    assert plain.returncode == 1
    assert plain.stderr.strip() == (
        f"gpu-tracker: error: alert {row['id']}: no delivery is pending (add --dead for dead ones)"
    )
    revived = run("alerts", "retry", "--dead", str(row["id"]), extra_env=env)
    assert revived.returncode == 0, revived.stderr
    assert revived.stdout.splitlines() == [
        "requeued 1 delivery(ies) of 1 alert(s)",
        "slack: sent 1 alert(s)",
    ]
    # Sent once; a further retry finds nothing to send again.
    assert len(slack.accepted) == 1
    assert run("alerts", "retry", "--dead", extra_env=env).stdout.splitlines() == [
        "requeued 0 delivery(ies) of 0 alert(s)",
        "nothing due",
    ]
    assert len(slack.accepted) == 1
    (row,) = json.loads(run("alerts", "list", "--format", "json", extra_env=env).stdout)
    assert (row["status"], row["attempts"]) == ("sent", 3)


class Failing:
    """A collector whose provider answers 503 every time."""

    name = "broken"
    description = "always fails"

    @classmethod
    def from_settings(cls, settings: object) -> Failing:
        return cls()

    def collect(self, ctx: object) -> object:
        raise RuntimeError("provider said 503")


HEALTH_RULES = """
[[rules]]
name = "down"
type = "collector_health"
provider = ["broken"]
failures = 1
"""
FAILING_LINE = "• broken:standard failing: 1 failed run in a row: RuntimeError: provider said 503"


def test_a_failed_collect_sends_its_health_alert_at_once(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    slack: SlackServer,
) -> None:
    run, env = setup
    Path(env["GPU_TRACKER_ALERTS__RULES_FILE"]).write_text(HEALTH_RULES)
    env = {**env, "GPU_TRACKER_PLUGINS__broken": "tests.alerts.test_operator:Failing"}
    failed = run("collect", "--provider", "broken", extra_env=env)
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines() == [
        "gpu-tracker: error: broken: collection failed: RuntimeError: provider said 503"
    ]
    # Sent by the command itself, not left for a later `alerts send`; the job is named
    # as the scheduler names it (a run of every pricing model: the standard job).
    (post,) = slack.posts
    assert post["json"]["blocks"][0]["text"]["text"] == "[gpu-tracker] broken:standard failing"
    assert post["json"]["blocks"][1]["text"]["text"] == f"*Collector health*\n{FAILING_LINE}"


def test_serve_sends_a_failed_runs_health_alert_without_waiting_for_the_timer(
    tmp_path: Path, slack: SlackServer, sqlite_engine: Engine
) -> None:
    from pydantic import SecretStr

    from tracker.service.scheduler import Service
    from tracker.settings import Settings
    from tracker.settings.alerts import AlertsSettings

    rules = tmp_path / "alerts.toml"
    rules.write_text(HEALTH_RULES)
    settings = Settings(
        plugins={"broken": "tests.alerts.test_operator:Failing"},
        alerts=AlertsSettings(rules_file=rules, slack_webhook_url=SecretStr(slack.url)),
    )
    service = Service(settings, engine=sqlite_engine, collectors={"broken": Failing}, http="")  # type: ignore[dict-item]
    # Two jobs (spot and the rest); the standard one's runs are stored with the scope
    # "on_demand,reserved_1y,…", and its alert names it as the scheduler does.
    (spec,) = [j for j in service.jobs if j.id == "broken:standard"]
    service.run_job(spec)  # no tick of the sender's timer
    (post,) = slack.posts
    assert post["json"]["blocks"][1]["text"]["text"] == f"*Collector health*\n{FAILING_LINE}"


def test_a_scheduled_run_with_a_broken_rules_file_is_stored_and_logs_one_line(
    tmp_path: Path,
    slack: SlackServer,
    sqlite_engine: Engine,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pydantic import SecretStr

    from tests.listed_collector import ListCollector
    from tracker.service.scheduler import Service
    from tracker.settings import Settings
    from tracker.settings.alerts import AlertsSettings
    from tracker.store.runs import last_success

    rules = tmp_path / "alerts.toml"
    rules.write_text(RULES)
    settings = Settings(
        alerts=AlertsSettings(rules_file=rules, slack_webhook_url=SecretStr(slack.url))
    )
    collectors: dict[str, Any] = {"testcloud": ListCollector}
    service = Service(settings, engine=sqlite_engine, collectors=collectors, http="")
    rules.write_text(RULES + "threshold = 5\n")  # broken while serving
    (spec,) = [j for j in service.jobs if j.id == "testcloud:standard"]
    with caplog.at_level(logging.ERROR):
        outcome = service.run_job(spec)
    assert outcome.status.value == "succeeded"
    errors = [r for r in caplog.records if r.name == "tracker.alerts.hook"]
    assert [(r.getMessage(), r.exc_info) for r in errors] == [
        (
            f"{rules}: rule 'drops': unknown key 'threshold' for a price_change rule (alerts not "
            "evaluated: the run is stored, and its changes are evaluated once the file is fixed)",
            None,
        )
    ]
    assert not [r for r in caplog.records if r.name == "tracker.hooks"]  # no traceback
    stored = last_success(sqlite_engine, "testcloud", [spec.scope])  # the run log says "standard"
    assert outcome.summary is not None and stored is not None
    assert stored.id == outcome.summary.run_id
