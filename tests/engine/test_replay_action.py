"""Replay names the field that changed, the action included, byte for byte."""

import json

from bad_input_corpus import rechain

from agentbed.agents.faults import FaultyAgent
from agentbed.cli import main
from agentbed.log import TrajectoryWriter
from agentbed.replay import first_divergence, rerun
from agentbed.runner import EpisodeSpec, run_episode
from environments.vault.agents import VaultOracle
from environments.vault.env import VaultEnv


def _record(tmp_path, agent=None, seed=3):
    writer = TrajectoryWriter(tmp_path / "base.jsonl")
    agent = agent or VaultOracle()
    run_episode(VaultEnv("long-chores"), agent, EpisodeSpec("vault", "long-chores", "oracle", seed), writer=writer)
    return writer.path


def _edit_action(path, step, edit):
    records = [json.loads(line) for line in path.read_text().splitlines()]
    target = next(r for r in records if r.get("type") == "step" and r["i"] == step)
    before = target["action"]
    target["action"] = edit(before)
    assert target["action"] != before
    path.write_bytes(rechain(records))  # re-chained: the chain alone no longer shows the edit
    return before, target["action"]


def test_an_edited_action_is_a_divergence_in_the_action(tmp_path):
    path = _record(tmp_path)
    original, edited = _edit_action(path, 2, lambda a: a.replace('"wait"', '"read_page"', 1)
                                    if '"wait"' in a else a.replace('"tool"', '"tool" ', 1))
    divergence = first_divergence(*rerun(path))
    assert divergence is not None and divergence.step == 2 and divergence.field == "step.action"
    assert divergence.recorded == edited and divergence.replayed == original


def test_a_whitespace_only_action_edit_is_a_divergence_in_the_action(tmp_path, capsys):
    path = _record(tmp_path)
    original, edited = _edit_action(path, 3, lambda a: a.replace(": ", ":  ", 1) if ": " in a else " " + a)
    divergence = first_divergence(*rerun(path))
    assert divergence is not None and divergence.field == "step.action" and divergence.step == 3
    assert main(["replay", str(path), "--rerun"]) == 1
    out = capsys.readouterr().out
    assert "field 'step.action'" in out and json.dumps(edited)[:20] in out


def test_a_degraded_agent_replays_identically(tmp_path):
    path = _record(tmp_path, FaultyAgent(VaultOracle(), 0.5, 3))
    assert first_divergence(*rerun(path)) is None
