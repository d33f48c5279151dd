"""A year of collection as the store would hold it, generated in bulk (set-based SQL).

Replaying 35,040 fifteen-minute runs of 10,000 spot offers through the write path takes
days, so bench/growth.py writes the rows those runs would leave directly. Two pieces:

* the **change process** (:func:`catalog_sql`, :func:`changes_sql`): which series exist
  (identity and hardware, spread over providers, regions, zones, pricing models) and, for
  each, at which run of its job its price changes and to what. It is seeded and
  deterministic (``hashint8extended`` of the series number and change number), so the
  same seed gives the same year however the rows are read;
* the **bulk model** (:func:`build`): the ``series`` (with their identity hash),
  ``price_points``, ``collection_runs`` and ``confirmed_scopes`` rows the write path
  leaves after those runs, computed from the change process in a few INSERT … SELECT
  statements. Unchanged re-collections write no interval: an open interval keeps the
  ``last_seen`` it was opened with and reads as its scope's last confirmation
  (tracker.store.last_seen); a closed one stores the run before the change.

tests/store/test_growth_model.py drives the same change process through the real write
path (``tracker.collect.run_collector``, one run per cadence) and checks that
:func:`build` yields the same rows, so the figures bench/growth.py prints are the write
path's storage, not a guess at it.

The process: each provider runs a *spot* job (spot series, every ``spot_minutes``) and a
*standard* job (on-demand and reserved series, every ``standard_minutes``), as
tracker.service.jobs plans them. Change ``j ≥ 1`` of a series happens at run
``j·P + jitter`` of its job, ``jitter`` uniform in ``[0, P)`` and ``P`` the mean number
of runs between changes: gaps between changes run from 1 to 2P−1 runs, P on average,
with no window function needed to find where an interval ends (the next change is the
same formula at ``j + 1``). Prices alternate above and below a per-series base, so
consecutive prices always differ and every change opens an interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from tracker.collect import scope_label
from tracker.models import PricingModel
from tracker.store import rollup
from tracker.store.identity import identity_hash
from tracker.store.schema import HARDWARE_COLUMNS, IDENTITY_COLUMNS

PROVIDERS = ("aws", "azure", "gcp", "oci", "alibaba", "tencent", "huawei", "lambda")
GPUS = (
    ("H100-SXM", 80),
    ("A100-80GB", 80),
    ("A100-40GB", 40),
    ("L40S", 48),
    ("L4", 24),
    ("A10G", 24),
    ("T4", 16),
    ("V100-16GB", 16),
)
SIZES = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge")
SPOT = frozenset({PricingModel.SPOT})
STANDARD = frozenset({PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y})
_KEY_BITS = 1 << 20
"""Series number and change number share one hash input: n·2^20 + j (j < 2^20)."""


@dataclass(frozen=True)
class Mix:
    """What is collected, how often, and how often prices move."""

    spot_series: int = 10_000
    spot_minutes: int = 15
    spot_change_hours: float = 6.0
    standard_series: int = 50_000
    standard_minutes: int = 360
    standard_change_days: float = 30.0
    providers: int = 2
    regions: int = 16
    days: float = 365.0
    seed: int = 17
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)

    def __post_init__(self) -> None:
        if not 1 <= self.providers <= len(PROVIDERS):
            raise ValueError(f"providers: 1 to {len(PROVIDERS)}")
        if self.spot_series < 0 or self.standard_series < 0 or self.regions < 1:
            raise ValueError("series counts must be >= 0 and regions >= 1")
        for job in self.jobs():
            if job.runs < 1:
                raise ValueError(f"{job.name}: {self.days} days hold no run")
            if job.runs // job.period + 2 >= _KEY_BITS:
                raise ValueError(f"{job.name}: too many changes per series")

    def scaled(self, factor: float) -> Mix:
        """The same mix with ``factor`` times the series (runs and cadences unchanged)."""
        return replace(
            self,
            spot_series=round(self.spot_series * factor),
            standard_series=round(self.standard_series * factor),
        )

    @property
    def series(self) -> int:
        return self.spot_series + self.standard_series

    def jobs(self) -> tuple[Job, Job]:
        minutes = 24 * 60 * self.days
        spot = Job(
            "spot",
            SPOT,
            first=0,
            count=self.spot_series,
            cadence=timedelta(minutes=self.spot_minutes),
            runs=int(minutes // self.spot_minutes),
            period=max(1, round(self.spot_change_hours * 60 / self.spot_minutes)),
        )
        standard = Job(
            "standard",
            STANDARD,
            first=self.spot_series,
            count=self.standard_series,
            cadence=timedelta(minutes=self.standard_minutes),
            runs=int(minutes // self.standard_minutes),
            period=max(1, round(self.standard_change_days * 24 * 60 / self.standard_minutes)),
        )
        return spot, standard


@dataclass(frozen=True)
class Job:
    """One collector job's share of the mix: its series and its runs."""

    name: str
    pricing_scope: frozenset[PricingModel]
    first: int
    """Series numbers first … first + count − 1 belong to this job."""
    count: int
    cadence: timedelta
    runs: int
    """Runs in the simulated period: run k at start + k·cadence."""
    period: int
    """Mean runs between price changes (P)."""

    @property
    def scope(self) -> str:
        """The ``collection_runs.scope`` its runs record (tracker.collect.scope_label)."""
        return scope_label(self.pricing_scope)


