"""The human overseer as one of the oversight controllers: asked at each checkpoint through the
viewer's rendezvous, compared with the automated controllers on the same checkpoints, and read
back from its recorded decisions."""

from __future__ import annotations

import itertools
import json
import threading
import time

import pytest

from agentbed.cli import main
from agentbed.view.approvals import ApprovalBoard
from controllers.oversight.dataset import BuildConfig, Dataset
from controllers.oversight.evaluate import EvalConfig, cross_validate, load_checkpoints
from controllers.oversight.human import HumanReview, compare_with_controllers
from suites.oversight.build import build_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("ov-human") / "vault.jsonl"
    build_dataset(BuildConfig("vault", games=4, seeds=1, rollouts=1, checkpoints=2, first=1, every=2)).save(path)
    return path


def _answer_everything(board: ApprovalBoard, stop: threading.Event) -> None:
    answers = itertools.cycle([{"decision": "approve"}, {"decision": "reject"},
                               {"decision": "handover", "agent": "expert"}])
    while not stop.is_set():
        for question in board.pending():
            board.decide({"key": question["key"], "author": "ada", **next(answers)})
        time.sleep(0.02)


def test_a_person_decides_each_checkpoint_and_is_compared_on_the_same_ones(dataset, tmp_path, capsys):
    cps, _ = load_checkpoints(Dataset.load(dataset))
    folder, decisions = tmp_path / "approvals", tmp_path / "decisions.jsonl"
    folder.mkdir()
    stop = threading.Event()
    answering = threading.Thread(target=_answer_everything, args=(ApprovalBoard(folder), stop), daemon=True)
    answering.start()
    try:
        human = HumanReview(decisions, folder, timeout=20)
        config = EvalConfig(folds=2, grid=False, resamples=100)
        chosen = {n: s[0] for n, s in cross_validate(cps, config, [config.costs])["chosen"].items()}
        result = compare_with_controllers(cps, human, chosen, config.costs, resamples=100)
    finally:
        stop.set()
        answering.join(5)
    recorded = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert len(recorded) == len(cps) == result["checkpoints"]
    assert {r["choice"] for r in recorded} <= set(cps.choices) and {r["via"] for r in recorded} == {"file"}
    assert {r["decision"] for r in recorded} == {"approve", "reject", "handover"}
    assert "action-conditioned" in result["controllers"] and "oracle" in result["controllers"]
    assert result["controllers"]["oracle"]["regret"]["estimate"] == 0
    assert result["human"]["regret"]["estimate"] >= 0
    # replayed from the record: nobody is asked, the same choices come back
    again = HumanReview(decisions, None).choose(cps, config.costs)
    assert again.tolist() == [r["choice"] for r in sorted(recorded, key=lambda r: [f"{k[0]}@{k[1]}" for k in
                                                                                      cps.keys].index(r["unit"]))]
    assert main(["oversight-human", str(dataset), "--decisions", str(decisions), "--folds", "2",
                 "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "human" in out and "action-conditioned" in out and "human - it:" in out


def test_an_undecided_checkpoint_without_a_folder_is_a_one_line_error(dataset, tmp_path, capsys):
    assert main(["oversight-human", str(dataset), "--decisions", str(tmp_path / "none.jsonl"), "--folds", "2",
                 "--resamples", "50"]) == 2
    assert "no recorded decision for checkpoint" in capsys.readouterr().err
