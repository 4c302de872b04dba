"""DeepDiff without the walk of what is plainly equal, for agentbed's side of the model cross-check.

AgentDojo's workspace and travel graders diff the whole environment before and after a task with
DeepDiff (``check_new_event`` and its kin); most of it is untouched, yet DeepDiff builds a tree
level for every field of every e-mail, event and file (about 80 ms a diff). :func:`shortcut`
returns early from ``DeepDiff._diff`` on a pair that :func:`equal` finds equal, which DeepDiff
would walk to no report at all: the same types all the way down and equal leaves, under DeepDiff's
default comparisons (``!=`` for numbers, strings and times, keys then values for a dict and for a
pydantic model's ``__dict__``, item by item for a list or tuple). Anything else (sets, enums not
identical, NaN, other types, an option that changes a comparison) is left to DeepDiff.

Only agentbed's runner grades under it: AgentDojo's own runner, the oracle, diffs with DeepDiff as
it is, so a pair misjudged here would show as a score that differs from AgentDojo's.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator
from typing import Any

from deepdiff import DeepDiff
from pydantic import BaseModel

# compared by DeepDiff with != alone, given the same type on both sides (its _diff_str, _diff_numbers,
# _diff_booleans, _diff_datetime and _diff_time under default options; NaN != NaN stays a difference)
LEAVES = frozenset({str, bytes, int, float, bool, datetime.datetime, datetime.date, datetime.time,
                    datetime.timedelta})
_STABLE: dict[type, bool] = {}


def _stable(cls: type) -> bool:
    """Whether every class-level value DeepDiff reads of a model of ``cls`` (``detailed__dict__``: the
    non-dunder names of ``dir`` that the instance does not hold, callables dropped) is one object
    every time, so DeepDiff passes it over as identical (``level.t1 is level.t2``)."""
    if cls not in _STABLE:
        try:
            names = [n for n in dir(cls) if not n.startswith("__")]
            first = [getattr(cls, n) for n in names]
            again = [getattr(cls, n) for n in names]  # a classmethod is a new bound method each time: callable, dropped
            _STABLE[cls] = all(v is w or callable(v) and callable(w) for v, w in zip(first, again, strict=True))
        except Exception:  # noqa: BLE001 - DeepDiff would report such a model 'unprocessed': its own walk decides
            _STABLE[cls] = False
    return _STABLE[cls]


def equal(a: Any, b: Any) -> bool:
    """True only if DeepDiff (default comparisons) reports nothing for ``a`` against ``b``."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in LEAVES:
        return bool(a == b)
    if kind is dict:
        return a.keys() == b.keys() and all(equal(v, b[k]) for k, v in a.items())
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(equal, a, b))
    if isinstance(a, BaseModel) and _stable(kind):
        return equal(a.__dict__, b.__dict__)
    return False


def _defaults(diff: DeepDiff) -> bool:
    """The comparisons :func:`equal` assumes (exclusions and inclusions only drop reports)."""
    return (not diff.custom_operators and not diff.ignore_order and diff.significant_digits is None
            and diff.math_epsilon is None and not diff.use_log_scale and not diff.truncate_datetime
            and diff.ignore_private_variables and not diff.ignore_string_case and diff.iterable_compare_func is None)


@contextlib.contextmanager
def shortcut() -> Iterator[None]:
    """``DeepDiff._diff`` returns at once on an equal pair, for the duration."""
    walk = DeepDiff._diff

    def diff(self: DeepDiff, level: Any, *args: Any, **kwargs: Any) -> None:
        try:
            if _defaults(self) and equal(level.t1, level.t2):
                return None
        except RecursionError:  # a cycle (DeepDiff skips those by id): its own walk
            pass
        return walk(self, level, *args, **kwargs)

    DeepDiff._diff = diff  # type: ignore[method-assign]
    try:
        yield
    finally:
        DeepDiff._diff = walk  # type: ignore[method-assign]
