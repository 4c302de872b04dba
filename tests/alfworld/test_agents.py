"""Scripted agents, their flaws and stated risk, the reflect variant and the expert as interventions."""

from __future__ import annotations

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.branch import ForkPoint, Prefix
from agentbed.control import Verdict
from agentbed.runner import Budget, EpisodeSpec, run_episode
from environments.alfworld.agents import (
    FLAWS,
    ScriptedAlfworldAgent,
    make_base_agent,
    make_expert,
    make_reflect,
)
from environments.alfworld.env import AlfworldEnv
from environments.alfworld.policy import parse_goal

GAMES = ["000-simple", "001-light", "002-clean", "003-heat", "004-cool", "005-two"]


def _play(task: str, agent: Agent, seed: int = 0, **kw):
    env = AlfworldEnv(task)
    if agent is None:
        agent = make_expert(env)
    return run_episode(env, agent, EpisodeSpec("alfworld", task, getattr(agent, "name", "x"), seed),
                       budget=Budget(50), **kw)


def test_goal_is_parsed_from_alfworld_templates() -> None:
    goal = parse_goal("-= Welcome =-\n\nYour task is to: put a hot mug in cabinet.")
    assert (goal.kind, goal.obj, goal.recep) == ("heat", "mug", "cabinet")
    goal = parse_goal("Your task is to: examine the pen with the desklamp.")
    assert (goal.kind, goal.obj, goal.toggle) == ("light", "pen", "desklamp")
    assert parse_goal("no task here") is None


@pytest.mark.parametrize("task", GAMES)
def test_expert_and_flawless_agent_win_every_task_type(task) -> None:
    assert _play(task, None).success
    assert _play(task, make_base_agent("none", 0)).success


def test_every_scripted_action_states_a_risk_in_unit_interval() -> None:
    env = AlfworldEnv("002-clean")
    agent = make_base_agent("mixed", 1)
    agent.reset(seed=1)
    observation, _ = env.reset(seed=1)
    for _ in range(15):
        action = agent.act(observation, env.tool_specs())
        assert action.risk is not None and 0.0 <= action.risk <= 1.0
        observation, _, terminated, truncated, _ = env.step(action.text)
        if terminated or truncated:
            break


def test_stated_risk_rises_when_the_agent_is_stuck_in_a_loop() -> None:
    env = AlfworldEnv("003-heat")
    agent = make_base_agent("looping", 0, loop=1.0, escape=0.0)
    agent.reset(seed=0)
    observation, _ = env.reset(seed=0)
    risks = []
    for _ in range(12):
        action = agent.act(observation, env.tool_specs())
        risks.append(action.risk)
        observation, *_ = env.step(action.text)
    assert agent.loop and min(risks[-3:]) > max(risks[:2]) + 0.1


def test_flaws_cause_real_failures() -> None:
    outcomes = {flaw: [_play(t, make_base_agent(flaw, 0), seed=s) for t in GAMES for s in (0, 1)]
                for flaw in ("none", "looping")}
    rate = {flaw: sum(r.success for r in recs) / len(recs) for flaw, recs in outcomes.items()}
    assert rate["none"] == 1.0 and rate["looping"] < 0.9
    assert any(r.steps == 50 for r in outcomes["looping"])  # a loop eats the step budget


def test_bad_factory_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown flaw"):
        make_base_agent("sleepy", 0)
    with pytest.raises(ValueError, match="unknown flaw parameter"):
        make_base_agent("noisy", 0, sloppiness=0.2)
    assert make_base_agent("noisy", 0, noise=0.9).flaws.noise == 0.9
    with pytest.raises(TypeError):
        make_reflect(object())  # type: ignore[arg-type]


def _prefix_of(agent: ScriptedAlfworldAgent, task: str, seed: int, steps: int) -> tuple[Prefix, AlfworldEnv]:
    env = AlfworldEnv(task)
    agent.reset(seed=seed, task=env.task)  # its streams are the game's (as the runner and replay_agent reset it)
    observation, _ = env.reset(seed=seed)
    actions, observations = [], [observation]
    for _ in range(steps):
        action = agent.act(observation, env.tool_specs()).text
        observation, *_ = env.step(action)
        actions.append(action)
        observations.append(observation)
    return Prefix(task=task, seed=seed, actions=actions, observations=observations), env


def test_reflect_rereads_the_goal_clears_the_loop_and_lowers_flaws() -> None:
    agent = make_base_agent("forgetful", 2, forget=1.0)
    _prefix_of(agent, "004-cool", 2, 3)
    assert agent.forgot and agent.goal != parse_goal(agent.intro)
    agent.loop = ["cabinet 1", "drawer 1"]
    repaired = make_reflect(agent)
    assert repaired.goal == parse_goal(agent.intro) and not repaired.loop and not repaired.forgot
    assert repaired.flaws.forget == pytest.approx(1.0) and repaired.name == "reflect-forgetful"  # mechanism only
    cut = make_reflect(agent, cut_flaw_rates=True)  # the separately named reflect-cut intervention (issue 54)
    assert cut.flaws.forget == pytest.approx(0.25) and not cut.forgot and not cut.loop
    assert agent.forgot and agent.loop  # the original is untouched


