"""The table helper's layout rule, worked by hand on small tables (tracker/cli/table.py)."""

from __future__ import annotations

from tracker.cli.table import Column, render

ROWS = [
    {"id": "gpu_1x_h100_sxm5", "note": "capacity returned after a long outage", "n": "8"},
    {"id": "p5.48xlarge", "note": "", "n": "12"},
]
COLUMNS = (
    Column("id", "instance"),  # priority 0: always shown, never cut
    Column("note", "note", priority=2, shrink=True, min_width=12),
    Column("n", "count", justify="right", priority=1),
)


def test_everything_fits_when_there_is_room() -> None:
    # instance 16 + note 37 + count 5, two gaps of 2: 62
    lines = render(ROWS, COLUMNS, width=62)
    assert lines[0] == "instance          note                                   count"
    assert lines[1] == "─" * 62
    assert lines[2] == "gpu_1x_h100_sxm5  capacity returned after a long outage      8"


def test_free_text_shortens_first_then_the_least_important_column_goes() -> None:
    # at 50: the note (priority 2) gives up 12 cells: 37 → 25, so 24 characters and …,
    # after a whole word: "capacity returned after" (23) + … = 24, one cell of padding
    lines = render(ROWS, COLUMNS, width=50)
    assert lines[2] == "gpu_1x_h100_sxm5  capacity returned after…       8"
    assert max(len(line) for line in lines) == 50
    # at 30: even at its minimum (12) the note leaves 16 + 12 + 5 + 4 = 37 > 30, so it
    # is dropped: 16 + 5 + 2 = 23
    lines = render(ROWS, COLUMNS, width=30)
    assert lines[0] == "instance          count"
    assert lines[2] == "gpu_1x_h100_sxm5      8"
    # at 10 the count goes too; the instance stays whole though wider than the width
    assert render(ROWS, COLUMNS, width=10)[2] == "gpu_1x_h100_sxm5"


def test_a_long_title_wraps_between_words_and_prose_cells_wrap_too() -> None:
    title = "llm-7b-lora: 12 of 17 offers fit (needs 16.5 GiB on one GPU)"
    lines = render([], (Column("x", "x"),), title=title, width=40)
    assert lines[:2] == ["llm-7b-lora: 12 of 17 offers fit (needs", "16.5 GiB on one GPU)"]
    note = Column("note", "note", wrap=True, min_width=10)
    url = "https://example.com/a/very/long/path/that/is/one/word"
    lines = render([{"note": f"basis measured ({url})"}], (note,), width=30)
    assert lines[2:] == ["basis measured", f"({url})"]


def test_free_text_is_cut_after_a_whole_word_unless_that_wastes_the_room() -> None:
    title = Column("t", "title", priority=1, shrink=True, min_width=10)
    rows = [{"t": "H100-SXM on lambda gpu_1x_h100_sxm5 us-east-1 dropped 12 %"}]
    # 30 cells: 29 characters would end inside "gpu_1x_h100_sxm5"; the last whole word
    # ends at 18 ("H100-SXM on lambda"), more than half of 30
    assert render(rows, (title,), width=30)[2] == "H100-SXM on lambda…"
    # a path: cutting after "CollectorError:" would keep 15 of 40, so it is cut inside
    # it: 39 characters ("CollectorError: " 16 + "/data/sheets/" 13 + "negotiated" 10) and …
    rows = [{"t": "CollectorError: /data/sheets/negotiated-2026/prices.csv: not UTF-8"}]
    assert render(rows, (title,), width=40)[2] == "CollectorError: /data/sheets/negotiated…"
