"""The ``gpu_tracker.hooks`` group: a third-party plugin is called after scheduled and manual runs.

The plugin (``tests/service/hook_plugin``) is "installed" the way pip would leave
it, as a dist-info folder with an ``entry_points.txt``, on ``sys.path`` for
in-process services and on ``PYTHONPATH`` for CLI subprocesses: nothing in the
core names it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.conftest import Run, cli_runner
from tests.service.conftest import COLLECTORS, make_settings
from tests.service.fake_server import FakeProviders
from tests.service.test_service import wait_for
from tracker.collect import RunSummary
from tracker.hooks import HookError, Hooks, JobHealthChange, Origin, load_hooks, plugin_of
from tracker.models import RunStatus
from tracker.service import Service
from tracker.store.schema import CollectionRun

PLUGIN_DIR = Path(__file__).resolve().parent / "hook_plugin"
SHEET = (
    "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,"
    "vcpus,memory_gib,price_per_hour,currency\n"
    "acme,a100.1,eu-1,,on_demand,A100-80GB,1,80,12,85,1.50,USD\n"
)


@pytest.fixture
def hook_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test plugin installed in this process; its calls land in the returned file."""
    path = tmp_path / "hook-calls.jsonl"
    monkeypatch.setenv("GPU_TRACKER_TEST_HOOKS_LOG", str(path))
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    return path


def calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_installed_plugin_is_loaded_after_the_builtin_rankings(hook_log: Path) -> None:
    # order 10, then order 50 (the built-in alerts, then this one, by name)
    assert load_hooks().names == ["rankings", "alerts", "test-recorder"]


def test_plugin_is_called_after_a_scheduled_run_and_when_a_job_turns_stale(
    sqlite_service_url: str, fake: FakeProviders, hook_log: Path, services: list[Service]
) -> None:
    fake.modes["fakebad"] = "fail"
    settings = make_settings(
        sqlite_service_url,
        ["fakebad", "fakegood"],
        cadences={"fakegood": 0.3 / 60, "fakebad": 0.3 / 60},
        stale_after_cadences=2,
    )
    service = Service(settings, collectors={n: COLLECTORS[n] for n in ("fakebad", "fakegood")})
    services.append(service)
    assert service.hooks.names == ["rankings", "alerts", "test-recorder"]  # nothing injected
    service.start()

    wait_for(
        lambda: {c["hook"] for c in calls(hook_log)} == {"after_collection", "job_health_changed"},
        what="a run and a stale job told to the plugin",
    )
    service.stop()
    with service.engine.connect() as conn:
        ids = {
            r.id: r.status
            for r in conn.execute(select(CollectionRun.id, CollectionRun.status)).all()
        }
    after = [c for c in calls(hook_log) if c["hook"] == "after_collection"]
    # Only committed runs, one per scheduled run, of the collector that succeeded.
    assert after and all(c["origin"] == "serve" and len(c["runs"]) == 1 for c in after)
    assert all(c["runs"][0][:2] == ["fakegood", "succeeded"] for c in after)
    assert all(ids[c["runs"][0][2]] == "succeeded" for c in after)
    health = [c for c in calls(hook_log) if c["hook"] == "job_health_changed"]
    assert health[0] == {"hook": "job_health_changed", "job": "fakebad:standard", "stale": True}


def cli_with_plugin(tmp_path: Path, hook_log: Path) -> tuple[Run, Path, dict[str, str]]:
    """The CLI on a fresh SQLite file with the plugin on PYTHONPATH, a sheet, its env."""
    sheet = tmp_path / "prices.csv"
    sheet.write_text(SHEET)
    env = {
        "PYTHONPATH": str(PLUGIN_DIR),
        "GPU_TRACKER_TEST_HOOKS_LOG": str(hook_log),
        "GPU_TRACKER_PRICESHEET__PATH": str(sheet),
    }
    return cli_runner(f"sqlite:///{tmp_path / 'cli.db'}", tmp_path), sheet, env


