"""Suites: a named set of tasks, an environment factory and the agents that play them.

The engine never imports a workload. Workloads declare their suite under the entry-point
group ``agentbed.suites`` (see pyproject.toml) and :func:`load_suites` finds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.arguments import check_value
from agentbed.env import ToolEnv
from agentbed.errors import SuiteError  # noqa: F401 - re-exported: workloads import it from here
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec

AgentFactory = Callable[[EpisodeSpec], Agent]
# an agent that reads the environment it plays (an expert asking the game's own solver)
EnvAgentFactory = Callable[[EpisodeSpec, ToolEnv], Agent]


@dataclass(frozen=True)
class Option:
    """A suite-specific command-line option (``agentbed run SUITE --name value``)."""

    default: Any
    help: str
    choices: Sequence[Any] | None = None
    type: Callable[[str], Any] = str


@dataclass
class Suite:
    """A workload's entry into the engine.

    ``demo(out_dir)`` runs the workload at small default sizes for ``agentbed demo`` and
    returns its summary (see :mod:`agentbed.summary`), with a few ``findings`` for the demo's
    one-screen summary; a demo that takes ``full`` (``demo(out_dir, full=True)``) also offers its
    larger run (``agentbed demo --full``).

    ``run_unit`` replaces the default single-agent episode for workloads whose unit of work is
    something else (a CoCoder team run); it receives the spec and the run directory and must
    return one :class:`EpisodeRecord` whose ``log`` points at a verifiable log or manifest.
    """

    name: str
    description: str
    tasks: Callable[[dict[str, Any]], list[str]]
    make_env: Callable[[str, dict[str, Any]], ToolEnv]
    agents: dict[str, AgentFactory]
    default_agent: str
    options: dict[str, Option] = field(default_factory=dict)
    default_seeds: int = 1
    budget: Budget = Budget()
    run_unit: Callable[[EpisodeSpec, Path], EpisodeRecord] | None = None
    summarize: Callable[[list[EpisodeRecord], dict[str, Any]], dict[str, Any]] | None = None
    demo: Callable[..., dict[str, Any]] | None = None
    hidden_tasks: tuple[str, ...] = ()  # runnable with --task, left out of a default run
    # called with the run's tasks and options before anything runs: raise UsageError for a task
    # that cannot run (so `run` exits 2 with that line instead of recording an error episode)
    check_tasks: Callable[[list[str], dict[str, Any]], None] | None = None
    env_agents: dict[str, EnvAgentFactory] = field(default_factory=dict)  # built with their environment
    describe_task: Callable[[str], dict[str, Any]] | None = None  # a task's metadata for `agentbed list --json`
    # the suite's own controllers of an episode (a benchmark's defenses), built with its spec and
    # environment; ``recorded`` is the episode's log when it is re-run (decisions a model made come from it)
    controller: Callable[[EpisodeSpec, ToolEnv, list[dict[str, Any]] | None], Any] | None = None
    # the agent for ``--model PROVIDER:MODEL`` where a benchmark prompts a model its own way (its
    # own runner's protocol); returning None leaves it to agentbed's chat agent
    model_agent: Callable[[EpisodeSpec, ToolEnv | None], Agent | None] | None = None

    def episode_controller(self, spec: EpisodeSpec, env: ToolEnv, recorded: list[dict[str, Any]] | None = None
                           ) -> Any:
        """The suite's controllers of one episode (see :mod:`agentbed.control`); None when it has none."""
        return self.controller(spec, env, recorded) if self.controller is not None else None

    def agent_names(self) -> list[str]:
        return sorted({*self.agents, *self.env_agents})

    def has_agent(self, name: str) -> bool:
        return name in self.agents or name in self.env_agents

    def task_ids(self, options: dict[str, Any]) -> list[str]:
        return list(self.tasks(options))

    def resolve_options(self, given: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            raise SuiteError(f"suite {self.name!r} has no option {unknown[0]!r}"
                             f" (options: {', '.join(sorted(self.options)) or 'none'})")
        resolved = {}
        for name, opt in self.options.items():
            value = given.get(name, opt.default)
            if isinstance(value, str) and opt.type is not str:
                try:
                    value = opt.type(value)
                except ValueError as exc:
                    raise SuiteError(f"--{name}: {value!r} is not a valid {opt.type.__name__}") from exc
            if opt.choices is not None and value not in opt.choices:
                raise SuiteError(f"--{name}: {value!r} is not one of {', '.join(map(str, opt.choices))}")
            if name in given:  # finite, in range, not empty, as every other option
                check_value(f"--{name}", value)
            resolved[name] = value
        return resolved

    def make_agent(self, spec: EpisodeSpec, env: ToolEnv | None = None) -> Agent:
        """The agent ``spec`` names; ``env`` is the environment it will play (required by the
        agents in ``env_agents``, which read it)."""
        if spec.agent.startswith("model:"):
            from agentbed.agents.chat import ChatAgent

            own = self.model_agent(spec, env) if self.model_agent is not None else None
            if own is not None:
                return own

            return ChatAgent.from_model_string(spec.agent.removeprefix("model:"), seed=spec.seed,
                                               generation=spec.generation)
        if spec.agent in self.env_agents:
            if env is None:
                raise SuiteError(f"agent {spec.agent!r} of suite {self.name!r} reads its environment and"
                                 " cannot be built without one here")
            return self.env_agents[spec.agent](spec, env)
        factory = self.agents.get(spec.agent)
        if factory is None:
            raise SuiteError(f"suite {self.name!r} has no agent {spec.agent!r}"
                             f" (agents: {', '.join(self.agent_names())})")
        return factory(spec)


_SUITES: dict[str, Suite] | None = None
_BROKEN: dict[str, str] = {}


def load_suites() -> dict[str, Suite]:
    """Every installed suite by name. A suite that fails to import is reported, not fatal."""
    global _SUITES
    if _SUITES is None:
        found: dict[str, Suite] = {}
        for ep in sorted(entry_points(group="agentbed.suites"), key=lambda e: e.name):
            try:
                suite = ep.load()
            except Exception as exc:  # noqa: BLE001 - one broken workload must not hide the others
                _BROKEN[ep.name] = f"{type(exc).__name__}: {exc}"
                continue
            found[suite.name] = suite
        _SUITES = found
    return _SUITES


def broken_suites() -> dict[str, str]:
    load_suites()
    return dict(_BROKEN)


_ONE: dict[str, Suite] = {}


def get_suite(name: str) -> Suite:
    """The suite ``name``, importing only its own entry point when it is installed under that name
    (a run of one workload need not import all the others: seconds of start-up)."""
    if _SUITES is None and name not in _ONE and name not in _BROKEN:
        for ep in entry_points(group="agentbed.suites", name=name):
            try:
                suite = ep.load()
            except Exception as exc:  # noqa: BLE001 - reported as load_suites would
                _BROKEN[ep.name] = f"{type(exc).__name__}: {exc}"
                break
            if suite.name == name:
                _ONE[name] = suite
            break
    if name in _ONE:
        return _ONE[name]
    suites = load_suites()
    if name not in suites:
        why = f" ({_BROKEN[name]})" if name in _BROKEN else ""
        raise SuiteError(f"unknown suite {name!r}{why}; suites: {', '.join(sorted(suites)) or 'none'}")
    return suites[name]
