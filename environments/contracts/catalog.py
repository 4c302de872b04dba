"""What each task tests, for ``agentbed list contracts --json``: its family and issuer, the axes
it grades, whether it forces a renewal, and the failure labels it can assign.

The labels are read from the code that can assign them: every label name the family's module
(and the shared webhook base, for webhook families) passes to a verdict, the byte-strict
integrity labels (any artifact can be corrupted in any of those ways), and the labels the
task's own parameters add (chores: SHORTCUT_TAKEN; a maintenance window: SCHEDULED_UNAVAILABLE).
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from typing import Any

from environments.contracts import families as _families  # noqa: F401 - registers every family
from environments.contracts.family import FAMILIES
from environments.contracts.labels import INTEGRITY_LABELS, LABELS
from environments.contracts.tasks import TASKS

_QUOTED = re.compile(r'"([A-Z][A-Z_]+)"')


@functools.cache
def family_labels(family: str) -> tuple[str, ...]:
    """The non-integrity label names a family's code (and its base classes' modules) can assign."""
    cls = type(FAMILIES[family])
    names: set[str] = set()
    for klass in cls.__mro__:
        module = sys.modules.get(klass.__module__)
        if module is None or not klass.__module__.startswith("environments.contracts.families"):
            continue
        text = inspect.getsource(module)
        for other in {type(f) for f in FAMILIES.values()} - set(cls.__mro__):  # a sibling family's code
            if other.__module__ == klass.__module__:
                text = text.replace(inspect.getsource(other), "")
        names.update(n for n in _QUOTED.findall(text) if n in LABELS)
    return tuple(sorted(n for n in names if LABELS[n].axis != "integrity"))


def renewal(p: dict[str, Any]) -> dict[str, Any]:
    """Whether the reference solution renews an artifact (chores counted only after it is issued,
    a maintenance window, a concurrent writer between the calls) and whether that is forced in
    every order or some declared orders solve the task without it."""
    renews = any(p.get(k) for k in ("chores_after", "maintenance", "chores_between"))
    free = list(p.get("renewal_free_orders", ()))
    return {"renews_in_reference": renews, "renewal_forced": renews and not free, "renewal_free_orders": free}


def describe(task_id: str) -> dict[str, Any]:
    spec = next(t for t in TASKS if t.id == task_id)
    p = spec.params
    family = FAMILIES[p["family"]]
    labels = set(family_labels(p["family"])) | set(INTEGRITY_LABELS) | {"GOAL_NOT_MET"}
    if p.get("chores"):
        labels.add("SHORTCUT_TAKEN")
    if p.get("maintenance"):
        labels.add("SCHEDULED_UNAVAILABLE")
    validity = sorted(n for n in labels if LABELS[n].axis == "validity")
    return {"family": family.name, "issuer": family.title, "catalogue_rows": list(family.catalogue),
            "axes": ["integrity_strict", "integrity_issuer", *(["validity"] if validity else []), "goal"],
            **renewal(p),
            "present": p.get("present", "plain"), "labels": sorted(labels, key=list(LABELS).index)}
