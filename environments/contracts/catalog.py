"""What each task tests, for ``agentbed list contracts --json``: its family and issuer, the axes
it grades, whether it forces a renewal, and the failure labels it can assign.

The labels come from each family's declared producers (``Family.labels``: the validity and goal
labels its verifier assigns, each enabled by a task parameter or on every task), the byte-strict
integrity labels (any artifact can be corrupted in any of those ways), GOAL_NOT_MET, and the
labels the task's shared parameters add (chores: SHORTCUT_TAKEN; a maintenance window:
SCHEDULED_UNAVAILABLE). tests/contracts/test_list_json.py checks them against what the shipped
agents and the clause violations actually produce.
"""

from __future__ import annotations

from typing import Any

from environments.contracts import families as _families  # noqa: F401 - registers every family
from environments.contracts.family import FAMILIES
from environments.contracts.labels import INTEGRITY_LABELS, LABELS
from environments.contracts.tasks import TASKS


def enabled(condition: str | None, p: dict[str, Any]) -> bool:
    """Whether a declared label's condition holds for task parameters ``p``."""
    if condition is None:
        return True
    name, _, above = condition.partition(">")
    return p.get(name, 0) > int(above) if above else bool(p.get(name))


def task_labels(p: dict[str, Any]) -> set[str]:
    """The labels a task can be given: its family's declared ones whose condition holds, every
    integrity label, GOAL_NOT_MET, and what the shared parameters add."""
    family = FAMILIES[p["family"]]
    labels = {name for name, condition in family.labels.items() if enabled(condition, p)}
    labels |= set(INTEGRITY_LABELS) | {"GOAL_NOT_MET"}
    if p.get("chores"):
        labels.add("SHORTCUT_TAKEN")
    if p.get("maintenance"):
        labels.add("SCHEDULED_UNAVAILABLE")
    return labels


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
    labels = task_labels(p)
    validity = sorted(n for n in labels if LABELS[n].axis == "validity")
    return {"family": family.name, "issuer": family.title, "catalogue_rows": list(family.catalogue),
            "axes": ["integrity_strict", "integrity_issuer", *(["validity"] if validity else []), "goal"],
            **renewal(p),
            "present": p.get("present", "plain"), "labels": sorted(labels, key=list(LABELS).index)}
