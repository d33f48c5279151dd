"""The Python API for notebooks: the same reads as the CLI, as pandas DataFrames.

    >>> import tracker.api
    >>> t = tracker.api.connect()  # the configured database, or database_url=...
    >>> t.offers(gpu="H100", limit=5)[["provider", "instance_type", "price_per_hour_usd"]]
    >>> t.history(gpu="H100", since="90d")  # cheapest $/GPU-hour per day, ending now
    >>> t.recommend("llm-7b-lora", top=3)

Each method takes the CLI command's options by their Python names (``--min-vram`` →
``min_vram``; a repeatable option takes one value or a list) and returns the rows of
``gpu-tracker <command> --format json`` as a DataFrame with the same columns, through
the same read layer (:mod:`tracker.views`) with the same settings (``fx_rates``,
profiles), so a notebook and the CLI never disagree.

Column types: times are tz-aware UTC (``datetime64[us, UTC]`` on pandas 3); money and
every other exact figure (prices, GPU counts, VRAM) are ``decimal.Decimal`` objects
(dtype ``object``), exact as stored, never binary floats;
``df["price_per_hour_usd"].astype(float)`` for a plot.
Bad arguments raise ``ValueError`` subclasses with one line naming the argument;
an unreachable database raises :class:`~tracker.store.engine.DatabaseError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd

from tracker.catalog import select_gpus
from tracker.filters import OfferFilter
from tracker.fx import USD
from tracker.history.compare import COMPARE_KEYS
from tracker.history.views import GPU_STEP_KEYS, OFFER_STEP_KEYS
from tracker.models import PricingModel
from tracker.settings import Settings, load_settings
from tracker.store import DatabaseError, Engine, make_engine, migrate, ping, redact_url
from tracker.views.currency import UnknownCurrency, load_view
from tracker.views.history import HistoryQuery, compare, read_history
from tracker.views.obtainability import GROUP_ROW_KEYS, group_rows
from tracker.views.offers import OFFER_ROW_KEYS, SortKey, offer_rows
from tracker.views.rankings import (
    RANKING_ROW_KEYS,
    choose_profile,
    profile_fields,
    profiles_of,
    rank_offers,
    ranking_rows,
)

__all__ = ["Tracker", "connect"]

Many = str | Sequence[str] | None


def connect(database_url: str | None = None, config: str | Path | None = None) -> Tracker:
    """The tracker's data: ``database_url`` (default: the configured one, as the CLI's
    ``--database-url``) with the settings from ``config`` (default: as the CLI finds
    them). The embedded SQLite database is migrated on first use, as the CLI does."""
    overrides = {"database_url": database_url} if database_url else {}
    settings = load_settings(Path(config) if config is not None else None, **overrides)
    engine = make_engine(settings.database_url)
    ping(engine)
    if not migrate.is_up_to_date(engine):
        if engine.dialect.name != "sqlite":
            shown = redact_url(settings.database_url)
            engine.dispose()
            raise DatabaseError(
                f"database {shown} schema is not {migrate.head_revision()}: "
                "run 'gpu-tracker db upgrade'"
            )
        migrate.upgrade(engine)
    return Tracker(engine, settings)


def _many(value: Many) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _pricing(value: str) -> PricingModel:
    try:
        return PricingModel(value)
    except ValueError:
        known = ", ".join(p.value for p in PricingModel)
        raise ValueError(f"pricing: {value!r} is not one of {known}") from None


def _frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows as a DataFrame: the rows' keys (or ``columns`` when there is no row), times
    as tz-aware UTC datetimes, money left as exact Decimals."""
    listed = [dict(r) for r in rows]
    frame = pd.DataFrame(listed, columns=list(columns) if columns and not listed else None)
    for name in frame.columns:
        values = frame[name].dropna()
        if len(values) and all(isinstance(v, datetime) for v in values):
            frame[name] = pd.to_datetime(frame[name], utc=True)
    return frame


