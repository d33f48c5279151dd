"""``alerts rules|test|list|send``: check the rules, try a channel, read and drain the outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.cli.output import Column, FormatOption, OutputFormat, emit
from tracker.settings import ConfigError
from tracker.store.engine import DatabaseError
from tracker.views.alerts import alert_rows, alerts, parse_since

__all__ = ["alert_rows", "parse_since", "register"]

app = typer.Typer(
    name="alerts",
    help="Alert rules, channels and the outbox (see config/alerts.toml).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _setup(ctx: typer.Context) -> Any:
    from tracker.alerts.setup import load_setup

    try:
        return load_setup(settings_of(ctx))
    except ConfigError as exc:
        raise CliError(str(exc), USAGE) from None


def _filters(rule: Any) -> str:
    parts = []
    for key in ("gpu_model", "provider", "region", "pricing", "profile", "events", "direction"):
        value = getattr(rule, key, None)
        if value and value != "either":
            shown = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
            parts.append(f"{key}={shown}")
    return " ".join(parts)


@app.command("rules")
def rules(ctx: typer.Context, fmt: FormatOption = OutputFormat.table) -> None:
    """Load and check the rules file (alerts.rules_file), and list its rules."""
    setup = _setup(ctx)
    if settings_of(ctx).alerts.rules_file is None:
        raise CliError(
            "no rules file: set alerts.rules_file or GPU_TRACKER_ALERTS__RULES_FILE", USAGE
        )
    rows = [
        {
            "name": r.name,
            "type": r.type,
            "threshold_percent": getattr(r, "threshold_percent", None),
            "filters": _filters(r),
            "channels": ",".join(r.channels if r.channels is not None else sorted(setup.channels)),
            "cooldown": str(r.cooldown) if r.cooldown else "",
        }
        for r in setup.rules
    ]
    emit(rows, fmt, columns=list(rows[0]) if rows else None, title="alert rules")


@app.command("test")
def test(
    ctx: typer.Context,
    channel: Annotated[str, typer.Option("--channel", help="slack, email, or a plugin's name.")],
) -> None:
    """Send a test message through one channel: 'ok', or the exact failure in one line."""
    from tracker.alerts.channels import DeliveryError, load_channels
    from tracker.alerts.digest import sample_digest

    try:
        channels = load_channels(settings_of(ctx))
    except ConfigError as exc:
        raise CliError(str(exc), USAGE) from None
    target = channels.get(channel)
    if target is None:
        known = ", ".join(sorted(channels)) or "none"
        raise CliError(f"channel {channel!r} is not configured (configured: {known})", USAGE)
    try:
        target.send(sample_digest())
    except DeliveryError as exc:
        raise CliError(f"{channel}: test failed: {exc}") from None
    typer.echo(f"{channel}: ok, test message accepted")


def _since(value: str | None) -> datetime | None:
    try:
        return parse_since(value)
    except ValueError as exc:
        raise CliError(f"--{exc}", USAGE) from None


ALERTS_TABLE = (
    Column("id", "id", priority=3),
    Column("created_at", "created"),
    Column("rule", "rule", priority=1),
    Column("channel", "channel", priority=1),
    Column("status", "status"),
    Column("attempts", "tries", justify="right", priority=3),
    Column("title", "title", priority=2, shrink=True, min_width=20),
    Column("last_error", "last error", priority=2, shrink=True, min_width=20),
)


@app.command("list")
def list_(
    ctx: typer.Context,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only alerts since: today, yesterday, an age (24h, 7d) or an ISO date/time.",
        ),
    ] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only dead deliveries (gave up after max_attempts).")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 200,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Queued alerts, newest first, one row per channel with its delivery status."""
    start = _since(since)
    engine = open_store(ctx)
    try:
        rows = alerts(engine, since=start, failed=failed, limit=limit)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    columns = ["id", "created_at", "rule", "channel", "status", "attempts", "title", "last_error"]
    emit(rows, fmt, columns=columns, table=ALERTS_TABLE, title="alerts")


@app.command("send")
def send(ctx: typer.Context) -> None:
    """Deliver what is pending and due now. Exits 1 if a channel failed."""
    from tracker.alerts.evaluate import evaluate
    from tracker.alerts.sender import drain

    setup = _setup(ctx)
    engine = open_store(ctx)
    settings = settings_of(ctx)
    try:
        if setup.active:  # failed runs trigger no hook: collector-health rules run here too
            evaluate(engine, setup.rules, list(setup.channels), health_only=True)
        result = drain(engine, settings.alerts, setup.channels)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    if result.busy:
        raise CliError("another sender is draining the outbox; try again shortly")
    for name, count in sorted(result.sent.items()):
        typer.echo(f"{name}: sent {count} alert(s)")
    if not result.sent and not result.failed:
        typer.echo("nothing due")
    if result.failed:
        name, error = sorted(result.failed.items())[0]
        more = f" (and {len(result.failed) - 1} more channel(s))" if len(result.failed) > 1 else ""
        raise CliError(f"{error}{more}")


def register(root: typer.Typer) -> None:
    root.add_typer(app)
