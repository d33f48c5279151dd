"""Soak: ``gpu-tracker serve`` against Postgres for N minutes, memory and CPU per run.

A service runs for months: whatever a run leaves behind adds up. This starts the real
``serve`` process on a throwaway database next to the one GPU_TRACKER_DATABASE_URL
names, collecting a generated price sheet (``--offers`` rows, default 20,000) every
``--cadence`` seconds; after each run, ``--moving`` of its prices (5 %) change, so every
run writes what a real re-collection writes. At each run line the process logs, the
bench reads the process's resident memory and CPU time from /proc, and prints them. At
the end: the slope of RSS over the runs after the first ``--warm-up`` (5; allocators
and caches settle there), and the CPU seconds per run.

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/soak.py [--minutes 3] [--cadence 5] [--offers 20000] [--failing 4]

``--failing N`` (issue 41) adds N keyless collectors on the same cadence whose
endpoints fail, one way each in turn (tests/service/outage.py, all on 127.0.0.1):
Vultr answered 503, CUDO refused, CloudRift accepted and never answered (a 2 s
timeout), Akash's host not resolving (simulated inside the ``serve`` process, no
resolver asked); and the seven collectors that need a key, with none set (not
configured). RSS is still read at each price-sheet run, so ``mib_per_run`` is the
growth per round: one collection of the sheet plus N failed runs.

The last line: ``soak runs= rss_start_mib= rss_end_mib= mib_per_run= cpu_s_per_run=
failing= failed_runs=`` (start and end are the RSS after the warm-up and after the last
run). The target is ``mib_per_run`` under 0.5: a run that leaked a few MiB would fill a
512 MiB container within a day at a 10-minute cadence.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from scratch_db import scratch_database  # bench/ is the script's own directory

from collectors.pricesheet import COLUMNS
from tracker.store import migrate
from tracker.store.engine import make_engine

REPO = Path(__file__).resolve().parents[1]
FAILING = (
    ("vultr", "http_503"),
    ("cudo", "refused"),
    ("cloudrift", "hang"),
    ("akash", "unresolvable"),
)
"""Keyless collectors and how each one's endpoint fails, in the order --failing adds them."""
EXPECTED_ERROR = {
    "http_503": "HTTP 503",
    "refused": "Connection refused",
    "hang": "ReadTimeout",
    "unresolvable": "Name or service not known",
}
KEYED = ("digitalocean", "verda", "tensordock", "jarvislabs", "seeweb", "hotaisle", "nebius")
"""Enabled by default, each needs a key: with none, not configured (issue 41)."""
KEY_VARIABLES = (
    "DIGITALOCEAN_TOKEN",
    "VERDA_CLIENT_ID",
    "VERDA_CLIENT_SECRET",
    "DATACRUNCH_CLIENT_ID",
    "DATACRUNCH_CLIENT_SECRET",
    "JL_API_KEY",
    "SEEWEB_API_TOKEN",
    "HOTAISLE_API_KEY",
    "HOTAISLE_TEAM_HANDLE",
    "NEBIUS_IAM_TOKEN",
)

HEADER = list(COLUMNS)  # the price sheet's columns, as the collector reads them
GPUS = [("A100-80GB", 80), ("H100-SXM", 80), ("L4", 24), ("A10G", 24), ("T4", 16)]
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


class Sheet:
    """A generated price sheet whose prices move: ``offers`` rows, rewritten in place."""

    def __init__(self, path: Path, offers: int, seed: int = 30) -> None:
        self.path = path
        self.rng = random.Random(seed)
        self.rows: list[list[str]] = []
        self.prices: list[Decimal] = []
        for i in range(offers):
            gpu, vram = GPUS[i % len(GPUS)]
            count = 1 + i % 8
            self.rows.append(
                [
                    f"cloud{i % 5}",
                    f"gpu.{i // 40}.x{count}",
                    f"region-{i % 40}",
                    "",
                    "on_demand",
                    gpu,
                    str(count),
                    str(vram),
                    str(8 * count),
                    str(64 * count),
                ]
            )
            self.prices.append(Decimal(self.rng.randrange(10_000, 900_000)) / 10_000)
        self.write()

    def move(self, count: int) -> None:
        """``count`` prices up or down by 1-5 %."""
        for i in self.rng.sample(range(len(self.rows)), count):
            factor = Decimal(100 + self.rng.choice((-5, -3, -1, 1, 3, 5))) / 100
            self.prices[i] = (self.prices[i] * factor).quantize(Decimal("0.0001"))
        self.write()

    def write(self) -> None:
        """Atomically (a run never reads half a sheet)."""
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(HEADER)
            pairs = zip(self.rows, self.prices, strict=True)
            writer.writerows([*row, str(price), "USD"] for row, price in pairs)
        tmp.replace(self.path)


def sample(pid: int) -> tuple[float, float]:
    """(RSS in MiB, user + system CPU seconds) of process ``pid``."""
    rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return rss_pages * PAGE / 2**20, cpu


def free_address() -> str:
    """A local port for the service's HTTP side (probes, metrics, the dashboard)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def slope(values: list[float]) -> float:
    """Least-squares slope of ``values`` over their index (per run)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values))
    return num / sum((x - mean_x) ** 2 for x in range(n))


def outage_module() -> Any:
    """tests/service/outage.py: the failing endpoints and the resolver failure."""
    sys.path.insert(0, str(REPO))
    return importlib.import_module("tests.service.outage")


