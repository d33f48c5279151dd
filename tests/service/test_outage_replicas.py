"""Two ``serve`` replicas on one Postgres through a provider outage (issue 41).

Four keyless collectors point at endpoints that fail the four ways
(tests/service/outage.py: 503, refused, hang, a name that does not resolve, the last
simulated inside each process) and two collectors that need a key have none. Both
replicas must stay ready the whole time, /healthz on each must name the failing
(and, once long enough, stale) jobs and the collectors that are not configured, and
the logs must hold one ERROR line per failed run, no traceback, no warning per run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.service.fake_server import FakeProviders
from tests.service.outage import PRELUDE, Outage
from tests.service.test_serve_process import Serve, fake_server, procs, serve_env, wait_for
from tracker.store.engine import make_engine
from tracker.store.schema import CollectionRun

__all__ = ["fake_server", "procs"]  # fixtures shared with the single-process tests

pytestmark = pytest.mark.postgres

CADENCE = 4.0
FAILING = {"vultr": "http_503", "cudo": "refused", "cloudrift": "hang", "akash": "unresolvable"}
KEYLESS = ("digitalocean", "tensordock")
WATCH = 24.0
"""Seconds both replicas are probed: 6 cadences, past the stale limit (2 cadences). A
cadence of 4 s leaves a hanging run (2 s of retries at most) room on a loaded machine."""


def test_two_replicas_stay_ready_while_providers_fail_and_lack_keys(
    pg_service_url: str, fake_server: FakeProviders, procs: list[Serve], tmp_path: Path
) -> None:
    with Outage() as outage:
        env = serve_env(
            tmp_path,
            pg_service_url,
            fake_server,
            GPU_TRACKER_SCHEDULER__COLLECTORS=",".join([*FAILING, *KEYLESS]),
            GPU_TRACKER_SCHEDULER__CADENCES=json.dumps(
                {name: CADENCE / 60 for name in [*FAILING, *KEYLESS]}
            ),
            GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="2",
            GPU_TRACKER_HTTP__TIMEOUT_SECONDS="0.5",
            **{
                f"GPU_TRACKER_{name.upper()}__ENDPOINT_URL": outage.origins[kind]
                for name, kind in FAILING.items()
            },
        )
        for credential in ("DIGITALOCEAN_TOKEN", "GPU_TRACKER_DIGITALOCEAN__API_KEY"):
            env.pop(credential, None)
        replicas = [Serve(tmp_path, name, env, prelude=PRELUDE) for name in ("one", "two")]
        procs.extend(replicas)
        wait_for(lambda: all(r.get("/livez")[0] == 200 for r in replicas), what="both up")

        probes: list[tuple[int, int]] = []
        end = time.monotonic() + WATCH
        while time.monotonic() < end:
            probes.append((replicas[0].get("/readyz")[0], replicas[1].get("/readyz")[0]))
            time.sleep(0.5)
        reports = [json.loads(r.get("/healthz")[1]) for r in replicas]
        assert [r.stop() for r in replicas] == [0, 0]

    assert probes and set(probes) == {(200, 200)}, probes  # ready on every probe
    jobs = sorted(f"{name}:standard" for name in FAILING)
    for report in reports:
        assert report["database"]["reachable"] is True
        assert report["stale"] == jobs  # no success for 2 cadences: named, not unready
        assert report["not_configured"].keys() == set(KEYLESS)
        for name in KEYLESS:
            assert report["collectors"][f"{name}:standard"]["stale"] is False
    # Each replica saw some failures itself (the other ran the rest, not due here).
    errors = {
        "vultr": "HTTP 503: upstream unavailable",
        "cudo": "Connection refused",
        "cloudrift": "ReadTimeout",
        "akash": "Name or service not known",
    }
    engine = make_engine(pg_service_url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(CollectionRun.provider, CollectionRun.status, CollectionRun.error)
        ).all()
    engine.dispose()
    for name, text in errors.items():
        mine = [r for r in rows if r.provider == name]
        # About one run a cadence between the two replicas, each failure kept.
        assert len(mine) >= WATCH / CADENCE / 2 and {r.status for r in mine} == {"failed"}
        assert all(text in r.error for r in mine), (name, mine[:2])
    assert not [r for r in rows if r.provider in KEYLESS]  # no skipped row per cadence

    for replica in replicas:
        events = replica.events()
        runs = [e for e in events if e.get("event") == "run"]
        failed = [e for e in runs if e["status"] == "failed"]
        errors_logged = [e for e in events if e["level"] == "error"]
        assert failed and len(errors_logged) == len(failed)  # one ERROR line a failed run
        assert not [e for e in events if "exception" in e or "Traceback" in e["message"]]
        warnings = [e for e in events if e["level"] == "warning"]
        assert {e.get("event") for e in warnings} <= {"stale"}, [e["message"] for e in warnings]
        told = [e for e in events if e.get("event") == "collectors_not_configured"]
        assert len(told) == 1 and told[0]["level"] == "info"
        assert set(_keys(told[0]["not_configured"])) == set(KEYLESS)


def _keys(value: Any) -> list[str]:
    return sorted(value) if isinstance(value, dict) else []
