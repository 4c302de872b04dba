"""Fits remembered by what they were fitted and scored on, for the rest of the process.

Fitting the controllers is most of an evaluation's or a learning curve's time, and one process
often repeats a fit: a contrast's two settings on the same files, a curve and a contrast (or an
evaluation) of the same files, a dataset given whole or in parts (they load to the same
checkpoints). A fit is deterministic (seeded forests, one job each), so its result is a function
of the checkpoints' content and the settings: the memo keys on a sha256 of both, keeps the last
few results and hands out deep copies (a caller may write into what it gets)."""

from __future__ import annotations

import copy
import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np

from controllers.oversight.checkpoints import Checkpoints

P = ParamSpec("P")
R = TypeVar("R")
KEPT = 16  # a curve's sizes x draws, or a contrast's two settings, fit fewer distinct sets than this


def content(value: Any) -> str:
    """What ``value`` is, as key text: every field of a Checkpoints (its arrays byte for byte), else
    its repr (the settings: dataclasses of numbers; an object whose repr is its address never hits)."""
    if not isinstance(value, Checkpoints):
        return repr(value)
    h = hashlib.sha256()
    for text in (repr(value.keys), repr(value.games.tolist()), repr(value.actions), repr(value.outcomes),
                 value.primary, repr(value.feature_names)):
        h.update(text.encode())
        h.update(b"\0")
    for array in (value.X, value.risk):
        h.update(repr((array.dtype.str, array.shape)).encode())
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def remembered(fit: Callable[P, R]) -> Callable[P, R]:
    """``fit`` with its last ``KEPT`` results remembered by the content of its arguments."""
    kept: OrderedDict[str, R] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(fit)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        parts = [content(a) for a in args] + [f"{k}={content(v)}" for k, v in sorted(kwargs.items())]
        key = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        with lock:
            hit = kept.get(key)
            if hit is not None:
                kept.move_to_end(key)
                return copy.deepcopy(hit)
        result = fit(*args, **kwargs)
        with lock:
            kept[key] = copy.deepcopy(result)
            while len(kept) > KEPT:
                kept.popitem(last=False)
        return result

    return wrapper