class Tracker:
    """An open tracker database and its settings (:func:`connect`); close when done, or
    use it in a ``with`` block."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.settings = settings

    def __enter__(self) -> Tracker:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.engine.dispose()

    def offers(
        self,
        *,
        gpu: Many = None,
        provider: Many = None,
        region: Many = None,
        pricing: Many = None,
        min_vram: float | None = None,
        min_gpus: float | None = None,
        available: bool = False,
        sort: str = "price",
        limit: int | None = None,
        currency: str = USD,
    ) -> pd.DataFrame:
        """``gpu-tracker offers``: current offers, cheapest first (in USD at the latest
        rates), figures also in ``currency`` (the ``display_*`` columns)."""
        try:
            view = load_view(self.engine, self.settings, currency)
        except UnknownCurrency as exc:
            if not exc.no_rate:
                raise
            raise UnknownCurrency(exc.code, f"currency: {exc}", no_rate=True) from None
        where = OfferFilter.of(
            gpu=_many(gpu),
            provider=_many(provider),
            region=_many(region),
            pricing=[_pricing(p) for p in _many(pricing) or []],
            min_vram=min_vram,
            min_gpus=min_gpus,
            available=available,
        )
        rows = offer_rows(self.engine, view, where, sort=SortKey(sort), limit=limit)
        return _frame(rows, OFFER_ROW_KEYS)

    def history(
        self,
        *,
        gpu: Many = None,
        provider: Many = None,
        instance_type: str | None = None,
        region: Many = None,
        pricing: str = "on_demand",
        zone: str | None = None,
        payment_option: str | None = None,
        since: str | None = None,
        until: str | None = None,
        resample: str | None = None,
        at: datetime | None = None,
    ) -> pd.DataFrame:
        """``gpu-tracker history``: with ``gpu``, the cheapest offer per step (default
        daily over 30 days, ending now); with one ``provider``, ``instance_type`` and
        ``region``, that offer's intervals, or its price per step with ``resample``."""
        query = HistoryQuery(
            gpu=_many(gpu),
            provider=_many(provider),
            instance_type=instance_type,
            region=_many(region),
            pricing=_pricing(pricing),
            zone=zone,
            payment_option=payment_option,
            since=since,
            until=until,
            resample=resample,
            at=at,
        )
        result = read_history(
            self.engine, self.settings, query, now=datetime.now(UTC).replace(microsecond=0)
        )
        keys = {"gpu_steps": GPU_STEP_KEYS, "offer_steps": OFFER_STEP_KEYS}.get(result.kind)
        return _frame(result.rows, keys)

    def compare(self, *, gpu: Many = None, provider: Many = None) -> pd.DataFrame:
        """``gpu-tracker compare``: per GPU model × provider the cheapest on-demand, spot
        and reserved $/GPU-hour now, the spot discount and the 7/30-day change."""
        found = compare(self.engine, self.settings, gpu=_many(gpu), provider=_many(provider))
        return _frame(found.rows, COMPARE_KEYS)

    def obtainability(self, *, gpu: Many = None) -> pd.DataFrame:
        """``/api/v1/obtainability``: per provider × GPU model × region, the share of the
        last 7 and 30 days its offers were reported rentable and the median hours a
        sold-out offer took to come back (``gpu``: those models, families included)."""
        names = _many(gpu)
        models = None if not names else list(select_gpus(names).models)
        return _frame(group_rows(self.engine, gpu_models=models), GROUP_ROW_KEYS)

    def recommend(
        self,
        profile: str | None = None,
        *,
        top: int = 10,
        explain: bool = False,
        include_unavailable: bool = False,
        **overrides: Any,
    ) -> pd.DataFrame:
        """``gpu-tracker recommend``: offers ranked by the estimated cost of the whole
        job of ``profile`` (see ``gpu-tracker profiles list``), with ``recommend``'s
        options as overrides (``tokens=2e9``, ``spot=True``, ``max_price="4"``…), or an
        ad-hoc profile from the overrides alone."""
        profile_set = profiles_of(self.settings)
        listed = {
            k: _many(v) if k in ("provider", "region", "gpu") else v for k, v in overrides.items()
        }
        chosen = choose_profile(profile_set, profile, profile_fields(listed))
        found = rank_offers(
            self.engine,
            self.settings,
            chosen,
            profile_set=profile_set,
            top=top,
            explain=explain,
            include_unavailable=include_unavailable,
        )
        return _frame(ranking_rows(found.ranking, explain), RANKING_ROW_KEYS)
