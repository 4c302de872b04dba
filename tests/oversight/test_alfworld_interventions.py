"""Issue 34's ALFWorld interventions on real games: the budgeted, noisy expert and the planner."""

import importlib.util
import json

import pytest

from agentbed.testing import require
from controllers.oversight.budget import with_budgets
from controllers.oversight.dataset import BuildConfig, Dataset, branch_trajectory

pytestmark = [pytest.mark.alfworld, pytest.mark.slow]


@pytest.fixture(scope="module")
def load():
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")
    from suites.oversight.benchmarks import load_target

    return load_target


def _rows(target, config, flaw="forgetful"):
    rows, counts = branch_trajectory(target, target.games[0], flaw, 1, config)
    assert counts.replay_mismatches == 0 and counts.branch_errors == 0
    return rows


def test_a_budget_applied_after_the_build_is_the_build_with_the_budget(load):
    config = BuildConfig("alfworld", rollouts=2, checkpoints=1, first=3)
    free = _rows(load("alfworld", games=1, interventions="expert", expert_noise=0.3), config)
    capped = _rows(load("alfworld", games=1, interventions="expert", expert_noise=0.3, expert_budget=4), config)
    after = with_budgets(Dataset({"actions": ["continue", "expert", "quit"]}, free), {"expert": 4}).rows
    key = [(r["checkpoint"], r["action"], r["rollout"], r["success"], r["steps"]) for r in capped]
    assert key == [(r["checkpoint"], r["action"], r["rollout"], r["success"], r["steps"]) for r in after]
    assert any(r["action"] == "expert" and r["steps"] > 4 for r in free)  # the budget bit somewhere
    assert all(r["steps"] <= 4 for r in capped if r["action"] == "expert")


def test_the_noisy_expert_slips_and_is_reproducible(load):
    from environments.alfworld.agents import make_expert
    from environments.alfworld.env import AlfworldEnv, parse_observation

    def slips(noise, seed):
        env = AlfworldEnv(AlfworldEnv.tasks(0, 1)[0])
        obs, _ = env.reset(seed=0)
        expert, out = make_expert(env, noise, seed), []
        for _ in range(12):
            action = expert.act(obs, env.tool_specs())
            out.append((action.text, action.meta["slipped"]))
            obs, _, done, _, _ = env.step(action.text)
            assert parse_observation(obs)[1] or done
            if done:
                break
        env.close()
        return out

    assert slips(0.5, 7) == slips(0.5, 7)
    assert not any(s for _, s in slips(0.0, 7))
    assert any(s for _, s in slips(0.5, 7))
    with pytest.raises(ValueError, match="noise"):
        make_expert(None, 1.5)


def test_the_planner_sees_the_task_and_the_room_not_the_agents_memory(load):
    from environments.alfworld.agents import HandoverPlanner, make_base_agent, make_planner
    from environments.alfworld.env import AlfworldEnv, parse_observation

    env = AlfworldEnv(AlfworldEnv.tasks(0, 1)[0])
    obs, _ = env.reset(seed=0)
    agent = make_base_agent("none", 0)
    for _ in range(30):  # play until the agent holds something
        obs, _, done, _, _ = env.step(agent.act(obs, env.tool_specs()).text)
        if agent.memory.holding or done:
            break
    assert agent.memory.holding and not done
    planner = make_planner(env, 3)
    assert isinstance(planner, HandoverPlanner) and planner.goal is None and not planner.memory.seen
    first = planner.act(obs, env.tool_specs())
    if json.loads(first.text)["arguments"]["command"] == "inventory":  # no "move" here: it asks
        obs, *_ = env.step(first.text)
        planner.act(obs, env.tool_specs())
    assert planner.goal == agent.goal  # from the task sentence alone
    assert planner.memory.holding == agent.memory.holding  # read off the admissible "move" commands
    rooms = {c.removeprefix("go to ") for c in parse_observation(obs)[1] if c.startswith("go to ")}
    assert set(planner.memory.receptacles) == rooms
    env.close()


def test_the_default_menu_and_expert(load):
    target = load("alfworld", games=1)
    assert list(target.interventions) == ["expert", "planner", "reflect"] and target.budgets == {}
    assert "bookkeeping fixed" in target.notes["expert"] and "action_step_costs" not in target.notes
    costly = load("alfworld", games=1, expert_budget=9, expert_step_cost=0.02, interventions="expert,reflect")
    assert costly.budgets == {"expert": 9} and costly.notes["action_step_costs"] == {"expert": 0.02}
    assert list(costly.interventions) == ["expert", "reflect"]
    from agentbed.errors import UsageError

    with pytest.raises(UsageError, match="--interventions"):
        load("alfworld", games=1, interventions="oracle")
