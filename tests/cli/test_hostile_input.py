"""The reproductions of issue 44 through the real CLI, on SQLite and Postgres.

Each test first does what the attacker (or the careless user) did; before the fix the
same commands stored a zero and then failed every listing with a traceback, loaded a
formula into every CSV, or said "the other rows were loaded" when none were.
"""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

from sqlalchemy import text

from tests.conftest import Run
from tracker.store.engine import make_engine

HEADER = "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency"


def _sheet(tmp_path: Path, name: str, *rows: str, header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text("\n".join((header, *rows)) + "\n", encoding="utf-8")
    return path


def _offers(cli: Run) -> list[dict[str, object]]:
    proc = cli("offers", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_rows_the_store_cannot_hold_are_rejected_and_counted(cli: Run, tmp_path: Path) -> None:
    sheet = _sheet(
        tmp_path,
        "bad.csv",
        "acme,a1,us,on_demand,H100,1,2.50,USD,0.00000000004",
        "acme,a2,us,on_demand,H100,1,2.50,USD,64",
        "acme,a3,us,on_demand,H100,1,1e400,USD,64",
        "acme,a4,us,on_demand,H100,1,12345678901,USD,64",
        "acme,a5,us,on_demand,H100,1e-400,2.50,USD,64",
        header=HEADER + ",memory_gib",
    )
    proc = cli("import", str(sheet))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert f"{sheet}:2: memory_gib: 4E-11 would be stored as 0" in lines[0]
    assert f"{sheet}:4: price_per_hour: 1E+400 does not fit the stored number" in lines[1]
    assert f"{sheet}:5: price_per_hour: 12345678901 does not fit" in lines[2]  # PG overflowed
    assert f"{sheet}:6: gpu_count: 1E-400 would be stored as 0" in lines[3]
    assert lines[-1] == f"gpu-tracker: error: 4 row(s) of {sheet} rejected; 1 other row was loaded"
    assert [o["instance_type"] for o in _offers(cli)] == ["a2"]
    assert cli("recommend", "-P", "llm-7b-lora").returncode == 0


def test_a_broken_sheet_says_nothing_was_loaded(cli: Run, tmp_path: Path) -> None:
    sheet = _sheet(
        tmp_path,
        "q.csv",
        "acme,a1,us,on_demand,H100,1,2.50,USD",
        'acme,"a2,us,on_demand,H100,1,2.50,USD',
        "acme,a3,us,on_demand,H100,1,2.50,USD",
    )
    proc = cli("import", str(sheet))
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"gpu-tracker: error: import failed: CollectorError: {sheet}:3: unterminated quote: the "
        "quoted field opened here runs to the end of the file (line 4); nothing was loaded"
    )
    assert _offers(cli) == []
    runs = json.loads(cli("runs", "-f", "json").stdout)
    assert runs[0]["status"] == "failed" and f"{sheet}:3" in runs[0]["error"]


def test_every_rejected_row_with_none_loaded_says_so(cli: Run, tmp_path: Path) -> None:
    sheet = _sheet(tmp_path, "none.csv", "acme,a1,us,on_demand,H100,1,1e400,USD")
    proc = cli("import", str(sheet))
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(f"1 row(s) of {sheet} rejected; no row was loaded")


def test_a_stored_row_the_model_refuses_is_skipped_not_fatal(
    cli: Run, db_url: str, tmp_path: Path
) -> None:
    """A memory size stored as 0 by an older release (or a hand edit): before, `offers`
    and `recommend` exited 1 with ``InvalidOffer: memory_gib: must be > 0, got 0E-10``.
    The warning is logged once per process and row, so each engine's row has its name."""
    bad = f"a1-{db_url.split(':')[0].split('+')[0]}"
    sheet = _sheet(
        tmp_path,
        "two.csv",
        f"acme,{bad},us,on_demand,H100,1,2.50,USD,64",
        "acme,a2,us,on_demand,H100,1,3.00,USD,64",
        header=HEADER + ",memory_gib",
    )
    assert cli("import", str(sheet)).returncode == 0
    engine = make_engine(db_url)
    with engine.begin() as conn:  # what the old rounding stored
        conn.execute(text("UPDATE series SET memory_gib = 0 WHERE instance_type = :i"), {"i": bad})
    engine.dispose()
    proc = cli("offers", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert [o["instance_type"] for o in json.loads(proc.stdout)] == ["a2"]
    assert f"stored offer acme/{bad}/us/on_demand/linux skipped: it fails validation" in proc.stderr
    assert "memory_gib: must be > 0" in proc.stderr and "Traceback" not in proc.stderr
    ranked = cli("recommend", "-P", "llm-7b-lora", "-f", "json")
    assert ranked.returncode == 0, ranked.stderr
    assert [r["instance_type"] for r in json.loads(ranked.stdout)] == ["a2"]


def test_a_stored_fabric_the_model_refuses_is_skipped_by_the_ranking(
    cli: Run, db_url: str, tmp_path: Path
) -> None:
    """The ranking's cheap per-row check covers the fabric columns too (issue 37): a
    fabric no release writes, or a bandwidth stored as 0, leaves that offer out."""
    engine_name = db_url.split(":")[0].split("+")[0]
    bad, zero = f"f1-{engine_name}", f"f2-{engine_name}"
    sheet = _sheet(
        tmp_path,
        "three.csv",
        f"acme,{bad},us,on_demand,H100,1,2.50,USD,64",
        f"acme,{zero},us,on_demand,H100,1,2.60,USD,64",
        "acme,a2,us,on_demand,H100,1,3.00,USD,64",
        header=HEADER + ",memory_gib",
    )
    assert cli("import", str(sheet)).returncode == 0
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE series SET fabric = 'myrinet' WHERE instance_type = :i"), {"i": bad}
        )
        conn.execute(
            text("UPDATE series SET network_gbps = 0 WHERE instance_type = :i"), {"i": zero}
        )
    engine.dispose()
    ranked = cli("recommend", "-P", "llm-7b-lora", "-f", "json")
    assert ranked.returncode == 0, ranked.stderr
    assert [r["instance_type"] for r in json.loads(ranked.stdout)] == ["a2"]
    assert "fabric: 'myrinet' is not one of" in ranked.stderr
    assert "network_gbps: must be > 0" in ranked.stderr and "Traceback" not in ranked.stderr


INJECTIONS = (
    '"=HYPERLINK(""http://evil.example"",""x"")","+cmd|\' /C calc\'!A0",-us,on_demand,'
    "H100,1,2.50,USD",
    "@acme,x,us,on_demand,H100,1,3.00,USD",
)
"""Leading tabs and CRs never reach the store (names are stripped): tests/test_csv_cells.py
checks those cells."""


def _cells(output: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(output)))


