"""``offers``, ``history`` and ``gpus``: reading what was collected."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

import typer

from tracker.catalog import all_specs, select_gpus
from tracker.cli.context import CliError, open_store
from tracker.cli.output import Column, FormatOption, OutputFormat, cell, emit, err, money
from tracker.models import Availability, PricingModel, offer_dict
from tracker.store import queries
from tracker.store.engine import DatabaseError

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
    "availability",
    "first_seen",
    "last_seen",
)
"""The CSV columns (documented in the README; JSON rows carry every key of offer_row)."""


def gpus_cell(row: Mapping[str, Any]) -> str:
    """``8× H100-SXM``: how many of which GPU, in one short cell."""
    return f"{cell(row['gpu_count'])}× {row['gpu_model']}"


OFFER_HEAD = (
    Column("provider", "provider"),
    Column("instance_type", "instance"),
    Column("region", "region"),
    Column("zone", "zone"),
    Column("pricing", "pricing"),
    Column("payment_option", "payment"),
    Column("", "GPUs", gpus_cell),
)
"""Which offer a table row is: the leading columns of every offer table."""
OFFER_TABLE = (
    *OFFER_HEAD,
    Column("gpu_memory_gib", "VRAM", justify="right"),
    Column("price_per_hour_usd", "$/h", money, justify="right"),
    Column("price_per_gpu_hour_usd", "$/GPU·h", money, justify="right"),
    Column("availability", "avail.", lambda v: "" if v == Availability.UNKNOWN else str(v)),
)
"""The table display: short headers, dollars rounded for reading, VRAM in GiB per GPU,
availability blank where unknown (so the column shows only where a provider says).
The provider's own currency and exact figures are in the JSON and CSV."""


class SortKey(StrEnum):
    price = "price"
    price_per_gpu = "price_per_gpu"


def offer_row(stored: queries.StoredOffer) -> dict[str, Any]:
    """The documented JSON shape of one offer (keys are a public interface): every
    offer column, then the per-GPU price and the times, then ``attributes``."""
    o = stored.offer
    row = offer_dict(o)
    attributes = row.pop("attributes")
    row["price_per_gpu_hour_usd"] = (o.price_per_hour_usd / o.gpu_count).quantize(Decimal("1e-6"))
    row["first_seen"] = stored.first_seen
    row["price_since"] = stored.price_since
    row["last_seen"] = stored.last_seen
    row["source"] = stored.source
    row["attributes"] = attributes
    return row


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
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Current offers (listed, latest price), cheapest first."""
    engine = open_store(ctx)
    try:
        found = queries.current_offers(
            engine,
            gpu=select_gpus(gpu) if gpu else None,
            provider=provider,
            region=region,
            pricing=pricing,
            min_vram=Decimal(str(min_vram)) if min_vram is not None else None,
            min_gpus=Decimal(str(min_gpus)) if min_gpus is not None else None,
            available=available,
        )
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    rows = [offer_row(s) for s in found]
    key = "price_per_hour_usd" if sort is SortKey.price else "price_per_gpu_hour_usd"
    rows.sort(key=lambda r: (r[key], r["provider"], r["instance_type"], r["region"], r["zone"]))
    if limit:
        rows = rows[:limit]
    if not rows:
        filtered = any(
            (gpu, provider, region, pricing, min_vram is not None, min_gpus is not None, available)
        )
        err(
            "no offer matches these filters"
            if filtered
            else "no offers stored yet; run 'gpu-tracker collect' first"
        )
    emit(rows, fmt, columns=CSV_COLUMNS, table=OFFER_TABLE)


def history(
    ctx: typer.Context,
    provider: Annotated[str, typer.Option("--provider", "-p")],
    instance_type: Annotated[str, typer.Option("--instance-type", "-i")],
    region: Annotated[str, typer.Option("--region", "-r")],
    pricing: Annotated[PricingModel, typer.Option("--pricing")] = PricingModel.ON_DEMAND,
    zone: Annotated[
        str | None, typer.Option("--zone", help="Zone (spot); default: every zone.")
    ] = None,
    payment_option: Annotated[str | None, typer.Option("--payment-option")] = None,
    at: Annotated[
        datetime | None,
        typer.Option(
            "--at",
            help="Only the price in force at this time (ISO-8601; UTC unless it has an offset).",
        ),
    ] = None,
    show_availability: Annotated[
        bool,
        typer.Option(
            "--availability", help="Availability intervals instead of prices (where reported)."
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Price intervals of one offer: each row is one price and when it held."""
    engine = open_store(ctx)
    key = {"provider": provider, "instance_type": instance_type, "region": region}
    key["pricing"] = pricing.value
    if zone is not None:
        key["zone"] = zone
    if payment_option is not None:
        key["payment_option"] = payment_option
    series = queries.find_series(engine, **key)
    if not series:
        raise CliError(
            f"no stored offer {provider} {instance_type} {region} {pricing.value}"
            + (f" zone {zone}" if zone else "")
        )
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    title = f"{provider} {instance_type} {region} {pricing.value}"
    if show_availability:
        from tracker.cli.availability import AVAILABILITY_COLUMNS, availability_rows

        found = availability_rows(engine, series, at)
        emit(found, fmt, columns=AVAILABILITY_COLUMNS, title=f"{title} availability")
        return
    rows = []
    for s in series:
        if at is None:
            points = queries.price_history(engine, s.id)
        else:
            point = queries.price_at(engine, s.id, at)
            points = [point] if point is not None else []
        for p in points:
            rows.append(
                {
                    "zone": s.zone,
                    "payment_option": s.payment_option,
                    "offering_class": s.offering_class,
                    "price_per_hour": p.price,
                    "currency": p.currency,
                    "price_per_hour_usd": p.price_usd,
                    "first_seen": p.first_seen,
                    "last_seen": p.last_seen,
                    "ended_at": p.ended_at,
                }
            )
    emit(rows, fmt, title=title)


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
        emit(rows, fmt, columns=unknown_columns, title="unrecognised GPU names")
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
    columns = None if fmt is not OutputFormat.table else [c for c in rows[0] if c != "source"]
    emit(rows, fmt, columns=columns, title="GPU catalog")


def register(app: typer.Typer) -> None:
    app.command("offers")(offers)
    app.command("history")(history)
    app.command("gpus")(gpus)
