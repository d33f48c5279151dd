"""``offers`` and ``gpus``: reading what was collected (``history`` is tracker.cli.history)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from tracker import format as fmt_people
from tracker.catalog import chip_unit
from tracker.cli.context import MAX_ROWS, CliError, open_store
from tracker.cli.currency import CurrencyOption, currency_view
from tracker.cli.names import check_gpus, check_providers, check_regions
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err, money
from tracker.filters import OfferFilter
from tracker.format import pricing_label
from tracker.models import Availability, PricingModel
from tracker.store import DatabaseError
from tracker.views.errors import ReadError
from tracker.views.offers import SortKey, gpu_catalog_rows, offer_row, offer_rows, unknown_gpu_rows

__all__ = [
    "CSV_COLUMNS",
    "OFFER_HEAD",
    "SortKey",
    "offer_row",
    "offer_rows",
    "register",
    "share_cell",
]

CSV_COLUMNS = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "interconnect",
    "fabric",
    "network_gbps",
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "display_currency",
    "display_price_per_hour",
    "display_price_per_gpu_hour",
    "net_price_per_hour",
    "net_price_per_hour_usd",
    "net_price_per_gpu_hour_usd",
    "discount",
    "availability",
    "obtainability_7d",
    "obtainability_30d",
    "first_seen",
    "last_seen",
)
"""The CSV columns (documented in the README; JSON rows carry every key of offer_row)."""


def gpus_cell(row: Mapping[str, Any]) -> str:
    """``8× H100-SXM``: how many of which GPU, in one short cell."""
    return fmt_people.gpus(row["gpu_count"], row["gpu_model"])


def share_cell(value: Any) -> str:
    """``43%``: a share of a window, blank where the provider never said."""
    return "" if value is None else f"{float(value):.0%}"


def pricing_cell(value: Any) -> str:
    """``on-demand``, ``reserved 1y``: the way providers' pages say it."""
    return "" if value is None else pricing_label(str(value))


def fabric_cell(row: Mapping[str, Any]) -> str:
    """``efa 3200``: the inter-node fabric and one instance's Gbit/s; blank where the
    provider states neither (an unknown fabric is never shown as a name)."""
    fabric = "" if row.get("fabric") in (None, "unknown") else str(row["fabric"])
    gbps = row.get("network_gbps")
    return f"{fabric} {'' if gbps is None else f'{gbps:f}'}".strip()


OFFER_HEAD = (
    Column("provider", "provider"),
    Column("instance_type", "instance"),
    Column("region", "region", priority=1),
    Column("zone", "zone", priority=3),
    Column("pricing", "pricing", pricing_cell, priority=2),
    Column("payment_option", "payment", priority=4),
    Column("", "GPUs", gpus_cell, priority=2),
)
"""Which offer a table row is: the leading columns of every offer table."""


def net_columns(symbol: str, unit: str = "GPU") -> tuple[Column, ...]:
    """The "your price" columns (net of the account's discounts) and the rule's name."""
    return (
        Column("display_net_price_per_hour", f"your {symbol}/h", money, justify="right"),
        Column("display_net_price_per_gpu_hour", f"your {symbol}/{unit}·h", money, justify="right"),
        Column("discount", "discount", lambda v: v or "", priority=2),
    )


def offer_table(symbol: str = "$", unit: str = "GPU", *, net: bool = False) -> tuple[Column, ...]:
    """The table display: short headers, prices in the view currency rounded for
    reading (``$/h``, ``CNY/h``), VRAM in GiB per GPU, availability and obtainability
    (``got 7d``: the share of the last 7 days it was reported rentable) blank where
    unknown (so the columns show only where a provider says). The provider's own currency and
    exact figures are in the JSON and CSV. ``net``: discounts are configured, so
    the net price ("your price") and the rule stand beside the list price. ``unit``:
    what the per-unit price counts (``accelerator`` where a row is a TPU, Trainium or
    Inferentia chip: :func:`tracker.catalog.chip_unit`)."""
    return (
        *OFFER_HEAD,
        Column("gpu_memory_gib", "VRAM", justify="right", priority=5),
        Column("", "fabric Gb/s", fabric_cell, priority=6),
        Column("display_price_per_hour", f"{symbol}/h", money, justify="right"),
        Column("display_price_per_gpu_hour", f"{symbol}/{unit}·h", money, justify="right"),
        *(net_columns(symbol, unit) if net else ()),
        Column(
            "availability",
            "avail.",
            lambda v: "" if v == Availability.UNKNOWN else str(v),
            priority=3,
        ),
        Column("obtainability_7d", "got 7d", share_cell, justify="right", priority=4),
        Column("obtainability_30d", "got 30d", share_cell, justify="right", priority=5),
    )


