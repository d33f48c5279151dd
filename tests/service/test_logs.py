"""Structured logs: one JSON object per line, extra fields kept, secrets masked."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from tracker.service.logs import configure_logging, secrets_of
from tracker.settings import GcpSettings, Settings


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def settings_with_secrets(tmp_path: Path) -> Settings:
    key_file = tmp_path / "gcp-key"
    key_file.write_text("key-from-a-file-123\n")
    return Settings(
        database_url="postgresql://tracker:pg-password-456@db:5432/gpu",
        gcp=GcpSettings(api_key_file=key_file),
    )


def test_secrets_are_found_in_fields_files_and_the_database_url(tmp_path: Path) -> None:
    settings = settings_with_secrets(tmp_path)
    assert set(secrets_of(settings)) == {"key-from-a-file-123", "pg-password-456"}
    direct = Settings(gcp=GcpSettings(api_key=SecretStr("direct-key-789")))
    assert secrets_of(direct) == ["direct-key-789"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_secrets_never_reach_the_output(tmp_path: Path, fmt: str, restore_root: None) -> None:
    stream = io.StringIO()
    configure_logging(settings_with_secrets(tmp_path), fmt=fmt, stream=stream)  # type: ignore[arg-type]
    log = logging.getLogger("tracker.test")
    log.error("GET https://x/?key=key-from-a-file-123 failed", extra={"url": "pg-password-456"})
    try:
        raise RuntimeError("connect to postgresql://tracker:pg-password-456@db failed")
    except RuntimeError:
        log.exception("boom")

    output = stream.getvalue()
    assert "key-from-a-file-123" not in output
    assert "pg-password-456" not in output
    assert output.count("***") >= 3


def test_json_lines_carry_extra_fields(tmp_path: Path, restore_root: None) -> None:
    stream = io.StringIO()
    configure_logging(Settings(), fmt="json", stream=stream)
    logging.getLogger("tracker.test").info(
        "run %s succeeded",
        "aws:spot",
        extra={"event": "run", "offers_seen": 12, "collector": "aws"},
    )
    [line] = stream.getvalue().splitlines()
    record = json.loads(line)
    assert record["message"] == "run aws:spot succeeded"
    assert record["level"] == "info" and record["logger"] == "tracker.test"
    assert (record["event"], record["offers_seen"], record["collector"]) == ("run", 12, "aws")
