"""Alibaba's key pair comes from the section (a value or a mounted ``*_file``) before
Alibaba's own variables, like every other provider secret (tracker.settings.base)."""

from __future__ import annotations

from pathlib import Path

from collectors.alibaba import ENV_KEY_ID, ENV_KEY_SECRET, AlibabaCollector
from tracker.settings import Settings


def test_the_key_pair_can_come_from_mounted_files(tmp_path: Path) -> None:
    key_id, secret = tmp_path / "id", tmp_path / "secret"
    key_id.write_text("LTAI-from-file\n", encoding="utf-8")
    secret.write_text("s3cret-from-file\n", encoding="utf-8")
    settings = Settings.model_validate(
        {"alibaba": {"access_key_id_file": key_id, "access_key_secret_file": secret}}
    )
    built = AlibabaCollector.from_settings(settings, {})
    # The files' contents, stripped of their trailing newline.
    assert built._key_id.get_secret_value() == "LTAI-from-file"
    assert built._key_secret.get_secret_value() == "s3cret-from-file"


def test_the_section_wins_over_the_variables_and_each_half_falls_back() -> None:
    env = {ENV_KEY_ID: "LTAI-env", ENV_KEY_SECRET: "secret-env"}
    settings = Settings.model_validate({"alibaba": {"access_key_id": "LTAI-section"}})
    built = AlibabaCollector.from_settings(settings, env)
    assert built._key_id.get_secret_value() == "LTAI-section"
    assert built._key_secret.get_secret_value() == "secret-env"
