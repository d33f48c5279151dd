"""``gpu-tracker calibrate``: record a throughput you measured, so estimates use it.

The row goes into a profiles file as a ``[[measured]]`` table (appended; the rest of the
file is left as written) and wins over the shipped measurements for that profile's
class on that GPU (``basis: measured (yours)``). Where it writes, in order: the file
named by ``--profiles-file``, ``settings.profiles_path`` (``GPU_TRACKER_PROFILES_PATH``),
else ``profiles.toml`` in the user config dir (``~/.config/gpu-tracker/`` on Linux).
Nothing else is ever written.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import platformdirs
import typer

from tracker.cli.context import USAGE, CliError, settings_of
from tracker.cli.recommend import ProfilesFileOption
from tracker.recommend import ProfileError, load_profiles
from tracker.recommend.measured import Unit, user_measurements

__all__ = ["calibrate", "register", "user_config_profiles"]


def user_config_profiles() -> Path:
    """The documented default: ``profiles.toml`` in the user config dir."""
    return Path(platformdirs.user_config_dir("gpu-tracker")) / "profiles.toml"


def calibrate(
    ctx: typer.Context,
    profile: Annotated[str, typer.Option("--profile", "-P", help="The profile you ran.")],
    gpu: Annotated[str, typer.Option("--gpu", "-g", help="The GPU it ran on.")],
    throughput: Annotated[
        float,
        typer.Option("--throughput", min=0.0, max=1e15, help="Over all the GPUs used."),
    ],
    unit: Annotated[str, typer.Option("--unit", help=", ".join(u.value for u in Unit))],
    gpus: Annotated[float, typer.Option("--gpus", min=0.0, max=1e6, help="GPUs it ran on.")] = 1.0,
    profiles_file: ProfilesFileOption = None,
) -> None:
    """Record your own measured throughput; it wins over the shipped measurements."""
    target = profiles_file or settings_of(ctx).profiles_path or user_config_profiles()
    row = {
        "profile": profile,
        "gpu": gpu,
        "gpu_count": gpus,
        "throughput": throughput,
        "unit": unit,
        "date": datetime.now(UTC).date().isoformat(),
    }
    try:
        profiles = load_profiles(target if target.is_file() else None)
        user_measurements([row], profiles.profiles, profiles.assumptions, str(target))
    except ProfileError as exc:
        raise CliError(str(exc), USAGE) from None
    before = target.read_text(encoding="utf-8") if target.is_file() else None
    block = "\n[[measured]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in row.items())
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((before or "") + block, encoding="utf-8")
        load_profiles(target)  # the whole file must still load
    except ProfileError as exc:
        _restore(target, before)
        raise CliError(f"{target}: not recorded: {exc}", USAGE) from None
    except OSError as exc:
        _restore(target, before)
        raise CliError(f"cannot write {target}: {exc.strerror}", USAGE) from None
    typer.echo(
        f"recorded {throughput:g} {unit} on {gpus:g} x {gpu} for profile {profile} "
        f"in {target} (estimates for it now use basis: measured (yours))"
    )


def _restore(target: Path, before: str | None) -> None:
    try:
        if before is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(before, encoding="utf-8")
    except OSError:
        pass


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)
