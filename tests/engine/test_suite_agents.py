"""Agents that read the environment they play are built with it, never found through globals."""

from dataclasses import replace

import pytest

from agentbed.agents.base import Action, Agent
from agentbed.runner import EpisodeSpec
from agentbed.suite import SuiteError, get_suite
from agentbed.tools import make_action


class Watcher(Agent):
    name = "watcher"

    def __init__(self, env) -> None:
        self.env = env

    def act(self, observation, tools):
        return Action(make_action("noop"))


@pytest.fixture
def suite():
    vault = get_suite("vault")
    return replace(vault, agents={**vault.agents, "watcher": lambda setup: Watcher(setup.env)})


def test_an_env_agent_is_listed_and_built_with_the_environment_it_plays(suite):
    assert suite.has_agent("watcher") and "watcher" in suite.agent_names() and suite.has_agent("oracle")
    env = suite.make_env("open-fast", {})
    agent = suite.make_agent(EpisodeSpec("vault", "open-fast", "watcher", 0), env)
    assert isinstance(agent, Watcher) and agent.env is env


def test_an_env_agent_without_an_environment_is_a_clear_error(suite):
    with pytest.raises(SuiteError, match="'watcher' of suite 'vault' reads its environment"):
        suite.make_agent(EpisodeSpec("vault", "open-fast", "watcher", 0))
    with pytest.raises(SuiteError, match="no agent 'nobody'.*watcher"):
        suite.make_agent(EpisodeSpec("vault", "open-fast", "nobody", 0))


def test_one_factory_signature_and_the_old_second_field_refused():
    vault = get_suite("vault")
    spec = EpisodeSpec("vault", "open-fast", "seeded", 7)
    shorthand = replace(vault, agents={"plain": _Plain, "seeded": lambda setup: _Seeded(setup)})
    assert isinstance(shorthand.make_agent(_with_agent(spec, "plain")), _Plain)  # no-argument class: the adapter
    assert shorthand.make_agent(spec).seed == 7  # a factory of the setup: the spec through it
    with pytest.raises(SuiteError, match="env_agents was merged into agents"):
        replace(vault, env_agents={"watcher": lambda spec, env: Watcher(env)})
    with pytest.raises(SuiteError, match="built a str, not a agentbed.agents.base.Agent"):
        replace(vault, agents={"bad": lambda setup: "no agent"}).make_agent(_with_agent(spec, "bad"))


class _Plain(Agent):
    def act(self, observation, tools):
        return Action(make_action("noop"))


class _Seeded(_Plain):
    def __init__(self, setup) -> None:
        self.seed = setup.spec.seed


def _with_agent(spec, agent):
    return replace(spec, agent=agent)
