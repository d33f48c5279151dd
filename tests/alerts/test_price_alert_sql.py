"""On Postgres a ``price_change`` rule without a cooldown has its alerts rendered by the
store (tracker/store/outbox/_price_sql.py); everywhere else Python builds them
(tracker/alerts/offer_rules.py). The two must queue the same alerts, word for word.

First the roundings where SQL and Python differ by default (``round`` is half away from
zero on NUMERIC, ``quantize`` half-even), worked out by hand on both engines; then the
two paths against each other on a random store: six currencies (stored ECB steps, a
manual rate, none at all), prices with ten decimals, tiny prices, a change of
currency, zones, fractional GPU counts, names with quotes and accents, two runs (one at a
time with microseconds), rules in four currencies, every direction and thresholds that
land on ties.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine, text

from tests.alerts.conftest import offer
from tests.alerts.test_evaluate import fired, rules
from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.alerts import price_staged
from tracker.alerts.evaluate import evaluate
from tracker.fx import EcbRate
from tracker.models import Offer
from tracker.store import outbox
from tracker.store.outbox import OutboxStream
from tracker.store.series import record_rates

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)
D = Decimal


def moves(threshold: str, **kw: object) -> list[Any]:
    return rules({"name": "moves", "type": "price_change", "threshold_percent": threshold, **kw})


def change(engine: Engine, rule: list[Any], old: Offer, new: Offer) -> list[str]:
    collect(engine, [old], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [new], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    return [t for _, t in fired(engine)]


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        # (7.99 - 8) / 8 x 100 = -0.125 exactly: half-even gives -0.12 (half away: -0.13)
        ("8.00", "7.99", "8.00 → 7.99 USD/h (-0.12%)"),
        # (8.01 - 8) / 8 x 100 = 0.125 -> 0.12; (8.03 - 8) / 8 x 100 = 0.375 -> 0.38
        ("8.00", "8.01", "8.00 → 8.01 USD/h (+0.12%)"),
        ("8.00", "8.03", "8.00 → 8.03 USD/h (+0.38%)"),
        # (99999.996 - 100000) / 100000 x 100 = -0.000004: rounds to zero, keeps its sign
        ("100000.00", "99999.996", "100000.00 → 99999.996 USD/h (-0.00%)"),
    ],
)
def test_the_percentage_rounds_half_even_and_keeps_its_sign(
    engine: Engine, old: str, new: str, shown: str
) -> None:
    titles = change(engine, moves("0.000001"), offer("a", old), offer("a", new))
    assert titles == [f"testcloud a us-east-1 on_demand: {shown}"]


def test_a_converted_price_is_shown_rounded_half_even(engine: Engine) -> None:
    with engine.begin() as conn:  # 1 EUR = 1.10 USD: 1 USD = 1 / 1.1 EUR
        record_rates(conn, [EcbRate("USD", date(2026, 2, 27), D("1.10"))], source="test")
    rule = moves("5", currency="EUR")
    # 1.100055 / 1.1 = 1.00005 EUR exactly, shown to 4 decimals half-even: 1.0000 -> 1.00
    # (half away from zero would show 1.0001); 1.210055 / 1.1 = 1.10005 -> 1.1000 -> 1.10;
    # the change is the USD prices' own: 0.11 / 1.100055 x 100 = 9.99950002... -> 10.00
    titles = change(engine, rule, offer("a", "1.100055"), offer("a", "1.210055"))
    assert titles == [
        "testcloud a us-east-1 on_demand: 1.00 → 1.10 EUR/h (+10.00%) [1.100055 USD → 1.210055 USD]"
    ]


# -- the two paths against each other -------------------------------------------------

CURRENCIES = ["USD", "USD", "EUR", "CNY", "JPY", "AED", "XYZ"]
"""XYZ has no rate anywhere; AED only the manual one."""
MANUAL = {"AED": D("0.27")}
RULES = [
    {"name": "usd", "type": "price_change", "threshold_percent": "4"},
    {"name": "eur-down", "type": "price_change", "threshold_percent": "2.5", "direction": "down",
     "currency": "EUR"},
    {"name": "cny-up", "type": "price_change", "threshold_percent": "0.125", "direction": "up",
     "currency": "CNY"},
    {"name": "aed", "type": "price_change", "threshold_percent": "12.5", "currency": "AED",
     "provider": ["testcloud"], "pricing": ["on_demand", "spot"]},
    {"name": "xyz", "type": "price_change", "threshold_percent": "1", "currency": "XYZ"},
    {"name": "h100", "type": "price_change", "threshold_percent": "0.5", "gpu_model": ["H100"],
     "region": ["us-east-1", "région-ü"]},
]  # fmt: skip


def random_offers(rng: random.Random, n: int) -> list[Offer]:
    out = []
    for i in range(n):
        out.append(
            make_offer(
                instance_type=f'gpu.{i}"x\\{rng.choice(["", "ä"])}',
                price_per_hour=D(rng.randint(1, 10**11)) / D(10 ** rng.choice([2, 4, 10])),
                gpu_model=rng.choice(["H100-SXM", "A100-80GB", "L4"]),
                gpu_count=rng.choice([D(1), D(8), D("0.5"), D("0.25")]),
                gpu_memory_gib=D(80),
                interconnect="pcie",
                currency=rng.choice(CURRENCIES),
                region=rng.choice(["us-east-1", "région-ü", "eu-west-1"]),
                zone=rng.choice(["", "", "z1"]),
                pricing=rng.choice(["on_demand", "spot"]),
            )
        )
    return out


def moved(rng: random.Random, o: Offer) -> Offer:
    """The offer after a run: most prices move (by ties and small steps too), some to a
    hair above zero (too small to show in another currency), a few change currency."""
    price = o.price_per_hour
    roll = rng.random()
    if roll < 0.1:
        return replace(o, currency=rng.choice(CURRENCIES), price_per_hour_usd=None)
    if roll < 0.15:
        return replace(o, price_per_hour=D("1e-10"), price_per_hour_usd=None)
    factor = rng.choice([D("1.04"), D("0.96"), D("0.975"), D("1.00125"), D("1.5"), D("0.875")])
    step = rng.choice([D(0), D("1e-10"), D("-1e-10")])
    price = max((price * factor).quantize(D("1e-10")) + step, D("1e-10"))
    return replace(o, price_per_hour=price, price_per_hour_usd=None)


def queued(engine: Engine) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT o.dedupe_key, o.rule, o.kind, o.subject, o.title, "
                "CAST(o.details AS text), o.created_at, string_agg(d.channel || ':' "
                "|| d.status || ':' || d.attempts || ':' || d.next_attempt_at, ',') "
                "FROM alert_outbox o LEFT JOIN alert_deliveries d ON d.alert_id = o.id "
                "GROUP BY o.id ORDER BY o.id"
            )
        ).all()
    return [(*r[:5], json.loads(r[5]), *r[6:]) for r in rows]


def test_the_store_renders_what_python_builds(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = pg_engine
    with engine.begin() as conn:
        record_rates(
            conn,
            [
                EcbRate("USD", date(2026, 3, 1), D("1.10")),
                EcbRate("CNY", date(2026, 3, 1), D("7.70")),
                EcbRate("CNY", date(2026, 3, 2), D("7.92")),  # in force for the second run
                EcbRate("JPY", date(2026, 3, 2), D("160")),  # none for the first run
            ],
            source="test",
        )
    rng = random.Random(29)
    offers = random_offers(rng, 400)
    rule = rules(*RULES)
    collect(engine, offers, T0)
    evaluate(engine, rule, ["slack"], now=T0, fx_rates=MANUAL)  # seeds every cursor
    first = [moved(rng, o) for o in offers]
    collect(engine, first, T0 + 24 * H + timedelta(microseconds=123456))
    collect(engine, [moved(rng, o) for o in first], T0 + 26 * H)
    with engine.begin() as conn:
        state = conn.execute(text("SELECT rule, subject, value, updated_at FROM alert_state")).all()

    def run() -> tuple[list[tuple[Any, ...]], list[str]]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tracker.alerts.evaluate"):
            evaluate(engine, rule, ["slack"], now=T0 + 27 * H, fx_rates=MANUAL)
        return queued(engine), sorted(r.getMessage() for r in caplog.records)

    rendered, rendered_log = run()
    with engine.begin() as conn:  # back to before the evaluation
        conn.execute(text("DELETE FROM alert_outbox"))
        conn.execute(text("DELETE FROM alert_state"))
        for row in state:
            conn.execute(
                text(
                    "INSERT INTO alert_state (rule, subject, value, updated_at) "
                    "VALUES (:rule, :subject, :value, :updated_at)"
                ),
                row._asdict(),
            )
    monkeypatch.setattr(price_staged, "staged", lambda rule, ev: False)
    built, built_log = run()
    assert len(rendered) > 300
    # every rule fired; xyz's only for prices in XYZ, the rest lack a rate
    assert {r[1] for r in rendered} == {"usd", "eur-down", "cny-up", "aed", "h100", "xyz"}
    assert any("rule xyz" in line for line in rendered_log)
    assert rendered == built
    assert rendered_log == built_log


def test_a_run_written_during_the_evaluation_is_left_for_the_next(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The rates are worked out for the changes there are when the rule starts; a run
    that commits right after (here: between that read and the rendering) is read next
    time, not counted as lacking a rate now."""
    engine = pg_engine
    rule = moves("10", currency="EUR")
    with engine.begin() as conn:
        record_rates(conn, [EcbRate("USD", date(2026, 2, 27), D("1.25"))], source="test")
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "5.00")], T0 + H)
    moments = outbox.change_moments

    def then_a_run(*args: Any) -> Any:
        found = moments(*args)
        collect(engine, [offer("a", "2.50")], T0 + 2 * H)
        return found

    monkeypatch.setattr(outbox, "change_moments", then_a_run)
    with caplog.at_level(logging.WARNING, logger="tracker.alerts.evaluate"):
        evaluate(engine, rule, ["slack"], now=T0 + 2 * H)
    # 10 / 1.25 = 8.00 EUR, 5 / 1.25 = 4.00 EUR: -50 %
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 8.00 → 4.00 EUR/h (-50.00%) [10.00 USD → 5.00 USD]"
    ]
    assert "left out" not in caplog.text
    monkeypatch.setattr(outbox, "change_moments", moments)
    evaluate(engine, rule, ["slack"], now=T0 + 3 * H)
    # then 2.50 / 1.25 = 2.00 EUR: -50 % again
    assert [t for _, t in fired(engine)][-1] == (
        "testcloud a us-east-1 on_demand: 4.00 → 2.00 EUR/h (-50.00%) [5.00 USD → 2.50 USD]"
    )


def test_two_evaluations_at_once_queue_each_alert_once(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica's and a CLI's evaluation of the same run, released together just before
    each takes its turn: the one that gets it second reads after the other committed,
    so its rules' cursors have moved and the other's alerts are queued."""
    engine = pg_engine
    rule = moves("10")
    collect(engine, [offer("a", "10.00"), offer("b", "20.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "5.00"), offer("b", "10.00")], T0 + H)
    together = threading.Barrier(2, timeout=30)
    take_turn = OutboxStream.take_turn

    def at_once(self: OutboxStream) -> None:
        together.wait()
        take_turn(self)

    monkeypatch.setattr(OutboxStream, "take_turn", at_once)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(evaluate, engine, rule, ["slack"], now=T0 + H) for _ in range(2)]
        queued = sorted(len(run.result()) for run in runs)  # neither raised
    assert queued == [0, 2]
    assert sorted(t for _, t in fired(engine)) == [
        "testcloud a us-east-1 on_demand: 10.00 → 5.00 USD/h (-50.00%)",
        "testcloud b us-east-1 on_demand: 20.00 → 10.00 USD/h (-50.00%)",
    ]
