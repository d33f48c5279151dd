"""The README is a front door and the docs/ pages hold the reference: every link resolves.

A link to a page must name a file that exists, and a ``#fragment`` a heading in it (GitHub's
anchor rule: lower case, punctuation dropped, spaces as hyphens), so moving a section can
never leave a reader at a dead end.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks (a ``](x)`` in code is not a link)."""
    lines, in_code = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            in_code = not in_code
        elif not in_code:
            lines.append(line)
    return lines


def anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {
        anchor(line.lstrip("#"))
        for line in _prose(page.read_text(encoding="utf-8"))
        if re.match(r"#{1,6} ", line)
    }


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    found = []
    for n, line in enumerate(_prose(page.read_text(encoding="utf-8")), start=1):
        for target in _LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path_part, _, fragment = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(root)} (prose line {n}): {target}"
            if not dest.exists():
                found.append(f"{where}: no file {path_part}")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                found.append(f"{where}: no heading #{fragment} in {dest.relative_to(root)}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_is_short_and_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"


def test_the_checker_finds_a_dead_link_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## Price sheets\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#price-sheets) [gone](c.md) [bad](a.md#nope) [web](https://x.org)\n"
        "```\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "b.md (prose line 1): c.md: no file c.md",
        "b.md (prose line 1): a.md#nope: no heading #nope in a.md",
    ]
