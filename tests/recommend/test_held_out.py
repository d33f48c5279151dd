"""Against published measurements the fit never sees (issue 38's Done-when).

tests/fixtures/held_out/measurements.toml holds published figures that the shipped
table (tracker/recommend/measurements.toml) does not: Intel's Gaudi 2 serving and
training tables (Intel Gaudi software 1.18.0). Each is predicted from the shipped table
alone, as the job it measured, and compared with the published figure. The test prints
the figures docs/recommendations.md quotes and holds them where they are: this is where
the model stands on a vendor it has never seen, not the ±25 % target.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from tests.recommend.test_calibration import _profile_for, offer
from tracker.catalog import get_spec
from tracker.recommend import Profile, make_profile, rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import achieved_flops, predict
from tracker.recommend.kinds import WorkloadClass
from tracker.recommend.measured import Measurement, load_measurements, shipped_measurements

A = Assumptions()
HELD_OUT = Path(__file__).parents[1] / "fixtures" / "held_out" / "measurements.toml"


def held_out() -> list[Measurement]:
    with HELD_OUT.open("rb") as fh:
        return load_measurements(tomllib.load(fh)["measurement"], str(HELD_OUT))


def serving_job(m: Measurement) -> Profile:
    """The serving job ``m`` measured: its model, request shape, load and GPU count, 1e9
    answer tokens (tokens/s = 1e9 / the job's seconds)."""
    fields: dict[str, Any] = dict(
        params=m.params,
        task="inference",
        precision=m.precision.value,
        input_tokens=m.input_tokens,
        output_tokens=m.output_tokens,
        concurrency=m.concurrency or "max",
        kv_heads=m.kv_heads,
        tokens=1e9,
        min_gpus=m.gpu_count,
        max_gpus=m.gpu_count,
    )
    return make_profile("held-out", {k: v for k, v in fields.items() if v is not None})


def _predicted_over_measured(m: Measurement) -> float:
    """The shipped table's prediction for ``m``'s job ÷ its published figure."""
    if m.workload_class is WorkloadClass.LLM_INFERENCE:
        (c,) = rank(serving_job(m), [offer(m.gpu, int(m.gpu_count))]).candidates
        assert c.job_hours is not None
        return 1e9 / (c.job_hours * 3600) / m.throughput
    rate = predict(_profile_for(m), get_spec(m.gpu), A, shipped_measurements())
    assert rate is not None
    return rate.flops / achieved_flops(m, A)


def test_no_held_out_row_is_in_the_shipped_table() -> None:
    shipped = {(m.gpu, m.model, m.throughput) for m in shipped_measurements()}
    rows = held_out()
    assert len(rows) == 13
    assert not any((m.gpu, m.model, m.throughput) in shipped for m in rows)
    assert not any(m.gpu == "Gaudi2" for m in shipped_measurements())


def test_held_out_error_against_intel_gaudi2_tables() -> None:
    errors = {m.id: _predicted_over_measured(m) - 1 for m in held_out()}
    for row, e in errors.items():
        print(f"{row}: {e:+.0%}")
    within = sum(abs(e) <= 0.25 for e in errors.values())
    median = sorted(abs(e) for e in errors.values())[len(errors) // 2]
    print(f"held out: {within}/{len(errors)} within ±25 %, median {median:.0%}")
    assert all(math.isfinite(e) for e in errors.values())
    # Where it stands (NOT the 90 % within ±25 %): 4 of 13. Serving comes out
    # 36-55 % low: the catalog prints no Gaudi 2 FP8 rate, so fp8 is costed at its bf16
    # 432 TFLOPS, and Intel's fp8 KV cache is not modelled. Held so it cannot get worse.
    assert within >= 4 and median <= 0.40


def test_held_out_serving_keeps_the_measured_order_of_request_shapes() -> None:
    # Intel's LLaMA 2 7b on 1 HPU: 128/128 13,137 > 128/2048 4,791 > 2048/2048 1,953 >
    # 2048/128 1,449 tokens/s; LLaMA 2 70b: 128/2048 on 4 HPU 3,211 > 128/128 on 2 HPU
    # 2,844 > 2048/2048 1,438 > 2048/128 310. Predicted tokens/s keep each order.
    for model in ("LLaMA 2 7b", "LLaMA 2 70b"):
        rows = [m for m in held_out() if m.model == model]
        measured = sorted(rows, key=lambda m: -m.throughput)
        predicted = sorted(rows, key=lambda m: -m.throughput * _predicted_over_measured(m))
        assert [m.id for m in predicted] == [m.id for m in measured], model
