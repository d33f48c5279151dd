"""Workload profiles: what the user's job is, and what they will accept to run it.

A profile describes the *job* (model size, task, precision, amount of work) and the
*constraints* (GPU count, interconnect, spot, commitment and utilization, providers,
price, budget); the ranker turns it into a cost per offer. The amount of work may be
left out: the job's memory still decides which offers fit, and those rank by $/hour. Built-in profiles ship in
``tracker/recommend/profiles.toml``; a user file (``settings.profiles_path``, else
``profiles.toml`` in the user config dir) adds profiles, overrides built-ins of the
same name and may override :class:`~tracker.recommend.assumptions.Assumptions`.

Validation is strict (unknown keys rejected) and every error is one line naming the
profile and the field, because a typo in a profile would otherwise silently rank the
wrong job.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import platformdirs
from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from tracker.recommend import workload_bounds as b
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.cluster_fields import CLUSTER_FIELDS, ClusterFields
from tracker.recommend.errors import ProfileError
from tracker.recommend.field_errors import FieldError as _FieldError
from tracker.recommend.field_errors import describe as _describe
from tracker.recommend.kinds import (
    ALLOWED_PRECISIONS,
    COMPUTE_PRECISIONS,
    InterconnectNeed,
    Precision,
    Task,
    WorkloadClass,
    catalog_gpu_name,
)
from tracker.recommend.measured import Measurement, shipped_measurements, user_measurements

if TYPE_CHECKING:
    from tracker.recommend.saved_plans import SavedPlan

__all__ = [
    "ALLOWED_PRECISIONS",
    "BUILTIN_FILE",
    "COMPUTE_PRECISIONS",
    "DEFAULT_HISTORY_TOP",
    "InterconnectNeed",
    "Precision",
    "Profile",
    "ProfileError",
    "ProfileSet",
    "Task",
    "WorkloadClass",
    "catalog_gpu_name",
    "load_profile_file",
    "load_profiles",
    "make_profile",
    "user_profiles_path",
]

log = logging.getLogger(__name__)

BUILTIN_FILE = Path(__file__).with_name("profiles.toml")
DEFAULT_HISTORY_TOP = 10
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def _one_of(value: Any, enum: type[StrEnum]) -> Any:
    if isinstance(value, enum):
        return value
    allowed = ", ".join(m.value for m in enum)
    if not isinstance(value, str) or value.strip().lower() not in {m.value for m in enum}:
        raise ValueError(f"{value!r} is not one of {allowed}")
    return enum(value.strip().lower())


GpuResolver = Callable[[str], str | None]
"""Maps a GPU spelling to its canonical catalog name, or None when unknown."""


class Profile(ClusterFields):
    """One workload. Numbers are floats: they feed estimates, not invoices."""

    # Never Infinity or NaN, and bounded (tracker.recommend.workload_bounds).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str
    description: str = ""
    params: float = Field(gt=0, le=b.MAX_PARAMS)
    task: Task
    precision: Precision
    compute_precision: Precision | None = None
    workload_class: WorkloadClass | None = None
    """Which measurements calibrate the job (default: from task and size; see
    :func:`tracker.recommend.calibration.workload_class`)."""
    # work size: tokens, or images × epochs, or reference GPU-hours on a named GPU
    tokens: float | None = Field(default=None, gt=0, le=b.MAX_TOKENS)
    images: float | None = Field(default=None, gt=0, le=b.MAX_IMAGES)
    epochs: float | None = Field(default=None, gt=0, le=b.MAX_EPOCHS)
    reference_gpu_hours: float | None = Field(default=None, gt=0, le=b.MAX_HOURS)
    reference_gpu: str | None = None
    # shape of the work
    sequence_length: int | None = Field(default=None, ge=1, le=b.MAX_SHAPE)
    batch_size: int | None = Field(default=None, ge=1, le=b.MAX_SHAPE)
    # inference: one request's prompt and answer, and how many run at once ("max": as
    # many as fit beside the weights, i.e. offline throughput); ``tokens`` = output tokens
    input_tokens: int | None = Field(default=None, ge=1, le=b.MAX_SHAPE)
    output_tokens: int | None = Field(default=None, ge=1, le=b.MAX_SHAPE)
    concurrency: int | Literal["max"] | None = None
    kv_heads: int | None = Field(default=None, ge=1, le=b.MAX_SHAPE)
    """Key/value heads (grouped-query attention: 8 in Llama 2 70B and Llama 3); unset: one per head."""
    flops_per_image: float | None = Field(default=None, gt=0, le=b.MAX_TOKENS)
    activation_bytes_per_image: float | None = Field(default=None, gt=0, le=b.MAX_IMAGES)
    cnn_architecture: str | None = None
    """(cnn_training) the network whose measured activation memory per image applies
    (:data:`tracker.recommend.cnn_memory.ARCHITECTURES`: ``resnet50``)."""
    # constraints
    min_gpus: float | None = Field(default=None, gt=0, le=b.MAX_GPUS)
    max_gpus: float | None = Field(default=None, gt=0, le=b.MAX_GPUS)
    interconnect: InterconnectNeed = InterconnectNeed.PREFERRED
    interruptible: bool = False
    checkpoint_interval_hours: float | None = Field(default=None, gt=0, le=b.MAX_CHECKPOINT_HOURS)
    horizon_months: float = Field(default=0, ge=0, le=b.MAX_MONTHS)
    utilization: float | None = Field(default=None, gt=0, le=1)
    """Share of a reservation's term the GPUs are busy; reservations need it (and a
    horizon covering the term) because the whole term is paid, used or not."""
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    max_price_per_hour: Decimal | None = Field(default=None, gt=0, le=b.MAX_PRICE_PER_HOUR)
    budget_usd: Decimal | None = Field(default=None, gt=0, le=b.MAX_BUDGET_USD)
    min_obtainability: float | None = Field(default=None, ge=0, le=1)  # of the last 30 days

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r} must be lower-case letters, digits, '.', '_' or '-'")
        return value

    @field_validator("task", mode="before")
    @classmethod
    def _task(cls, value: Any) -> Any:
        return _one_of(value, Task)

    @field_validator("precision", "compute_precision", mode="before")
    @classmethod
    def _precision(cls, value: Any) -> Any:
        return None if value is None else _one_of(value, Precision)

    @field_validator("workload_class", mode="before")
    @classmethod
    def _workload_class(cls, value: Any) -> Any:
        return None if value is None else _one_of(value, WorkloadClass)

    @field_validator("cnn_architecture", mode="before")
    @classmethod
    def _cnn_architecture(cls, value: Any) -> Any:
        if value is None:
            return None
        from tracker.recommend.cnn_memory import ARCHITECTURES

        key = str(value).strip().lower().replace("-", "")
        if key not in ARCHITECTURES:
            raise ValueError(f"{value!r} is not one of {', '.join(sorted(ARCHITECTURES))}")
        return key

    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, value: Any) -> Any:
        return b.concurrency(value)

    @field_validator("interconnect", mode="before")
    @classmethod
    def _interconnect(cls, value: Any) -> Any:
        return _one_of(value, InterconnectNeed)

    @field_validator("max_price_per_hour", "budget_usd", mode="before")
    @classmethod
    def _money(cls, value: Any) -> Any:
        # TOML floats would otherwise reach Decimal through binary floating point.
        return Decimal(repr(value)) if isinstance(value, float) else value

    @field_validator("providers", "regions", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in value.split(",")]
        if isinstance(value, list | tuple):
            return tuple(str(v).strip() for v in value if str(v).strip())
        return value

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list | tuple):
            return value
        from tracker.catalog import gpu_models_for

        resolved: list[str] = []
        for raw in value:
            text = str(raw).strip()
            if not text:
                continue
            # The rule every GPU filter shares: a family name allows all its variants.
            names = gpu_models_for(text)
            if not names:
                raise ValueError(f"{text!r} is not a known GPU (see the GPU catalog)")
            resolved.extend(names)
        return tuple(dict.fromkeys(resolved))

    @field_validator("reference_gpu", mode="before")
    @classmethod
    def _reference_gpu(cls, value: Any) -> Any:
        if value is None:
            return None
        name = _RESOLVER(str(value).strip())
        if name is None:
            raise ValueError(f"{value!r} is not a known GPU (see the GPU catalog)")
        return name

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        allowed = ALLOWED_PRECISIONS[self.task]
        if self.precision not in allowed:
            raise _FieldError(
                "precision",
                f"{self.precision.value!r} is not valid for {self.task.value} "
                f"(use {', '.join(p.value for p in allowed)})",
            )
        if self.compute_precision is not None and self.compute_precision not in (
            COMPUTE_PRECISIONS
        ):
            raise _FieldError(
                "compute_precision",
                f"{self.compute_precision.value!r} is not one of "
                + ", ".join(p.value for p in COMPUTE_PRECISIONS),
            )
        sizes = [
            name
            for name, present in (
                ("tokens", self.tokens is not None),
                ("images", self.images is not None or self.epochs is not None),
                ("reference_gpu_hours", self.reference_gpu_hours is not None),
            )
            if present
        ]
        if len(sizes) > 1:
            raise _FieldError(
                "tokens",
                "give exactly one work size (or none to rank by $/hour): tokens, "
                f"images + epochs, or reference_gpu_hours + reference_gpu (got {' and '.join(sizes)})",
            )
        if not sizes and self.budget_usd is not None:
            raise _FieldError(
                "budget_usd",
                "needs a work size (tokens, images + epochs, or reference_gpu_hours) "
                "to estimate what the job costs",
            )
        if sizes == ["images"]:
            if self.task is not Task.CNN_TRAINING:
                raise _FieldError("images", f"images x epochs is for cnn_training, not {self.task}")
            if self.images is None or self.epochs is None:
                missing = "epochs" if self.images is not None else "images"
                raise _FieldError(missing, "images and epochs go together")
        if self.cnn_architecture is not None and self.task is not Task.CNN_TRAINING:
            raise _FieldError("cnn_architecture", f"is for cnn_training, not {self.task}")
        if sizes == ["tokens"] and self.task is Task.CNN_TRAINING:
            raise _FieldError("tokens", "cnn_training work is images x epochs (or GPU-hours)")
        self._check_serving()
        if (self.reference_gpu_hours is None) != (self.reference_gpu is None):
            raise _FieldError("reference_gpu", "reference_gpu_hours and reference_gpu go together")
        if self.min_gpus and self.max_gpus and self.min_gpus > self.max_gpus:
            raise _FieldError(
                "min_gpus", f"{self.min_gpus:g} is more than max_gpus {self.max_gpus:g}"
            )
        if self.checkpoint_interval_hours is not None and not self.interruptible:
            raise _FieldError(
                "checkpoint_interval_hours", "only meaningful with interruptible = true"
            )
        return self

    def _check_serving(self) -> None:
        given = self.input_tokens is not None, self.output_tokens is not None
        if any(given) and self.task is not Task.INFERENCE:
            raise _FieldError(
                "input_tokens", f"input/output tokens are for inference, not {self.task}"
            )
        if any(given) and not all(given):
            missing = "output_tokens" if given[0] else "input_tokens"
            raise _FieldError(missing, "input_tokens and output_tokens go together")
        if self.concurrency is not None and not all(given):
            raise _FieldError("concurrency", "needs input_tokens and output_tokens")

    @property
    def serving(self) -> bool:
        """Requests of input → output tokens (prefill + decode model), not a token count."""
        return self.input_tokens is not None and self.output_tokens is not None

    # ---- derived ----------------------------------------------------------------------
    @property
    def has_work_size(self) -> bool:
        """Without one the job's hours are unknown: offers that fit rank by $/hour."""
        return (
            self.tokens is not None
            or self.images is not None
            or self.epochs is not None
            or self.reference_gpu_hours is not None
        )

    @property
    def compute(self) -> Precision:
        """The precision the matmuls run at (whose datasheet TFLOPS apply)."""
        if self.compute_precision is not None:
            return self.compute_precision
        if self.precision is Precision.INT4:
            return Precision.FP16 if self.task is Task.INFERENCE else Precision.BF16
        if self.precision is Precision.INT8 and self.task is not Task.INFERENCE:
            return Precision.BF16
        return self.precision

    @property
    def seq_len(self) -> int:
        if self.input_tokens is not None and self.output_tokens is not None:
            return self.input_tokens + self.output_tokens
        return self.sequence_length or 2048

    @property
    def batch(self) -> int:
        if self.batch_size is not None:
            return self.batch_size
        if isinstance(self.concurrency, int):
            return self.concurrency
        return 32 if self.task is Task.CNN_TRAINING else 1

    def fingerprint(self) -> str:
        """Stable hash of what affects the ranking (the description does not)."""
        # fields added later are left out while unset, so profiles keep the hash they had
        later = (
            "workload_class",
            "input_tokens",
            "output_tokens",
            "concurrency",
            "kv_heads",
            "cnn_architecture",
            *CLUSTER_FIELDS,
        )
        skip = {"description"} | {name for name in later if getattr(self, name) is None}
        data = self.model_dump_json(exclude=skip)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


