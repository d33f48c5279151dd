"""A pytest plugin: in CI, a Postgres test that skips fails the session.

Locally the Postgres variants skip when no server answers, which is convenient and
also how a CI run could go green having run none of them. Every test that uses a
Postgres fixture (or the ``postgres`` variant of an engine parameter) is marked
``postgres`` here, so ``-m postgres`` selects them, the summary counts them, and
under ``CI`` any of them skipped turns the exit status into a failure.
"""

from __future__ import annotations

import os

import pytest

POSTGRES_FIXTURES = frozenset({"pg_url", "pg_engine", "pg_service_url", "pg_database"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def in_ci() -> bool:
    """``CI`` set to anything but an explicit no (CI services set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() not in _FALSE


def _uses_postgres(item: pytest.Item) -> bool:
    if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "postgres" in callspec.params.values()


class _Guard:
    def __init__(self) -> None:
        self.ran: set[str] = set()
        self.skipped: set[str] = set()

    @pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if _uses_postgres(item):
                item.add_marker(pytest.mark.postgres)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "postgres" not in report.keywords:
            return
        if report.skipped:
            self.skipped.add(report.nodeid)
        elif report.when == "call":
            self.ran.add(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not (self.ran or self.skipped):
            return
        terminalreporter.write_line(
            f"postgres tests: {len(self.ran)} ran, {len(self.skipped)} skipped"
        )
        if self.skipped and in_ci():
            terminalreporter.write_line("postgres tests skipped in CI (a failure):", red=True)
            for nodeid in sorted(self.skipped):
                terminalreporter.write_line(f"  {nodeid}", red=True)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and in_ci() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs a PostgreSQL server")
    config.pluginmanager.register(_Guard(), "ci-postgres-guard")
