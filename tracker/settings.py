"""Configuration: ``tracker.toml`` overlaid by ``GPU_TRACKER_*`` environment variables.

Precedence is environment over file over defaults, so a deployment can keep one
TOML in its image and change a single value per environment. Secrets are
``SecretStr`` (they never print) and may come from a ``*_FILE`` path, the
convention Docker and Kubernetes secrets use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, ClassVar

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = [
    "SECRET_ENV",
    "ConfigError",
    "Settings",
    "default_database_url",
    "environment_secrets",
    "load_settings",
    "read_secret",
    "secret_values",
]

ENV_PREFIX = "GPU_TRACKER_"
CONFIG_ENV = "GPU_TRACKER_CONFIG"
SECRET_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",  # the legacy name botocore still reads
    "PGPASSWORD",  # libpq's; docker-compose.yml passes the database password this way
)
"""Credentials libraries read from the environment themselves, outside :class:`Settings`."""


class ConfigError(Exception):
    """Configuration that cannot be used; the message is one line naming the setting."""


def default_database_url() -> str:
    path = Path(platformdirs.user_data_dir("gpu-tracker")) / "tracker.db"
    return f"sqlite:///{path}"


def _split_csv(value: Any) -> Any:
    """Accept ``a,b,c`` from the environment as well as a TOML list."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


CsvList = Annotated[list[str], NoDecode]