def serve_env(
    url: str, args: argparse.Namespace, workdir: Path, sheet: Sheet, origins: dict[str, str]
) -> dict[str, str]:
    failing = FAILING[: args.failing]
    names = ["pricesheet", *(name for name, _ in failing), *(KEYED if failing else ())]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GPU_TRACKER_") and k not in KEY_VARIABLES
    }
    env.update(
        GPU_TRACKER_DATABASE_URL=url,
        GPU_TRACKER_PRICESHEET__PATH=str(sheet.path),
        GPU_TRACKER_SCHEDULER__COLLECTORS=",".join(names),
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({n: args.cadence / 60 for n in names}),
        GPU_TRACKER_SCHEDULER__JITTER_SECONDS="0",
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="100",
        XDG_CONFIG_HOME=str(workdir / "config"),
        XDG_DATA_HOME=str(workdir / "data"),
    )
    if failing:
        env["GPU_TRACKER_HTTP__TIMEOUT_SECONDS"] = "2"  # the default 30 s outlasts a cadence
    for name, kind in failing:
        env[f"GPU_TRACKER_{name.upper()}__ENDPOINT_URL"] = origins[kind]
    return env


def soak(
    url: str, args: argparse.Namespace, workdir: Path, origins: dict[str, str], prelude: str
) -> tuple[list[tuple[int, str, float, float]], list[tuple[str, str, str]]]:
    """(the price-sheet runs with RSS and CPU after each, the other runs: collector,
    status, error). ``prelude`` runs first in ``serve`` (the resolver failure)."""
    sheet = Sheet(workdir / "sheet.csv", args.offers)
    env = serve_env(url, args, workdir, sheet, origins)
    log_path = workdir / "serve.log"
    code = f"{prelude}\nfrom tracker.cli import main; main()"
    command = [sys.executable, "-c", code, "serve"]
    command += ["--log-format", "json", "--http", free_address()]
    runs: list[tuple[int, str, float, float]] = []
    others: list[tuple[str, str, str]] = []
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, env=env, cwd=workdir, stdout=log, stderr=log)
    deadline = time.monotonic() + args.minutes * 60
    try:
        with log_path.open(encoding="utf-8", errors="replace") as lines:
            while time.monotonic() < deadline and proc.poll() is None:
                line = lines.readline()
                if not line:
                    time.sleep(0.05)
                    continue
                if not line.startswith("{"):
                    continue
                event = json.loads(line)
                if event.get("event") != "run":
                    continue
                if event.get("collector") != "pricesheet":
                    others.append((event["collector"], event["status"], event.get("error", "")))
                    continue
                rss, cpu = sample(proc.pid)
                runs.append((len(runs) + 1, str(event["status"]), rss, cpu))
                print(
                    f"run {len(runs):3d} {event['status']:9} "
                    f"{float(event['duration_seconds']):6.2f} s  "
                    f"price changes {event.get('price_changes', '-')!s:>5}  "
                    f"rss {rss:7.1f} MiB  cpu {cpu:7.2f} s  failed runs so far {len(others)}",
                    flush=True,
                )
                sheet.move(args.moving)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code_ = proc.wait(timeout=120)
    if code_ != 0 or not runs:
        sys.exit(f"serve exited {code_} after {len(runs)} runs; its log:\n{log_path.read_text()}")
    failed = [r for r in runs if r[1] != "succeeded"]
    if failed:
        sys.exit(f"{len(failed)} runs did not succeed; the log: {log_path}")
    check_failures(args, others, log_path)
    return runs, others


def check_failures(args: argparse.Namespace, others: list[tuple[str, str, str]], log: Path) -> None:
    """Every failing collector failed each run, with the error of its kind."""
    for name, kind in FAILING[: args.failing]:
        mine = [o for o in others if o[0] == name]
        wrong = [o for o in mine if o[1] != "failed" or EXPECTED_ERROR[kind] not in o[2]]
        if not mine or wrong:
            sys.exit(f"{name} ({kind}): {len(mine)} runs, unexpected: {wrong[:2]}; log: {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--cadence", type=float, default=5.0, help="seconds between runs")
    parser.add_argument("--offers", type=int, default=20_000)
    parser.add_argument("--moving", type=int, default=None, help="prices moved per run (5 %%)")
    parser.add_argument("--warm-up", type=int, default=5, help="runs left out of the slope")
    parser.add_argument(
        "--failing",
        type=int,
        default=0,
        choices=range(len(FAILING) + 1),
        help="keyless collectors whose endpoints fail (503, refused, hang, unresolvable), "
        "plus the seven that need a key, with none",
    )
    args = parser.parse_args()
    args.moving = args.offers // 20 if args.moving is None else args.moving
    outage = outage_module()
    with (
        scratch_database() as url,
        tempfile.TemporaryDirectory() as tmp,
        outage.Outage() as endpoints,
    ):
        engine = make_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        runs, others = soak(url, args, Path(tmp), endpoints.origins, outage.PRELUDE)
    counted = runs[args.warm_up - 1 :] if len(runs) > args.warm_up else runs
    rss = [r[2] for r in counted]
    cpu_per_run = (runs[-1][3] - runs[0][3]) / max(1, len(runs) - 1)
    per_run = slope(rss)
    verdict = "met" if per_run < 0.5 else "NOT met"
    print(f"target mib_per_run < 0.5 after the first {args.warm_up} runs: {verdict}")
    print(
        f"soak runs={len(runs)} rss_start_mib={rss[0]:.1f} rss_end_mib={rss[-1]:.1f} "
        f"mib_per_run={per_run:.3f} cpu_s_per_run={cpu_per_run:.3f} "
        f"failing={args.failing} failed_runs={sum(o[1] == 'failed' for o in others)}"
    )


if __name__ == "__main__":
    main()