def _ts(value: datetime) -> str:
    return f"TIMESTAMPTZ '{value.astimezone(UTC).isoformat()}'"


def _secs(value: timedelta) -> str:
    return f"make_interval(secs => {value.total_seconds()})"


def _draw(mix: Mix, n: str, j: str, salt: int, below: int) -> str:
    """A whole number in [0, below) fixed by (seed, salt, series n, change j): integer
    arithmetic on a 64-bit hash, cheap enough for 15 M rows."""
    h = f"hashint8extended(CAST({n} AS bigint) * {_KEY_BITS} + {j}, {mix.seed * 8 + salt})"
    return f"(({h} % {below} + {below}) % {below})"


def _array(values: tuple[object, ...]) -> str:
    return "ARRAY[" + ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in values) + "]"


def catalog_sql(mix: Mix, job: Job | None = None) -> str:
    """One row per series: ``n``, ``job``, the series' identity and hardware columns (as
    the write path stores them from an Offer) and its ``base`` price.

    Series n of a job (m = n − first) is provider m mod P, then a pricing variant (on
    demand / reserved 1y / reserved 3y) or a zone (spot), then a region, then an
    instance type, so every n has its own identity.
    """
    lo, hi = (0, mix.series) if job is None else (job.first, job.first + job.count)
    spot_end = mix.spot_series
    p, r = mix.providers, mix.regions
    models = _array(tuple(g for g, _ in GPUS))
    vram = _array(tuple(v for _, v in GPUS))
    return f"""
SELECT n, job, provider, instance_type, region,
    CASE WHEN job = 'spot' THEN region || chr(97 + z) ELSE '' END AS zone,
    CASE WHEN job = 'spot' THEN 'spot'
        ELSE (ARRAY['on_demand', 'reserved_1y', 'reserved_3y'])[1 + v] END AS pricing,
    CASE WHEN job = 'spot' OR v = 0 THEN '' WHEN v = 1 THEN 'no_upfront'
        ELSE 'all_upfront' END AS payment_option,
    CASE WHEN job = 'spot' OR v = 0 THEN '' ELSE 'standard' END AS offering_class,
    'linux' AS os, gpu_model, 'NVIDIA ' || gpu_model AS gpu_raw_name, true AS gpu_known,
    CAST(gpu_count AS numeric) AS gpu_count, CAST(vram AS numeric) AS gpu_memory_gib,
    CAST(12 * gpu_count AS numeric) AS vcpus, CAST(96 * gpu_count AS numeric) AS memory_gib,
    CASE WHEN gpu_count = 8 THEN 'nvlink' ELSE 'pcie' END AS interconnect,
    'unknown' AS fabric, CAST(NULL AS numeric) AS network_gbps,
    round(gpu_count * (4000 + {_draw(mix, "n", "0", 1, 36001)}) / 10000.0, 4) AS base
FROM (
    SELECT a.n, a.job, b.z, b.v,
        ({_array(PROVIDERS)})[1 + a.m % {p}] AS provider,
        'g' || b.t || '.' || ({_array(SIZES)})[1 + b.t % {len(SIZES)}] AS instance_type,
        'region-' || lpad(CAST(1 + b.r AS text), 2, '0') AS region,
        ({models})[1 + b.t % {len(GPUS)}] AS gpu_model,
        ({vram})[1 + b.t % {len(GPUS)}] AS vram,
        (ARRAY[1, 2, 4, 8])[1 + (b.t / {len(GPUS)}) % 4] AS gpu_count
    FROM (
        SELECT n, CASE WHEN n < {spot_end} THEN 'spot' ELSE 'standard' END AS job,
            CASE WHEN n < {spot_end} THEN n ELSE n - {spot_end} END AS m
        FROM generate_series({lo}, {hi - 1}) AS n
    ) AS a
    CROSS JOIN LATERAL (
        SELECT CASE WHEN a.job = 'spot' THEN (a.m / ({p} * {r})) % 3 ELSE 0 END AS z,
            CASE WHEN a.job = 'spot' THEN 0 ELSE (a.m / {p}) % 3 END AS v,
            CASE WHEN a.job = 'spot' THEN (a.m / {p}) % {r} ELSE (a.m / ({p} * 3)) % {r}
                END AS r,
            a.m / ({p} * {r} * 3) AS t
    ) AS b
) AS c"""


