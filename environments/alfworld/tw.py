"""The real ALFWorld text environment: TextWorld's PDDL engine with ALFWorld's own wrappers.

``load_game`` builds what ``alfworld.agents.environment.AlfredTWEnv`` builds for one game
(``PddlEnv`` wrapped in ``AlfredDemangler``, ``AlfredInfos`` and ``AlfredExpert``) without
its YAML config or downloaded data. Two things are changed, both about the handcoded expert:

* it draws from Python's global ``random`` (``random.choice`` when it would repeat itself);
  here it draws from a private stream seeded per episode, so the same seed and the same
  commands give the same expert plan whatever else the process does with ``random``;
* ``AlfredExpert`` lets ``HandCodedAgentFailed`` escape from ``step``; here a failed or
  timed-out expert is recorded (``expert_error``) and recommends nothing.

Speed: TextWorld spends most of a step re-deriving the text of every admissible command: it
re-parses the same grammar templates with TatSu each time and deep-copies entity records for
every symbol it expands. ``set_textgen_acceleration`` caches the parse of each template text and of each
rule condition (handing out fresh copies of what was parsed, unpickled from its pickle: the objects
``copy.deepcopy`` made, through the same reduce protocol, four to five times faster) and copies a derivation context's
two dictionaries shallowly: derivation only adds keys to them and never mutates the entities.
Loading and every reset also translate the PDDL problem to SAS twice (fast-downward's
translator, about a second a game): the translation of a (domain, problem) pair is cached for
the last few games, so branching replays of the same game skip it.
The text is unchanged (tests compare whole traces with and without).

These imports need the ``alfworld`` extra; the rest of the package imports this module lazily.
"""

from __future__ import annotations

import pickle
import random
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import fast_downward
import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredExpert, AlfredInfos
from textworld.envs import PddlEnv
from textworld.envs.pddl import textgen
from textworld.logic import Rule

_ORIGINAL_PARSE = textgen._parse_and_convert
_PARSE_CACHE: dict[tuple[str, tuple[tuple[str, Any], ...]], bytes] = {}


def _fresh_copy(parsed: Any) -> bytes:
    """What a cache keeps: ``parsed`` pickled, so each hit unpickles a new copy (``copy.deepcopy`` of the
    cached parses was a sixth of a dataset rebuild's profile; both copy through the objects' ``__reduce_ex__``)."""
    return pickle.dumps(parsed, pickle.HIGHEST_PROTOCOL)


def _cached_parse(text: str, **kwargs: Any) -> Any:
    key = (text, tuple(sorted(kwargs.items())))
    parsed = _PARSE_CACHE.get(key)
    if parsed is None:
        parsed = _PARSE_CACHE[key] = _fresh_copy(_ORIGINAL_PARSE(text, **kwargs))
    return pickle.loads(parsed)  # a new copy: derivation mutates the symbols it is given


_ORIGINAL_COPY_CONTEXT = textgen.copy_context


def _shallow_copy_context(context: dict[str, Any]) -> dict[str, Any]:
    return {**context, "variables": dict(context["variables"]), "mapping": dict(context["mapping"])}


_QUERY_CACHE: dict[str, bytes] = {}


class _CachedRuleQueries:
    """Stands in for ``Rule`` inside TextWorld's text generator, which only parses queries with it."""

    @staticmethod
    def parse_conjunctive_query(expression: str) -> Rule:
        rule = _QUERY_CACHE.get(expression)
        if rule is None:
            rule = _QUERY_CACHE[expression] = _fresh_copy(Rule.parse_conjunctive_query(expression))
        return pickle.loads(rule)


_ORIGINAL_PDDL2SAS = fast_downward.pddl2sas
_SAS_CACHE: OrderedDict[tuple[str, str, bool], tuple[Any, str]] = OrderedDict()
_SAS_CACHE_GAMES = 8


