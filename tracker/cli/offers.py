"""``offers`` and ``gpus``: reading what was collected (``history`` is tracker.cli.history)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

import typer

from tracker.catalog import all_specs, select_gpus
from tracker.cli.context import CliError, open_store
from tracker.cli.currency import CurrencyOption, CurrencyView, currency_view
from tracker.cli.names import check_providers, check_regions
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err, money
from tracker.format import gpus as gpus_label
from tracker.format import pricing_label
from tracker.models import Availability, PricingModel, offer_dict
from tracker.store import queries
from tracker.store.engine import DatabaseError, Engine

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
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "display_currency",
    "display_price_per_hour",
    "display_price_per_gpu_hour",
    "availability",
    "first_seen",
    "last_seen",
)
"""The CSV columns (documented in the README; JSON rows carry every key of offer_row)."""


def gpus_cell(row: Mapping[str, Any]) -> str:
    """``8× H100-SXM``: how many of which GPU, in one short cell."""
    return gpus_label(row["gpu_count"], row["gpu_model"])


def pricing_cell(value: Any) -> str:
    """``on-demand``, ``reserved 1y``: the way providers' pages say it."""
    return "" if value is None else pricing_label(str(value))


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


def offer_table(symbol: str = "$") -> tuple[Column, ...]:
    """The table display: short headers, prices in the view currency rounded for
    reading (``$/h``, ``CNY/h``), VRAM in GiB per GPU, availability blank where unknown (so the column
    shows only where a provider says). The provider's own currency and
    exact figures are in the JSON and CSV."""
    return (
        *OFFER_HEAD,
        Column("gpu_memory_gib", "VRAM", justify="right", priority=5),
        Column("display_price_per_hour", f"{symbol}/h", money, justify="right"),
        Column("display_price_per_gpu_hour", f"{symbol}/GPU·h", money, justify="right"),
        Column(
            "availability",
            "avail.",
            lambda v: "" if v == Availability.UNKNOWN else str(v),
            priority=3,
        ),
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


class SortKey(StrEnum):
    price = "price"
    price_per_gpu = "price_per_gpu"


_PER_GPU = Decimal("1e-6")


def offer_row(stored: queries.StoredOffer, view: CurrencyView | None = None) -> dict[str, Any]:
    """The documented JSON shape of one offer (keys are a public interface): every
    offer column, then the per-GPU price, the figures in the view currency, the times,
    then ``attributes``. ``stored.offer`` carries its USD figure (converted at the
    rate in force, :class:`CurrencyView`); ``view`` None shows USD."""
    o = stored.offer
    row = offer_dict(o)
    attributes = row.pop("attributes")
    usd = o.usd
    row["price_per_gpu_hour_usd"] = (usd / o.gpu_count).quantize(_PER_GPU)
    shown = usd if view is None else view.show(usd, original=o.price_per_hour, currency=o.currency)
    if shown is None:  # currency_view checked the view currency has a latest rate
        raise CliError(f"no exchange rate for {row['currency']} in {view and view.code}")
    row["display_currency"] = "USD" if view is None else view.code
    row["display_price_per_hour"] = shown
    row["display_price_per_gpu_hour"] = (shown / o.gpu_count).quantize(_PER_GPU)
    row["first_seen"] = stored.first_seen
    row["price_since"] = stored.price_since
    row["last_seen"] = stored.last_seen
    row["source"] = stored.source
    row["attributes"] = attributes
    return row


def offer_rows(
    engine: Engine,
    view: CurrencyView,
    *,
    gpu: Sequence[str] | None = None,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    min_vram: float | None = None,
    min_gpus: float | None = None,
    sort: SortKey = SortKey.price,
    limit: int | None = None,
    available: bool = False,
) -> list[dict[str, Any]]:
    """The ``offers`` listing as JSON rows: what the command prints and ``/api/v1/offers``
    answers, so both give the same rows for the same filters (raises DatabaseError).
    Offers are compared in USD at the latest rates and shown in ``view``'s currency; one
    without a rate is left out and counted in ``view`` (its ``report()`` says so)."""
    found = queries.current_offers(
        engine,
        gpu=select_gpus(list(gpu)) if gpu else None,
        provider=provider,
        region=region,
        pricing=pricing,
        min_vram=Decimal(str(min_vram)) if min_vram is not None else None,
        min_gpus=Decimal(str(min_gpus)) if min_gpus is not None else None,
        available=available,
    )
    priced = []
    for s in found:
        converted = view.offer(s.offer)
        if converted is not None:
            priced.append(replace(s, offer=converted))

    def order(s: queries.StoredOffer) -> tuple[Any, ...]:
        # The rows' own figures: price_per_hour_usd, or price_per_gpu_hour_usd as
        # offer_row rounds it; then provider, instance type, region, zone.
        o = s.offer
        usd = o.usd if sort is SortKey.price else (o.usd / o.gpu_count).quantize(_PER_GPU)
        return (usd, o.provider, o.instance_type, o.region, o.zone)

    # Sorted and cut before the rows are built: --limit 10 of 100,000 offers formats 10.
    priced.sort(key=order)
    return [offer_row(s, view) for s in (priced[:limit] if limit else priced)]


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
            help="Minimum usable VRAM per GPU, GiB (a GPU slice counts its share).",
        ),
    ] = None,
    min_gpus: Annotated[float | None, typer.Option("--min-gpus", min=0)] = None,
    available: Annotated[
        bool,
        typer.Option(
            "--available",
            help="Only offers the provider last reported as available (or low stock).",
        ),
    ] = False,
    sort: Annotated[SortKey, typer.Option("--sort")] = SortKey.price,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1)] = None,
    currency: CurrencyOption = "USD",
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Current offers (listed, latest price), cheapest first (compared in USD at the
    latest exchange rates; shown in --currency)."""
    engine = open_store(ctx)
    check_providers(ctx, engine, provider)
    check_regions(region)
    if gpu:
        from tracker.cli.history import gpu_selection, usage_errors

        with usage_errors():
            gpu_selection(engine, gpu)  # an unknown name is exit 2, as in history
    view = currency_view(ctx, engine, currency)
    try:
        rows = offer_rows(
            engine,
            view,
            gpu=gpu,
            provider=provider,
            region=region,
            pricing=pricing,
            min_vram=min_vram,
            min_gpus=min_gpus,
            sort=sort,
            limit=limit,
            available=available,
        )
    except DatabaseError as exc:
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
    emit(rows, fmt, columns=CSV_COLUMNS, table=offer_table(view.symbol))


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
        rows: list[dict[str, Any]] = [
            {
                "raw_name": u.raw_name,
                "provider": u.provider,
                "series": u.series,
                "example_instance_type": u.example_instance_type,
            }
            for u in queries.unknown_gpus(engine)
        ]
        unknown_columns = ("raw_name", "provider", "series", "example_instance_type")
        emit(
            rows,
            fmt,
            columns=unknown_columns,
            table=UNKNOWN_GPU_TABLE,
            title="unrecognised GPU names",
        )
        return
    rows = [
        {
            "name": g.name,
            "vendor": g.vendor,
            "kind": g.kind,
            "architecture": g.architecture,
            "year": g.year,
            "vram_gib": g.vram_gib,
            "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            "bf16_tflops": g.bf16_tflops,
            "fp16_tflops": g.fp16_tflops,
            "fp8_tflops": g.fp8_tflops,
            "fp32_tflops": g.fp32_tflops,
            "nvlink": g.nvlink,
            "source": g.source,
        }
        for g in all_specs()
    ]
    emit(rows, fmt, table=GPU_TABLE, title="GPU catalog")


def register(app: typer.Typer) -> None:
    app.command("offers")(offers)
    app.command("gpus")(gpus)
