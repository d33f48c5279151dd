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
        python bench/soak.py [--minutes 3] [--cadence 5] [--offers 20000]

The last line: ``soak runs= rss_start_mib= rss_end_mib= mib_per_run= cpu_s_per_run=``
(start and end are the RSS after the warm-up and after the last run). The target is
``mib_per_run`` under 0.5: a run that leaked a few MiB would fill a 512 MiB container
within a day at a 10-minute cadence.
"""

from __future__ import annotations

import argparse
import csv
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

from scratch_db import scratch_database  # bench/ is the script's own directory

from collectors.pricesheet import COLUMNS
from tracker.store import migrate
from tracker.store.engine import make_engine

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


def soak(url: str, args: argparse.Namespace, workdir: Path) -> list[tuple[int, str, float, float]]:
    sheet = Sheet(workdir / "sheet.csv", args.offers)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env.update(
        GPU_TRACKER_DATABASE_URL=url,
        GPU_TRACKER_PRICESHEET__PATH=str(sheet.path),
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({"pricesheet": args.cadence / 60}),
        GPU_TRACKER_SCHEDULER__JITTER_SECONDS="0",
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="100",
        XDG_CONFIG_HOME=str(workdir / "config"),
        XDG_DATA_HOME=str(workdir / "data"),
    )
    log_path = workdir / "serve.log"
    command = [sys.executable, "-c", "from tracker.cli import main; main()", "serve"]
    command += ["--collector", "pricesheet", "--log-format", "json", "--http", free_address()]
    runs: list[tuple[int, str, float, float]] = []
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
                rss, cpu = sample(proc.pid)
                runs.append((len(runs) + 1, str(event["status"]), rss, cpu))
                print(
                    f"run {len(runs):3d} {event['status']:9} "
                    f"{float(event['duration_seconds']):6.2f} s  "
                    f"price changes {event.get('price_changes', '-')!s:>5}  "
                    f"rss {rss:7.1f} MiB  cpu {cpu:7.2f} s",
                    flush=True,
                )
                sheet.move(args.moving)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    if code != 0 or not runs:
        sys.exit(f"serve exited {code} after {len(runs)} runs; its log:\n{log_path.read_text()}")
    failed = [r for r in runs if r[1] != "succeeded"]
    if failed:
        sys.exit(f"{len(failed)} runs did not succeed; the log: {log_path}")
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--cadence", type=float, default=5.0, help="seconds between runs")
    parser.add_argument("--offers", type=int, default=20_000)
    parser.add_argument("--moving", type=int, default=None, help="prices moved per run (5 %%)")
    parser.add_argument("--warm-up", type=int, default=5, help="runs left out of the slope")
    args = parser.parse_args()
    args.moving = args.offers // 20 if args.moving is None else args.moving
    with scratch_database() as url, tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        runs = soak(url, args, Path(tmp))
    counted = runs[args.warm_up - 1 :] if len(runs) > args.warm_up else runs
    rss = [r[2] for r in counted]
    cpu_per_run = (runs[-1][3] - runs[0][3]) / max(1, len(runs) - 1)
    per_run = slope(rss)
    verdict = "met" if per_run < 0.5 else "NOT met"
    print(f"target mib_per_run < 0.5 after the first {args.warm_up} runs: {verdict}")
    print(
        f"soak runs={len(runs)} rss_start_mib={rss[0]:.1f} rss_end_mib={rss[-1]:.1f} "
        f"mib_per_run={per_run:.3f} cpu_s_per_run={cpu_per_run:.3f}"
    )


if __name__ == "__main__":
    main()
