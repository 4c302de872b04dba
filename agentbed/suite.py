"""Suites: a named set of tasks, an environment factory and the agents that play them.

The engine never imports a workload. A packaged workload declares its suite under the
entry-point group ``agentbed.suites`` (see pyproject.toml; the entry point's name is the suite's
name) and :func:`load_suites` finds them. A suite can also be one file or module, named where a
suite name goes: ``agentbed run path/to/mysuite.py`` (its ``SUITE``), ``path/to/file.py:NAME`` or
``my.module:NAME``; :func:`make_suite` declares one in a few lines (docs/extending.md). Two
claimants of one suite name (two entry points, or a file and an entry point) are refused,
naming both, never one silently shadowing the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from dataclasses import replace as _with
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.arguments import check_value
from agentbed.control import chain
from agentbed.env import TaskSpec, ToolEnv
from agentbed.errors import SuiteError, UsageError
from agentbed.factories import (
    EpisodeSetup,
    Factory,
    as_factory,
    build,
    build_agent,
    check_factory,
    import_source,
    is_reference,
    load_agent,
)
from agentbed.provenance import SUITES_GROUP, entry_point_origin, file_sha256, record_origin
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec

# The one agent-factory signature (agentbed.factories): the episode's setup in, an Agent out;
# ``setup.spec`` is the episode (task, seed, options), ``setup.env`` its world for an agent that
# reads it (an expert asking the game's own solver)
AgentFactory = Callable[[EpisodeSetup], Agent]


@dataclass(frozen=True)
class Option:
    """A suite-specific command-line option (``agentbed run SUITE --name value``). ``counted``: the
    option selects which tasks exist (AgentDojo's benchmark version), so ``agentbed list SUITE``
    counts the tasks at each of its choices; only for an option whose every choice lists cheaply."""

    default: Any
    help: str
    choices: Sequence[Any] | None = None
    type: Callable[[str], Any] = str
    counted: bool = False


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

    ``agents`` maps names to factories of the one signature, ``factory(setup) -> Agent``
    (:data:`AgentFactory`; a class taking no arguments is accepted through the one adapter,
    :func:`agentbed.factories.as_factory`). Before agentbed 0.2 a suite had two fields, ``agents``
    (``factory(spec)``) and ``env_agents`` (``factory(spec, env)``): a plugin still giving
    ``env_agents`` is refused at load with a line saying so (docs/extending.md, "Upgrading").
    """

    name: str
    description: str
    tasks: Callable[[dict[str, Any]], list[str]]
    make_env: Callable[[str, dict[str, Any]], ToolEnv]
    agents: dict[str, Any]  # name -> AgentFactory (or a class taking no arguments), checked at definition
    default_agent: str
    options: dict[str, Option] = field(default_factory=dict)
    default_seeds: int = 1
    budget: Budget = Budget()
    run_unit: Callable[[EpisodeSpec, Path], EpisodeRecord] | None = None
    summarize: Callable[[list[dict[str, Any]], dict[str, Any]], dict[str, Any]] | None = None  # index records
    demo: Callable[..., dict[str, Any]] | None = None
    hidden_tasks: tuple[str, ...] = ()  # runnable with --task, left out of a default run
    # called with the run's tasks and options before anything runs: raise UsageError for a task
    # that cannot run (so `run` exits 2 with that line instead of recording an error episode)
    check_tasks: Callable[[list[str], dict[str, Any]], None] | None = None
    describe_task: Callable[[str], dict[str, Any]] | None = None  # a task's metadata for `agentbed list --json`
    # the suite's own controllers of an episode (a benchmark's defenses), built with its spec and
    # environment; ``recorded`` is the episode's log when it is re-run (decisions a model made come from it)
    controller: Callable[[EpisodeSpec, ToolEnv, list[dict[str, Any]] | None], Any] | None = None
    # the agent for ``--model PROVIDER:MODEL`` where a benchmark prompts a model its own way (its
    # own runner's protocol); returning None leaves it to agentbed's chat agent
    model_agent: Callable[[EpisodeSpec, ToolEnv | None], Agent | None] | None = None
    # every episode its demo runs goes through the engine's executors (agentbed.worker.run_spec), so
    # ``agentbed demo --controller`` oversees them all; a demo that plays episodes itself says False
    # and is refused with --controller rather than run half-overseen
    demo_overseeable: bool = False
    env_agents: InitVar[Any] = None  # agentbed 0.1's second agent field: refused, naming the change

    def __post_init__(self, env_agents: Any) -> None:
        where = f"suite {self.name!r}"
        if env_agents:
            raise SuiteError(f"{where}: env_agents was merged into agents in agentbed 0.2: give each agent as "
                             "factory(setup) -> Agent, with setup.env its world (docs/extending.md, Upgrading)")
        try:
            self.agents = {name: as_factory(maker, name, f"{where}: agents:", Agent)
                           for name, maker in self.agents.items()}
        except UsageError as exc:
            raise SuiteError(str(exc)) from None

    def episode_controller(self, spec: EpisodeSpec, env: ToolEnv, recorded: list[dict[str, Any]] | None = None
                           ) -> Any:
        """The suite's controllers of one episode (see :mod:`agentbed.control`); None when it has none."""
        return self.controller(spec, env, recorded) if self.controller is not None else None

    def agent_names(self) -> list[str]:
        return sorted(self.agents)

    def has_agent(self, name: str) -> bool:
        """A named agent of the suite, or a ``module:Class`` reference that loads as an agent."""
        if is_reference(name):
            try:
                load_agent(name)
            except UsageError as exc:
                raise SuiteError(str(exc)) from None
            return True
        return name in self.agents

    def setup(self, spec: EpisodeSpec, env: ToolEnv | None, recorded: list[dict[str, Any]] | None = None
              ) -> EpisodeSetup:
        """What an agent or controller factory of ``spec``'s episode is given (agentbed.factories)."""

        def other(name: str) -> Agent:
            agent = self.make_agent(_with(spec, agent=name), env)
            agent.reset(seed=spec.seed, task=setup.env.task)
            return agent

        setup = EpisodeSetup(spec, env, other, recorded)
        return setup

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
            # finite, in range, not empty, as every other option; an option at its default is not
            # checked again (a log records every option, and a replay gives them all back)
            if name in given and value != opt.default:
                check_value(f"--{name}", value)
            resolved[name] = value
        return resolved

    def make_agent(self, spec: EpisodeSpec, env: ToolEnv | None = None) -> Agent:
        """The agent ``spec`` names; ``env`` is the environment it will play (required by an
        agent whose factory reads ``setup.env``)."""
        if spec.agent.startswith("model:"):
            from agentbed.agents.chat import ChatAgent

            own = self.model_agent(spec, env) if self.model_agent is not None else None
            if own is not None:
                return own

            return ChatAgent.from_model_string(spec.agent.removeprefix("model:"), seed=spec.seed,
                                               generation=spec.generation)
        factory: Factory | None = self.agents.get(spec.agent)
        try:
            if is_reference(spec.agent):
                return build_agent(spec.agent, self.setup(spec, env))
            if factory is None:
                raise SuiteError(f"suite {self.name!r} has no agent {spec.agent!r}"
                                 f" (agents: {', '.join(self.agent_names())})")
            agent: Agent = factory(self.setup(spec, env))
            return agent
        except UsageError as exc:
            raise SuiteError(str(exc)) from None


# -- one file, one suite ----------------------------------------------------------------------
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def make_suite(name: str, *, world: type[ToolEnv], agents: Mapping[str, Any],
               tasks: Sequence[TaskSpec] | Callable[[dict[str, Any]], Sequence[TaskSpec]] | None = None,
               description: str = "", options: Mapping[str, Option] | None = None, seeds: int = 1,
               max_steps: int = 50, controllers: Sequence[Any] = ()) -> Suite:
    """A suite declared in a few lines (docs/extending.md).

    ``world`` is a :class:`ToolEnv` subclass, built with each task's :class:`TaskSpec`; ``tasks``
    its tasks (default: ``world.task_list()``), or a function of the suite's ``options`` giving
    them; ``agents`` maps names to agents, the first the default, each an Agent class taking no
    arguments or a function of the :class:`EpisodeSetup` returning one (the rule of
    ``--agent module:Class``); ``controllers`` the suite's own overseers, by the same rule
    (``--controller``'s). Everything is checked here: a mistake is a one-line error naming it.
    """
    where = f"suite {name!r}"
    if not isinstance(name, str) or not _NAME.match(name):
        raise SuiteError(f"suite name {name!r}: letters, digits, '_', '-' and '.', starting with a letter or digit")
    if not (isinstance(world, type) and issubclass(world, ToolEnv)):
        raise SuiteError(f"{where}: world {world!r} is not a subclass of agentbed.env.ToolEnv")
    if not agents:
        raise SuiteError(f"{where}: agents: give at least one")
    from agentbed.control import Controller

    for agent_name in agents:
        if not isinstance(agent_name, str) or not _NAME.match(agent_name) or is_reference(agent_name):
            raise SuiteError(f"{where}: agents: {agent_name!r} is not a valid agent name")
    for maker in controllers:
        try:
            check_factory(maker, getattr(maker, "__name__", repr(maker)), f"{where}: controllers:", Controller)
        except UsageError as exc:
            raise SuiteError(str(exc)) from None
    if not isinstance(seeds, int) or seeds < 1 or not isinstance(max_steps, int) or max_steps < 1:
        raise SuiteError(f"{where}: seeds and max_steps must be integers of at least 1")
    listed: Callable[[dict[str, Any]], Sequence[TaskSpec]]
    if tasks is None:
        listed = lambda options: world.task_list()  # noqa: E731 - the world's own list
    elif callable(tasks):
        listed = tasks
    else:
        fixed = list(tasks)
        listed = lambda options: fixed  # noqa: E731
    first = list(listed({k: o.default for k, o in (options or {}).items()}))
    if not first or not all(isinstance(t, TaskSpec) for t in first):
        raise SuiteError(f"{where}: tasks must be a non-empty list of agentbed.env.TaskSpec")
    ids = [t.id for t in first]
    if len(set(ids)) != len(ids):
        raise SuiteError(f"{where}: tasks: {next(i for i in ids if ids.count(i) > 1)!r} is given twice")

    def task_of(task: str, opts: dict[str, Any]) -> TaskSpec:
        for spec in listed(opts):
            if spec.id == task:
                return spec
        raise SuiteError(f"{where} has no task {task!r}")

    def own_controllers(spec: EpisodeSpec, env: ToolEnv, recorded: list[dict[str, Any]] | None) -> Any:
        setup = suite.setup(spec, env, recorded)
        return chain(*(build(m, setup, getattr(m, "__name__", "controller"), f"{where}: controller", Controller)
                       for m in controllers))

    suite = Suite(name=name, description=description or (world.__doc__ or name).strip().splitlines()[0],
                  tasks=lambda opts: [t.id for t in listed(opts)],
                  make_env=lambda task, opts: world(task_of(task, opts)),
                  agents=dict(agents),
                  default_agent=next(iter(agents)), options=dict(options or {}), default_seeds=seeds,
                  budget=Budget(max_steps=max_steps), controller=own_controllers if controllers else None)
    return suite


# -- finding suites ---------------------------------------------------------------------------
GROUP = SUITES_GROUP
_SUITES: dict[str, Suite] | None = None
_BROKEN: dict[str, str] = {}
_ONE: dict[str, Suite] = {}


def _claimant(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    where = f" (distribution {dist.name} {dist.version})" if dist is not None else ""
    return f"{ep.name} = {ep.value}{where}"


def _claimed_twice(name: str, eps: Sequence[EntryPoint]) -> str:
    return (f"suite name {name!r} is claimed by {len(eps)} entry points: "
            + " and ".join(_claimant(ep) for ep in eps) + "; uninstall or rename all but one")


def _load_entry_point(ep: EntryPoint) -> Suite | None:
    """The suite ``ep`` names, its origin recorded; None (and the reason in ``_BROKEN``) if it fails."""
    try:
        suite = ep.load()
    except Exception as exc:  # noqa: BLE001 - one broken workload must not hide the others
        _BROKEN[ep.name] = f"{type(exc).__name__}: {exc}"
        return None
    if not isinstance(suite, Suite) or suite.name != ep.name:
        got = f"suite {suite.name!r}" if isinstance(suite, Suite) else f"a {type(suite).__name__}"
        _BROKEN[ep.name] = f"entry point {_claimant(ep)} loads {got}; its name must be the suite's name"
        return None
    record_origin(suite.name, entry_point_origin(ep))
    return suite


def load_suites() -> dict[str, Suite]:
    """Every installed suite by name. A suite that fails to import, or whose name two entry
    points claim, is reported (:func:`broken_suites`), not fatal."""
    global _SUITES
    if _SUITES is None:
        by_name: dict[str, list[EntryPoint]] = {}
        for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
            by_name.setdefault(ep.name, []).append(ep)
        found: dict[str, Suite] = {}
        for name, eps in by_name.items():
            if len(eps) > 1:
                _BROKEN[name] = _claimed_twice(name, eps)
                continue
            suite = _ONE.get(name) or _load_entry_point(eps[0])
            if suite is not None:
                found[name] = suite
        _SUITES = found
    return _SUITES


def broken_suites() -> dict[str, str]:
    load_suites()
    return dict(_BROKEN)


def is_suite_reference(name: str) -> bool:
    """Whether ``name`` names a suite by its file or module rather than an installed name."""
    return name.endswith(".py") or ":" in name


def get_suite(name: str) -> Suite:
    """The suite ``name``: an installed suite's name (importing only its own entry point: a run of
    one workload need not import all the others, seconds of start-up), or a one-file suite
    (``path/to/suite.py``, ``path/to/suite.py:NAME``, ``my.module:NAME``)."""
    if is_suite_reference(name):
        return load_suite_reference(name)
    if name in _ONE:
        return _ONE[name]
    if _SUITES is None and name not in _BROKEN:
        eps = list(entry_points(group=GROUP, name=name))
        if len(eps) > 1:
            _BROKEN[name] = _claimed_twice(name, eps)
        elif eps:
            suite = _load_entry_point(eps[0])
            if suite is not None:
                _ONE[name] = suite
                return suite
    suites = load_suites()
    if name not in suites:
        why = f" ({_BROKEN[name]})" if name in _BROKEN else ""
        raise SuiteError(f"unknown suite {name!r}{why}; suites: {', '.join(sorted(suites)) or 'none'}")
    return suites[name]


_BY_REFERENCE: dict[str, Suite] = {}


def load_suite_reference(ref: str) -> Suite:
    """A suite named by file or module: ``file.py`` (its ``SUITE``), ``file.py:NAME`` or
    ``module:NAME``. Registered under its name for this process (and the workers it forks), and
    refused when an installed suite or another file already claims that name."""
    if ref in _BY_REFERENCE:
        return _BY_REFERENCE[ref]
    source, attr = (ref, "SUITE") if ref.endswith(".py") else ref.rsplit(":", 1)
    try:
        module = import_source(source, "suite")
    except UsageError as exc:
        raise SuiteError(str(exc)) from None
    suite = getattr(module, attr, None)
    if not isinstance(suite, Suite):
        got = "nothing" if suite is None else f"a {type(suite).__name__}"
        raise SuiteError(f"suite {ref!r}: {source} names {got} as {attr}, not an agentbed.suite.Suite")
    path = Path(getattr(module, "__file__", "") or source).resolve()
    origin = {"file": str(path), "sha256": file_sha256(path)} if path.is_file() else {"module": source}
    if not source.endswith(".py"):
        origin["module"] = source
    origin["attribute"] = attr
    installed = list(entry_points(group=GROUP, name=suite.name))
    if len(installed) == 1 and installed[0].value == f"{source}:{attr}":  # the installed suite, by its module
        _BY_REFERENCE[ref] = get_suite(suite.name)
        return _BY_REFERENCE[ref]
    if installed:
        raise SuiteError(f"suite name {suite.name!r} is claimed by both {ref} and the installed entry point "
                         f"{_claimant(installed[0])}; rename the suite in {source}")
    other = _ONE.get(suite.name)
    if other is not None and other is not suite:
        raise SuiteError(f"suite name {suite.name!r} is claimed by both {ref} and another suite loaded in this "
                         "process; rename one")
    _ONE[suite.name] = _BY_REFERENCE[ref] = suite
    record_origin(suite.name, origin)
    return suite