def _change_run(mix: Mix, job: Job, j: str) -> str:
    """The run of ``job`` at which change ``j`` of series ``c.n`` happens (0: first seen)."""
    jitter = _draw(mix, "c.n", j, 0, job.period)
    return f"CASE WHEN {j} = 0 THEN 0 ELSE ({j}) * {job.period} + {jitter} END"


def changes_sql(mix: Mix, job: Job) -> str:
    """One row per price of each series of ``job``: ``n``, ``provider``, change number
    ``j`` (0: the first price), the run ``r`` that first sees it, the run ``next_r`` that
    first sees the next one (≥ job.runs: none within the period) and the ``price``."""
    step = f"(1 + {_draw(mix, 'c.n', 'i', 2, 25)})"  # percent
    sign = "CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END"
    return f"""
SELECT c.n, c.provider, i AS j, st.r, nx.r AS next_r,
    round(c.base * (100 + {sign} * {step}) / 100, 4) AS price
FROM ({catalog_sql(mix, job)}) AS c
CROSS JOIN generate_series(0, {job.runs // job.period + 1}) AS i
CROSS JOIN LATERAL (SELECT {_change_run(mix, job, "i")} AS r) AS st
CROSS JOIN LATERAL (SELECT {_change_run(mix, job, "i + 1")} AS r) AS nx
WHERE st.r < {job.runs}"""


SERIES_COLUMNS = IDENTITY_COLUMNS + tuple(c for c in HARDWARE_COLUMNS if c != "attributes")
"""What :func:`catalog_sql` gives of a series: the schema's identity and hardware columns,
but ``attributes`` (the synthetic offers report none: NULL, as the write path stores it)."""


def build(conn: Connection, mix: Mix) -> dict[str, float]:
    """Write the rows a year of ``mix``'s runs leaves, into a migrated, empty store.

    Rows go in in the order the runs write them (time, then spot before standard, then
    provider), so ids, heap pages and index pages come out as the write path leaves them.
    Foreign-key triggers are off during the load (``session_replication_role``) when the
    role may set that (a superuser, as the benchmark usually runs): every reference
    holds by construction, and the faithfulness test checks the rows. Under a plain role
    (CI's) the checks run; the rows are the same, the load only slower.
    Returns the seconds each table took.
    """
    raw = conn.connection.driver_connection
    assert raw is not None
    took = {}
    with raw.cursor() as cur:
        cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cur.fetchone()
        if row is not None and row[0]:
            cur.execute("SET LOCAL session_replication_role = replica")
        cur.execute("SET LOCAL work_mem = '256MB'")
        # No parameters anywhere below: '%' is SQL's modulo, not a placeholder.
        for table, write in (
            ("series", _series),
            ("price_points", _points),
            ("collection_runs", _runs),
            ("confirmed_scopes", _confirmed),
        ):
            started = time.perf_counter()
            write(cur, mix)
            took[table] = time.perf_counter() - started
    # The runs keep the cheapest-price rollup; here it is built whole, as migration
    # 0009 back-fills it (the faithfulness test compares it too).
    started = time.perf_counter()
    rollup.rebuild(conn)
    took["rollup"] = time.perf_counter() - started
    return took


def _series(cur: Any, mix: Mix) -> None:
    """Series number n is series id n + 1, first seen at its job's first run, with the
    identity hash the write path computes (tracker.store.identity, in Python)."""
    identity = ", ".join(IDENTITY_COLUMNS)
    cur.execute(f"SELECT n, {identity} FROM ({catalog_sql(mix)}) AS c")
    hashes = [(row[0], identity_hash(tuple(row[1:]))) for row in cur.fetchall()]
    cur.execute("CREATE TEMPORARY TABLE gt_growth_hash (n bigint, h bigint) ON COMMIT DROP")
    with cur.copy("COPY gt_growth_hash (n, h) FROM STDIN") as copy:
        for row in hashes:
            copy.write_row(row)
    cols = ", ".join(SERIES_COLUMNS)
    cur.execute(
        f"INSERT INTO series (id, identity_hash, {cols}, source, first_seen) "
        f"SELECT c.n + 1, h.h, {cols}, provider, {_ts(mix.start)} "
        f"FROM ({catalog_sql(mix)}) AS c JOIN gt_growth_hash h ON h.n = c.n ORDER BY c.n"
    )
    cur.execute(f"SELECT setval(pg_get_serial_sequence('series', 'id'), {max(mix.series, 1)})")


