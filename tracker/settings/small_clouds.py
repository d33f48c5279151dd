"""Sections of the smaller GPU clouds: DigitalOcean, Verda (DataCrunch), TensorDock, Vultr,
CUDO, Hot Aisle, JarvisLabs, Seeweb and Nebius.

Each key comes from the section's own setting, its ``*_file`` (a mounted secret), or
the variable the provider's own SDK and CLI read, as for Lambda and RunPod.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import KeyedCloudSettings, Section, endpoint_origin, secret_or_env

__all__ = [
    "CloudRiftSettings",
    "CudoSettings",
    "DigitalOceanSettings",
    "HotAisleSettings",
    "JarvisLabsSettings",
    "NebiusSettings",
    "SeewebSettings",
    "TensorDockSettings",
    "VerdaSettings",
    "VultrSettings",
]


class CloudRiftSettings(KeyedCloudSettings):
    """CloudRift instance types (collectors/cloudrift.py). The list answers without a key;
    one set here or in ``CLOUDRIFT_API_KEY`` (CloudRift's own tools' name) is sent as
    ``X-API-Key`` all the same, so a revoked one is reported rather than ignored."""

    _fallback_env: ClassVar[str] = "CLOUDRIFT_API_KEY"
    _section: ClassVar[str] = "cloudrift"


class DigitalOceanSettings(KeyedCloudSettings):
    """DigitalOcean droplet sizes (collectors/digitalocean.py)."""

    _fallback_env: ClassVar[str] = "DIGITALOCEAN_TOKEN"
    _section: ClassVar[str] = "digitalocean"


class HotAisleSettings(KeyedCloudSettings):
    """Hot Aisle available VMs (collectors/hotaisle.py): an API key and the team it lists for."""

    _fallback_env: ClassVar[str] = "HOTAISLE_API_KEY"
    _section: ClassVar[str] = "hotaisle"

    team: str | None = None
    """The team handle whose available VMs are listed; else ``HOTAISLE_TEAM_HANDLE``."""

    def resolved_team(self, environ: Mapping[str, str] | None = None) -> str | None:
        team = (self.team or (os.environ if environ is None else environ).get(TEAM_ENV, "")).strip()
        return team or None


TEAM_ENV = "HOTAISLE_TEAM_HANDLE"


class JarvisLabsSettings(KeyedCloudSettings):
    """JarvisLabs ``server_meta`` (collectors/jarvislabs.py); ``JL_API_KEY`` is its SDK's name."""

    _fallback_env: ClassVar[str] = "JL_API_KEY"
    _section: ClassVar[str] = "jarvislabs"


class SeewebSettings(KeyedCloudSettings):
    """Seeweb Cloud Server GPU plans (collectors/seeweb.py), ``X-APITOKEN`` header."""

    _fallback_env: ClassVar[str] = "SEEWEB_API_TOKEN"
    _section: ClassVar[str] = "seeweb"

    currency: str = Field("EUR", pattern=r"^[A-Z]{3}$")
    """The API's prices carry no currency and no Seeweb document found names one; EUR is
    an assumption (Seeweb is Italian): set this if your account is billed otherwise."""


class TensorDockSettings(KeyedCloudSettings):
    """TensorDock v2 locations (collectors/tensordock.py).

    TensorDock prices the GPU and, on top, each vCPU, GB of RAM and GB of disk; an
    offer is priced with this shape per GPU (capped by what the location allows).
    TensorDock documents no default shape: 8 vCPUs and 32 GB per GPU are this tracker's
    choice (even vCPUs and whole 8 GB steps, as its modify rules ask).
    """

    _fallback_env: ClassVar[str] = ""
    _section: ClassVar[str] = "tensordock"

    vcpus_per_gpu: int = Field(8, ge=1, le=64)
    ram_gb_per_gpu: int = Field(32, ge=1, le=512)
    storage_gb: int = Field(100, ge=100, le=100_000)
    """Disk priced into every offer; 100 GB is TensorDock's documented minimum."""


class VultrSettings(Section):
    """Vultr public plan lists (collectors/vultr.py); no key needed."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://api.vultr.com``; the path is kept."""

    _origin = field_validator("endpoint_url")(endpoint_origin)


