"""An intervention's step budget applied to an existing dataset.

An intervention with a budget of B steps gives up after B steps: its branch ends there,
failed (the builder does this with ``BranchTarget.budgets``). An agent does not know its
budget, so its first B steps are the same with and without one; a branch recorded without a
budget therefore tells exactly what the budgeted branch would have done: unchanged if it ended
within B steps, otherwise a failure after B steps. One unbudgeted build thus serves every
budget (used to choose the benchmark's budget on development games; tested against a build
with the budget in tests/oversight/test_interventions.py).
"""

from __future__ import annotations

from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.dataset import Dataset


def parse_assignments(text: str, what: str, kind: type = float) -> dict[str, Any]:
    """``"expert=15,planner=30"`` -> {"expert": 15, "planner": 30}; a bad item is one line."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            number = kind(value)
        except ValueError:
            number = None
        if not sep or not name or number is None or number < 0 or (kind is int and number < 1):
            raise UsageError(f"{what}: expected ACTION=NUMBER items separated by commas, got {item!r}")
        out[name] = number
    return out


def with_budgets(dataset: Dataset, budgets: dict[str, int]) -> Dataset:
    """``dataset`` as if each named action had given up after its budget of steps."""
    if not budgets:
        return dataset
    actions = set(dataset.provenance.get("actions", []))
    built = dict(dataset.provenance.get("budgets") or {})
    for action, steps in budgets.items():
        if action not in actions or action in ("continue", "quit"):
            raise UsageError(f"--budget: the dataset has no intervention {action!r} (actions: "
                             f"{', '.join(sorted(actions - {'continue', 'quit'}))})")
        if action in built and built[action] < steps:
            raise UsageError(f"--budget {action}={steps}: the dataset was built with a budget of {built[action]} "
                             "steps for it; a larger one cannot be recovered")
    rows = []
    for row in dataset.rows:
        limit = budgets.get(row["action"])
        if limit is not None and int(row["steps"]) > limit:
            row = {**row, "success": False, "steps": limit, "status": "budget"}
        rows.append(row)
    provenance = {**dataset.provenance, "budgets": {**built, **budgets},
                  "budgets_applied_after_build": dict(budgets)}
    return Dataset(provenance, rows)
