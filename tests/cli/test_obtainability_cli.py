"""Obtainability through the installed ``gpu-tracker`` (issue 42): a price sheet's
``availability`` column back-fills the availability series, ``offers`` shows the share
of the last 7 / 30 days each offer was reported rentable, and ``recommend
--min-obtainability`` excludes with reason ``obtainability``.

Hand-worked: offer ``h100.x`` is reported once a day for 8 days: available on days 0-1,
sold out on days 2-5, available on days 6-7. Its intervals: available [d0, d2),
unavailable [d2, d6), available [d6, last seen d7]. Known time 2 + 4 + 1 = 7 days,
rentable 2 + 1 = 3 days: 3/7 = 0.428571… → 0.4286; it came back once, after 4 days
(96 hours). ``h100.y`` is available at every report (1.0); ``h100.z`` never says (null).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run, cli_runner

A, U = "available", "unavailable"
X_STATES = [A, A, U, U, U, U, A, A]


@pytest.fixture
def cli(sqlite_url: str, tmp_path: Path) -> Run:
    """SQLite: the store tests run the arithmetic on both engines; this is the commands."""
    run = cli_runner(sqlite_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


def sheet(tmp_path: Path) -> Path:
    # Day 7 is two hours ago, so all eight reports lie in the past (a sheet row dated
    # in the future would be a later run's news) and inside the 30-day window.
    t0 = (datetime.now(UTC) - timedelta(days=7, hours=2)).replace(microsecond=0)
    base = {
        "provider": "acme", "region": "r1", "pricing": "on_demand", "gpu_model": "H100 SXM",
        "gpu_count": 1, "gpu_memory_gib": 80, "currency": "USD", "interconnect": "nvlink",
    }  # fmt: skip
    rows = []
    for day, state in enumerate(X_STATES):
        at = (t0 + timedelta(days=day)).isoformat().replace("+00:00", "Z")
        rows += [
            {**base, "instance_type": "h100.x", "price_per_hour": "2.00", "observed_at": at,
             "availability": state},
            {**base, "instance_type": "h100.y", "price_per_hour": "2.50", "observed_at": at,
             "availability": "Available"},  # any case
            {**base, "instance_type": "h100.z", "price_per_hour": "3.00", "observed_at": at},
        ]  # fmt: skip
    path = tmp_path / "history.json"
    path.write_text(json.dumps(rows))
    return path


def rows(cli: Run, *args: str) -> list[dict[str, Any]]:
    proc = cli(*args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_offers_show_obtainability_and_recommend_excludes_by_it(cli: Run, tmp_path: Path) -> None:
    assert cli("import", str(sheet(tmp_path))).returncode == 0
    offers = {r["instance_type"]: r for r in rows(cli, "offers")}
    x, y, z = offers["h100.x"], offers["h100.y"], offers["h100.z"]
    assert x["obtainability_30d"] == 0.4286  # 3/7
    assert x["median_back_hours"] == 96.0  # sold out from day 2, back on day 6
    # The 7-day window starts ~2 h after day 0 (day 7 was 2 h ago): (3 d − 2 h) /
    # (7 d − 2 h) = 70 / 166 = 0.4217 (seconds of test run time aside).
    assert x["obtainability_7d"] == pytest.approx(70 / 166, abs=1e-3)
    assert (y["obtainability_7d"], y["obtainability_30d"], y["median_back_hours"]) == (
        1.0,
        1.0,
        None,
    )
    assert (z["obtainability_7d"], z["obtainability_30d"]) == (None, None)

    csv_out = cli("offers", "--format", "csv").stdout.splitlines()
    header = csv_out[0].split(",")
    at = header.index("obtainability_30d")
    assert {line.split(",")[at] for line in csv_out[1:]} == {"0.4286", "1.0", ""}
    table = cli("offers", extra_env={"COLUMNS": "300"}).stdout
    assert "got 30d" in table and "43%" in table  # 0.4286 shown as a percentage

    ranked = rows(cli, "recommend", "-P", "llm-7b-lora", "-p", "acme",
                  "--min-obtainability", "0.5", "--explain")  # fmt: skip
    by_type = {r["instance_type"]: r for r in ranked}
    assert by_type["h100.x"]["excluded_reason"] == "obtainability"
    assert by_type["h100.x"]["excluded_detail"] == (
        "reported rentable 43% of the last 30 days; profile needs at least 50%"
    )
    # never reported is not a reason; the candidates carry their shares
    assert by_type["h100.z"]["rank"] is not None and by_type["h100.z"]["obtainability_30d"] is None
    assert by_type["h100.y"]["obtainability_30d"] == 1.0
    without = {r["instance_type"]: r for r in rows(cli, "recommend", "-P", "llm-7b-lora",
                                                   "-p", "acme", "--explain")}  # fmt: skip
    assert without["h100.x"]["rank"] is not None  # no threshold: ranked
    assert without["h100.x"]["obtainability_30d"] == 0.4286
    explained = cli("recommend", "-P", "llm-7b-lora", "-p", "acme", "--explain",
                    extra_env={"COLUMNS": "300"}).stdout  # fmt: skip
    # beside the interruption rate (blank, so left out, for on-demand offers)
    assert "got 30d" in explained and "43%" in explained


def test_a_profile_sets_min_obtainability(cli: Run, tmp_path: Path) -> None:
    assert cli("import", str(sheet(tmp_path))).returncode == 0
    profiles = tmp_path / "profiles.toml"
    steady = '[profiles.steady]\nparams = 7e9\ntask = "lora"\nprecision = "bf16"\ntokens = 80e6\n'
    profiles.write_text(steady + "min_obtainability = 0.5\n")
    ranked = rows(cli, "recommend", "-P", "steady", "-p", "acme", "--explain",
                  "--profiles-file", str(profiles))  # fmt: skip
    reasons = {r["instance_type"]: r["excluded_reason"] for r in ranked}
    assert reasons == {"h100.x": "obtainability", "h100.y": None, "h100.z": None}
    bad = tmp_path / "bad.toml"
    bad.write_text(steady + "min_obtainability = 1.5\n")
    proc = cli("recommend", "-P", "steady", "--profiles-file", str(bad))
    assert proc.returncode != 0 and "min_obtainability" in proc.stderr


def test_a_bad_availability_cell_names_the_line_and_the_field(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency,"
        "availability\n"
        "acme,h100.x,r1,on_demand,H100 SXM,1,2.00,USD,sold-out\n"
        "acme,h100.y,r1,on_demand,H100 SXM,1,2.50,USD,low\n"
    )
    proc = cli("import", str(path))
    assert proc.returncode != 0
    assert (
        f"{path}:2: availability: 'sold-out' is not one of available, low, unavailable, unknown"
        in proc.stderr
    )
    [y] = rows(cli, "offers")
    assert (y["instance_type"], y["availability"]) == ("h100.y", "low")


def test_compare_pools_a_gpu_at_a_provider(cli: Run, tmp_path: Path) -> None:
    assert cli("import", str(sheet(tmp_path))).returncode == 0
    [row] = rows(cli, "compare", "--gpu", "H100-SXM")
    # h100.x: 3 of 7 known days, h100.y: 7 of 7, h100.z never says (not in either sum):
    # (3 + 7) / (7 + 7) = 10/14 = 0.714285… → 0.7143; one spell back, after 96 hours.
    assert (row["provider"], row["obtainability_30d"], row["median_back_hours"]) == (
        "acme",
        0.7143,
        96.0,
    )


def test_the_python_api_gives_the_same_figures(cli: Run, tmp_path: Path, sqlite_url: str) -> None:
    import tracker.api

    assert cli("import", str(sheet(tmp_path))).returncode == 0
    config = tmp_path / "empty.toml"
    config.write_text("")
    with tracker.api.connect(sqlite_url, config=config) as t:
        offers = t.offers(provider="acme").set_index("instance_type")
        groups = t.obtainability(gpu="H100")
        ranked = t.recommend("llm-7b-lora", provider="acme", min_obtainability=0.5, explain=True)
    assert offers.loc["h100.x", "obtainability_30d"] == 0.4286  # 3/7
    # the group pools x (3 of 7 days) and y (7 of 7): 10/14 = 0.7143
    assert list(groups[["provider", "region", "offers", "obtainability_30d"]].itertuples(
        index=False, name=None)) == [("acme", "r1", 2, 0.7143)]  # fmt: skip
    reasons = dict(zip(ranked["instance_type"], ranked["excluded_reason"], strict=True))
    assert reasons["h100.x"] == "obtainability"
