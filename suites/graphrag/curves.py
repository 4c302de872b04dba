"""Attack success against budget: the adaptive attacks' curves, undefended and with TDP.

Every point is a grid cell (:func:`suites.graphrag.report.run_cell`) at one budget (documents
per target, four statements each), so a curve shows how much an attacker must spend to beat a
defense.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbed.summary import fmt, table
from suites.graphrag.report import Cell, run_cell

CURVE_BUDGETS = (1, 2, 3, 5, 8)


def budget_curve(dataset: str, attacks: Sequence[str], defenses: Sequence[str], budgets: Sequence[int] = CURVE_BUDGETS,
                 *, worlds: int = 4, done: Any = None) -> list[Cell]:
    cells = []
    for attack in attacks:
        for budget in budgets:
            for defense in defenses:
                cells.append(run_cell(dataset, attack, defense, worlds=worlds, budget=budget))
                if done:
                    done(f"{attack}@{budget}/{defense}")
    return cells


def curve_table(cells: list[Cell], command: str) -> dict[str, Any]:
    defenses = list(dict.fromkeys(c.defense for c in cells))
    rows = []
    for (attack, budget) in dict.fromkeys((c.attack, c.budget) for c in cells):
        here = {c.defense: c for c in cells if (c.attack, c.budget) == (attack, budget)}
        spent = next(iter(here.values())).spent
        rows.append([attack, f"{budget}/{4 * budget}", f"{spent[0]:.1f}/{spent[1]:.1f}",
                     *[fmt(here[d].interval("attack_success"), 2) if d in here else "-" for d in defenses]])
    return table("Attack success against budget (documents/statements per target)",
                 ["attack", "budget", "spent", *[f"success vs {d}" for d in defenses]], rows,
                 note=f"95% cluster-bootstrap intervals over worlds; regenerate: {command}")


def curve_figure(cells: list[Cell]) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agentbed.summary import figure_from_matplotlib

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for attack, defense in dict.fromkeys((c.attack, c.defense) for c in cells):
        line = sorted((c for c in cells if (c.attack, c.defense) == (attack, defense)), key=lambda c: c.budget)
        ivs = [c.interval("attack_success") for c in line]
        x = [c.budget for c in line]
        ax.plot(x, [iv.estimate for iv in ivs], marker="o", linestyle="-" if defense == "none" else "--",
                label=f"{attack} vs {defense}")
        ax.fill_between(x, [iv.low for iv in ivs], [iv.high for iv in ivs], alpha=0.15)
    ax.axhline(0.25, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("budget: documents per target (4 statements each)")
    ax.set_ylabel("attack success")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    out = figure_from_matplotlib("Adaptive attack success against budget (95% bootstrap bands; dotted: 25% goal)", fig)
    plt.close(fig)
    return out