def test_replayed_agent_reproduces_its_actions_and_branches_continue_from_the_fork() -> None:
    seed, task = 3, "003-heat"
    prefix, _ = _prefix_of(make_base_agent("looping", seed, loop=0.5, escape=0.0), task, seed, 12)
    point = ForkPoint(lambda: AlfworldEnv(task), prefix, at_step=12)
    base = point.replay_agent(make_base_agent("looping", seed, loop=0.5, escape=0.0))
    assert base.loop  # stuck at the checkpoint
    results = {}
    for name in ("continue", "reflect", "expert"):
        env = point.materialize()
        agent = base.fork() if name == "continue" else make_reflect(base) if name == "reflect" else make_expert(env)
        results[name] = point.run(agent, EpisodeSpec("alfworld", task, name, seed), budget=Budget(50), env=env)
    assert not results["continue"].success  # the loop never ends on its own (escape=0)
    assert results["expert"].success
    assert all(r.status != "error" for r in results.values())


class _HandOverAt:
    """A controller that hands the episode to another agent at a given step."""

    def __init__(self, step: int, make) -> None:
        self.step, self.make = step, make

    def before_action(self, ctx, action: Action) -> Verdict:
        if ctx.step == self.step:
            return Verdict(kind="handover", agent=self.make(ctx.agent))
        return Verdict(kind="continue")


def test_expert_and_reflect_work_as_mid_episode_handover_agents() -> None:
    task = "004-cool"
    env = AlfworldEnv(task)
    record = run_episode(env, make_base_agent("looping", 4, loop=0.5, escape=0.0),
                         EpisodeSpec("alfworld", task, "looping", 4), budget=Budget(50),
                         controller=_HandOverAt(8, lambda _agent: make_expert(env)))
    assert record.success
    record = run_episode(AlfworldEnv(task), make_base_agent("looping", 4, loop=0.5, escape=0.0),
                         EpisodeSpec("alfworld", task, "looping", 4), budget=Budget(50),
                         controller=_HandOverAt(8, make_reflect))
    assert record.status != "error" and record.steps > 8


def test_flaw_table_names_the_documented_flaws() -> None:
    assert {"none", "noisy", "looping", "forgetful", "mixed"} <= set(FLAWS)


def test_reseed_gives_distinct_reproducible_rollouts_from_one_state() -> None:
    task, seed = "002-clean", 6
    prefix, _ = _prefix_of(make_base_agent("noisy", seed), task, seed, 5)
    point = ForkPoint(lambda: AlfworldEnv(task), prefix, at_step=5)
    base = point.replay_agent(make_base_agent("noisy", seed))

    def rollout(k: int) -> list[str]:
        agent = base.fork()
        agent.reseed(k)
        env = point.materialize()
        observation, texts = env.last_observation, []
        for _ in range(8):
            action = agent.act(observation, env.tool_specs()).text
            observation, _, terminated, truncated, _ = env.step(action)
            texts.append(action)
            if terminated or truncated:
                break
        return texts

    assert rollout(1) == rollout(1)
    assert len({tuple(rollout(k)) for k in range(4)}) > 1


def test_detour_agent_follows_a_wrong_subgoal_for_a_while_then_resumes() -> None:
    env = AlfworldEnv("002-clean")
    for seed in range(6):  # the first seed whose episode takes a detour
        agent = make_base_agent("detour", seed)
        obs, _ = env.reset(seed=seed)
        agent.reset(seed=seed, task=env.task)
        detouring, kinds = [], set()
        for _ in range(40):
            action = agent.act(obs, env.tool_specs())
            detouring.append(agent.detour_left > 0)
            if agent.detour_left:
                kinds.add(agent.detour_kind)
            obs, _, term, trunc, _ = env.step(action.text)
            if term or trunc:
                break
        if any(detouring):
            break
    assert any(detouring) and not all(detouring)  # detours start and end
    assert agent.goal is not None and agent.goal.recep not in kinds  # a wrong kind, never the goal's
    repaired = make_reflect(agent)  # the mechanism: the detour ends, the flaw rate stays
    assert repaired.detour_left == 0 and repaired.flaws.detour == FLAWS["detour"].detour
    cut = make_reflect(agent, cut_flaw_rates=True)
    assert cut.detour_left == 0 and cut.flaws.detour < FLAWS["detour"].detour