class CudoSettings(Section):
    """CUDO Compute VM machine types (collectors/cudo.py); the list is public, no key.

    CUDO prices each vCPU, GiB of RAM, GPU, GiB of disk and the IPv4 address per hour;
    an offer is priced with this shape per GPU (within the machine type's limits).
    """

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://rest.compute.cudo.org``; the path is kept."""
    vcpus_per_gpu: int = Field(8, ge=1, le=64)
    ram_gib_per_gpu: int = Field(32, ge=1, le=512)
    storage_gib: int = Field(100, ge=1, le=100_000)

    _origin = field_validator("endpoint_url")(endpoint_origin)


VERDA_ENV = (("client_id", "VERDA_CLIENT_ID"), ("client_secret", "VERDA_CLIENT_SECRET"))
DATACRUNCH_ENV = (
    ("client_id", "DATACRUNCH_CLIENT_ID"),
    ("client_secret", "DATACRUNCH_CLIENT_SECRET"),
)


class VerdaSettings(Section):
    """Verda (formerly DataCrunch) instance types (collectors/verda.py).

    OAuth2 client credentials: the section's own pair (or ``*_file``), else the SDK's
    ``VERDA_CLIENT_ID`` / ``VERDA_CLIENT_SECRET``, else the older
    ``DATACRUNCH_CLIENT_ID`` / ``DATACRUNCH_CLIENT_SECRET``.
    """

    enabled: bool = True
    client_id: SecretStr | None = None
    client_id_file: Path | None = None
    client_secret: SecretStr | None = None
    client_secret_file: Path | None = None
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://api.verda.com``; the path is kept."""

    _origin = field_validator("endpoint_url")(endpoint_origin)

    def credentials(
        self, environ: Mapping[str, str] | None = None
    ) -> tuple[SecretStr, SecretStr] | None:
        """(client id, client secret), or None when either half is missing everywhere."""
        for names in (VERDA_ENV, DATACRUNCH_ENV):
            pair = [
                secret_or_env(
                    getattr(self, name),
                    getattr(self, f"{name}_file"),
                    f"verda.{name}",
                    var,
                    environ,
                )
                for name, var in names
            ]
            if pair[0] is not None and pair[1] is not None:
                return pair[0], pair[1]
        return None

    @staticmethod
    def key_setting() -> str:
        return (
            "GPU_TRACKER_VERDA__CLIENT_ID and GPU_TRACKER_VERDA__CLIENT_SECRET "
            "(or VERDA_CLIENT_ID/VERDA_CLIENT_SECRET, DATACRUNCH_CLIENT_ID/DATACRUNCH_CLIENT_SECRET)"
        )


NEBIUS_TOKEN_ENV = "NEBIUS_IAM_TOKEN"


class NebiusSettings(Section):
    """Nebius AI Cloud platforms priced by its billing calculator (collectors/nebius.py).

    An IAM token (the section's, its ``*_file``, else ``NEBIUS_IAM_TOKEN``, the variable
    the Nebius SDK reads) or, taking precedence, a service-account credentials file
    (JSON, as the Nebius CLI writes it) that the SDK exchanges for tokens itself.
    """

    enabled: bool = True
    iam_token: SecretStr | None = None
    iam_token_file: Path | None = None
    credentials_file: Path | None = None
    endpoint_url: str | None = None
    """Sends every service to this ``http(s)://host:port`` (``http``: without TLS) instead
    of the SDK's ``<service>.api.nebius.cloud:443``."""
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$")
    """The calculator's costs carry no currency: they are the billing contract's."""

    _origin = field_validator("endpoint_url")(endpoint_origin)

    def resolved_api_key(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        """The IAM token (named as :class:`KeyedCloudSettings` names its key)."""
        return secret_or_env(
            self.iam_token, self.iam_token_file, "nebius.iam_token", NEBIUS_TOKEN_ENV, environ
        )

    @staticmethod
    def key_setting() -> str:
        return (
            f"GPU_TRACKER_NEBIUS__IAM_TOKEN (or {NEBIUS_TOKEN_ENV}) "
            "or GPU_TRACKER_NEBIUS__CREDENTIALS_FILE"
        )