OFFER_TABLE = offer_table()


def _figure(value: Any) -> str:
    return "" if value is None else f"{value:,}"


GPU_TABLE = (
    Column("name", "GPU"),
    Column("vendor", "vendor", priority=4),
    Column("kind", "kind", priority=6),
    Column("architecture", "architecture", priority=5),
    Column("year", "year", priority=4, justify="right"),
    Column("vram_gib", "VRAM GiB", justify="right"),
    Column("memory_bandwidth_gbs", "GB/s", _figure, justify="right", priority=2),
    Column("bf16_tflops", "BF16 TF", _figure, justify="right", priority=1),
    Column("fp16_tflops", "FP16 TF", _figure, justify="right", priority=3),
    Column("fp8_tflops", "FP8 TF", _figure, justify="right", priority=2),
    Column("fp32_tflops", "FP32 TF", _figure, justify="right", priority=3),
    Column("nvlink", "NVLink", priority=3),
)
"""The catalog for reading (dense tensor TFLOPS); the datasheet sources are in JSON/CSV."""
UNKNOWN_GPU_TABLE = (
    Column("raw_name", "raw name"),
    Column("provider", "provider"),
    Column("series", "series", justify="right", priority=2),
    Column("example_instance_type", "e.g. instance", priority=1),
)


def offers(
    ctx: typer.Context,
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu",
            "-g",
            help="GPU model or family, e.g. H100 (every H100 variant) or h100-sxm (repeatable).",
        ),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    pricing: Annotated[list[PricingModel] | None, typer.Option("--pricing")] = None,
    min_vram: Annotated[
        float | None,
        typer.Option(
            "--min-vram",
            min=0,
            max=1e6,
            help="Minimum usable VRAM per GPU, GiB (a GPU slice counts its share).",
        ),
    ] = None,
    min_gpus: Annotated[float | None, typer.Option("--min-gpus", min=0, max=1e6)] = None,
    available: Annotated[
        bool,
        typer.Option(
            "--available",
            help="Only offers the provider last reported as available (or low stock).",
        ),
    ] = False,
    sort: Annotated[SortKey, typer.Option("--sort")] = SortKey.price,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, max=MAX_ROWS)] = None,
    currency: CurrencyOption = "USD",
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Current offers (listed, latest price), cheapest first (compared in USD at the
    latest exchange rates; shown in --currency)."""
    engine = open_store(ctx)
    check_providers(ctx, engine, provider)
    check_regions(region)
    check_gpus(engine, gpu)  # an unknown name is exit 2, as in history
    view = currency_view(ctx, engine, currency)
    try:
        where = OfferFilter.of(
            gpu=gpu,
            provider=provider,
            region=region,
            pricing=pricing,
            min_vram=min_vram,
            min_gpus=min_gpus,
            available=available,
        )
        rows = offer_rows(engine, view, where, sort=sort, limit=limit)
    except (DatabaseError, ReadError) as exc:
        raise CliError(str(exc)) from None
    view.report()
    if not rows and not view.usd.skipped:
        filtered = any(
            (gpu, provider, region, pricing, min_vram is not None, min_gpus is not None, available)
        )
        err(
            "no offer matches these filters"
            if filtered
            else "no offers stored yet; run 'gpu-tracker collect' first"
        )
    unit = chip_unit(str(r["gpu_model"]) for r in rows)
    table = offer_table(view.symbol, unit, net=bool(view.discounts))
    emit(rows, fmt, columns=CSV_COLUMNS, table=table)


def gpus(
    ctx: typer.Context,
    unknown: Annotated[
        bool, typer.Option("--unknown", help="Stored GPU names the catalog does not recognise.")
    ] = False,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """The GPU catalog (datasheet figures), or the unrecognised names seen in collected data."""
    if unknown:
        engine = open_store(ctx)
        try:
            rows = unknown_gpu_rows(engine)
        except DatabaseError as exc:
            raise CliError(str(exc)) from None
        unknown_columns = ("raw_name", "provider", "series", "example_instance_type")
        emit(
            rows,
            fmt,
            columns=unknown_columns,
            table=UNKNOWN_GPU_TABLE,
            title="unrecognised GPU names",
        )
        return
    rows = gpu_catalog_rows()
    emit(rows, fmt, table=GPU_TABLE, title="GPU catalog")


def register(app: typer.Typer) -> None:
    app.command("offers")(offers)
    app.command("gpus")(gpus)
