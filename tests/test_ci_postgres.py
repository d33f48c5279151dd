"""CI cannot go green without its Postgres tests (see tests/ci_postgres.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Three shapes a Postgres test takes in this suite: a Postgres fixture, the
# "postgres" variant of an engine parameter, and an explicit mark.
SUITE = """
import pytest

@pytest.fixture
def pg_url():
    pytest.skip("Postgres unreachable")

@pytest.fixture(params=["sqlite", "postgres"])
def engine(request):
    if request.param == "postgres":
        pytest.skip("Postgres unreachable")
    return request.param

def test_pg(pg_url):
    pass

def test_both(engine):
    pass

@pytest.mark.postgres
def test_marked():
    pytest.skip("Postgres unreachable")

@pytest.mark.skip(reason="nothing to do with Postgres")
def test_other():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    # The plugin under test and (where asked) xdist only: importing every installed
    # plugin (schemathesis, hypothesis, ...) cost each inner run seconds.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_in_ci_a_skipped_postgres_test_fails_the_run(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest_subprocess("-p", "tests.ci_postgres", "-rs")
    # test_both[sqlite] passes; test_pg, test_both[postgres], test_marked, test_other skip
    result.assert_outcomes(passed=1, skipped=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "postgres tests: 0 ran, 3 skipped",
            "postgres tests skipped in CI (a failure):",
            "  test_suite.py::test_both[[]postgres[]]",
            "  test_suite.py::test_marked",
            "  test_suite.py::test_pg",
        ]
    )


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_they_only_skip(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    result = suite.runpytest_subprocess("-p", "tests.ci_postgres")
    result.assert_outcomes(passed=1, skipped=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["postgres tests: 0 ran, 3 skipped"])


def test_the_postgres_mark_selects_every_variant(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "tests.ci_postgres", "-m", "postgres", "-q")
    # five tests: test_pg, test_both[postgres], test_marked run; test_both[sqlite], test_other not
    result.assert_outcomes(skipped=3, deselected=2)


def test_under_xdist_the_controller_counts_every_worker_s_skips(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite runs on two workers (pyproject's addopts): each worker marks and runs
    its share, and the controller, which sees every worker's reports, counts them all."""
    monkeypatch.setenv("CI", "true")
    # --dist load spreads single tests, so both workers report Postgres skips
    result = suite.runpytest_subprocess(
        "-p", "xdist", "-p", "tests.ci_postgres", "-n", "2", "--dist", "load"
    )
    result.assert_outcomes(passed=1, skipped=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*2 workers*",
            "postgres tests: 0 ran, 3 skipped",
            "postgres tests skipped in CI (a failure):",
            "  test_suite.py::test_both[[]postgres[]]",
            "  test_suite.py::test_marked",
            "  test_suite.py::test_pg",
        ]
    )
    result.stdout.no_fnmatch_line("*postgres tests: 0 ran, [12] skipped*")