def read_secret(value: SecretStr | None, file: Path | None, name: str) -> SecretStr | None:
    """The secret itself, or the stripped content of its ``*_FILE``; never both."""
    if file is None:
        return value
    if value is not None:
        raise ConfigError(f"{name}: set either the value or {name}_file, not both")
    try:
        return SecretStr(file.read_text(encoding="utf-8").strip())
    except OSError as exc:
        raise ConfigError(f"{name}_file: cannot read {file}: {exc.strerror}") from None


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HttpSettings(_Section):
    """Shared by every httpx-based collector (see collectors/http.py)."""

    timeout_seconds: float = Field(30.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    backoff_base_seconds: float = Field(0.5, ge=0)
    backoff_max_seconds: float = Field(30.0, ge=0)


class PriceSheetSettings(_Section):
    enabled: bool = True
    path: Path | None = None


class AwsSettings(_Section):
    enabled: bool = True
    regions: CsvList = Field(default_factory=list)
    """Empty means every region the Price List reports GPU offers in."""
    pricing_region: str = "us-east-1"
    spot: bool = True
    spot_lookback_days: int = Field(7, ge=1, le=90)
    spot_advisor_url: str = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
    include_accelerators: bool = True
    """Keep Inferentia/Trainium instances (as non-GPU accelerators)."""
    endpoint_url: str | None = None
    """Overrides both pricing and EC2 endpoints; AWS_ENDPOINT_URL_* still work when unset."""
    pricing_endpoint_url: str | None = None
    """Price List API endpoint only (a VPC endpoint or proxy); wins over ``endpoint_url``."""
    ec2_endpoint_url: str | None = None
    """EC2 endpoint only; wins over ``endpoint_url``. Applies to every region queried."""
    max_attempts: int = Field(8, ge=1, le=30)
    """botocore adaptive-retry attempts per call (throttling is retried with backoff)."""

    _split = field_validator("regions", mode="before")(_split_csv)


class AzureSettings(_Section):
    enabled: bool = True
    endpoint_url: str = "https://prices.azure.com/api/retail/prices"
    """Retail Prices API base; NextPageLinks are re-rooted on it (proxies, mirrors)."""
    regions: CsvList = Field(default_factory=list)
    """armRegionName values; empty means one all-regions query."""
    currency_code: str = "USD"
    """Currency the API prices in; non-USD needs ``fx_rates.<code>`` or items are skipped."""
    include_low_priority: bool = False
    """Store Low Priority meters (as spot with offering_class "low_priority"), never as Spot."""
    discover_unknown_sizes: bool = False
    """Fetch every VM meter instead of only the sizes in collectors/azure_sizes.py, so GPU
    sizes missing from that table are reported (many more requests)."""

    _split = field_validator("regions", mode="before")(_split_csv)

    @field_validator("currency_code")
    @classmethod
    def _currency(cls, value: str) -> str:
        code = value.strip().upper()
        if len(code) != 3 or not code.isalpha():
            raise ValueError(f"must be a 3-letter ISO 4217 code, got {value!r}")
        return code


class GcpSettings(_Section):
    """Cloud Billing Catalog access for the GCP collector (collectors/gcp.py)."""

    enabled: bool = True
    api_key: SecretStr | None = None
    """Sent as ``x-goog-api-key``; without one, Application Default Credentials are used."""
    api_key_file: Path | None = None
    endpoint_url: str | None = None
    """``host[:port]`` or ``http(s)://host[:port]`` (a gateway, mirror or test server);
    default ``cloudbilling.googleapis.com``."""
    regions: CsvList = Field(default_factory=list)
    """Empty means every region a GPU SKU is sold in."""
    currency_code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    """Currency the catalog is asked to price in; non-USD needs ``fx_rates``."""
    page_size: Annotated[int, Field(ge=1, le=5000)] = 5000
    timeout_seconds: Annotated[float, Field(gt=0)] = 60.0
    """Per request."""
    retry_initial_seconds: Annotated[float, Field(ge=0)] = 1.0
    retry_max_seconds: Annotated[float, Field(ge=0)] = 30.0
    retry_deadline_seconds: Annotated[float, Field(gt=0)] = 300.0
    """Total time one page may spend retrying 429/5xx before the run fails."""

    _split = field_validator("regions", mode="before")(_split_csv)

    @field_validator("endpoint_url")
    @classmethod
    def _check_endpoint(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        import re  # local: this section is the only user

        value = value.strip().rstrip("/")
        host = r"(?:[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])"
        match = re.fullmatch(rf"(?:https?://)?{host}(?::\d{{1,5}})?", value)
        if match is None:
            raise ValueError(
                f"expected host[:port] or http(s)://host[:port] without a path, got {value!r}"
            )
        return value

    def resolved_api_key(self) -> SecretStr | None:
        return read_secret(self.api_key, self.api_key_file, "gcp.api_key")


def _endpoint_origin(value: str | None) -> str | None:
    """``scheme://host[:port]`` that replaces a documented URL's origin (its path is kept)."""
    if value is None or not value.strip():
        return None
    from urllib.parse import urlsplit  # local: only the GPU-cloud sections use it

    value = value.strip().rstrip("/")
    parts = urlsplit(value if "://" in value else f"https://{value}")
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
        raise ValueError(
            f"expected http(s)://host[:port] without a path (the documented path is kept), "
            f"got {value!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


class KeyedCloudSettings(_Section):
    """A GPU cloud whose API needs a key: the section's own setting, its ``*_file``, or
    the provider's conventional variable (``LAMBDA_API_KEY``, ``RUNPOD_API_KEY``)."""

    _fallback_env: ClassVar[str] = ""
    _section: ClassVar[str] = ""

    enabled: bool = True
    api_key: SecretStr | None = None
    api_key_file: Path | None = None
    endpoint_url: str | None = None
    """Replaces scheme, host and port of the documented endpoint; the path is kept."""

    _origin = field_validator("endpoint_url")(_endpoint_origin)

    def resolved_api_key(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        key = read_secret(self.api_key, self.api_key_file, f"{self._section}.api_key")
        if key is not None and key.get_secret_value().strip():
            return key
        fallback = (os.environ if environ is None else environ).get(self._fallback_env, "")
        return SecretStr(fallback.strip()) if fallback.strip() else None

    @classmethod
    def key_setting(cls) -> str:
        """How a user sets the key, for the one line that says it is missing or refused."""
        return f"GPU_TRACKER_{cls._section.upper()}__API_KEY (or {cls._fallback_env})"


class LambdaSettings(KeyedCloudSettings):
    """Lambda Cloud instance types (collectors/lambda_cloud.py)."""

    _fallback_env: ClassVar[str] = "LAMBDA_API_KEY"
    _section: ClassVar[str] = "lambda"


class RunPodSettings(KeyedCloudSettings):
    """RunPod GraphQL ``gpuTypes`` (collectors/runpod.py)."""

    _fallback_env: ClassVar[str] = "RUNPOD_API_KEY"
    _section: ClassVar[str] = "runpod"


class VastAiSettings(_Section):
    """Vast.ai public offer search (collectors/vastai.py); no key needed."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://console.vast.ai``; the path is kept."""
    allocated_storage: Decimal = Field(Decimal(100), gt=0)
    """GB of disk the search prices in: ``dph_total`` includes its hourly cost."""
    page_size: int = Field(1000, ge=2, le=10000)
    """Offers asked for per request; a full page is followed by the next price band."""
    include_bids: bool = True
    """Also search interruptible (``type: bid``) offers and store them as spot."""

    _origin = field_validator("endpoint_url")(_endpoint_origin)


class OciSettings(_Section):
    """Oracle Cloud public price list (collectors/oci.py); no credentials."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://apexapps.oracle.com``; the path is kept."""
    include_preemptible: bool = True
    """Store preemptible capacity (50 % of on-demand) as spot for the shapes that support it."""

    _origin = field_validator("endpoint_url")(_endpoint_origin)


class SchedulerSettings(_Section):
    """How ``gpu-tracker serve`` runs collectors (see tracker/service/).

    Each collector gets up to two jobs: its *spot* scope every ``spot_minutes`` and
    its *standard* scope (on-demand + reserved) every ``default_minutes``, because
    spot prices move by the minute and list prices by the month. ``cadences``
    overrides one collector (``aws = 720`` for its standard scope, ``"aws.spot" = 5``
    for its spot scope), in minutes; fractions are allowed (tests use seconds).
    """

    collectors: CsvList = Field(default_factory=list)
    """Run only these collectors (empty: every registered, enabled collector; one whose
    credentials are missing stays scheduled and records skipped runs until they are back)."""
    default_minutes: float = Field(default=360, gt=0)
    spot_minutes: float = Field(default=15, gt=0)
    cadences: dict[str, float] = Field(default_factory=dict)
    jitter_seconds: int = Field(default=30, ge=0)
    """Random delay added to each firing, so replicas and providers are not hit in step."""
    misfire_grace_seconds: int = Field(default=300, ge=1)
    """A run that could not start on time still runs if it is at most this late."""
    stale_after_cadences: float = Field(default=3.0, gt=1)
    """A job with no successful run for this many cadences is reported stale."""
    db_retry_seconds: float = Field(default=60.0, gt=0)
    """After a database failure, retry the job this soon instead of a whole cadence later."""
    http: str = "127.0.0.1:8080"
    """Where /livez, /readyz, /healthz and /metrics listen (``host:port``; ``""``: no server)."""
    shutdown_timeout_seconds: float = Field(default=30.0, gt=0)
    """On SIGTERM, how long a running collection may take to commit or roll back."""
    health_db_timeout_seconds: float = Field(default=3.0, gt=0)
    max_workers: int = Field(default=4, ge=1, le=64)
    """Jobs that may run at once in one process (each job still runs at most once)."""

    _split = field_validator("collectors", mode="before")(_split_csv)

    @field_validator("cadences")
    @classmethod
    def _positive_cadences(cls, value: dict[str, float]) -> dict[str, float]:
        for name, minutes in value.items():
            if minutes <= 0:
                raise ValueError(f"cadence for {name!r} must be > 0 minutes, got {minutes}")
        return value

    @field_validator("http")
    @classmethod
    def _host_port(cls, value: str) -> str:
        value = value.strip()
        if value:
            host, sep, port = value.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
                raise ValueError(f"expected host:port, got {value!r}")
        return value

    def cadence_minutes(self, collector: str, spot: bool) -> float:
        """The cadence of one collector's spot or standard job."""
        if spot:
            return self.cadences.get(f"{collector}.spot", self.spot_minutes)
        return self.cadences.get(collector, self.default_minutes)


_LAMBDA_ENV_ALIAS = f"{ENV_PREFIX}lambda".lower()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        nested_model_default_partial_update=True,
        populate_by_name=True,
    )

    _toml_file: ClassVar[Path | None] = None

    database_url: str = Field(default_factory=default_database_url)
    fx_rates: dict[str, Decimal] = Field(default_factory=dict)
    """USD per one unit of a currency, e.g. ``{EUR = "1.08"}``; prices in a currency
    without a rate are skipped (counted), never converted with a guess."""
    http: HttpSettings = Field(default_factory=HttpSettings)
    pricesheet: PriceSheetSettings = Field(default_factory=PriceSheetSettings)
    aws: AwsSettings = Field(default_factory=AwsSettings)
    azure: AzureSettings = Field(default_factory=AzureSettings)
    gcp: GcpSettings = Field(default_factory=GcpSettings)
    lambda_: LambdaSettings = Field(
        default_factory=LambdaSettings, validation_alias=_LAMBDA_ENV_ALIAS
    )
    """``[lambda]`` in TOML, ``GPU_TRACKER_LAMBDA__…`` in the environment (``lambda`` is a
    Python keyword, hence the field name)."""
    runpod: RunPodSettings = Field(default_factory=RunPodSettings)
    vastai: VastAiSettings = Field(default_factory=VastAiSettings)
    oci: OciSettings = Field(default_factory=OciSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    plugins: dict[str, str] = Field(default_factory=dict)
    """Extra collectors by name as ``"module:Class"``, for code that is not an installed
    distribution (entry points are the normal way to register one)."""
    profiles_path: Path | None = None
    """Extra workload profiles (TOML) on top of the built-in ones."""

    @model_validator(mode="before")
    @classmethod
    def _lambda_section(cls, data: Any) -> Any:
        """``lambda`` (TOML, keyword arguments) names the section the env alias fills.

        The alias is the prefixed name so the environment source reads only
        ``GPU_TRACKER_LAMBDA__*``, never a bare ``LAMBDA__*``.
        """
        if isinstance(data, dict):
            for key in ("lambda", "lambda_"):
                if key in data:
                    data = dict(data)
                    data[_LAMBDA_ENV_ALIAS] = data.pop(key)
        return data

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls._toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)

    def usd_rate(self, currency: str) -> Decimal | None:
        if currency == "USD":
            return Decimal(1)
        return self.fx_rates.get(currency)


def _secrets_in(value: Any, found: set[str]) -> None:
    """Every ``SecretStr`` under ``value``, and the content of each ``<name>_file``
    that stands beside a ``<name>`` field, so a new secret setting is covered by
    declaring it, with nothing to register."""
    if isinstance(value, SecretStr):
        found.add(value.get_secret_value())
    elif isinstance(value, BaseModel):
        fields = type(value).model_fields
        for name in fields:
            item = getattr(value, name)
            if name.endswith("_file") and name.removesuffix("_file") in fields:
                # An unreadable file is reported where the secret is used.
                if isinstance(item, Path):
                    with contextlib.suppress(OSError):
                        found.add(item.read_text(encoding="utf-8").strip())
            else:
                _secrets_in(item, found)
    elif isinstance(value, Mapping):
        for item in value.values():
            _secrets_in(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _secrets_in(item, found)


def secret_values(settings: Settings) -> set[str]:
    """Every secret the settings hold (the one list the log masking reads): each
    ``SecretStr``, each ``*_file`` secret's content, and the database password as
    given and as it looks URL-encoded, since a URL can reach a log either way."""
    from urllib.parse import quote

    from tracker.store.engine import url_password

    found: set[str] = set()
    _secrets_in(settings, found)
    password = url_password(settings.database_url)
    if password:
        found |= {password, quote(password, safe="")}
    found.discard("")
    return found


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """Credentials libraries read from the environment without going through
    :class:`Settings` (boto3's, libpq's), known before any configuration is loaded."""
    env = os.environ if environ is None else environ
    return {env[name] for name in SECRET_ENV if env.get(name)}


def _format_validation_error(exc: ValidationError, where: str) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"]) or "settings"
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"invalid configuration in {where}: {loc}: {first['msg']}{extra}"


def _find_config(explicit: Path | None, environ: Mapping[str, str]) -> Path | None:
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        return explicit
    from_env = environ.get(CONFIG_ENV)
    if from_env:
        path = Path(from_env)
        if not path.is_file():
            raise ConfigError(f"config file not found: {path} (from {CONFIG_ENV})")
        return path
    user = Path(platformdirs.user_config_dir("gpu-tracker")) / "tracker.toml"
    return user if user.is_file() else None


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Settings from ``config`` (or $GPU_TRACKER_CONFIG, or the user config dir) + env."""
    path = _find_config(config, os.environ)
    where = str(path) if path else "environment"
    Settings._toml_file = path
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, where)) from None
    except ValueError as exc:  # TOML syntax errors surface as ValueError subclasses
        raise ConfigError(f"invalid configuration in {where}: {exc}") from None
    finally:
        Settings._toml_file = None