def test_every_csv_writer_neutralizes_formulas(cli: Run, tmp_path: Path) -> None:
    """OWASP's rule: a cell starting with = + - @ tab or CR gets a leading '; before, the
    names went out unchanged and a spreadsheet ran them."""
    assert cli("import", str(_sheet(tmp_path, "inj.csv", *INJECTIONS))).returncode == 0
    # compare, history and export read "now" to the whole second (tracker/views/history.py):
    # a price stored earlier in the same second is not yet in force for them.
    time.sleep(1.05)
    wanted = {
        '\'=HYPERLINK("http://evil.example","x")',
        "'+cmd|' /C calc'!A0",
        "'-us",
        "'@acme",
    }
    outputs = {
        "offers": cli("offers", "-f", "csv").stdout,
        "compare": cli("compare", "-f", "csv").stdout,
        "recommend": cli("recommend", "-P", "llm-7b-lora", "-f", "csv").stdout,
        "history": cli("history", "--gpu", "H100", "--since", "1d", "-f", "csv").stdout,
    }
    export = tmp_path / "out.csv"
    assert cli("export", str(export), "--since", "1d").returncode == 0
    outputs["export"] = export.read_text(encoding="utf-8")
    for name, output in outputs.items():
        cells = {c for row in _cells(output) for c in row}
        assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for c in cells), name
        assert not any(c.startswith("-") and not c[1:2].isdigit() for c in cells), name
        assert cells & wanted, name
    offer_cells = {c for row in _cells(outputs["offers"]) for c in row}
    assert wanted <= offer_cells
    # JSON is data for programs: unchanged.
    names = {(o["provider"], o["instance_type"], o["region"]) for o in _offers(cli)}
    assert ('=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "-us") in names


def test_terminal_escapes_in_names_are_shown_escaped(cli: Run, tmp_path: Path) -> None:
    """A sheet could retitle the terminal (OSC 0) and ring it through ``offers``."""
    row = 'acme,"\x1b]0;pwned\x07gpu",us,on_demand,H100,1,2.50,USD'
    assert cli("import", str(_sheet(tmp_path, "esc.csv", row))).returncode == 0
    proc = cli("offers")
    assert proc.returncode == 0
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]0;pwned\\x07gpu" in proc.stdout
    assert _offers(cli)[0]["instance_type"] == "\x1b]0;pwned\x07gpu"  # stored as given
