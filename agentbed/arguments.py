"""Every argument of every verb checked before the verb starts any work.

argparse turns ``--seeds 1e40``-like input into numbers but bounds nothing: ``float`` takes
``nan`` and ``inf``, ``int`` takes a thousand digits, and a string option takes ``""``. After
parsing, :func:`check_arguments` walks the actions of the verb that will run (sub-verbs
included, so a workload's new option is covered without anyone listing it) and refuses, naming
the option: a non-finite float; a number below :data:`MIN_OPTION` or above :data:`MAX_OPTION`
(every numeric option of agentbed is a count, a size, a rate, a cost or a seed, so negative
values are refused too, unless the option is in :data:`SIGNED_OPTIONS`); and an empty string or
a list of nothing but commas. Verbs still check their own ranges (``--degrade`` within [0, 1]).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError

MIN_OPTION = 0
MAX_OPTION = 10**9  # a count beyond a billion (seeds, episodes, agents, steps, tokens) is never meant
SIGNED_OPTIONS: frozenset[str] = frozenset()  # dests of numeric options that may be negative


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Raise UsageError for the first argument of the chosen verb that no verb could use."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public list of its actions
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                check_arguments(action.choices[chosen], args)
            continue
        if action.dest in (argparse.SUPPRESS, "help") or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        for item in value if isinstance(value, list) else [value]:
            _check_value(action, item)


def option_name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _check_value(action: argparse.Action, value: Any) -> None:
    if isinstance(value, bool) or value is None or value == action.default:
        return
    check_value(option_name(action), value, signed=action.dest in SIGNED_OPTIONS)


def check_value(name: str, value: Any, *, signed: bool = False) -> None:
    """One option's value (also a suite option's, ``--NAME VALUE``): finite, in range, not empty."""
    if isinstance(value, bool):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number, not {value}")
    if isinstance(value, int | float):
        low = -MAX_OPTION if signed else MIN_OPTION
        if not low <= value <= MAX_OPTION:
            raise UsageError(f"{name} must be between {low} and {MAX_OPTION}, not {_short(value)}")
    elif isinstance(value, str) and not value.strip(" ,"):
        raise UsageError(f"{name}: an empty value ({value!r}) names nothing")


def _short(value: float) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"a number of {len(text)} digits"


def check_output_file(path: Path | None, option: str) -> None:
    """An output file's path must not be a directory, and its directory must be creatable."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory, expected a file name")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{option} {path}: {parent} is not a directory")
            if not os.access(parent, os.W_OK):
                raise UsageError(f"{option} {path}: {parent} is not writable")
            break
