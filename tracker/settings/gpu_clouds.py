"""Sections of the GPU-cloud collectors: Lambda, RunPod, Vast.ai and Oracle Cloud."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from pydantic import Field, field_validator

from tracker.settings.base import KeyedCloudSettings, Section, endpoint_origin


class LambdaSettings(KeyedCloudSettings):
    """Lambda Cloud instance types (collectors/lambda_cloud.py)."""

    _fallback_env: ClassVar[str] = "LAMBDA_API_KEY"
    _section: ClassVar[str] = "lambda"


class RunPodSettings(KeyedCloudSettings):
    """RunPod GraphQL ``gpuTypes`` (collectors/runpod.py)."""

    _fallback_env: ClassVar[str] = "RUNPOD_API_KEY"
    _section: ClassVar[str] = "runpod"


class VastAiSettings(Section):
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

    _origin = field_validator("endpoint_url")(endpoint_origin)


class OciSettings(Section):
    """Oracle Cloud public price list (collectors/oci.py); no credentials."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://apexapps.oracle.com``; the path is kept."""
    include_preemptible: bool = True
    """Store preemptible capacity (50 % of on-demand) as spot for the shapes that support it."""

    _origin = field_validator("endpoint_url")(endpoint_origin)


class AkashSettings(Section):
    """Akash Console API GPU prices (collectors/akash.py); public, no key."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://console-api.akash.network``; the path is kept."""


class NovitaSettings(KeyedCloudSettings):
    """Novita AI GPU products (collectors/novita.py): ``NOVITA_API_KEY`` is the name
    Novita's own tools and SkyPilot read."""

    _fallback_env: ClassVar[str] = "NOVITA_API_KEY"
    _section: ClassVar[str] = "novita"


class LiumSettings(Section):
    """Lium public nodes feed (collectors/lium.py); no key needed."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://lium.io``; the path is kept."""

    _origin = field_validator("endpoint_url")(endpoint_origin)


class IbmSettings(Section):
    """IBM Cloud Global Catalog list prices (collectors/ibm.py); public, no key."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://globalcatalog.cloud.ibm.com``; the path is
    kept."""

    _origin = field_validator("endpoint_url")(endpoint_origin)


class ThunderComputeSettings(KeyedCloudSettings):
    """Thunder Compute pricing table (collectors/thundercompute.py). Thunder's CLI calls it
    public; a key set here is sent as a bearer token all the same."""

    _section: ClassVar[str] = "thundercompute"


class SaladSettings(KeyedCloudSettings):
    """SaladCloud GPU classes (collectors/salad.py): an API key (else ``SALAD_API_KEY``) and
    the organization whose GPU-class list is read."""

    _fallback_env: ClassVar[str] = "SALAD_API_KEY"
    _section: ClassVar[str] = "salad"

    organization: str | None = None
    """The organization name (as in the portal's URLs) the list is read for."""


class ShadeformSettings(KeyedCloudSettings):
    """Shadeform marketplace instance types (collectors/shadeform.py); the key is sent as
    ``X-API-KEY``, the name Shadeform's own tools read being ``SHADEFORM_API_KEY``."""

    _fallback_env: ClassVar[str] = "SHADEFORM_API_KEY"
    _section: ClassVar[str] = "shadeform"


class PrimeIntellectSettings(KeyedCloudSettings):
    """Prime Intellect GPU availability (collectors/primeintellect.py); a bearer key with
    ``Availability -> Read``, or ``PRIME_API_KEY`` (the name Prime's CLI reads)."""

    _fallback_env: ClassVar[str] = "PRIME_API_KEY"
    _section: ClassVar[str] = "primeintellect"


class MithrilSettings(KeyedCloudSettings):
    """Mithril spot auctions (collectors/mithril.py): ``MITHRIL_API_KEY`` is the name
    SkyPilot and Mithril's tools read."""

    _fallback_env: ClassVar[str] = "MITHRIL_API_KEY"
    _section: ClassVar[str] = "mithril"


class LatitudeSettings(KeyedCloudSettings):
    """Latitude.sh plans (collectors/latitude.py): ``LATITUDESH_AUTH_TOKEN`` is the name
    Latitude's CLI and Terraform provider read."""

    _fallback_env: ClassVar[str] = "LATITUDESH_AUTH_TOKEN"
    _section: ClassVar[str] = "latitude"


class HyperstackSettings(KeyedCloudSettings):
    """Hyperstack flavors and pricebook (collectors/hyperstack.py); the key is sent in the
    ``api_key`` header, as Hyperstack's SDK sends it."""

    _section: ClassVar[str] = "hyperstack"


class FluidstackSettings(KeyedCloudSettings):
    """Fluidstack available configurations (collectors/fluidstack.py); the key is sent in
    the ``api-key`` header, as Fluidstack's docs send it."""

    _section: ClassVar[str] = "fluidstack"


class HyperbolicSettings(KeyedCloudSettings):
    """Hyperbolic GPU marketplace (collectors/hyperbolic.py): a bearer key, or
    ``HYPERBOLIC_API_KEY`` (the name Hyperbolic's CLI and agent kits read)."""

    _fallback_env: ClassVar[str] = "HYPERBOLIC_API_KEY"
    _section: ClassVar[str] = "hyperbolic"


class SpheronSettings(KeyedCloudSettings):
    """Spheron GPU offers (collectors/spheron.py); a bearer key, or ``SPHERON_API_KEY`` (the
    name SkyPilot-catalog readers of Spheron take it from)."""

    _fallback_env: ClassVar[str] = "SPHERON_API_KEY"
    _section: ClassVar[str] = "spheron"