def test_plugin_is_called_after_collect_and_import_unless_no_hooks(
    tmp_path: Path, hook_log: Path
) -> None:
    run, sheet, env = cli_with_plugin(tmp_path, hook_log)

    collected = run("collect", "--provider", "pricesheet", extra_env=env)
    assert collected.returncode == 0, collected.stderr
    imported = run("import", str(sheet), extra_env=env)
    assert imported.returncode == 0, imported.stderr
    assert run("collect", "--provider", "pricesheet", "--no-hooks", extra_env=env).returncode == 0
    assert run("import", str(sheet), "--no-hooks", extra_env=env).returncode == 0

    listed = run("runs", "--format", "json", extra_env=env)
    run_ids = sorted(r["id"] for r in json.loads(listed.stdout))
    assert len(run_ids) == 4
    # The first two runs told the plugin, each with its own committed run; the
    # --no-hooks runs did not.
    assert [(c["origin"], [r[1:] for r in c["runs"]]) for c in calls(hook_log)] == [
        ("collect", [["succeeded", run_ids[0]]]),
        ("import", [["succeeded", run_ids[1]]]),
    ]


def test_a_failing_hook_is_logged_with_its_name_and_the_command_succeeds(
    tmp_path: Path, hook_log: Path
) -> None:
    # The log file's folder does not exist: the plugin raises on every call.
    run, sheet, env = cli_with_plugin(tmp_path, tmp_path / "missing" / "calls.jsonl")
    result = run("import", str(sheet), extra_env=env)
    assert result.returncode == 0, result.stderr
    assert "hook test-recorder (after_collection) failed after gpu-tracker import" in result.stderr
    assert "FileNotFoundError" in result.stderr


def test_hooks_run_in_order_and_a_raising_hook_does_not_stop_the_next(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    class Late:
        order = 90

        @staticmethod
        def after_collection(runs: tuple[RunSummary, ...]) -> None:
            seen.append("late")

    class Early:
        order = 5

        @staticmethod
        def after_collection(origin: Origin) -> None:
            seen.append(f"early:{origin}")
            raise RuntimeError("boom")

    hooks = Hooks.of({"late": Late, "early": Early})
    summary = RunSummary("x", RunStatus.SUCCEEDED)
    with caplog.at_level(logging.ERROR):
        failed = hooks.after_collection(
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            [summary],
            Origin.COLLECT,
            context="a test",
        )
    assert seen == ["early:collect", "late"]
    assert failed == ["early"]
    assert "hook early (after_collection) failed after a test" in caplog.text
    # No committed run, no call.
    assert hooks.after_collection(None, None, [], Origin.COLLECT, context="x") == []  # type: ignore[arg-type]
    assert seen == ["early:collect", "late"]


def test_malformed_plugins_are_refused_with_a_line_naming_them() -> None:
    class Typo:
        def after_colection(self) -> None: ...

    class Greedy:
        @staticmethod
        def after_collection(engine: Any, offers: Any) -> None: ...

    with pytest.raises(HookError, match="hook plugin typo: defines none of the hooks"):
        plugin_of("typo", Typo())
    with pytest.raises(
        HookError, match="hook plugin greedy: after_collection\\(\\) asks for 'offers'"
    ):
        plugin_of("greedy", Greedy)


def test_a_plugin_that_fails_to_load_is_logged_and_the_others_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    info = tmp_path / "broken_hooks-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-hooks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[gpu_tracker.hooks]\nbroken = no_such_module_for_gpu_tracker\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with caplog.at_level(logging.ERROR):
        hooks = load_hooks()
    assert hooks.names == ["rankings", "alerts"]
    assert "hook plugin broken (no_such_module_for_gpu_tracker) failed to load" in caplog.text


def test_health_changes_reach_plugins_stale_and_fresh_again(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    changes: list[tuple[str, bool]] = []

    class Notifier:
        @staticmethod
        def job_health_changed(change: JobHealthChange) -> None:
            changes.append((change.job_id, change.stale))

    fake.modes["fakegood"] = "fail"
    settings = make_settings(sqlite_service_url, ["fakegood"], default_minutes=0.1 / 60)
    service = Service(
        settings, collectors={"fakegood": COLLECTORS["fakegood"]}, hooks=Hooks.of({"n": Notifier})
    )
    services.append(service)
    job = service.jobs[0]
    service.run_job(job)
    wait_for(lambda: service.check_staleness(), what="the job to turn stale")
    fake.modes["fakegood"] = "ok"
    service.run_job(job)
    assert changes == [("fakegood:standard", True), ("fakegood:standard", False)]
