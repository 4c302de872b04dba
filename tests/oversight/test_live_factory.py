"""Issue 54 item 7 from the command line: ``agentbed run SUITE --controller file.py:NAME`` with
suites/oversight/live_factory.py's factory puts a policy fitted on a committed development dataset on
live episodes, and its decisions there are offline evaluation's on the same held-out checkpoints."""

import json
from pathlib import Path

import pytest

from agentbed.cli import main
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import load_checkpoints
from controllers.oversight.policies import ForestSettings, default_controllers
from controllers.oversight.utility import Costs
from suites.oversight.live_factory import deployable, factory
from suites.oversight.suite import DATA

DEV, HELD = DATA / "contracts-dev.jsonl.gz", DATA / "contracts-heldout.jsonl.gz"
TREES = 15


def _offline(policy: str) -> dict[tuple[str, int], str]:
    """(game, checkpoint step) -> the policy's choice, fitted on DEV and scored on HELD offline."""
    held = Dataset.load(HELD)
    train, _ = load_checkpoints(Dataset.load(DEV))
    test, _ = load_checkpoints(held)
    chosen = next(c for c in default_controllers(ForestSettings(n_estimators=TREES)) if c.name == policy)
    chosen.fit(train)
    game_of = {r["trajectory"]: r["game"] for r in held.rows}
    return {(game_of[t], s): str(c) for (t, s), c in zip(test.keys, chosen.choose(test, Costs()), strict=True)}


def _live(policy: str, tmp_path: Path, shadow: bool, budget: str = "",
          episodes: list | None = None) -> tuple[dict[tuple[str, int], str], list[dict]]:
    held = Dataset.load(HELD)
    ref = tmp_path / "controller.py"
    ref.write_text("from suites.oversight.live_factory import factory\n"
                   f"policy = factory({str(DEV)!r}, policy={policy!r}, shadow={shadow}, trees={TREES}, "
                   f"budget={budget!r})\n", encoding="utf-8")
    out = tmp_path / "run"
    tasks = [a for g in held.provenance["games"] for a in ("--task", g)]
    assert main(["run", "contracts", "--agent", "naive", *tasks, "--seeds", "1", "--executor", "serial",
                 "--controller", f"{ref}:policy", "--out", str(out), "--quiet"]) == 0
    live, records = {}, []
    for log in sorted((out / "episodes").glob("*.jsonl")):
        lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        task = lines[0]["task"]  # the header
        if episodes is not None:
            episodes.append(lines)
        for step in lines:  # a step's control member, or a stop's own control record (the step never ran)
            control = (step.get("verdict") if step.get("type") == "control" else step.get("control")) or {}
            if control.get("by") == "oversight" and "choice" in control.get("decision", {}):  # not a budget's stop
                records.append(control)
                live[task, control["decision"]["checkpoint"]] = control["decision"]["choice"]
    return live, records


@pytest.mark.parametrize("policy", ["action-conditioned", "scalar-bands", "cost-rule+platt"])
def test_a_factory_fitted_on_development_decides_live_as_offline_on_held_out_tasks(policy, tmp_path):
    offline = _offline(policy)
    live, records = _live(policy, tmp_path, shadow=True)
    assert live == offline and len(live) == len(offline) > 10  # every held-out checkpoint, the same choice
    assert all(r["decision"]["shadow"] and r["decision"]["policy"] == policy for r in records)
    if policy == "action-conditioned":  # it discriminates here (the score-only rules may pick one action)
        assert len(set(live.values())) >= 2


def test_acting_live_the_first_decision_other_than_continue_takes_over(tmp_path):
    """Not in shadow: each episode's decisions are offline's up to its first intervention or quit,
    which is logged as a handover or a stop, and nothing is decided after it."""
    offline = _offline("action-conditioned")
    live, records = _live("action-conditioned", tmp_path, shadow=False)
    expected = {}
    for game in sorted({g for g, _ in offline}):
        for step in sorted(s for g, s in offline if g == game):
            expected[game, step] = offline[game, step]
            if offline[game, step] != "continue":
                break
    assert live == expected
    acted = [r for r in records if r["decision"]["choice"] != "continue"]
    assert acted and all(r["kind"] == ("stop" if r["decision"]["choice"] == "quit" else "handover") for r in acted)


def test_the_factory_refuses_held_out_data_and_unknown_policies():
    with pytest.raises(Exception, match="no policy 'oracle'"):
        factory(DEV, policy="oracle")
    assert "action-conditioned" in deployable() and "scalar-bands" in deployable()
    make = factory(HELD)  # fitted at the first episode: refused there, before any decision
    with pytest.raises(Exception, match="refusing to fit on suite-contracts task quarter 0 \\(held out"):
        make(None)


def test_acting_live_a_handover_keeps_the_interventions_step_budget_and_ends_as_its_branch(tmp_path):
    """An intervention means live what it meant in the fit: fitted with the oracle handover cut at 5
    steps, the controller stops a handed-over episode when the oracle has used them, and every
    handed-over episode then takes the steps and reaches the outcome of the dataset's budgeted
    branch from that checkpoint (contracts: deterministic, and a branch's handover agent is reset
    with the episode's seed as the runner's is)."""
    from controllers.oversight.budget import with_budgets

    branches = {(r["game"], r["checkpoint"]): r for r in with_budgets(Dataset.load(HELD), {"oracle": 5}).rows
                if r["action"] == "oracle"}
    episodes: list = []
    _live("action-conditioned", tmp_path, shadow=False, budget="oracle=5", episodes=episodes)
    handed, capped = 0, 0
    for lines in episodes:
        verdicts = [x.get("verdict") if x["type"] == "control" else x.get("control") for x in lines]
        handover = next((v for v in verdicts if v and v.get("kind") == "handover"), None)
        if handover is None:
            continue
        handed += 1
        at = handover["decision"]["checkpoint"]
        branch = branches[lines[0]["task"], at]
        steps = sum(x["type"] == "step" for x in lines) - at
        assert (steps, bool(lines[-1]["success"])) == (branch["steps"], branch["success"]), lines[0]["task"]
        stops = [v for v in verdicts if v and v.get("kind") == "stop"]
        assert bool(stops) == (branch["status"] == "budget")
        capped += bool(stops)
        assert all("oracle gave up after its budget of 5 steps" in v["reason"] for v in stops)
    assert handed >= 10 and capped >= 1  # the budget binds somewhere, and not everywhere
