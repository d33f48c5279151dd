"""Configuration: ``tracker.toml`` overlaid by ``GPU_TRACKER_*`` environment variables.

Precedence is environment over file over defaults, so a deployment can keep one
TOML in its image and change a single value per environment. Secrets are
``SecretStr`` (they never print) and may come from a ``*_FILE`` path, the
convention Docker and Kubernetes secrets use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar, get_args

import platformdirs
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from tracker.discounts import DiscountRule, parse_discounts
from tracker.settings.alerts import AlertsSettings
from tracker.settings.alibaba import AlibabaSettings
from tracker.settings.base import (
    CONFIG_ENV,
    ENV_PREFIX,
    ConfigError,
    CsvList,
    KeyedCloudSettings,
    Section,
    default_database_url,
    read_secret,
)
from tracker.settings.fx import FxSettings
from tracker.settings.gpu_clouds import (
    AkashSettings,
    FluidstackSettings,
    HyperbolicSettings,
    HyperstackSettings,
    IbmSettings,
    LambdaSettings,
    LatitudeSettings,
    LiumSettings,
    MithrilSettings,
    NovitaSettings,
    OciSettings,
    PrimeIntellectSettings,
    RunPodSettings,
    SaladSettings,
    ShadeformSettings,
    SpheronSettings,
    ThunderComputeSettings,
    VastAiSettings,
)
from tracker.settings.huawei import HuaweiSettings
from tracker.settings.hyperscalers import AwsSettings, AzureSettings, GcpSettings
from tracker.settings.remote import RemoteSettings
from tracker.settings.service import HttpSettings, PriceSheetSettings, SchedulerSettings
from tracker.settings.small_clouds import (
    CloudRiftSettings,
    CudoSettings,
    DigitalOceanSettings,
    HotAisleSettings,
    JarvisLabsSettings,
    NebiusSettings,
    SeewebSettings,
    TensorDockSettings,
    VerdaSettings,
    VultrSettings,
)
from tracker.settings.tencent import TencentSettings
from tracker.settings.web import WebSettings

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "AkashSettings",
    "AlertsSettings",
    "AlibabaSettings",
    "AwsSettings",
    "AzureSettings",
    "CloudRiftSettings",
    "ConfigError",
    "CsvList",
    "CudoSettings",
    "DigitalOceanSettings",
    "FluidstackSettings",
    "FxSettings",
    "GcpSettings",
    "HotAisleSettings",
    "HttpSettings",
    "HuaweiSettings",
    "HyperbolicSettings",
    "HyperstackSettings",
    "IbmSettings",
    "JarvisLabsSettings",
    "KeyedCloudSettings",
    "LambdaSettings",
    "NebiusSettings",
    "OciSettings",
    "PriceSheetSettings",
    "PrimeIntellectSettings",
    "RemoteSettings",
    "RunPodSettings",
    "SaladSettings",
    "SchedulerSettings",
    "Section",
    "SeewebSettings",
    "Settings",
    "ShadeformSettings",
    "SpheronSettings",
    "TencentSettings",
    "TensorDockSettings",
    "ThunderComputeSettings",
    "VastAiSettings",
    "VerdaSettings",
    "VultrSettings",
    "WebSettings",
    "default_database_url",
    "load_settings",
    "read_secret",
]


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
    """USD per one unit of a currency the ECB does not publish, e.g. ``{AED = "0.2723"}``
    (the ``fx`` collector's stored ECB rates win where they exist, see tracker.fx).
    Prices are stored in their own currency; one without any rate is left out of USD
    views (counted, reported), never converted with a guess."""
    http: HttpSettings = Field(default_factory=HttpSettings)
    pricesheet: PriceSheetSettings = Field(default_factory=PriceSheetSettings)
    remote: RemoteSettings = Field(default_factory=RemoteSettings)
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
    akash: AkashSettings = Field(default_factory=AkashSettings)
    thundercompute: ThunderComputeSettings = Field(default_factory=ThunderComputeSettings)
    salad: SaladSettings = Field(default_factory=SaladSettings)
    alibaba: AlibabaSettings = Field(default_factory=AlibabaSettings)
    tencent: TencentSettings = Field(default_factory=TencentSettings)
    huawei: HuaweiSettings = Field(default_factory=HuaweiSettings)
    digitalocean: DigitalOceanSettings = Field(default_factory=DigitalOceanSettings)
    verda: VerdaSettings = Field(default_factory=VerdaSettings)
    tensordock: TensorDockSettings = Field(default_factory=TensorDockSettings)
    vultr: VultrSettings = Field(default_factory=VultrSettings)
    cudo: CudoSettings = Field(default_factory=CudoSettings)
    hotaisle: HotAisleSettings = Field(default_factory=HotAisleSettings)
    jarvislabs: JarvisLabsSettings = Field(default_factory=JarvisLabsSettings)
    seeweb: SeewebSettings = Field(default_factory=SeewebSettings)
    nebius: NebiusSettings = Field(default_factory=NebiusSettings)
    cloudrift: CloudRiftSettings = Field(default_factory=CloudRiftSettings)
    shadeform: ShadeformSettings = Field(default_factory=ShadeformSettings)
    primeintellect: PrimeIntellectSettings = Field(default_factory=PrimeIntellectSettings)
    novita: NovitaSettings = Field(default_factory=NovitaSettings)
    lium: LiumSettings = Field(default_factory=LiumSettings)
    mithril: MithrilSettings = Field(default_factory=MithrilSettings)
    latitude: LatitudeSettings = Field(default_factory=LatitudeSettings)
    hyperstack: HyperstackSettings = Field(default_factory=HyperstackSettings)
    fluidstack: FluidstackSettings = Field(default_factory=FluidstackSettings)
    hyperbolic: HyperbolicSettings = Field(default_factory=HyperbolicSettings)
    spheron: SpheronSettings = Field(default_factory=SpheronSettings)
    ibm: IbmSettings = Field(default_factory=IbmSettings)
    fx: FxSettings = Field(default_factory=FxSettings)
    alerts: AlertsSettings = Field(default_factory=AlertsSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    discounts: list[DiscountRule] = Field(default_factory=list)
    """Account discounts (``[[discounts]]``, see tracker.discounts): applied when read,
    like exchange rates, never written into a stored price."""
    plugins: dict[str, str] = Field(default_factory=dict)
    """Extra collectors by name as ``"module:Class"``, for code that is not an installed
    distribution (entry points are the normal way to register one)."""
    profiles_path: Path | None = None
    """Extra workload profiles (TOML) on top of the built-in ones."""

    def section(self, name: str) -> BaseModel | None:
        """The settings section of collector ``name`` (``lambda`` is the field
        ``lambda_``), or None for a collector that has none (a plugin)."""
        value = getattr(self, f"{name}_" if name == "lambda" else name, None)
        return value if isinstance(value, BaseModel) else None

    @field_validator("fx_rates")
    @classmethod
    def _positive_rates(cls, rates: dict[str, Decimal]) -> dict[str, Decimal]:
        """A rate <= 0 is no rate (tracker.fx ignores one): refuse it where it is set."""
        for code, rate in rates.items():
            if not rate > 0:
                raise ValueError(f"{code} = {rate} is not a rate (USD per one {code}, > 0)")
        return rates

    @field_validator("discounts", mode="before")
    @classmethod
    def _discount_rules(cls, value: Any) -> list[DiscountRule]:
        """Each rule validated here, so a bad one is one line naming it and its key."""
        return parse_discounts(value)

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
            sources.append(_ConfigFile(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)


class _ConfigFile(TomlConfigSettingsSource):
    """The TOML file, with its relative paths read relative to the file itself (as
    people expect of a config file): ``-c /abs/examples/quickstart.toml`` finds
    ``path = "examples/prices.csv"`` wherever it is run from. Paths from the
    environment stay relative to the working directory."""

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        data = super()._read_file(file_path)
        base = Path(str(file_path)).expanduser().absolute().parent
        return _anchored(Settings, data, base)


_SQLITE_URL = re.compile(r"^(sqlite(?:\+\w+)?:///)([^?]*)(.*)$")


def _anchored(model: type[BaseModel], data: dict[str, Any], base: Path) -> dict[str, Any]:
    """``data`` with each relative path of a ``Path`` field (and a relative SQLite file
    in ``database_url``) joined to ``base``, through the nested sections."""
    out = dict(data)
    for key, value in data.items():
        info = model.model_fields.get(key) or model.model_fields.get(f"{key}_")
        if info is None:
            continue
        kind = info.annotation
        if isinstance(value, str) and Path in (kind, *get_args(kind)):
            path = Path(value).expanduser()
            out[key] = value if path.is_absolute() else str(base / path)
        elif isinstance(value, dict) and isinstance(kind, type) and issubclass(kind, BaseModel):
            out[key] = _anchored(kind, value, base)
        elif key == "database_url" and isinstance(value, str):
            match = _SQLITE_URL.match(value)
            file = match.group(2) if match else ""
            if match and file and file != ":memory:" and not Path(file).expanduser().is_absolute():
                out[key] = f"{match.group(1)}{base / file}{match.group(3)}"
    return out


def _format_validation_error(exc: ValidationError, where: str) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"]) or "settings"
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    message = first["msg"]
    if loc == "discounts":  # parse_discounts' own line names the rule and the key
        message = message.removeprefix("Value error, ")
    return f"invalid configuration in {where}: {loc}: {message}{extra}"


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
