"""Global questions (answered from community reports) by community algorithm, attack and defense.

Every cell is a grid cell (:func:`suites.graphrag.report.run_cell`) with ``--questions global``
and ``--communities louvain|leiden``; intervals are cluster-bootstrap intervals over worlds, and
Louvain vs Leiden comes with the paired interval of the difference (same questions, same worlds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbed.stats import paired_difference_ci
from agentbed.summary import fmt, table
from suites.graphrag.report import Cell, run_cell

METHODS = ("louvain", "leiden")
GLOBAL_ATTACKS = ("none", "community")
GLOBAL_DEFENSES = ("none", "provenance", "tdp")
GLOBAL_BUDGETS = (1, 2, 3, 5)


def global_grid(worlds: int, *, attacks: Sequence[str] = GLOBAL_ATTACKS, defenses: Sequence[str] = GLOBAL_DEFENSES,
                methods: Sequence[str] = METHODS, budgets: Sequence[int] = (5,), done: Any = None) -> dict[tuple, Cell]:
    """Cells keyed by (method, attack, defense, budget)."""
    cells = {}
    for method in methods:
        for attack in attacks:
            for budget in (budgets if attack != "none" else budgets[-1:]):
                for defense in defenses:
                    cells[(method, attack, defense, budget)] = run_cell(
                        "world", attack, defense, worlds=worlds, questions="global", communities=method, budget=budget)
                    if done:
                        done(f"global {method} {attack}@{budget}/{defense}")
    return cells


def method_difference(cells: dict[tuple, Cell], attack: str, defense: str, budget: int, metric: str) -> Any:
    """Paired interval of ``metric`` under Louvain minus under Leiden."""
    key = "correct" if metric == "accuracy" else metric
    a, b = (cells[(m, attack, defense, budget)] for m in METHODS)
    va = {r.task: float(r.metrics.get(key, False)) for r in a.records}
    vb = {r.task: float(r.metrics.get(key, False)) for r in b.records}
    tasks = sorted(va)
    groups = [t.rsplit("-", 1)[0] for t in tasks]
    return paired_difference_ci([va[t] for t in tasks], [vb[t] for t in tasks],
                                groups=groups if len(set(groups)) > 1 else None, seed=0)


def global_table(cells: dict[tuple, Cell], command: str) -> dict[str, Any]:
    rows = []
    for (method, attack, defense, budget), c in cells.items():
        success = fmt(c.interval("attack_success"), 2) if attack != "none" else "-"
        spent = "-" if attack == "none" else f"{c.spent[0]:.1f}/{c.spent[1]:.1f}"
        rows.append([method, attack, defense, "-" if attack == "none" else f"{budget}/{4 * budget}", spent,
                     len(c.records), fmt(c.interval("accuracy"), 2), success])
    return table("Global questions, answered map-reduce from community reports",
                 ["communities", "attack", "defense", "budget docs/stmts", "spent docs/stmts", "questions",
                  "accuracy", "attack success"], rows,
                 note="deterministic scripted reader; 95% cluster-bootstrap intervals over worlds; "
                      f"regenerate: {command}")


def difference_table(cells: dict[tuple, Cell], command: str) -> dict[str, Any]:
    rows = []
    for (method, attack, defense, budget) in cells:
        if method != METHODS[0]:
            continue
        for metric in ("accuracy", *(("attack_success",) if attack != "none" else ())):
            rows.append([attack, defense, budget if attack != "none" else "-", metric,
                         fmt(method_difference(cells, attack, defense, budget, metric), 2)])
    return table("Louvain minus hierarchical Leiden on global questions (paired)",
                 ["attack", "defense", "budget", "metric", "louvain - leiden"], rows,
                 note=f"paired 95% cluster-bootstrap intervals over worlds; regenerate: {command}")


def global_gate_metrics(cells: dict[tuple, Cell], tolerance: float = 0.05) -> list[dict[str, Any]]:
    metrics = []
    for (method, attack, defense, budget), c in cells.items():
        agent = f"reader[attack={attack},budget={budget},communities={method},dataset=world,defense={defense},questions=global]"
        for metric, key, higher in (("accuracy", "correct", True), ("attack_success", "attack_success", False)):
            if metric == "attack_success" and attack == "none":
                continue
            values = {f"{r.task.rsplit('-', 1)[0]}/{r.task.rsplit('-', 1)[1]}": float(r.metrics.get(key, False))
                      for r in c.records}
            metrics.append({"suite": "graphrag", "agent": agent, "metric": metric, "higher_is_better": higher,
                            "tolerance": tolerance, "values": values})
    return metrics
