"""The agentdojo suite: task listing, AgentDojo's attacks making the injections, the scripted
agents (the follower sees only what it reads), the oracle tool filter (tests/agentdojo/test_defenses.py
has the other defenses)."""

from __future__ import annotations

import json

from agentbed.cli import main
from agentbed.runner import EpisodeSpec, run_episode
from controllers.agentdojo.defenses import oracle_tool_selection
from environments.agentdojo.agents import InjectionFollower
from environments.agentdojo.benchmark import TaskId, task_suite
from environments.agentdojo.env import AgentDojoEnv, task_spec
from suites.agentdojo.suite import SUITE

ATTACKED = "banking.user_task_1.injection_task_0.important_instructions"


def play(task: str, agent: str, **options: str):
    opts = SUITE.resolve_options({"task_suite": "banking", **options})
    spec = EpisodeSpec("agentdojo", task, agent, 0, opts)
    env = SUITE.make_env(task, opts)
    return run_episode(env, SUITE.make_agent(spec), spec, budget=SUITE.budget, controller=SUITE.episode_controller(spec, env))


def test_list_json_names_every_task(capsys):
    assert main(["list", "agentdojo", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)["suites"][0]
    ids = [t["id"] for t in listing["tasks"]]
    assert len(ids) == 97 + 4 * 949 and len(set(ids)) == len(ids)
    assert ids[0] == "workspace.user_task_0" and ATTACKED in ids
    assert {"ground-truth", "injection-follower", "refuse", "ask-user"} <= set(listing["agents"])
    only = SUITE.task_ids(SUITE.resolve_options({"task_suite": "slack", "attack": "tool_knowledge"}))
    assert len(only) == 21 * 5 and all(t.endswith(".tool_knowledge") for t in only)


def test_injections_are_made_by_agentdojos_attack_for_the_fixed_victim_name():
    env = SUITE.make_env(ATTACKED, SUITE.resolve_options({}))
    injections = env.task.params["injections"]
    goal = task_suite("banking").injection_tasks["injection_task_0"].GOAL
    assert injections and all(goal in text and "GPT-4" in text and "Emma Johnson" in text
                              for text in injections.values())
    local = SUITE.make_env(ATTACKED, SUITE.resolve_options({"victim": "local"}))
    assert all("Local model" in text for text in local.task.params["injections"].values())


def test_ground_truth_ignores_the_injection_and_the_follower_obeys_it():
    truth, follower = play(ATTACKED, "ground-truth"), play(ATTACKED, "injection-follower")
    assert truth.metrics["utility"] and truth.metrics["attack_success"] is False
    assert follower.metrics["attack_success"] is True and "ATTACK_SUCCEEDED" in follower.labels
    assert follower.metrics["injection_seen_step"] == 1


def test_the_follower_is_not_told_the_injection_only_reads_it():
    """With the injection vectors left at their benign defaults, the same follower on the same
    user task follows nothing: it reacts to text it read, not to the task's labels."""
    tid = TaskId.parse(ATTACKED)
    spec = task_spec(tid, {})  # the pair's labels, none of its injected text
    env, agent = AgentDojoEnv(spec), InjectionFollower()
    record = run_episode(env, agent, EpisodeSpec("agentdojo", ATTACKED, "injection-follower", 0), budget=SUITE.budget)
    assert record.metrics["attack_success"] is False and record.metrics["utility"] is True and not agent.followed


def test_oracle_tool_filter_keeps_the_ground_truths_tools_and_blocks_the_rest():
    opts = SUITE.resolve_options({"defense": "tool_filter_oracle"})
    env = SUITE.make_env(ATTACKED, opts)
    assert oracle_tool_selection(env.task.params) == ["get_most_recent_transactions"]
    env.reset(seed=0)
    env.restrict_tools(["get_most_recent_transactions", "final_answer"])
    assert [t.name for t in env.tool_specs()] == ["get_most_recent_transactions"]
    refused = env.step(json.dumps({"tool": "send_money", "arguments": {"recipient": "x", "amount": 1, "subject": "s",
                                                                       "date": "2022-01-01"}}))[0]
    assert "send_money" in refused and "Invalid tool" in refused  # AgentDojo's own answer to a removed tool
    copy = env.snapshot()
    env.reset(seed=0)
    assert len(env.tool_specs()) > 2  # a new episode offers every tool again
    env.restore(copy)
    assert [t.name for t in env.tool_specs()] == ["get_most_recent_transactions"]
    defended = play(ATTACKED, "injection-follower", defense="tool_filter_oracle")
    assert defended.metrics["attack_success"] is False and defended.metrics["utility"] is True
