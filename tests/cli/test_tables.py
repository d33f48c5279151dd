"""Issue 10 items 9 and 10 through the installed CLI: GPU family filters, and tables that
fit 100 columns while JSON and CSV keep their documented keys and exact figures."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run, cli_runner

ROOT = Path(__file__).resolve().parents[2]
WIDTH = {"COLUMNS": "100"}

# README, CLI section: the documented keys of `offers --format json`
OFFER_JSON_KEYS = {
    "provider", "instance_type", "region", "zone", "pricing", "payment_option", "gpu_model",
    "gpu_count", "gpu_memory_gib", "vcpus", "memory_gib", "interconnect", "fabric", "network_gbps", "price_per_hour",
    "currency", "price_per_hour_usd", "price_per_gpu_hour_usd", "first_seen", "last_seen",
    "offering_class", "os", "gpu_known", "gpu_raw_name", "price_since", "source", "attributes",
    "display_currency", "display_price_per_hour", "display_price_per_gpu_hour",
    "availability",
    # issue 42: what the account pays under its discount rules (list price without one)
    "net_price_per_hour", "net_price_per_hour_usd", "net_price_per_gpu_hour_usd",
    "display_net_price_per_hour", "display_net_price_per_gpu_hour", "discount",
    # issue 42: the share of the last 7 / 30 days it was reported rentable
    "obtainability_7d", "obtainability_30d", "median_back_hours",
}  # fmt: skip
OFFER_CSV_HEADER = (
    "provider,instance_type,region,zone,pricing,payment_option,gpu_model,gpu_count,"
    "gpu_memory_gib,vcpus,memory_gib,interconnect,fabric,network_gbps,price_per_hour,currency,price_per_hour_usd,"
    "price_per_gpu_hour_usd,display_currency,display_price_per_hour,display_price_per_gpu_hour,"
    "net_price_per_hour,net_price_per_hour_usd,net_price_per_gpu_hour_usd,discount,"
    "availability,obtainability_7d,obtainability_30d,first_seen,last_seen"
)
# the keys of `recommend --format json` rows before this change (README, Recommendations)
RANKING_JSON_KEYS = {
    "rank", "provider", "instance_type", "region", "zone", "pricing", "payment_option",
    "offering_class", "gpu_model", "gpu_count", "interconnect", "vram_needed_gib",
    "vram_available_gib", "vram_needed_per_gpu_gib", "sharded", "price_per_hour_usd",
    "effective_price_per_hour_usd", "price_per_gpu_hour_usd", "compute_hours", "job_hours",
    # issue 28: the estimate's range and its relative error
    "job_hours_low", "job_hours_high", "uncertainty",
    "job_cost_usd", "interruption_pct", "basis", "basis_source", "compute_precision",
    "precision_fallback", "excluded_reason", "excluded_detail",
    "display_currency", "display_effective_price_per_hour", "display_job_cost",
    # issue 42: the net price the ranking used and the discount rule that set it
    "net_price_per_hour_usd", "discount",
    "obtainability_7d", "obtainability_30d",  # issue 42
    # issue 37: the cluster a row runs on (nodes x gpu_count GPUs) and its network
    "fabric", "network_gbps", "nodes", "total_gpus", "scaling_efficiency", "compute_share",
}  # fmt: skip
EXCLUDED_JSON_KEYS = {
    "rank", "provider", "instance_type", "region", "zone", "pricing", "payment_option",
    "offering_class", "gpu_model", "gpu_count", "interconnect", "excluded_reason",
    "excluded_detail", "fabric", "network_gbps",
}  # fmt: skip
RANKING_CSV_HEADER = (
    "rank,provider,instance_type,region,zone,pricing,payment_option,gpu_model,gpu_count,"
    "interconnect,nodes,total_gpus,fabric,network_gbps,scaling_efficiency,"
    "vram_needed_gib,vram_available_gib,price_per_hour_usd,"
    "net_price_per_hour_usd,discount,"
    "effective_price_per_hour_usd,price_per_gpu_hour_usd,job_hours,job_hours_low,"
    "job_hours_high,job_cost_usd,"
    "display_currency,display_effective_price_per_hour,display_job_cost,"
    "obtainability_7d,obtainability_30d,"
    "basis,basis_source,compute_precision,precision_fallback"
)


@pytest.fixture
def quickstart(tmp_path: Path) -> Run:
    """The README's quick start: the sample price sheet collected into SQLite, every
    command with the quick start's config (its fx_rates converts the sheet's EUR rows)."""
    plain = cli_runner(f"sqlite:///{tmp_path / 'quick.db'}", tmp_path)
    config = str(ROOT / "examples" / "quickstart.toml")
    sheet = {"GPU_TRACKER_PRICESHEET__PATH": str(ROOT / "examples" / "prices.csv")}

    def run(*args: str, extra_env: dict[str, str] | None = None) -> Any:
        return plain("-c", config, *args, extra_env={**sheet, **(extra_env or {})})

    proc = run("collect")
    assert proc.returncode == 0, proc.stderr
    return run


def table(run: Run, *args: str) -> list[str]:
    proc = run(*args, extra_env=WIDTH)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # (a word longer than the width, e.g. a URL in a note, stays whole on its own line)
    too_wide = [line for line in lines if len(line) > 100 and " " in line.strip()]
    assert too_wide == [], "\n".join(too_wide)
    return lines


def line_of(lines: list[str], instance: str) -> str:
    [line] = [line for line in lines if instance in line]
    return line


def test_quickstart_offers_table_fits_100_columns(quickstart: Run) -> None:
    lines = table(quickstart, "offers", "--limit", "10")
    header = lines[0].split()
    assert header == ["provider", "instance", "region", "pricing", "GPUs", "VRAM", "$/h", "$/GPU·h"]
    # every zone and payment option of the sample sheet is empty: those columns are dropped
    assert "zone" not in header and "payment" not in header
    # the longest names stay whole on one line
    azure = line_of(lines, "Standard_NC24ads_A100_v4")
    assert "1× A100-80GB-PCIE" in azure
    # money rounded for reading (half-even): 0.70683228 → 0.707; 0.75 EUR × 1.05 = 0.7875 → 0.788
    assert line_of(lines, "g2-standard-4").split()[-2:] == ["0.707", "0.707"]
    assert line_of(lines, "L4-1-24G").split()[-2:] == ["0.788", "0.788"]
    assert line_of(lines, "a2-highgpu-1g").split()[-3:] == ["40", "3.67", "3.67"]

    everything = table(quickstart, "offers")
    # 32.7726 / 8 GPUs = 4.096575 $/GPU·h → 4.10
    assert line_of(everything, "p4d.24xlarge").split()[-3:] == ["40", "32.77", "4.10"]


def test_offers_json_and_csv_keep_their_keys_and_exact_figures(quickstart: Run) -> None:
    proc = quickstart("offers", "--format", "json", extra_env=WIDTH)
    rows = json.loads(proc.stdout)
    assert rows and all(set(r) == OFFER_JSON_KEYS for r in rows)
    by_type = {r["instance_type"]: r for r in rows}
    assert by_type["g2-standard-4"]["price_per_hour_usd"] == "0.70683228"
    assert by_type["L4-1-24G"]["price_per_hour"] == "0.75"
    assert by_type["L4-1-24G"]["price_per_hour_usd"] == "0.7875"
    csv_lines = quickstart("offers", "--format", "csv", extra_env=WIDTH).stdout.splitlines()
    assert csv_lines[0] == OFFER_CSV_HEADER
    assert any(",0.70683228," in line for line in csv_lines)


def test_quickstart_recommend_table_fits_100_columns(quickstart: Run) -> None:
    lines = table(quickstart, "recommend", "--profile", "llm-7b-lora", "--top", "5")
    assert lines[0].startswith("llm-7b-lora: ")
    header = lines[1].split()
    assert header[:3] == ["#", "provider", "instance"]
    assert {"GPUs", "VRAM", "$/h", "hours", "±%", "$"} <= set(header) and "zone" not in header
    ranked = [line for line in lines[3:8] if line.strip()]
    assert len(ranked) == 5 and all(line.split()[0].isdigit() for line in ranked)  # unfolded
    # the two 1.25 h (±15 %) H100 jobs cost $4.13 and $4.38: their ranges overlap
    assert lines[8].split() == ["note"]
    assert "within the estimate's error: consider both" in " ".join(lines[10:])
    # (calibrated hours put both 8 x H100 boxes of the sheet in the top 5: find the row
    # by its instance and check its GPU cell)
    assert "8× H100-SXM" in line_of(ranked, "gpu_8x_h100_sxm5")

    explained = table(quickstart, "recommend", "-P", "llm-7b-lora", "--top", "5", "--explain")
    # the T4 is left out for memory; the A10G (no vendor TFLOPS) ranks by its stated rule
    assert any("1× T4  vram" in line for line in explained if "g4dn" in line)
    assert any(
        line.startswith("A10G: basis modelled, A10G modelled as the A10") for line in explained
    )

    proc = quickstart("recommend", "-P", "llm-7b-lora", "--explain", "-f", "json")
    rows = json.loads(proc.stdout)
    ranked_rows = [r for r in rows if r["rank"] is not None]
    excluded_rows = [r for r in rows if r["rank"] is None]
    assert ranked_rows and all(set(r) == RANKING_JSON_KEYS for r in ranked_rows)
    assert excluded_rows and all(set(r) == EXCLUDED_JSON_KEYS for r in excluded_rows)
    csv_out = quickstart("recommend", "-P", "llm-7b-lora", "-f", "csv").stdout
    assert csv_out.splitlines()[0] == RANKING_CSV_HEADER


def test_a_gpu_family_name_finds_every_variant(quickstart: Run) -> None:
    def found(*gpus: str) -> set[str]:
        args = [arg for gpu in gpus for arg in ("--gpu", gpu)]
        proc = quickstart("offers", "--format", "json", *args)
        assert proc.returncode == 0, proc.stderr
        return {r["instance_type"] for r in json.loads(proc.stdout)}

    # examples/prices.csv: H100 (p5) and "H100 SXM" (lambda) are H100-SXM, "H100 PCIe" is
    # H100-PCIE; the family name H100 means all of them
    assert found("H100") == {"p5.48xlarge", "gpu_1x_h100_sxm5", "gpu_8x_h100_sxm5", "H100-1-80G"}
    assert found("h100-sxm") == {"p5.48xlarge", "gpu_1x_h100_sxm5", "gpu_8x_h100_sxm5"}
    # A100 (p4d) and nvidia-tesla-a100 are the 40 GB SXM part, Azure's is the 80 GB PCIe one
    assert found("A100") == {"p4d.24xlarge", "a2-highgpu-1g", "Standard_NC24ads_A100_v4"}
    assert found("a100 80gb pcie") == {"Standard_NC24ads_A100_v4"}
    assert found("L4", "T4") == {"g6.xlarge", "g2-standard-4", "L4-1-24G", "g4dn.xlarge"}

    proc = quickstart("recommend", "-P", "llm-7b-lora", "--gpu", "H100", "-f", "json")
    ranked = {r["instance_type"]: r["gpu_model"] for r in json.loads(proc.stdout)}
    assert ranked == {
        "gpu_1x_h100_sxm5": "H100-SXM",
        "gpu_8x_h100_sxm5": "H100-SXM",
        "p5.48xlarge": "H100-SXM",
        "H100-1-80G": "H100-PCIE",
    }


def test_a_name_the_catalog_does_not_know_matches_stored_names(db_url: str, tmp_path: Path) -> None:
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency\n"
        "acme,weird.1,eu-1,on_demand,Quantum Flux 9000,2,4.50,USD\n"
        "lambda,gpu_1x_h100_sxm5,us-east-1,on_demand,H100 SXM,1,3.29,USD\n"
    )
    assert run("import", str(sheet)).returncode == 0

    def found(gpu: str) -> list[str]:
        proc = run("offers", "--format", "json", "--gpu", gpu)
        return [r["instance_type"] for r in json.loads(proc.stdout or "[]")]

    assert found("quantum flux 9000") == ["weird.1"]
    assert found("H100") == ["gpu_1x_h100_sxm5"]
    assert found("H200") == []


def test_quickstart_13b_pretrain_in_ten_days_picks_an_efa_cluster(quickstart: Run) -> None:
    """Issue 37's done-when on the sample sheet: one 8 x H100 node takes ~1,905 h, so
    10 days (240 h) needs a cluster; only p4d and p5 state a fabric (EFA)."""
    proc = quickstart("recommend", "-P", "llm-13b-pretrain", "--deadline", "10d", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    top = json.loads(proc.stdout)[0]
    assert top["fabric"] in ("efa", "infiniband") and top["nodes"] > 1
    assert Decimal(top["job_hours"]) <= 240
    assert Decimal(top["total_gpus"]) == 8 * top["nodes"]
