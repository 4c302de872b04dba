"""Every combination of a person's decisions (approve, reject, edit, hand over) on an episode's
first two calls replays identically: `agentbed replay --rerun` re-applies the recorded decisions
and asks nobody. The approver is agentbed's own HumanApprover; only the person is scripted (its
answers are the documents the viewer or the terminal would hand it)."""

from __future__ import annotations

import itertools
import json

import pytest

from agentbed.approval import HumanApprover
from agentbed.log import TrajectoryWriter, read_log
from agentbed.replay import first_divergence, rerun
from agentbed.runner import EpisodeSpec, run_episode
from agentbed.suite import get_suite

DECISIONS = ("approve", "reject", "edit", "handover")


class ScriptedPerson(HumanApprover):
    """The approver with a person answering from ``answers`` (then approving everything)."""

    def __init__(self, folder, answers, **kwargs) -> None:
        super().__init__(folder, **kwargs)
        self.answers = list(answers)

    def _wait(self, asked):
        decision = self.answers.pop(0) if self.answers else "approve"
        doc = {"decision": decision, "author": "tester"}
        if decision == "edit":  # the same call in other bytes, as a person retyping it would send
            doc["action"] = json.dumps(json.loads(asked.proposed), separators=(",", ":"))
        if decision == "handover":
            doc["agent"] = "oracle"
        return doc, "script", 0.0


@pytest.mark.parametrize("answers", list(itertools.product(DECISIONS, repeat=2)), ids="-".join)
def test_every_combination_of_decisions_replays_identically(tmp_path, answers):
    suite = get_suite("vault")
    spec = EpisodeSpec("vault", "open-after-chores", "naive", 0)
    env = suite.make_env(spec.task, spec.options)
    person = ScriptedPerson(tmp_path / "approvals", answers, episode_id=spec.episode_id, agents=["oracle"],
                            make_agent=lambda name: _reset(suite.make_agent(EpisodeSpec("vault", spec.task, name, 0)),
                                                           env),
                            tools=lambda: env.tools)
    log = tmp_path / "episode.jsonl"
    record = run_episode(env, suite.make_agent(spec, env), spec, budget=suite.budget, writer=TrajectoryWriter(log),
                         controller=person)
    env.close()
    assert record.status != "error", record.error
    assert (record.status == "stopped") == ("reject" in answers)
    recorded, replayed = rerun(log)
    divergence = first_divergence(recorded, replayed)
    assert divergence is None, divergence.message()
    assert read_log(log)[-1]["status"] == replayed[-1]["status"]


def _reset(agent, env):
    agent.reset(seed=0, task=env.task)
    return agent
