"""The shipped measured-throughput table and its loader."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tracker.catalog import get_spec
from tracker.recommend.measured import (
    MeasurementError,
    Unit,
    WorkloadClass,
    load_measurements,
    parse_measurement,
    shipped_measurements,
)
from tracker.recommend.profiles import Precision

PINNED = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+$")


def test_every_shipped_row_cites_a_file_at_a_pinned_commit() -> None:
    rows = shipped_measurements()
    assert len(rows) >= 50
    for m in rows:
        assert PINNED.match(m.source), m.id  # the figure can be checked at that exact file
        assert m.conditions and m.date, m.id
        assert get_spec(m.gpu).name == m.gpu, m.id


def test_shipped_rows_cover_the_built_in_classes_and_gpus() -> None:
    rows = shipped_measurements()
    classes = {m.workload_class for m in rows}
    assert {
        WorkloadClass.CNN_TRAINING,
        WorkloadClass.TRANSFORMER_FINETUNE,
        WorkloadClass.LLM_TRAINING,
        WorkloadClass.LLM_INFERENCE,
    } <= classes
    cnn_gpus = {m.gpu for m in rows if m.workload_class is WorkloadClass.CNN_TRAINING}
    assert {"H100-SXM", "A100-80GB", "A10", "RTX-4090", "RTX-6000-Ada"} <= cnn_gpus


@pytest.mark.parametrize(
    ("row_id", "throughput", "per_gpu"),
    [
        # lambdal/deeplearning-benchmark pytorch-train-throughput-fp16.csv, row
        # "H100 80GB SXM5", column resnet50: 2616 images/s on 1 GPU
        ("lambda-resnet50-h100-sxm", 2616, 2616),
        # same file, row "A100 80GB SXM4", column bert_large_squad: 152 sequences/s
        ("lambda-bert-large-squad-a100-80gb", 152, 152),
        # mosaicml/llm-foundry benchmarking README, "H100 80GB BF16", 7b, 2048, 8 GPUs:
        # Throughput (T/s) 85144, (T/s/GPU) 10643 -> 85144 / 8 = 10643
        ("llm-foundry-mpt-7b-h100-sxm-8gpu", 85144, 10643),
        # TensorRT-LLM perf-overview, Llama 3.3 70B, H100 TP2 (FP8), 2048/128: 762 total
        # over both GPUs -> 381 per GPU
        ("trtllm-llama-33-70b-h100-sxm-2gpu-fp8-2048-128", 762, 381),
    ],
)
def test_shipped_figures_match_their_sources(
    row_id: str, throughput: float, per_gpu: float
) -> None:
    m = {r.id: r for r in shipped_measurements()}[row_id]
    assert m.throughput == throughput
    assert m.per_gpu == pytest.approx(per_gpu)


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "r1",
        "class": "cnn_training",
        "model": "ResNet-50",
        "params": 25.6e6,
        "flops_per_image": 7.736e9,
        "gpu": "A10",
        "gpu_count": 1,
        "precision": "fp16",
        "throughput": 600,
        "unit": "images/s",
        "conditions": "c",
        "source": "https://example.org/x",
        "date": "2024",
    }
    row.update(over)
    return {k: v for k, v in row.items() if v is not None}


def test_a_valid_row_parses() -> None:
    m = parse_measurement(_row(), "t.toml")
    assert (m.workload_class, m.unit, m.precision, m.gpu) == (
        WorkloadClass.CNN_TRAINING,
        Unit.IMAGES,
        Precision.FP16,
        "A10",
    )


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"class": "cnn"}, "class: 'cnn' is not one of"),
        ({"unit": "tokens/s"}, "unit: cnn_training is measured in images/s, not tokens/s"),
        ({"gpu": "NVIDIA A10G"}, "gpu: write the canonical name 'A10G'"),
        ({"gpu": "Quadro 9000"}, "gpu: 'Quadro 9000' is not a GPU in the catalog"),
        ({"source": None}, "source: required"),
        ({"source": "see the blog"}, "source: must be an https:// URL"),
        ({"flops_per_image": None}, "flops_per_image: required for cnn_training"),
        ({"throughput": 0}, "throughput: must be > 0"),
        ({"precision": "int4"}, "precision: 'int4' is not one of"),
        ({"speed": 3}, "speed: unknown field"),
        ({"task": "sleep"}, "task: 'sleep' is not one of inference, lora"),
    ],
)
def test_bad_rows_fail_in_one_line_naming_the_field(over: dict[str, Any], message: str) -> None:
    with pytest.raises(MeasurementError) as info:
        parse_measurement(_row(**over), "t.toml")
    text = str(info.value)
    assert message in text and "measurement 'r1'" in text and "t.toml" in text
    assert "\n" not in text


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(MeasurementError, match="id: used twice"):
        load_measurements([_row(), _row()], "t.toml")


def test_user_rows_accept_aliases_and_need_no_source() -> None:
    m = parse_measurement(_row(gpu="NVIDIA A10G", source=None, date=None), "mine", yours=True)
    assert m.gpu == "A10G" and m.yours
