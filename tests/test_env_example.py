"""Issue 26 point 7: ``.env.example`` names every credential and secret a collector or
channel reads, each with a comment saying what it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, SecretStr

from tracker.settings import Settings, alibaba, huawei, tencent
from tracker.settings.gpu_clouds import LambdaSettings, RunPodSettings

ROOT = Path(__file__).resolve().parent.parent
ENV_EXAMPLE = (ROOT / ".env.example").read_text(encoding="utf-8")

CONVENTIONAL = {
    # the providers' own variables the settings fall back to (tracker/settings/*)
    alibaba.KEY_ID_ENV,
    alibaba.KEY_SECRET_ENV,
    huawei.AK_ENV,
    huawei.SK_ENV,
    tencent.SECRET_ID_ENV,
    tencent.SECRET_KEY_ENV,
    LambdaSettings._fallback_env,
    RunPodSettings._fallback_env,
    # boto3's credential chain (collectors/aws*.py) and Google's ADC (collectors/gcp.py)
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
}


def _secret_settings() -> set[str]:
    """``GPU_TRACKER_<SECTION>__<FIELD>`` of every SecretStr setting."""
    names = set()
    for section, info in Settings.model_fields.items():
        model = info.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        for field, sub in model.model_fields.items():
            if SecretStr in (sub.annotation, *get_args(sub.annotation)):
                names.add(f"GPU_TRACKER_{section.rstrip('_').upper()}__{field.upper()}")
    return names


def test_every_secret_setting_and_provider_variable_is_named_with_a_comment() -> None:
    secrets = _secret_settings()
    # the ones the issue names, so the walk above cannot come back empty unnoticed
    assert {
        "GPU_TRACKER_ALERTS__SLACK_WEBHOOK_URL",
        "GPU_TRACKER_ALERTS__SMTP_PASSWORD",
        "GPU_TRACKER_LAMBDA__API_KEY",
        "GPU_TRACKER_RUNPOD__API_KEY",
        "GPU_TRACKER_HUAWEI__SK",
        "GPU_TRACKER_TENCENT__SECRET_KEY",
        "GPU_TRACKER_GCP__API_KEY",
        "GPU_TRACKER_WEB__TOKEN",
    } <= secrets
    lines = ENV_EXAMPLE.splitlines()
    missing, uncommented = [], []
    for name in sorted(secrets | CONVENTIONAL):
        at = [i for i, line in enumerate(lines) if re.search(rf"\b{name}\b", line)]
        if not at:
            missing.append(name)
            continue
        i = at[0]
        inline = "#" in lines[i].lstrip("# ").partition("=")[2] or "=" not in lines[i]
        above = i > 0 and lines[i - 1].startswith("# ") and "=" not in lines[i - 1]
        if not (inline or above):
            uncommented.append(name)
    assert missing == []
    assert uncommented == []
