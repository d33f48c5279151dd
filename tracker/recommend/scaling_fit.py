"""The scaling model's constants, fitted on the shipped published multi-node runs.

``multinode.toml`` holds per-GPU throughput at several cluster sizes of one model,
table and harness. Each row's efficiency (its per-GPU throughput ÷ its reference row's,
the fewest GPUs of that model) is what :mod:`tracker.recommend.scaling` must reproduce;
the fit is the ``(overlap, latency)`` pair on a grid with the least squared log error
over every row without a ``global_batch`` (sharded data parallel pretraining: one or more
sequences per GPU), then ``split`` on a grid with the least squared log error over the rows
with one (fine-tuning at a fixed global batch on more GPUs than sequences, where a sequence
is split over several GPUs; :mod:`tracker.recommend.scaling`). The two stages never mix:
``split`` does nothing on a row whose GPUs each hold a whole sequence, so adding fine-tuning
rows leaves the pretraining constants as they were. :func:`leave_one_out` refits without
each row in turn and predicts it: the held-out error ``docs/recommendations.md`` reports
per family.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from tracker.recommend.scaling import Scaling, step_times

__all__ = ["DATA_FILE", "Run", "fit", "fitted_scaling", "leave_one_out", "load_runs", "predict"]

DATA_FILE = Path(__file__).with_name("multinode.toml")
BF16_BYTES = 2.0  # every shipped run trains in bf16 (llm-foundry "bf16 PURE", torchtitan)
_OVERLAPS = np.linspace(0.0, 1.0, 101)
_LATENCIES = np.concatenate(([0.0], np.geomspace(1e-4, 1.0, 81)))
_SPLITS = np.linspace(0.0, 0.5, 501)


@dataclass(frozen=True, slots=True)
class Run:
    """One published multi-GPU throughput figure (a row of ``multinode.toml``)."""

    id: str
    family: str
    reference: str
    params: float
    sequence_length: int
    gpus: int
    gpus_per_node: int
    network_gbps: float
    global_batch_tokens: float
    tokens_per_gpu_s: float
    source: str
    global_batch: float | None = None
    """Sequences per optimizer step, for rows where GPUs may outnumber them (fine-tuning)."""
    communicated_params: float | None = None
    """Parameters whose gradients cross the network (LoRA: the adapters); else ``params``."""

    @property
    def nodes(self) -> float:
        return self.gpus / self.gpus_per_node


def load_runs(path: Path = DATA_FILE) -> tuple[Run, ...]:
    """The rows of ``path``; a missing field is a one-line error naming the row."""
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    runs = []
    for i, row in enumerate(data.get("run", [])):
        try:
            runs.append(
                Run(
                    id=str(row["id"]),
                    family=str(row["family"]),
                    reference=str(row["reference"]),
                    params=float(row["params"]),
                    sequence_length=int(row["sequence_length"]),
                    gpus=int(row["gpus"]),
                    gpus_per_node=int(row["gpus_per_node"]),
                    network_gbps=float(row["network_gbps"]),
                    global_batch_tokens=float(row["global_batch_tokens"]),
                    tokens_per_gpu_s=float(row["tokens_per_gpu_s"]),
                    source=str(row["source"]),
                    global_batch=_optional(row, "global_batch"),
                    communicated_params=_optional(row, "communicated_params"),
                )
            )
        except KeyError as exc:
            raise ValueError(f"{path}: run #{i + 1}: missing {exc.args[0]!r}") from None
    return tuple(runs)


def _optional(row: dict[str, object], key: str) -> float | None:
    value = row.get(key)
    return None if value is None else float(str(value))


_GRID = tuple(g.ravel() for g in np.meshgrid(_OVERLAPS, _LATENCIES, indexing="ij"))
FloatArray = npt.NDArray[np.float64]


def _efficiency(
    overlap: FloatArray,
    latency: FloatArray,
    run: Run,
    one_node_rate: FloatArray,
    split: FloatArray | float = 0.0,
) -> FloatArray:
    communicated = run.params if run.communicated_params is None else run.communicated_params
    return step_times(
        overlap,
        latency,
        nodes=np.array(run.nodes),
        gpus_per_node=np.array(float(run.gpus_per_node)),
        local_tokens=np.array(run.global_batch_tokens / run.gpus),
        tokens_per_gpu_s=one_node_rate,
        param_bytes=np.array(communicated * BF16_BYTES),
        node_gbps=np.array(run.network_gbps),
        global_batch=run.global_batch,
        sequence_length=float(run.sequence_length),
        split=split,
    ).efficiency


def _predict(
    overlap: FloatArray,
    latency: FloatArray,
    run: Run,
    reference: Run,
    split: FloatArray | float = 0.0,
) -> FloatArray:
    rate = np.full(np.broadcast(overlap, latency, split).shape, reference.tokens_per_gpu_s)
    if reference.nodes > 1:  # the one-node rate that reproduces the reference (fixed point)
        for _ in range(20):
            eff = _efficiency(overlap, latency, reference, rate, split)
            rate = reference.tokens_per_gpu_s / eff
    own = _efficiency(overlap, latency, run, rate, split)
    return own / _efficiency(overlap, latency, reference, rate, split)


def predict(fit_: Scaling, run: Run, reference: Run) -> float:
    """``run``'s per-GPU throughput ÷ ``reference``'s, as the model predicts it.

    The one-node rate is the reference's own throughput when it ran on one node, else
    the rate r with r × efficiency(reference; r) = its throughput (by fixed point)."""
    one = np.ones(1)
    return float(_predict(one * fit_.overlap, one * fit_.latency_s, run, reference, fit_.split)[0])


def _pairs(runs: Sequence[Run], split_rows: bool = False) -> list[tuple[Run, Run]]:
    """(row, its reference) for the rows of one fitting stage: without a global batch
    (the first), or with one (``split_rows``, the second)."""
    by_id = {r.id: r for r in runs}
    return [
        (r, by_id[r.reference])
        for r in runs
        if r.reference in by_id
        and r.reference != r.id
        and (r.global_batch is not None) is split_rows
    ]


def _measured(run: Run, reference: Run) -> float:
    return run.tokens_per_gpu_s / reference.tokens_per_gpu_s


def _errors(runs: Sequence[Run]) -> dict[str, FloatArray]:
    """Per first-stage row id: its squared log error at every (overlap, latency) point."""
    overlap, latency = _GRID
    return {
        r.id: np.log(_predict(overlap, latency, r, ref) / _measured(r, ref)) ** 2
        for r, ref in _pairs(runs)
    }


def _split_errors(runs: Sequence[Run], base: Scaling) -> dict[str, FloatArray]:
    """Per second-stage row id: its squared log error at every ``split`` of the grid,
    with the first stage's ``(overlap, latency)``."""
    o, lat = np.array(base.overlap), np.array(base.latency_s)
    return {
        r.id: np.log(_predict(o, lat, r, ref, _SPLITS) / _measured(r, ref)) ** 2
        for r, ref in _pairs(runs, split_rows=True)
    }


