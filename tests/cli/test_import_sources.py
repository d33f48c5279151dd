"""Ad-hoc imports write for their own source, and bad sheets fail in one line (real CLI)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.cli.test_cli import HEADER, SHEET, offers, one_line_error
from tests.conftest import Run

ADHOC_ROWS = (
    "coreweave,gd-8xh100ib-i128,us-east-04,,on_demand,H100,8,80,128,1024,49.24,USD",
    "coreweave,gd-8xa100-i128,us-east-04,,on_demand,A100,8,80,128,1024,17.60,USD",
)


def write_sheet(path: Path, *rows: str) -> Path:
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def runs(cli: Run, *args: str) -> list[dict[str, object]]:
    proc = cli("runs", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def sources(cli: Run) -> dict[str, object]:
    return {str(r["instance_type"]): r["source"] for r in offers(cli)}


def test_import_and_the_configured_sheet_never_delist_each_other(
    cli: Run,
    sheet: Path,
    tmp_path: Path,
) -> None:
    configured = {"GPU_TRACKER_PRICESHEET__PATH": str(sheet)}
    adhoc = write_sheet(tmp_path / "adhoc.csv", ADHOC_ROWS[0])
    assert cli("import", str(adhoc)).returncode == 0

    proc = cli("collect", "--provider", "pricesheet", extra_env=configured)
    assert proc.returncode == 0, proc.stderr
    [sheet_run, import_run] = runs(cli)
    assert sheet_run["delisted"] == 0  # it used to delist the imported offer
    assert sheet_run["source"] == "pricesheet"
    assert (import_run["provider"], import_run["source"]) == ("pricesheet", "import:adhoc.csv")
    # The sheet's 6 offers plus the imported one, each under the source that wrote it.
    listed = [(r["instance_type"], r["source"]) for r in offers(cli)]
    assert len(listed) == 7
    assert ("gd-8xh100ib-i128", "import:adhoc.csv") in listed
    assert [s for name, s in listed if name != "gd-8xh100ib-i128"] == ["pricesheet"] * 6

    # A complete import delists only what its own source no longer lists: nothing here.
    proc = cli("import", "--full", str(adhoc))
    assert proc.returncode == 0, proc.stderr
    assert runs(cli, "--limit", "1")[0]["delisted"] == 0
    assert len(offers(cli)) == 7
    proc = cli("collect", "--provider", "pricesheet", extra_env=configured)
    assert proc.returncode == 0, proc.stderr
    assert runs(cli, "--limit", "1")[0]["delisted"] == 0
    assert len(offers(cli)) == 7


def test_the_same_file_or_name_is_the_same_source(cli: Run, tmp_path: Path) -> None:
    adhoc = write_sheet(tmp_path / "adhoc.csv", *ADHOC_ROWS)
    assert cli("import", str(adhoc)).returncode == 0
    # The same file again, now without the A100 row: a complete re-import delists it.
    write_sheet(adhoc, ADHOC_ROWS[0])
    assert cli("import", "--full", str(adhoc)).returncode == 0
    assert runs(cli, "--limit", "1")[0]["delisted"] == 1
    assert sources(cli) == {"gd-8xh100ib-i128": "import:adhoc.csv"}

    # Two files under one --source name are one source; other names are untouched.
    may = write_sheet(
        tmp_path / "may.csv", "lambda,gpu_1x_a10,us-east-1,,on_demand,A10,1,24,30,200,0.75,USD"
    )
    june = write_sheet(tmp_path / "june.csv", "lambda,gpu_1x_h100_pcie,us-east-1,,on_demand,H100 PCIe,1,80,26,200,2.49,USD")  # fmt: skip
    assert cli("import", "--source", "lambda-deal", str(may)).returncode == 0
    assert cli("import", "--source", "lambda-deal", "--full", str(june)).returncode == 0
    assert sources(cli) == {
        "gd-8xh100ib-i128": "import:adhoc.csv",
        "gpu_1x_h100_pcie": "import:lambda-deal",
    }
    assert [r["delisted"] for r in runs(cli, "--source", "import:lambda-deal")] == [1, 0]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "source name '': give printable text"),
        ("a\tb", "source name 'a\\tb': give printable text"),
        # "import:" (7) + 58 characters would not fit series.source (64).
        ("x" * 58, f"source name '{'x' * 58}' is 58 characters, at most 57 fit"),
    ],
)
def test_a_bad_source_name_is_a_usage_error(
    cli: Run,
    sheet: Path,
    name: str,
    problem: str,
) -> None:
    msg = one_line_error(cli("import", "--source", name, str(sheet)), 2)
    assert f"--source: {problem}" in msg
    assert runs(cli) == []


def _utf16(text: str) -> bytes:
    return text.encode("utf-16")  # with the byte-order mark, as "Unicode text" exports write


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("utf16.csv", _utf16(SHEET + "\n"), "UTF-16 text, not UTF-8: save the sheet as UTF-8"),
        # Without a byte-order mark: 'p' then its high byte 0x00 at offset 1.
        (
            "utf16le.csv",
            (SHEET + "\n").encode("utf-16-le"),
            "not a text file (NUL byte at offset 1)",
        ),
        # gzip: magic 1f 8b, method 08, flags 00 -> the first NUL is at offset 3.
        (
            "prices.csv.gz",
            gzip.compress((SHEET + "\n").encode(), mtime=0),
            "not a text file (NUL byte at offset 3)",
        ),
        # Latin-1 'é' (0xe9) after 'provider,' (9 bytes) is not UTF-8.
        (
            "latin1.csv",
            "provider,é\n".encode("latin-1"),
            "not UTF-8 text (byte 0xe9 at offset 9)",
        ),
    ],
)
def test_a_sheet_that_is_not_utf8_text_fails_in_one_line_and_stores_nothing(
    cli: Run, tmp_path: Path, name: str, content: bytes, problem: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    proc = cli("import", str(path))
    assert one_line_error(proc, 1).endswith(f"{path}: {problem}; nothing was loaded")
    proc = cli("offers", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == []
    [failed] = runs(cli)
    assert failed["status"] == "failed" and failed["source"] == f"import:{name}"


def test_a_configured_sheet_that_is_not_utf8_fails_its_run_in_one_line(
    cli: Run, tmp_path: Path
) -> None:
    path = tmp_path / "sheet.csv"
    path.write_bytes(_utf16(SHEET + "\n"))
    proc = cli("collect", "--provider", "pricesheet", extra_env={"GPU_TRACKER_PRICESHEET__PATH": str(path)})  # fmt: skip
    # the only run failed: its error is the one line, and nothing is printed on stdout
    assert one_line_error(proc, 1) == (
        f"gpu-tracker: error: pricesheet: collection failed: CollectorError: {path}: "
        "UTF-16 text, not UTF-8: save the sheet as UTF-8"
    )
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    [failed] = runs(cli)
    assert (
        failed["error"]
        == f"CollectorError: {path}: UTF-16 text, not UTF-8: save the sheet as UTF-8"
    )
