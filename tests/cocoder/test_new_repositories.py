"""Repositories nobody here had used, as a user would give them (issue 52, item 4): each pinned
sdist (``environments.cocoder.repos.USER_SDISTS``, fetched by scripts/fetch-repos) goes to
``cocoder-plan`` and ``run cocoder --repo SDIST`` with no other flag; it plans and runs, or is
refused with the one-line reason recorded beside it."""

import json

import pytest

from agentbed.cli import main
from agentbed.testing import require
from environments.cocoder.repos import FETCH_COMMAND, USER_SDISTS, sha256_of


@pytest.mark.parametrize("sdist", USER_SDISTS, ids=[s.dist for s in USER_SDISTS])
def test_a_new_repository_plans_and_runs_with_no_hand_flags(sandbox, tmp_path, capsys, sdist):
    require(sdist.path.is_file() and sha256_of(sdist.path) == sdist.sha256, f"the pinned sdist {sdist.file}",
            f"run {FETCH_COMMAND} {sdist.dist}")
    path = str(sdist.path)
    plan = main(["cocoder-plan", path, "--strategy", "cocoder", "--json"])
    out, err = capsys.readouterr()
    if sdist.expect != "runs":
        assert plan == 2 and sdist.expect in err and len(err.strip().splitlines()) == 1, err
        assert main(["run", "cocoder", "--repo", path, "--out", str(tmp_path / "run")]) == 2
        return
    assert plan == 0, err
    report = json.loads(out)
    assert report["strategies"]["cocoder"]["makespan"] > 0
    assert main(["run", "cocoder", "--repo", path, "--strategy", "cocoder", "--seeds", "1",
                 "--out", str(tmp_path / "run")]) == 0
    records = [json.loads(line) for line in (tmp_path / "run" / "index.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["metrics"]["reference_tests"] > 0