def _points(cur: Any, mix: Mix) -> None:
    """Each price an interval from the run that first saw it; a changed price closes
    at the run that saw the next (``last_seen``: the run before, the derived value the
    write path stores when it closes one); an open interval keeps the ``last_seen`` it
    was opened with (later sightings are confirmed by ``confirmed_scopes``, not written)."""
    start = _ts(mix.start)
    points = []
    for order, job in enumerate(mix.jobs()):
        if not job.count:
            continue
        at = f"{start} + {_secs(job.cadence)} * "
        closed = f"next_r < {job.runs}"
        points.append(
            f"SELECT n + 1 AS series_id, {order} AS job_order, provider, price, "
            f"{at}r AS first_seen, "
            f"CASE WHEN {closed} THEN {at}(next_r - 1) ELSE {at}r END AS last_seen, "
            f"CASE WHEN {closed} THEN {at}next_r END AS ended_at "
            f"FROM ({changes_sql(mix, job)}) AS ch"
        )
    if points:
        cur.execute(
            "INSERT INTO price_points (series_id, price, currency, first_seen, last_seen, "
            f"ended_at) SELECT series_id, price, 'USD', first_seen, last_seen, ended_at "
            f"FROM ({' UNION ALL '.join(points)}) AS pp "
            "ORDER BY first_seen, job_order, provider, series_id"
        )


def _runs(cur: Any, mix: Mix) -> None:
    """One succeeded run per provider per cadence of each job, with the write path's
    counts: all offers new at the first run, then the changes of that run."""
    start = _ts(mix.start)
    runs = []
    for order, job in enumerate(mix.jobs()):
        if not job.count:
            continue
        at = f"{start} + {_secs(job.cadence)} * k"
        new = "CASE WHEN k = 0 THEN g.seen ELSE 0 END"
        changed = "COALESCE(ch.changes, 0)"
        runs.append(
            f"SELECT g.provider, '{job.scope}' AS scope, {at} AS started_at, "
            f"{order} AS job_order, g.seen, {new} AS new_series, {changed} AS changes, "
            f"g.seen - {new} - {changed} AS unchanged "
            f"FROM (SELECT provider, count(*) AS seen FROM ({catalog_sql(mix, job)}) AS c "
            "GROUP BY provider) AS g "
            f"CROSS JOIN generate_series(0, {job.runs - 1}) AS k "
            f"LEFT JOIN (SELECT provider, r, count(*) AS changes FROM ({changes_sql(mix, job)}) "
            "AS c WHERE j >= 1 GROUP BY provider, r) AS ch "
            "ON ch.provider = g.provider AND ch.r = k"
        )
    if runs:
        cur.execute(
            "INSERT INTO collection_runs (provider, source, scope, status, started_at, "
            "finished_at, offers_seen, new_series, price_changes, unchanged, delisted, "
            "relisted, skipped, skip_reasons) "
            "SELECT provider, provider, scope, 'succeeded', started_at, "
            "started_at + interval '30 seconds', seen, new_series, changes, unchanged, "
            "0, 0, 0, CAST('null' AS json) "
            f"FROM ({' UNION ALL '.join(runs)}) AS r ORDER BY started_at, job_order, provider"
        )


def _confirmed(cur: Any, mix: Mix) -> None:
    """Each (source, region, pricing) a provider's job read is confirmed by that job's
    last run, with the newest interval id once that run had written (tracker.store
    .confirm): ids follow run order, so it is the last id of a run ordered no later."""
    start = _ts(mix.start)
    for order, job in enumerate(mix.jobs()):
        if not job.count:
            continue
        last = f"{start} + {_secs(job.cadence)} * {job.runs - 1}"
        job_of = "CASE WHEN s.pricing = 'spot' THEN 0 ELSE 1 END"
        cur.execute(
            "INSERT INTO confirmed_scopes (source, region, pricing, run_id, confirmed_at, "
            "max_point_id) SELECT sc.provider, sc.region, sc.pricing, cr.id, cr.started_at, "
            "COALESCE((SELECT p.id FROM price_points p JOIN series s ON s.id = p.series_id "
            f"WHERE (p.first_seen, {job_of}, s.provider) <= ({last}, {order}, sc.provider) "
            "ORDER BY p.id DESC LIMIT 1), 0) "
            f"FROM (SELECT DISTINCT provider, region, pricing FROM ({catalog_sql(mix, job)}) "
            "AS c) AS sc JOIN collection_runs cr ON cr.provider = sc.provider "
            f"AND cr.scope = '{job.scope}' AND cr.started_at = {last}"
        )
