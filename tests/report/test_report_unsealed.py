"""report, view and export read only what a run's seal covers, through one reader
(agentbed.rundir; issue 46): a forged ``inspect/summary.json`` adds no headline, foreign logs
dropped into ``branches/episodes/`` (with an index of their own) are never counted, and links
are never followed; each is shown apart, by report and view alike."""

from __future__ import annotations

import json
import shutil

from agentbed.cli import main
from agentbed.report.rundir import load_run
from agentbed.rundir import LINK, UNSEALED


def test_unsealed_folders_are_shown_apart_and_never_counted(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "vault", "--agent", "oracle,naive", "--seeds", "2", "--executor", "serial", "--quiet",
                 "--out", str(run)]) == 0
    honest = load_run(run)
    episodes, summaries = len(honest.episodes), set(honest.summaries)
    (run / "inspect").mkdir()
    (run / "inspect" / "summary.json").write_text(json.dumps({"suite": "vault", "title": "FORGED", "headline": [
        {"metric": "success_rate", "estimate": 1.0, "low": 1.0, "high": 1.0, "n": 99, "agent": "naive"}]}))
    stray = run / "episodes" / "vault.stray.naive.s0.jsonl"  # a log dropped beside the sealed ones
    shutil.copy(sorted((run / "episodes").glob("*naive*.jsonl"))[0], stray)
    foreign = run / "branches" / "episodes"
    foreign.mkdir(parents=True)
    lines = []
    for n in range(12):
        log = sorted((run / "episodes").glob("*oracle*.jsonl"))[n % 4]
        shutil.copy(log, foreign / f"x{n}.jsonl")
        record = json.loads((run / "index.jsonl").read_text().splitlines()[0])
        lines.append(json.dumps({**record, "episode_id": f"x{n}", "log": f"branches/episodes/x{n}.jsonl",
                                 "success": True}))
    (run / "branches" / "index.jsonl").write_text("\n".join(lines) + "\n")
    elsewhere = tmp_path / "elsewhere"  # links (a folder with a summary, a log) are never followed
    elsewhere.mkdir()
    (elsewhere / "summary.json").write_text((run / "inspect" / "summary.json").read_text())
    (run / "linked").symlink_to(elsewhere)
    (run / "episodes" / "linked.jsonl").symlink_to(stray)
    seen = load_run(run)
    assert len(seen.episodes) == episodes and set(seen.summaries) == summaries
    apart = {p.file for p in seen.problems if p.message == UNSEALED}
    assert {"inspect/summary.json", "branches/index.jsonl", "episodes/vault.stray.naive.s0.jsonl"} <= apart
    linked = {p.file for p in seen.problems if p.message == LINK}
    assert linked == {"linked", "episodes/linked.jsonl"}
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "r.html")]) == 1  # verify names the stray log
    page = (tmp_path / "r.html").read_text()
    assert "FORGED" not in page and "unsealed, not verified" in page

    from agentbed.export.episodes import load_episodes  # and export

    assert len(load_episodes(run)) == episodes

    from tests.view.conftest import serve  # the viewer reads the same way

    for client in serve(tmp_path):
        _, doc = client.get("/api/run?run=run")
        assert "inspect" not in doc["summaries"] and "FORGED" not in json.dumps(doc)
        assert doc["run"]["episodes"] == episodes
        shown = {(p["file"], p["message"]) for p in doc["problems"] if p["message"] in (UNSEALED, LINK)}
        # one reader (agentbed.rundir): the viewer shows apart exactly what the report does
        assert shown == {(p.file, p.message) for p in seen.problems if p.message in (UNSEALED, LINK)}
        assert {("inspect/summary.json", UNSEALED), ("episodes/vault.stray.naive.s0.jsonl", UNSEALED)} <= shown