_RESOLVER: GpuResolver = catalog_gpu_name


def make_profile(name: str, data: Mapping[str, Any], where: str = "") -> Profile:
    """A validated profile, or a one-line :class:`ProfileError` naming the field."""
    try:
        return Profile(name=name, **dict(data))
    except ValidationError as exc:
        suffix = f" (in {where})" if where else ""
        raise ProfileError(f"profile {name!r}: {_describe(exc)}{suffix}") from None
    except TypeError as exc:  # a non-string key in data
        raise ProfileError(f"profile {name!r}: {exc}") from None


@dataclass(frozen=True)
class ProfileSet:
    profiles: Mapping[str, Profile]
    assumptions: Assumptions = field(default_factory=Assumptions)
    history_top: int = DEFAULT_HISTORY_TOP
    sources: Mapping[str, str] = field(default_factory=dict)
    """Where each profile came from ("built-in" or the file path)."""
    measured: tuple[Measurement, ...] = ()
    """The user's own ``[[measured]]`` throughput: wins over the shipped table."""
    plans: Mapping[str, SavedPlan] = field(default_factory=dict)
    """The user's saved ``[plans.NAME]`` (what ``ranking_change`` rules may watch)."""

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """What estimates calibrate against: the shipped table and the user's rows."""
        return (*shipped_measurements(), *self.measured)

    def get(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles)) or "none"
            raise ProfileError(f"unknown profile {name!r} (known: {known})") from None


