"""Every relative link in README.md and docs/ reaches a file, and a link with an anchor reaches a
heading of that page (GitHub's heading ids); no page grows far past about 500 lines (history
moves to dated pages) unless it is named here with its reason."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# about 500 lines (the charter); a page named here is longer for the reason given
LONGEST = 550  # "about": a page a few paragraphs over is split at the next history move
LONGER: dict[str, str] = {}


def _prose(text: str) -> list[str]:
    """The page's lines outside code fences, inline code removed (a link there is not one)."""
    lines, fence = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def heading_ids(page: Path) -> set[str]:
    ids: set[str] = set()
    seen: dict[str, int] = {}
    fence = False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        found = None if fence else re.match(r"^#{1,6} (.*)$", line)
        if found:
            base = re.sub(r"[^\w\- ]", "", found.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(base, 0)
            ids.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
    return ids


def test_every_relative_link_reaches_its_file_and_heading():
    bad = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", "\n".join(_prose(page.read_text(encoding="utf-8")))):
            if re.match(r"^[a-z]+:", target):
                continue  # a URL
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in heading_ids(dest):
                bad.append(f"{page.relative_to(ROOT)}: {target}: no such heading")
    assert not bad, "\n".join(bad)


def test_pages_stay_about_500_lines():
    long = {p.name: n for p in PAGES if (n := p.read_text(encoding="utf-8").count("\n")) > LONGEST
            and p.name not in LONGER}
    assert not long, f"over {LONGEST} lines (move superseded measurements to a dated history page): {long}"