def _with_split(base: Scaling, errors: dict[str, FloatArray], skip: str | None) -> Scaling:
    kept = [e for k, e in errors.items() if k != skip]
    if not kept:  # no fine-tuning row: nothing says what splitting costs
        return base
    i = int(np.argmin(sum(kept, np.zeros(len(_SPLITS)))))  # ties: the least split
    return Scaling(base.overlap, base.latency_s, float(_SPLITS[i]))


def _best(total: FloatArray) -> Scaling:
    # ties: the least latency, then the most overlap (argmin takes the first; the grid
    # is ordered by overlap then latency, so search it in that preference)
    overlap, latency = _GRID
    order = np.lexsort((-overlap, latency))
    i = int(order[np.argmin(total[order])])
    return Scaling(float(overlap[i]), float(latency[i]))


def fit(runs: Sequence[Run], skip: str | None = None) -> Scaling:
    """The grid's ``(overlap, latency)`` with the least squared log error over the rows
    without a global batch, then its ``split`` over the rows with one (``skip``: a row id
    left out, for leave-one-out)."""
    errors = _errors(runs)
    base = _best(sum((e for k, e in errors.items() if k != skip), np.zeros(len(_GRID[0]))))
    return _with_split(base, _split_errors(runs, base), skip)


def leave_one_out(runs: Sequence[Run]) -> dict[str, tuple[float, float, int]]:
    """Per family: (mean, max) |predicted ÷ measured − 1| over its rows, each predicted
    by a fit that never saw it, and how many rows."""
    errors = _errors(runs)
    total = sum(errors.values(), np.zeros(len(_GRID[0])))
    found: dict[str, list[float]] = {}
    for run, ref in _pairs(runs):
        held = _best(total - errors[run.id])
        found.setdefault(run.family, []).append(
            abs(predict(held, run, ref) / _measured(run, ref) - 1.0)
        )
    base = _best(total)  # the fine-tuning rows never enter the first stage
    splits = _split_errors(runs, base)
    for run, ref in _pairs(runs, split_rows=True):
        held = _with_split(base, splits, run.id)
        found.setdefault(run.family, []).append(
            abs(predict(held, run, ref) / _measured(run, ref) - 1.0)
        )
    return {k: (sum(v) / len(v), max(v), len(v)) for k, v in found.items()}


@cache
def fitted_scaling() -> Scaling:
    """The constants fitted on every shipped run (computed once per process)."""
    return fit(load_runs())
