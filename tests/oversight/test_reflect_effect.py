"""Reflect has a real effect (issue 34): a chat agent is shown its own recent feedback, and on
development games the scripted agents' reflect branches end differently from continuing."""

import importlib.util

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agentbed.agents.reflection import feedback_note, recent_steps
from agentbed.testing import require
from agentbed.tools import make_action


def _conversation(commands_and_answers):
    messages = [SystemMessage("play"), HumanMessage("Your task is to: put a mug in the fridge.")]
    for k, (command, answer) in enumerate(commands_and_answers):
        messages.append(AIMessage("", tool_calls=[{"name": "act", "args": {"command": command}, "id": f"c{k}",
                                                   "type": "tool_call"}]))
        messages.append(ToolMessage(answer + "\nAdmissible commands: ...", tool_call_id=f"c{k}"))
    return messages


def _action(message):
    call = message.tool_calls[0]
    return make_action(call["name"], **call["args"])


def test_the_note_shows_recent_actions_their_answers_and_what_changed_nothing():
    steps = [("go to fridge 1", "You arrive at fridge 1."), ("open fridge 1", "You open the fridge 1."),
             ("open fridge 1", "Nothing happens."), ("open fridge 1", "Nothing happens.")]
    note = feedback_note("Reflect.", _conversation(steps), _action)
    assert note.startswith("Reflect.\n")
    assert "1. go to fridge 1 -> You arrive at fridge 1." in note and "4. open fridge 1 -> Nothing happens." in note
    assert "Sent more than once: open fridge 1." in note
    assert "Changed nothing (the same answer as the step before): open fridge 1." in note
    many = [(f"go to shelf {k}", f"You arrive at shelf {k}.") for k in range(10)]
    assert [a for a, _ in recent_steps(_conversation(many), _action)] == [f"go to shelf {k}" for k in range(4, 10)]
    calm = feedback_note("Reflect.", _conversation(many), _action)
    assert "Sent more than once" not in calm and "Do not send" not in calm
    assert feedback_note("Reflect.", _conversation([]), _action) == "Reflect."


@pytest.mark.alfworld
@pytest.mark.slow
def test_scripted_reflect_ends_differently_from_continue_on_development_prefixes():
    """If reflect went back to a copy of the agent (a no-op), every pair below would be equal."""
    require(importlib.util.find_spec("alfworld") is not None, "the alfworld package",
            "pip install -e '.[alfworld]' (compiles for about 2 minutes)")
    from agentbed.branch import ForkPoint, Prefix
    from agentbed.runner import Budget, EpisodeSpec
    from environments.alfworld.agents import make_base_agent, make_reflect
    from environments.alfworld.env import AlfworldEnv
    from environments.alfworld.games import MAX_EPISODE_STEPS

    differ, pairs = 0, 0
    for task in ("000-simple", "002-clean", "004-cool"):  # generator seed 0: development games
        for flaw in ("looping", "forgetful", "mixed"):
            seed, at = 1, 12
            agent, env = make_base_agent(flaw, seed), AlfworldEnv(task)
            agent.reset(seed=seed, task=env.task)  # the game's streams, as replay_agent resets it
            observation, _ = env.reset(seed=seed)
            actions, observations, done = [], [observation], False
            for _ in range(at):
                action = agent.act(observation, env.tool_specs()).text
                observation, _, done, *_ = env.step(action)
                actions.append(action)
                observations.append(observation)
                if done:
                    break
            if done:
                continue
            point = ForkPoint(lambda task=task: AlfworldEnv(task), Prefix(task, seed, actions, observations), at_step=at)
            base = point.replay_agent(make_base_agent(flaw, seed))
            ends = {}
            for name in ("continue", "reflect"):
                branch_env = point.materialize()
                branch = base.fork() if name == "continue" else make_reflect(base)
                result = point.run(branch, EpisodeSpec("alfworld", task, name, seed),
                                   budget=Budget(MAX_EPISODE_STEPS), env=branch_env)
                assert result.status != "error"
                ends[name] = (result.success, result.steps)
            pairs += 1
            differ += ends["continue"] != ends["reflect"]
    assert pairs >= 5 and differ >= 2, (differ, pairs)
