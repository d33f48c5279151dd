"""The read layer: every question a person asks of the stored data, answered once.

The layers, each importing only the ones above it::

    collectors/       provider payloads -> validated Offer records (pure parse_*)
    tracker/store/    the only package that speaks SQL: series, intervals, FX, runs, alerts
    tracker/views/    offers, histories (ending at now), compare, rankings, alerts list,
                      collector health, GPU catalog: typed rows (exact Decimal money, aware
                      UTC datetimes), the settings (fx_rates, profiles) passed explicitly
    faces             tracker/cli (tables, CSV, JSON), tracker/web (pages, /api/v1),
                      tracker.api (pandas for notebooks), alert channels: parse input,
                      call this layer, render (people's text through tracker.format)

Nothing here imports a face (typer, rich, FastAPI, pandas) or formats text for people;
the rows are the documented JSON rows before :func:`~tracker.encode.jsonable`.
"""

from __future__ import annotations

__all__: list[str] = []
