"""Structured logs: one JSON object per line, extra fields kept, secrets masked."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import Field, SecretStr

from tests.conftest import cli_runner
from tests.service.cloud_stub import CloudStub
from tracker.redact import secret_values
from tracker.service.logs import (
    LOG_LEVELS_ENV,
    RedactingFormatter,
    configure_logging,
    secrets_of,
)
from tracker.settings import GcpSettings, Section, Settings
from tracker.store.engine import url_password


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


def test_json_lines_carry_no_ansi_colour_codes(restore_root: None) -> None:
    # uvicorn logs each access/startup line with a second copy of the message in ANSI
    # colours as ``extra={"color_message": ...}`` (uvicorn/server.py, uvicorn/protocols).
    stream = io.StringIO()
    configure_logging(Settings(), fmt="json", stream=stream)
    logging.getLogger("uvicorn.error").info(
        "Uvicorn running on %s (Press CTRL+C to quit)",
        "http://127.0.0.1:8080",
        extra={"color_message": "Uvicorn running on \x1b[1m%s\x1b[0m (Press CTRL+C to quit)"},
    )
    [line] = stream.getvalue().splitlines()
    assert "\x1b" not in line and "\\u001b" not in line
    record = json.loads(line)
    assert "color_message" not in record
    assert record["message"] == "Uvicorn running on http://127.0.0.1:8080 (Press CTRL+C to quit)"


def test_text_lines_are_stamped_in_utc_with_a_z(restore_root: None) -> None:
    stream = io.StringIO()
    configure_logging(Settings(), fmt="text", stream=stream)
    record = logging.LogRecord("tracker.test", logging.INFO, __file__, 1, "hello", (), None)
    # 2026-03-01T12:00:00.250Z as epoch seconds: 1772366400 (20513 days x 86400 + 12 h).
    record.created, record.msecs = 1772366400.25, 250.0
    line = logging.getLogger().handlers[0].format(record)
    assert line == "2026-03-01T12:00:00.250Z INFO tracker.test: hello"


@pytest.mark.parametrize("asked", ["", "apscheduler=INFO"], ids=["quiet", "asked"])
def test_apscheduler_info_lines_only_when_asked(
    restore_root: None, monkeypatch: pytest.MonkeyPatch, asked: str
) -> None:
    monkeypatch.setenv(LOG_LEVELS_ENV, asked)
    stream = io.StringIO()
    configure_logging(Settings(), fmt="text", stream=stream)
    logging.getLogger("apscheduler.scheduler").info("Adding job tentatively")
    logging.getLogger("apscheduler.executors.default").info('Running job "x"')
    logging.getLogger("apscheduler.scheduler").warning("Run time of job x was missed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == (3 if asked else 1)
    assert lines[-1].endswith("Run time of job x was missed")
    logging.getLogger("apscheduler").setLevel(logging.NOTSET)


# -- every command, every secret, libraries quiet ------------------------------------------

AWS_CREDENTIALS = {
    "AWS_SESSION_TOKEN": "FAKE-SESSION-TOKEN-never-printed-0123456789",
    "AWS_ACCESS_KEY_ID": "AKIAFAKEKEYID4LOGTEST",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-access-key-never-printed",
}


@pytest.mark.parametrize("asked", [{}, {LOG_LEVELS_ENV: "botocore=DEBUG"}], ids=["quiet", "asked"])
def test_collect_at_debug_never_prints_the_aws_credentials(
    tmp_path: Path, asked: dict[str, str]
) -> None:
    run = cli_runner(f"sqlite:///{tmp_path / 'tracker.db'}", tmp_path)
    with CloudStub() as stub:
        result = run(
            "-vv", "collect", "--provider", "aws", extra_env=stub.env() | AWS_CREDENTIALS | asked
        )
    # The token went out with the request, so botocore had it to print.
    assert stub.aws_tokens == [AWS_CREDENTIALS["AWS_SESSION_TOKEN"]]
    output = result.stdout + result.stderr
    for name, secret in AWS_CREDENTIALS.items():
        assert secret not in output, f"{name} printed"
    assert "DEBUG tracker.service.logs: kept at WARNING" in result.stderr  # -vv is on
    if asked:
        # botocore's request line and signing steps were logged, their secrets masked
        assert "DEBUG botocore.endpoint: Sending http request" in result.stderr
        assert "'X-Amz-Security-Token': b'***'" in result.stderr
        assert "\nx-amz-security-token:***\n" in result.stderr  # the canonical request
        assert "\ncontent-type;host;x-amz-date;x-amz-security-token\n" in result.stderr
    else:
        assert " botocore." not in result.stderr  # no line from a botocore logger


def test_a_bad_log_levels_variable_is_a_one_line_usage_error(tmp_path: Path) -> None:
    run = cli_runner(f"sqlite:///{tmp_path / 'tracker.db'}", tmp_path)
    result = run("offers", extra_env={LOG_LEVELS_ENV: "botocore=LOUD"})
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "gpu-tracker: error: GPU_TRACKER_LOG_LEVELS: expected name=LEVEL "
        "(e.g. botocore=DEBUG), got 'botocore=LOUD'"
    )


def test_libraries_stay_at_warning_unless_named(restore_root: None) -> None:
    configure_logging(level="DEBUG", environ={})
    for name in ("botocore", "boto3", "urllib3", "google.auth", "httpx", "httpcore"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
    assert logging.getLogger("tracker.collect").getEffectiveLevel() == logging.DEBUG
    configure_logging(level="DEBUG", environ={LOG_LEVELS_ENV: "botocore=DEBUG, urllib3=info"})
    assert logging.getLogger("botocore.endpoint").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger("urllib3").getEffectiveLevel() == logging.INFO
    assert logging.getLogger("google.auth").getEffectiveLevel() == logging.WARNING


def test_a_new_secret_setting_is_masked_without_touching_the_logging_code(
    tmp_path: Path, restore_root: None
) -> None:
    class VaultSettings(Section):
        token: SecretStr | None = None
        token_file: Path | None = None
        tokens: dict[str, SecretStr] = Field(default_factory=dict)

    class Extended(Settings):
        vault: VaultSettings = VaultSettings()

    token_file = tmp_path / "vault-token"
    token_file.write_text("vault-token-from-a-file\n")
    settings = Extended(
        vault=VaultSettings(
            token_file=token_file, tokens={"eu": SecretStr("vault-token-in-a-mapping")}
        )
    )
    assert secret_values(settings) == {"vault-token-from-a-file", "vault-token-in-a-mapping"}
    stream = io.StringIO()
    configure_logging(settings, stream=stream, environ={})
    logging.getLogger("tracker.test").warning("vault said vault-token-from-a-file")
    assert stream.getvalue().endswith("vault said ***\n")


def test_the_database_password_is_masked_as_given_and_url_encoded() -> None:
    # "p@ss:w/rd-42" percent-encoded: @ -> %40, : -> %3A, / -> %2F
    settings = Settings(database_url="postgresql://tracker:p%40ss%3Aw%2Frd-42@db:5432/gpu")
    assert secret_values(settings) == {"p@ss:w/rd-42", "p%40ss%3Aw%2Frd-42"}
    assert url_password("sqlite:///tmp/x.db") is None
    assert url_password("not a url") is None


def test_environment_credentials_are_masked_before_any_settings_load(
    monkeypatch: pytest.MonkeyPatch, restore_root: None
) -> None:
    credentials = AWS_CREDENTIALS | {"PGPASSWORD": "libpq-password-from-compose"}
    for name, value in credentials.items():
        monkeypatch.setenv(name, value)
    stream = io.StringIO()
    configure_logging(None, stream=stream, service=False)
    logging.getLogger("tracker.test").warning("using %s", " ".join(credentials.values()))
    assert stream.getvalue() == "WARNING tracker.test: using *** *** *** ***\n"


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        # botocore.endpoint's request line (captured from botocore 1.44 at DEBUG)
        (
            "Sending http request: <AWSPreparedRequest method=POST, headers={"
            "'X-Amz-Date': b'20261130T073643Z', 'X-Amz-Security-Token': b'IQoJb3JpZ2luX2VjE'}>",
            "Sending http request: <AWSPreparedRequest method=POST, headers={"
            "'X-Amz-Date': b'20261130T073643Z', 'X-Amz-Security-Token': b'***'}>",
        ),
        # botocore.auth's canonical request, one header per line
        (
            "x-amz-date:20261130T073643Z\nx-amz-security-token:IQoJb3JpZ2luX2VjE\n",
            "x-amz-date:20261130T073643Z\nx-amz-security-token:***\n",
        ),
        # a header mapping dumped as JSON (google-auth's httpRequest extra)
        ('{"x-goog-api-key": "AIzaSyFAKEFAKE"}', '{"x-goog-api-key": "***"}'),
        ("Authorization: Bearer ya29.a0AfH6SMB", "Authorization: Bearer ***"),
    ],
)
def test_credentials_from_nowhere_in_the_settings_are_masked_by_where_they_stand(
    line: str, masked: str
) -> None:
    # A token from an AWS profile or instance metadata is not known by value.
    assert RedactingFormatter([]).redact(line) == masked
