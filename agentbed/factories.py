"""Your own code by reference: ``--agent module:Class`` and ``--controller module:factory``.

A reference is ``module:name`` (a dotted module importable from the current directory or the
path) or ``path/to/file.py:name``. What it names is a factory with one signature, for agents and
controllers alike and for a suite's own agents (:class:`agentbed.suite.Suite`'s ``agents``):
``factory(setup: EpisodeSetup) -> Agent`` (or ``Controller``), called once per episode. A class
whose constructor takes no arguments is accepted as shorthand: :func:`as_factory`, the one
adapter, turns it into ``lambda setup: cls()`` when it is loaded. An agent must be an
:class:`agentbed.agents.base.Agent`, a controller an :class:`agentbed.control.Controller`: the
controller's hooks were checked when its class was defined, and a reference that cannot be
imported, names nothing, or builds the wrong kind of object is a one-line error naming it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentbed.errors import UsageError

if TYPE_CHECKING:
    from agentbed.agents.base import Agent
    from agentbed.control import Controller
    from agentbed.env import ToolEnv
    from agentbed.runner import EpisodeSpec


@dataclass(frozen=True)
class EpisodeSetup:
    """What an agent or controller factory is given for one episode: its ``spec`` (task, seed,
    options), its world ``env`` (reset only when the episode starts), ``make_agent(name)``
    (another agent of the suite, reset for this episode: whom a controller hands over to) and
    ``recorded``, the episode's log when it is re-run (decisions a model made are read from it).

    An agent is sometimes built before its world exists (``run`` checks a model's settings
    before anything runs): then ``env`` raises, naming the agent, for a factory that reads it."""

    spec: EpisodeSpec
    world: ToolEnv | None
    make_agent: Callable[[str], Agent]
    recorded: list[dict[str, Any]] | None = None

    @property
    def env(self) -> ToolEnv:
        if self.world is None:
            from agentbed.errors import SuiteError

            raise SuiteError(f"agent {self.spec.agent!r} of suite {self.spec.suite!r} reads its environment and"
                             " cannot be built without one here")
        return self.world


Factory = Callable[[EpisodeSetup], Any]  # the one signature: setup -> Agent (or Controller)


def is_reference(name: str) -> bool:
    """Whether an agent name is a ``module:name`` reference (a model string is ``model:...``)."""
    return ":" in name and not name.startswith("model:")


_SAFE = re.compile(r"[^A-Za-z0-9_]")


def load_reference(ref: str, option: str) -> Any:
    """The object ``ref`` (``module:name`` or ``file.py:name``) names; ``option`` names the
    command-line option in errors."""
    module_name, colon, attr = ref.rpartition(":")
    if not colon or not module_name or not attr:
        raise UsageError(f"{option} {ref!r}: expected module:name or path/to/file.py:name")
    module = import_source(module_name, option, ref)
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise UsageError(f"{option} {ref!r}: {module_name} has no {attr!r}")
        value = getattr(value, part)
    return value


def import_source(source: str, option: str, ref: str = "") -> Any:
    """The module ``source`` names: a ``.py`` file (imported once per process under a name
    derived from its path) or a dotted module, looked up from the current directory first; errors
    name ``ref`` (the whole reference) when given."""
    named = ref or source
    try:
        if source.endswith(".py"):
            path = Path(source).resolve()
            if not path.is_file():
                raise UsageError(f"{option} {named!r}: no such file {source}")
            name = f"agentbed_user_{_SAFE.sub('_', path.stem)}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
            if name in sys.modules:
                return sys.modules[name]
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise UsageError(f"{option} {named!r}: {source} is not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
            return module
        if os.getcwd() not in sys.path:  # as `python -m` does: the user's own modules are found
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(source)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the user's module is their input's
        raise UsageError(f"{option} {named!r}: cannot import it ({type(exc).__name__}: {exc})") from None


def check_factory(obj: Any, ref: str, option: str, kind: type) -> None:
    """Refuse what can never build a ``kind`` (an instance, a class of another kind), at load time."""
    if inspect.isclass(obj):
        if not issubclass(obj, kind):
            raise UsageError(f"{option} {ref!r}: {obj.__name__} is not a subclass of {kind.__module__}.{kind.__name__}")
    elif not callable(obj):
        raise UsageError(f"{option} {ref!r}: names a {type(obj).__name__}, not a class or a function")


def as_factory(obj: Any, ref: str, option: str, kind: type) -> Factory:
    """``obj`` as a factory of the one signature, checked now: a class whose constructor takes no
    arguments becomes ``lambda setup: cls()`` (the one adapter); anything else is called with the
    setup. What it builds is checked to be a ``kind`` each time."""
    check_factory(obj, ref, option, kind)
    takes_none = inspect.isclass(obj) and not [
        p for p in list(inspect.signature(obj).parameters.values())
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def factory(setup: EpisodeSetup) -> Any:
        built = obj() if takes_none else obj(setup)
        if not isinstance(built, kind):
            raise UsageError(f"{option} {ref!r} built a {type(built).__name__}, not a "
                             f"{kind.__module__}.{kind.__name__}")
        return built

    factory.__name__ = getattr(obj, "__name__", "factory")
    return factory


def build(obj: Any, setup: EpisodeSetup, ref: str, option: str, kind: type) -> Any:
    """Build one ``kind`` from ``obj`` for an episode (through :func:`as_factory`)."""
    return as_factory(obj, ref, option, kind)(setup)


def load_controller(ref: str) -> Any:
    from agentbed.control import Controller

    obj = load_reference(ref, "--controller")
    check_factory(obj, ref, "--controller", Controller)
    return obj


def build_controllers(refs: tuple[str, ...] | list[str], setup: EpisodeSetup) -> list[Controller]:
    """The controllers ``refs`` name, built for one episode, in the order given."""
    from agentbed.control import Controller

    return [build(load_controller(ref), setup, ref, "--controller", Controller) for ref in refs]


def load_agent(ref: str) -> Any:
    from agentbed.agents.base import Agent

    obj = load_reference(ref, "--agent")
    check_factory(obj, ref, "--agent", Agent)
    return obj


def build_agent(ref: str, setup: EpisodeSetup) -> Agent:
    from agentbed.agents.base import Agent

    agent: Agent = build(load_agent(ref), setup, ref, "--agent", Agent)
    return agent


# -- the command line ----------------------------------------------------------------------
def add_controller_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--controller", action="append", metavar="MODULE:FACTORY", default=None,
                   help="an overseer of every episode: module:factory or path/to/file.py:factory building an "
                        "agentbed.control.Controller (repeatable, chained in the order given, after the suite's "
                        "own; docs/extending.md)")


def controllers_of(args: argparse.Namespace) -> tuple[str, ...]:
    """``--controller``'s references, each loaded now: a module that does not import, a name it
    lacks, or a class whose hooks are misspelt is an error before anything runs."""
    refs = tuple(getattr(args, "controller", None) or ())
    if len(set(refs)) != len(refs):
        raise UsageError("--controller: a controller is given twice")
    for ref in refs:
        load_controller(ref)
    return refs


_RUN_WIDE: list[str] = []


def oversee_every_episode(refs: tuple[str, ...]) -> None:
    """Make every episode this process (and the workers it forks) runs through
    :func:`agentbed.worker.run_spec` take ``refs`` as its ``--controller``s, unless its spec names
    its own: how ``agentbed demo --controller`` reaches the episodes a workload's demo plans."""
    _RUN_WIDE[:] = list(refs)


def run_wide_controllers() -> tuple[str, ...]:
    return tuple(_RUN_WIDE)
