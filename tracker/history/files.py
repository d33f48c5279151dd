"""Output files named on the command line: which export format, and whether the file
can be written at all (checked before any query runs, so a typo fails fast in one line)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from tracker.history.args import HistoryArgumentError

__all__ = ["ExportFormat", "check_writable", "export_format"]


class ExportFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"


def export_format(path: Path, given: ExportFormat | None) -> ExportFormat:
    """The format asked for, else the one the file name ends with."""
    if given is not None:
        return given
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("csv", "parquet"):
        return ExportFormat(suffix)
    raise HistoryArgumentError(
        f"{path}: say --format csv or --format parquet (or name the file .csv / .parquet)"
    )


def check_writable(path: Path, option: str) -> None:
    """Fail before any work when ``path`` cannot be created (missing or read-only folder)."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise HistoryArgumentError(f"{option} {path}: is a directory")
    if not folder.is_dir():
        raise HistoryArgumentError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise HistoryArgumentError(f"{option} {path}: not writable")
