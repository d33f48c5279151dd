"""Measured throughput: the shipped table of published benchmarks and the user's own rows.

Datasheet TFLOPS × one efficiency per task gets job hours wrong by whole factors (newer
GPUs reach a smaller share of their peak; CNNs are bound by memory, not tensor cores),
so estimates are calibrated against what GPUs were *measured* doing. Each row is one
published figure with its source; :mod:`tracker.recommend.calibration` turns rows into
achieved model-FLOP/s per GPU. A user's own ``[[measured]]`` rows (profiles file, or
``gpu-tracker calibrate``) are the same record with ``yours = True``.

Validation is strict and every error is one line naming the row and the field: a typo
in a unit or a GPU name would otherwise calibrate against the wrong hardware.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.errors import ProfileError
from tracker.recommend.kinds import Precision, Task, WorkloadClass, catalog_gpu_name

if TYPE_CHECKING:
    from tracker.recommend.profiles import Profile

__all__ = [
    "SHIPPED_FILE",
    "Measurement",
    "MeasurementError",
    "Unit",
    "WorkloadClass",
    "load_measurements",
    "parse_measurement",
    "shipped_measurements",
    "user_measurements",
    "workload_class",
]

SHIPPED_FILE = Path(__file__).with_name("measurements.toml")


class Unit(StrEnum):
    IMAGES = "images/s"
    SEQUENCES = "sequences/s"
    TOKENS = "tokens/s"


_UNITS: Mapping[WorkloadClass, tuple[Unit, ...]] = {
    WorkloadClass.CNN_TRAINING: (Unit.IMAGES,),
    WorkloadClass.DIFFUSION: (Unit.IMAGES,),
    WorkloadClass.TRANSFORMER_FINETUNE: (Unit.SEQUENCES, Unit.TOKENS),
    WorkloadClass.LLM_TRAINING: (Unit.SEQUENCES, Unit.TOKENS),
    WorkloadClass.LLM_INFERENCE: (Unit.TOKENS,),
}
_PRECISIONS = (Precision.FP32, Precision.FP16, Precision.BF16, Precision.FP8)
_FIELDS = {
    "id",
    "class",
    "model",
    "params",
    "flops_per_image",
    "sequence_length",
    "input_tokens",
    "output_tokens",
    "kv_heads",
    "concurrency",
    "gpu",
    "gpu_count",
    "hosts",
    "tensor_parallel",
    "precision",
    "throughput",
    "unit",
    "conditions",
    "source",
    "date",
    "task",
}
_REQUIRED = ("id", "class", "model", "params", "gpu", "gpu_count", "precision", "throughput")


class MeasurementError(ProfileError):
    """A measurement row that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class Measurement:
    id: str
    workload_class: WorkloadClass
    model: str
    params: float
    gpu: str
    """Canonical catalog name."""
    gpu_count: float
    precision: Precision
    throughput: float
    """Over all ``gpu_count`` GPUs, in ``unit``."""
    unit: Unit
    conditions: str
    source: str
    date: str
    flops_per_image: float | None = None
    sequence_length: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    kv_heads: int | None = None
    """Grouped-query attention's key/value heads (unset: one per attention head)."""
    concurrency: int | None = None
    """(llm_inference) requests in flight while measured; unset: offline, as many as fit."""
    hosts: int | None = None
    """Machines the ``gpu_count`` chips were spread over (a multi-host pod slice or
    cluster); unset: one machine. Only the scaling inside one machine is taken out of
    the figure (:func:`tracker.recommend.roofline.achieved_flops`): what the job lost
    between machines stays in, so a one-box estimate from it errs slow, never fast."""
    tensor_parallel: int | None = None
    """(llm_inference) GPUs in one tensor-parallel replica as the source ran it (AWS
    Neuron's tables state their TP degree); unset: the best split, as MLPerf systems
    and TensorRT-LLM's tables run."""
    task: Task | None = None
    """What ran, where it changes the FLOPs per token (LoRA: 4·N, not training's 6·N);
    set on rows recorded for a profile, unset on the shipped ones (full training)."""
    yours: bool = False
    """A row the user measured (profiles file ``[[measured]]``): wins over shipped rows."""

    @property
    def per_gpu(self) -> float:
        return self.throughput / self.gpu_count


def _fail(where: str, row_id: str, message: str) -> MeasurementError:
    return MeasurementError(f"measurement {row_id!r}: {message} (in {where})")