@dataclass(frozen=True)
class _FileContent:
    profiles: dict[str, Profile]
    assumptions: dict[str, Any] | None
    history_top: int | None
    measured: list[Any]
    plans: dict[str, SavedPlan]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ProfileError(f"profiles file not found: {path}") from None
    except OSError as exc:
        raise ProfileError(f"cannot read profiles file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"invalid TOML in {path}: {exc}") from None


def load_profile_file(path: Path) -> _FileContent:
    data = _read_toml(path)
    unknown = sorted(set(data) - {"profiles", "assumptions", "history", "measured", "plans"})
    if unknown:
        raise ProfileError(
            f"{path}: unknown table [{unknown[0]}] (expected [profiles.NAME], "
            "[plans.NAME], [assumptions], [history], [[measured]])"
        )
    measured = data.get("measured", [])
    if not isinstance(measured, list):
        raise ProfileError(f"{path}: 'measured' must be [[measured]] tables")
    raw_profiles = data.get("profiles", {})
    if not isinstance(raw_profiles, dict):
        raise ProfileError(f"{path}: 'profiles' must be tables like [profiles.NAME]")
    profiles = {}
    for name, body in raw_profiles.items():
        if not isinstance(body, dict):
            raise ProfileError(f"profile {name!r}: expected a table (in {path})")
        profiles[name] = make_profile(name, body, str(path))
    assumptions = data.get("assumptions")
    if assumptions is not None and not isinstance(assumptions, dict):
        raise ProfileError(f"{path}: [assumptions] must be a table")
    history = data.get("history", {})
    top = history.get("top") if isinstance(history, dict) else None
    if history and (not isinstance(history, dict) or set(history) - {"top"}):
        raise ProfileError(f"{path}: [history] takes only 'top'")
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
        raise ProfileError(f"{path}: history.top: must be a whole number >= 1, got {top!r}")
    from tracker.recommend.saved_plans import saved_plans

    return _FileContent(profiles, assumptions, top, measured, saved_plans(data, path))


def user_profiles_path(configured: Path | None) -> Path | None:
    """The user's profiles file: the configured one, else the user config dir's, if any."""
    if configured is not None:
        return configured
    default = Path(platformdirs.user_config_dir("gpu-tracker")) / "profiles.toml"
    return default if default.is_file() else None


def load_profiles(user_file: Path | None = None, *, builtins: bool = True) -> ProfileSet:
    """Built-in profiles overlaid by ``user_file`` (profiles, assumptions, history.top)."""
    profiles: dict[str, Profile] = {}
    sources: dict[str, str] = {}
    if builtins:
        content = load_profile_file(BUILTIN_FILE)
        profiles.update(content.profiles)
        sources.update(dict.fromkeys(content.profiles, "built-in"))
    assumptions = Assumptions()
    top = DEFAULT_HISTORY_TOP
    measured: list[Measurement] = []
    plans: dict[str, SavedPlan] = {}
    if user_file is not None:
        content = load_profile_file(user_file)
        for name in content.profiles:
            if name in profiles:
                log.info("profile %s from %s overrides the built-in one", name, user_file)
        profiles.update(content.profiles)
        sources.update(dict.fromkeys(content.profiles, str(user_file)))
        if content.assumptions is not None:
            try:
                assumptions = Assumptions(**content.assumptions)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                msg = str(first["msg"]).removeprefix("Value error, ")
                if first["type"] == "extra_forbidden":
                    msg = "unknown assumption"
                raise ProfileError(f"{user_file}: assumptions.{loc}: {msg}") from None
        if content.history_top is not None:
            top = content.history_top
        measured = user_measurements(content.measured, profiles, assumptions, str(user_file))
        plans = content.plans
    return ProfileSet(profiles, assumptions, top, sources, tuple(measured), plans)
