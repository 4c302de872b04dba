"""The static report grows with agents and tasks, not with episodes: past ``FULL_LIST`` episodes it
shows aggregates, heat-maps and at most ``TOP_EPISODES`` rows to read first, pointing to
``agentbed view`` for the rest. Measured in bytes on real vault runs (``agentbed run``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentbed.cli import main as agentbed
from agentbed.report import render_report
from agentbed.report.tally import FULL_LIST, TOP_EPISODES

BYTES_PER_EPISODE = 16  # growth allowed per added episode (one listed row is about 300 bytes)


def _vault_run(root: Path, seeds: int) -> Path:
    out = root / f"vault-{seeds}"
    assert agentbed(["run", "vault", "--agent", "oracle,naive", "--seeds", str(seeds), "--quiet",
                     "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("size")
    return {seeds: _vault_run(root, seeds) for seeds in (2, 20, 60)}  # 12, 120 and 360 episodes


def _rows(page: str) -> int:
    return page.count('<tr id="episode-')


def test_report_size_grows_by_at_most_a_few_bytes_per_episode(runs: dict[int, Path]) -> None:
    sizes = {seeds: render_report(run).stat().st_size for seeds, run in runs.items()}
    growth = (sizes[60] - sizes[20]) / (360 - 120)
    assert growth <= BYTES_PER_EPISODE, (sizes, growth)
    assert sizes[60] < sizes[2] + 60_000, sizes  # heat-map, aggregates and 40 rows, whatever the seeds


def test_a_small_run_lists_every_episode(runs: dict[int, Path]) -> None:
    page = render_report(runs[2]).read_text(encoding="utf-8")
    assert 12 <= FULL_LIST and _rows(page) == 12
    assert "Every episode (12 rows)" in page and 'id="episodes-pointer"' not in page


def test_a_large_run_shows_failures_first_and_points_to_the_viewer(runs: dict[int, Path]) -> None:
    run = runs[60]
    page = render_report(run).read_text(encoding="utf-8")
    index = [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]
    failed = [r for r in index if not r["success"]]
    assert len(index) == 360 and len(failed) > TOP_EPISODES
    assert _rows(page) == TOP_EPISODES
    assert f"agentbed view {run}" in page and 'id="episodes-by-agent"' in page
    table = page[page.index('id="episodes-table"'):]
    assert ">yes<" not in table  # only failures fill the table while there are more than it holds
    assert table.count(">naive<") >= 1


def test_a_log_that_does_not_verify_comes_first(runs: dict[int, Path]) -> None:
    run = runs[20]
    index = [json.loads(line) for line in (run / "index.jsonl").read_text().splitlines()]
    passed = next(r for r in index if r["success"])
    log = run / passed["log"]
    log.write_text(log.read_text(encoding="utf-8").replace('"reward"', '"reward" ', 1), encoding="utf-8")
    page = render_report(run).read_text(encoding="utf-8")
    first = page[page.index('<tr id="episode-1"'):page.index('<tr id="episode-2"')]
    assert passed["episode_id"] in first and "verified" not in first.split("<td>")[-1]