def _number(body: Mapping[str, Any], key: str, where: str, row_id: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(where, row_id, f"{key}: expected a number, got {value!r}")
    if not value > 0:
        raise _fail(where, row_id, f"{key}: must be > 0, got {value!r}")
    return float(value)


def _whole(body: Mapping[str, Any], key: str, where: str, row_id: str) -> int | None:
    value = _number(body, key, where, row_id)
    if value is None:
        return None
    if value != int(value):
        raise _fail(where, row_id, f"{key}: must be a whole number, got {body[key]!r}")
    return int(value)


def parse_measurement(body: Mapping[str, Any], where: str, *, yours: bool = False) -> Measurement:
    """One validated row, or a one-line :class:`MeasurementError` naming the field."""
    row_id = str(body.get("id", "?"))
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise _fail(where, row_id, f"{unknown[0]}: unknown field")
    for key in _REQUIRED:
        if key not in body:
            raise _fail(where, row_id, f"{key}: required")
    if not yours:
        for key in ("unit", "conditions", "source", "date"):
            if not str(body.get(key, "")).strip():
                raise _fail(where, row_id, f"{key}: required")
        if not str(body["source"]).startswith("https://"):
            raise _fail(where, row_id, f"source: must be an https:// URL, got {body['source']!r}")
    try:
        wclass = WorkloadClass(str(body["class"]))
    except ValueError:
        allowed = ", ".join(c.value for c in WorkloadClass)
        raise _fail(where, row_id, f"class: {body['class']!r} is not one of {allowed}") from None
    try:
        unit = Unit(str(body.get("unit", "")))
    except ValueError:
        allowed = ", ".join(u.value for u in Unit)
        raise _fail(where, row_id, f"unit: {body.get('unit')!r} is not one of {allowed}") from None
    if unit not in _UNITS[wclass]:
        allowed = ", ".join(u.value for u in _UNITS[wclass])
        raise _fail(where, row_id, f"unit: {wclass.value} is measured in {allowed}, not {unit}")
    try:
        precision = Precision(str(body["precision"]))
    except ValueError:
        precision = None  # type: ignore[assignment]
    if precision not in _PRECISIONS:
        allowed = ", ".join(p.value for p in _PRECISIONS)
        raise _fail(where, row_id, f"precision: {body['precision']!r} is not one of {allowed}")
    task = None
    if body.get("task") is not None:
        try:
            task = Task(str(body["task"]))
        except ValueError:
            allowed = ", ".join(t.value for t in Task)
            raise _fail(where, row_id, f"task: {body['task']!r} is not one of {allowed}") from None
    gpu = catalog_gpu_name(str(body["gpu"]))
    if gpu is None:
        raise _fail(where, row_id, f"gpu: {body['gpu']!r} is not a GPU in the catalog")
    if not yours and gpu != body["gpu"]:
        raise _fail(where, row_id, f"gpu: write the canonical name {gpu!r}, not {body['gpu']!r}")
    m = Measurement(
        id=row_id,
        workload_class=wclass,
        model=str(body["model"]),
        params=_number(body, "params", where, row_id) or 0.0,
        gpu=gpu,
        gpu_count=_number(body, "gpu_count", where, row_id) or 0.0,
        precision=precision,
        throughput=_number(body, "throughput", where, row_id) or 0.0,
        unit=unit,
        conditions=str(body.get("conditions", "")),
        source=str(body.get("source", "")),
        date=str(body.get("date", "")),
        flops_per_image=_number(body, "flops_per_image", where, row_id),
        sequence_length=_whole(body, "sequence_length", where, row_id),
        input_tokens=_whole(body, "input_tokens", where, row_id),
        output_tokens=_whole(body, "output_tokens", where, row_id),
        kv_heads=_whole(body, "kv_heads", where, row_id),
        concurrency=_whole(body, "concurrency", where, row_id),
        hosts=_whole(body, "hosts", where, row_id),
        tensor_parallel=_whole(body, "tensor_parallel", where, row_id),
        task=task,
        yours=yours,
    )
    _check_shape(m, where)
    return m


def _check_shape(m: Measurement, where: str) -> None:
    """The fields the FLOPs of one unit of work need, per class."""
    needs: tuple[str, ...] = ()
    if m.workload_class in (WorkloadClass.CNN_TRAINING, WorkloadClass.DIFFUSION):
        needs = ("flops_per_image",)
    elif m.workload_class is WorkloadClass.LLM_INFERENCE:
        needs = ("input_tokens", "output_tokens")
    elif m.unit is Unit.SEQUENCES:
        needs = ("sequence_length",)
    for key in needs:
        if getattr(m, key) is None:
            raise _fail(where, m.id, f"{key}: required for {m.workload_class.value} in {m.unit}")
    if m.concurrency is not None and m.workload_class is not WorkloadClass.LLM_INFERENCE:
        raise _fail(where, m.id, "concurrency: only llm_inference rows serve requests")
    tp = m.tensor_parallel
    if tp is not None and (m.workload_class is not WorkloadClass.LLM_INFERENCE or m.gpu_count % tp):
        raise _fail(where, m.id, "tensor_parallel: a serving row's GPUs in whole replicas")
    if m.hosts is not None and m.hosts > m.gpu_count:
        raise _fail(where, m.id, f"hosts: {m.hosts} machines for {m.gpu_count:g} GPUs")


def load_measurements(rows: Iterable[Any], where: str, *, yours: bool = False) -> list[Measurement]:
    out: list[Measurement] = []
    seen: set[str] = set()
    for body in rows:
        if not isinstance(body, dict):
            raise MeasurementError(f"{where}: each measurement must be a table")
        m = parse_measurement(body, where, yours=yours)
        if m.id in seen:
            raise _fail(where, m.id, "id: used twice")
        seen.add(m.id)
        out.append(m)
    return out


_SHIPPED: tuple[Measurement, ...] | None = None


def shipped_measurements(path: Path = SHIPPED_FILE) -> tuple[Measurement, ...]:
    """The table shipped with the package (read once)."""
    global _SHIPPED
    if path != SHIPPED_FILE:
        return tuple(_read(path))
    if _SHIPPED is None:
        _SHIPPED = tuple(_read(path))
    return _SHIPPED


def _read(path: Path) -> list[Measurement]:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    unknown = sorted(set(data) - {"measurement"})
    if unknown:
        raise MeasurementError(f"{path}: unknown table [{unknown[0]}] (expected [[measurement]])")
    return load_measurements(data.get("measurement", []), str(path))


LLM_PARAMS = 1e9
"""Transformers from this size up calibrate against LLM training, below against BERT-size."""


def workload_class(p: Profile) -> WorkloadClass | None:
    """The class a profile calibrates against; None where no class fits (QLoRA)."""
    if p.workload_class is not None:
        return p.workload_class
    if p.task is Task.CNN_TRAINING:
        return WorkloadClass.CNN_TRAINING
    if p.task is Task.INFERENCE:
        return WorkloadClass.LLM_INFERENCE
    if p.task is Task.QLORA:
        return None  # NF4 dequantisation on every matmul: no class measures that
    if p.params >= LLM_PARAMS:
        return WorkloadClass.LLM_TRAINING
    return WorkloadClass.TRANSFORMER_FINETUNE


def _from_profile(p: Profile, a: Assumptions, where: str, row_id: str) -> dict[str, Any]:
    """The fields a measurement of ``p``'s own job takes from the profile."""
    wclass = workload_class(p)
    if wclass is None:
        raise _fail(where, row_id, f"profile: {p.name!r} ({p.task}) has no workload class")
    fields: dict[str, Any] = {
        "class": wclass.value,
        "model": f"profile {p.name}",
        "params": p.params,
        "precision": p.compute.value,
        "task": p.task.value,
        "sequence_length": p.seq_len,
    }
    if p.task is Task.CNN_TRAINING:
        fields["flops_per_image"] = p.flops_per_image or a.resnet50_flops_per_param_image * p.params
    if p.serving:
        fields.update(input_tokens=p.input_tokens, output_tokens=p.output_tokens)
    if p.kv_heads is not None:
        fields["kv_heads"] = p.kv_heads
    return fields


def user_measurements(
    rows: Iterable[Any], profiles: Mapping[str, Profile], a: Assumptions, where: str
) -> list[Measurement]:
    """``[[measured]]`` rows of a profiles file: ``profile = NAME`` takes the job's class,
    size and precision from that profile; otherwise the row spells them out."""
    bodies = []
    for i, body in enumerate(rows, 1):
        if not isinstance(body, dict):
            raise MeasurementError(f"{where}: each [[measured]] must be a table")
        body = {"id": f"yours-{i}", "gpu_count": 1, **body}
        name = body.pop("profile", None)
        if name is not None:
            if name not in profiles:
                raise _fail(where, body["id"], f"profile: unknown profile {name!r}")
            body = {**_from_profile(profiles[name], a, where, body["id"]), **body}
        bodies.append(body)
    return load_measurements(bodies, where, yours=True)
