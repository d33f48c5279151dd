"""``alerts rules|test|list|send|retry``: check the rules, try a channel, read and drain
the outbox, send what waits for a retry now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from tracker.cli.context import MAX_ID, MAX_ROWS, USAGE, CliError, open_store, settings_of
from tracker.cli.output import Column, FormatOption, OutputFormat, emit
from tracker.redact import secrets_of
from tracker.settings import ConfigError
from tracker.store import DatabaseError
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
    keys = ("gpu_model", "provider", "region", "pricing", "profile", "plan", "events", "direction")
    for key in keys:
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
    Column("next_attempt_at", "next attempt", priority=3),
    Column("message", "alert", priority=2, shrink=True, min_width=20),
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
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=MAX_ROWS)] = 200,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Queued alerts, newest first, one row per channel with its delivery status."""
    start = _since(since)
    engine = open_store(ctx)
    try:
        rows = alerts(
            engine, since=start, failed=failed, limit=limit, secrets=secrets_of(settings_of(ctx))
        )
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    # CSV: the columns it always had, then the new ones (a table shows ALERTS_TABLE)
    columns = ["id", "created_at", "rule", "channel", "status", "attempts", "title"]
    columns += ["last_error", "next_attempt_at", "message"]
    emit(rows, fmt, columns=columns, table=ALERTS_TABLE, title="alerts")


def _deliver(ctx: typer.Context, retry: tuple[bool, list[int]] | None = None) -> None:
    """Evaluate every rule (catching up on what a broken rules file held back),
    requeue what ``retry`` says (dead?, alert ids), deliver what is due, and say what
    still waits. Exits 1 if a channel failed."""
    from tracker.alerts.evaluate import evaluate
    from tracker.alerts.sender import drain
    from tracker.format import when
    from tracker.store.outbox import requeue, waiting

    setup = _setup(ctx)
    engine = open_store(ctx)
    settings = settings_of(ctx)
    now = datetime.now(UTC)
    try:
        if setup.active:
            evaluate(
                engine,
                setup.rules,
                list(setup.channels),
                fx_rates=settings.fx_rates,
                discounts=settings.discounts,
            )
        if retry is not None:
            dead, ids = retry
            found = requeue(engine, now, dead=dead, alert_ids=ids)
            missing = [i for i in ids if i not in found]
            if missing:
                what = "pending or dead" if dead else "pending (add --dead for dead ones)"
                raise CliError(f"alert {missing[0]}: no delivery is {what}")
            typer.echo(f"requeued {sum(found.values())} delivery(ies) of {len(found)} alert(s)")
        result = drain(engine, settings.alerts, setup.channels, secrets=secrets_of(settings))
        left = waiting(engine, datetime.now(UTC))
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    if result.busy:
        raise CliError("another sender is draining the outbox; try again shortly")
    for name, count in sorted(result.sent.items()):
        typer.echo(f"{name}: sent {count} alert(s)")
    for name, count, at in left:
        typer.echo(
            f"{name}: {count} delivery(ies) wait for a retry, the first at {when(at)} "
            f"(in {_wait(at - datetime.now(UTC))}; gpu-tracker alerts retry sends them now)"
        )
    if not result.sent and not result.failed and not left:
        typer.echo("nothing due")
    if result.failed:
        name, error = sorted(result.failed.items())[0]
        more = f" (and {len(result.failed) - 1} more channel(s))" if len(result.failed) > 1 else ""
        raise CliError(f"{error}{more}")


def _wait(left: timedelta) -> str:
    """``45 s``, ``12 min``, ``3 h``: how long until a retry, to the unit that matters."""
    seconds = max(int(left.total_seconds()), 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


@app.command("send")
def send(ctx: typer.Context) -> None:
    """Evaluate the rules and deliver what is pending and due now; say what waits for a
    retry. Exits 1 if a channel failed."""
    _deliver(ctx)


@app.command("retry")
def retry(
    ctx: typer.Context,
    ids: Annotated[
        list[int] | None,
        typer.Argument(min=1, max=MAX_ID, help="Alert ids (alerts list); default: every one."),
    ] = None,
    dead: Annotated[
        bool, typer.Option("--dead", help="Also dead deliveries (gave up after max_attempts).")
    ] = False,
) -> None:
    """Send deliveries waiting for a retry now (with --dead, dead ones too). A sent
    delivery is never sent again. Exits 1 if a channel failed."""
    _deliver(ctx, (dead, list(ids or [])))


def register(root: typer.Typer) -> None:
    root.add_typer(app)
