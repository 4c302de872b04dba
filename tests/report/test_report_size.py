"""The static report grows with agents and tasks, not with episodes: past ``FULL_LIST`` episodes it
shows aggregates, heat-maps and at most ``TOP_EPISODES`` rows to read first, pointing to
``agentbed view`` for the rest. Measured in bytes on real vault runs (``agentbed run``)."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import pytest

from agentbed.cli import main as agentbed
from agentbed.report import overview, render_report
from agentbed.report.html import Splices, esc
from agentbed.report.rundir import load_run
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


def test_the_seeds_are_written_a_chunk_at_a_time_as_the_page_built_whole_has_them(
        runs: dict[int, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run.json's seeds (a range once read) go into the file as they are made, not into the page: the
    bytes are those of the page built whole, whose seeds cell is ``json.dumps`` of their list."""
    monkeypatch.setattr(overview, "RANGE_CHUNK", 7)  # 20 seeds in 3 chunks
    run = runs[20]
    streamed = render_report(run, tmp_path / "streamed.html").read_text(encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(Splices, "add", lambda self, chunks: esc("".join(chunks())))  # the page built whole
        whole = render_report(run, tmp_path / "whole.html").read_text(encoding="utf-8")
    when = re.compile(r"report generated [0-9: -]+ UTC")
    assert when.sub("", streamed) == when.sub("", whole)
    seeds = json.loads((run / "run.json").read_text(encoding="utf-8"))["seeds"]
    assert seeds == list(range(20)) and f"<code>{json.dumps(seeds)}</code>" in streamed
    assert "<!--splice" not in streamed


def test_the_seeds_of_a_long_run_are_never_held_whole(runs: dict[int, Path], tmp_path: Path) -> None:
    """The overview's peak memory does not grow with the seeds: 200,000 of them (1.3 MB of text, and a
    list and the JSON encoder's pieces of some 20 MB when built whole) cost what 10 do."""
    run = load_run(runs[2])
    assert run.run_info is not None

    def peak(seeds: range) -> int:
        assert run.run_info is not None
        run.run_info["seeds"] = seeds
        tracemalloc.start()
        try:
            splices = Splices()
            section = overview.overview_section(run, splices)
            with (tmp_path / "section.html").open("w", encoding="utf-8") as fh:
                splices.write(section, fh)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(range(10)), peak(range(200_000))
    assert large - small < 1024 * 1024, (small, large)  # a chunk's text and pieces (RANGE_CHUNK seeds)
    text = (tmp_path / "section.html").read_text(encoding="utf-8")
    assert f"<code>{json.dumps(list(range(200_000)))}</code>" in text
