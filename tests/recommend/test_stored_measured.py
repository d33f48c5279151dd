"""Your own ``[[measured]]`` rows win in the stored rankings too (issue 16).

The service snapshots every profile after each collection (the ``rankings`` hook), reading
the profiles file named by the settings; a user's measurement there must cost the job in
those snapshots exactly as in ``gpu-tracker recommend``. Figures by hand from the rows.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine, select

from tests.recommend.test_history import T0, collect, gpu_offer
from tracker.hooks.rankings import after_collection
from tracker.recommend import load_offer_table, profiles_for, rank_table
from tracker.settings import Settings
from tracker.store.series import RankingEntry, RankingSnapshot

MINE = """\
[profiles.my-lora]
params = 1e9
task = "lora"
precision = "bf16"
tokens = 36e6

[[measured]]
profile = "my-lora"
gpu = "NVIDIA A10G"
throughput = 2500
unit = "tokens/s"

[[measured]]
profile = "my-lora"
gpu = "A100-80GB"
throughput = 5000
unit = "tokens/s"
"""


def _stored(engine: Engine, profile: str) -> list[tuple[str, Decimal, Decimal]]:
    with engine.connect() as conn:
        snap = conn.execute(
            select(RankingSnapshot.id).where(RankingSnapshot.profile == profile)
        ).scalar_one()
        rows = conn.execute(
            select(RankingEntry.gpu_model, RankingEntry.job_hours, RankingEntry.job_cost_usd)
            .where(RankingEntry.snapshot_id == snap)
            .order_by(RankingEntry.rank)
        ).all()
    return [(r[0], r[1], r[2]) for r in rows]


def test_the_rankings_hook_costs_jobs_with_your_measurements(
    engine: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(MINE, encoding="utf-8")
    settings = Settings(profiles_path=path)
    collect(engine, [gpu_offer("A10G", "1.006"), gpu_offer("A100-80GB", "4.10")], T0)

    after_collection(engine, settings)

    # A10G (no vendor TFLOPS; your row beats its stand-in rule): 36e6 tokens / 2500 tokens/s
    # = 14,400 s = 4 h, x $1.006 = $4.024 -> $4.02. A100-80GB: your 5000 tokens/s wins
    # over the shipped llm-foundry rows: 36e6 / 5000 = 7,200 s = 2 h, x $4.10 = $8.20.
    assert _stored(engine, "my-lora") == [
        ("A10G", Decimal("4"), Decimal("4.02")),
        ("A100-80GB", Decimal("2"), Decimal("8.20")),
    ]
    # the same profile set, ranked over the same stored offers, says where those came from
    profile_set = profiles_for(settings)
    ranking = rank_table(
        profile_set.get("my-lora"),
        load_offer_table(engine, settings)[0],
        profile_set.assumptions,
        measurements=profile_set.measurements,
    )
    assert [c.rate.label for c in ranking.candidates] == ["measured (yours)"] * 2
    assert [c.rate.source.split(":")[0] for c in ranking.candidates] == ["yours-1", "yours-2"]


def test_without_your_rows_the_stored_a10g_is_costed_by_its_rule(
    engine: Engine, tmp_path: Path
) -> None:
    # The same profile without [[measured]]: the A10G is costed as the A10 (its modelled
    # stand-in rule, not 4 h) and the A100 from the shipped table (not 2 h), so the rows
    # above are the user's doing.
    path = tmp_path / "profiles.toml"
    path.write_text(MINE.split("[[measured]]")[0], encoding="utf-8")
    collect(engine, [gpu_offer("A10G", "1.006"), gpu_offer("A100-80GB", "4.10")], T0)

    after_collection(engine, Settings(profiles_path=path))

    stored = {gpu: hours for gpu, hours, _cost in _stored(engine, "my-lora")}
    assert set(stored) == {"A10G", "A100-80GB"}
    assert stored["A10G"] != Decimal("4") and stored["A100-80GB"] != Decimal("2")