def _cached_pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> tuple[Any, str]:
    key = (domain, problem, optimize)
    hit = _SAS_CACHE.get(key)
    if hit is None:
        argv = sys.argv[:]  # fast-downward's translator overwrites sys.argv for its option parser
        try:
            hit = _SAS_CACHE[key] = _ORIGINAL_PDDL2SAS(domain, problem, verbose=verbose, optimize=optimize)
        finally:
            sys.argv = argv
        while len(_SAS_CACHE) > 2 * _SAS_CACHE_GAMES:
            _SAS_CACHE.popitem(last=False)
    _SAS_CACHE.move_to_end(key)
    return hit  # TextWorld's PddlState only reads the translated task (actions, types, objects, init)


def set_textgen_acceleration(enabled: bool) -> None:
    """Turn the shortcuts on (the default) or off (to compare traces or time the original)."""
    fast_downward.pddl2sas = _cached_pddl2sas if enabled else _ORIGINAL_PDDL2SAS
    textgen._parse_and_convert = _cached_parse if enabled else _ORIGINAL_PARSE
    textgen.copy_context = _shallow_copy_context if enabled else _ORIGINAL_COPY_CONTEXT
    textgen.Rule = _CachedRuleQueries if enabled else Rule


set_textgen_acceleration(True)


class SeededAlfredExpert(AlfredExpert):
    """ALFWorld's handcoded expert, fed every step, with its own seeded random stream.

    ``fix_move_bookkeeping``: ALFWorld's handcoded expert (alfworld 0.4.2,
    ``HandCodedAgent.update_state_tracking``) drops an object from its inventory only when the
    last command contains "put", but the 0.4 grammar's command is "move O to R". So the expert
    never learns that an object was put down, by itself or by an agent before it: handed a game
    whose agent took and put back objects, or holding an object of the wrong kind, it keeps
    "holding" it and stalls. With the fix it is shown "put O to R" for its bookkeeping (the game
    gets the real command). ``AlfworldEnv`` turns it on by default (issue 34); the games were
    generated and checked solvable with ALFWorld's expert as it is, and bench/expert_handover.py
    measures both."""

    def __init__(self, env: Any = None, fix_move_bookkeeping: bool = False) -> None:
        super().__init__(env=env, expert_type="handcoded")
        self._rng_state = random.Random(0).getstate()
        self.expert_error: str | None = None
        self.fix_move_bookkeeping = fix_move_bookkeeping

    def seed_expert(self, seed: int) -> None:
        self._rng_state = random.Random(f"alfworld-expert:{seed}").getstate()

    def reset(self) -> Any:
        self.expert_error = None
        return super().reset()

    def _gather_infos(self) -> None:
        outer = random.getstate()
        random.setstate(self._rng_state)
        command = getattr(self, "prev_command", "")
        if self.fix_move_bookkeeping and str(command).startswith("move "):
            self.prev_command = "put " + str(command).removeprefix("move ")
        try:
            if self.expert_error is None:
                super()._gather_infos()
            else:
                self.state["extra.expert_plan"] = []
        except Exception as exc:  # noqa: BLE001 - HandCodedAgentFailed, its timeout, or a parse failure
            self.expert_error = f"{type(exc).__name__}: {exc}"[:200]
            self.state["extra.expert_plan"] = []
        finally:
            self.prev_command = command
            self._rng_state = random.getstate()
            random.setstate(outer)

    def expert_command(self) -> str | None:
        plan = self.state.get("extra.expert_plan") if self.state is not None else None
        return plan[0] if plan else None


def load_game(game_file: str | Path, fix_move_bookkeeping: bool = False) -> SeededAlfredExpert:
    """A TextWorld environment for one generated game (``game.tw-pddl`` beside ``traj_data.json``)."""
    infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True, extras=["gamefile", "expert_plan"])
    env = SeededAlfredExpert(AlfredInfos(AlfredDemangler(PddlEnv(infos), shuffle=False)), fix_move_bookkeeping)
    env.load(str(game_file))
    return env


def raw_game_env(game_file: str | Path) -> Any:
    """The same game without the expert (the baseline of the steps-per-second benchmark)."""
    infos = textworld.EnvInfos(won=True, admissible_commands=True)
    env = AlfredInfos(AlfredDemangler(PddlEnv(infos), shuffle=False))
    env.load(str(game_file))
    return env
