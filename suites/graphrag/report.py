"""Grids of attack x defense x dataset through the engine's runner, their statistics, and the demo.

Every cell runs the reader on the targeted questions with :func:`agentbed.runner.run_episode`.
Intervals are cluster-bootstrap intervals over worlds (questions of one world share a
poisoned index, so they are not independent); on a real graph there is one cluster and the
bootstrap is over questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbed.agents.base import Agent
from agentbed.runner import EpisodeRecord, EpisodeSpec, run_episode
from agentbed.stats import Interval, bootstrap_ci, paired_difference_ci
from agentbed.summary import fmt, table
from attacks.graphrag import ATTACKS
from attacks.graphrag.targets import STATEMENTS_PER_DOCUMENT
from environments.graphrag.agents import ReaderAgent
from suites.graphrag.defenses import DEFENSES
from suites.graphrag.scenarios import (
    adaptive_target,
    aim_of,
    graphrag_suite,
    make_env,
    poisoned,
    poisoned_global,
    targets_for,
    task_ids,
    world_seeds,
)

SUITE = graphrag_suite()  # options and budget, without the demo that this module is

ALL_ATTACKS = ("none", *ATTACKS)
METRICS = ("accuracy", "attack_success", "precision", "recall", "auc", "clean_removed")


@dataclass
class Cell:
    dataset: str
    attack: str
    defense: str
    records: list[EpisodeRecord]
    budget: int = 5
    spent: tuple[float, float] = (0.0, 0.0)  # mean documents and statements per target

    def world(self, r: EpisodeRecord) -> str:
        return r.task.rsplit("-", 1)[0]

    def values(self, metric: str) -> tuple[list[float], list[str]]:
        """Per-episode values of ``metric`` (episodes where it is undefined are left out)."""
        vals, groups = [], []
        for r in self.records:
            m = r.metrics
            v: float | None
            if metric == "accuracy":
                v = float(m.get("correct", False))
            elif metric == "attack_success":
                v = float(m.get("attack_success", False)) if self.attack != "none" else None
            elif metric == "precision":
                removed = m.get("removed_poison", 0) + m.get("removed_clean", 0)
                v = m["removed_poison"] / removed if removed else None
            elif metric == "recall":
                v = m["removed_poison"] / m["retrieved_poison"] if m.get("retrieved_poison") else None
            elif metric == "auc":
                v = m.get("auc")
            elif metric == "clean_removed":
                v = m["removed_clean"] / m["retrieved_clean"] if m.get("retrieved_clean") else None
            else:
                raise KeyError(metric)
            if v is not None:
                vals.append(float(v))
                groups.append(self.world(r))
        return vals, groups

    def interval(self, metric: str) -> Interval:
        cache = self.__dict__.setdefault("_intervals", {})
        if metric not in cache:
            vals, groups = self.values(metric)
            multi = len(set(groups)) > 1
            cache[metric] = bootstrap_ci(vals, groups=groups if multi else None, seed=0)
        return cache[metric]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dataset": self.dataset, "attack": self.attack, "defense": self.defense,
                               "budget": {"documents": self.budget, "statements": STATEMENTS_PER_DOCUMENT * self.budget},
                               "spent": {"documents": self.spent[0], "statements": self.spent[1]},
                               "episodes": len(self.records), "worlds": len({self.world(r) for r in self.records}),
                               "errors": sum(r.status == "error" for r in self.records)}
        for metric in METRICS:
            iv = self.interval(metric)
            out[metric] = None if iv.n == 0 else iv.to_dict()
        return out


def run_cell(dataset: str, attack: str, defense: str, *, worlds: int = 4,
             agent: Callable[[], Agent] = ReaderAgent, **options: Any) -> Cell:
    opts = SUITE.resolve_options({"dataset": dataset, "attack": attack, "defense": defense, "worlds": worlds, **options})
    records = []
    for task in task_ids(opts):
        spec = EpisodeSpec("graphrag", task, "reader", 0, opts)
        records.append(run_episode(make_env(task, opts), agent(), spec, budget=SUITE.budget))
    return Cell(dataset, attack, defense, records, int(opts["budget"]), spend_of(opts))


def spend_of(opts: dict[str, Any]) -> tuple[float, float]:
    """Mean documents and statements the attack spent per target, over the cell's worlds."""
    def built(w: int) -> Any:
        if opts.get("questions") == "global":
            return poisoned_global(opts["dataset"], w, opts["attack"], int(opts["budget"]), opts["communities"],
                                   opts["extractor"])
        return poisoned(opts["dataset"], w, opts["attack"], int(opts["budget"]), targets_for(opts), opts["communities"],
                        adaptive_target(opts["defense"]), aim_of(opts), opts["extractor"], str(opts.get("dress", "length")),
                        str(opts.get("pages", "one")), str(opts.get("wording", "writer")))

    spends = [built(w).spent() for w in world_seeds(opts)]
    return (float(np.mean([d for d, _ in spends])), float(np.mean([s for _, s in spends])))


def run_grid(dataset: str, attacks: Sequence[str] = ALL_ATTACKS, defenses: Sequence[str] = DEFENSES,
             **kwargs: Any) -> list[Cell]:
    return [run_cell(dataset, a, d, **kwargs) for a in attacks for d in defenses]


def grid_table(cells: list[Cell], dataset: str, command: str) -> dict[str, Any]:
    rows = []
    for c in cells:
        budget = "-" if c.attack == "none" else f"{c.budget}/{STATEMENTS_PER_DOCUMENT * c.budget}"
        spent = "-" if c.attack == "none" else f"{c.spent[0]:.1f}/{c.spent[1]:.1f}"
        row = [c.attack, c.defense, budget, spent, len(c.records)]
        for metric in METRICS:
            iv = c.interval(metric)
            row.append(fmt(iv, 2) if iv.n else "-")
        rows.append(row)
    return table(f"{dataset}: attack x defense (reader agent)",
                 ["attack", "defense", "budget docs/stmts", "spent docs/stmts", "episodes", *METRICS], rows,
                 note="budget and spend per target (contested fact); 95% cluster-bootstrap intervals over worlds; "
                      f"regenerate: {command}")


def paired_gain(cells: list[Cell], attack: str, better: str, worse: str = "none") -> Interval | None:
    """Interval of the drop in attack success from ``worse`` to ``better`` (paired by question)."""
    return paired_difference(cells, "attack_success", attack, worse, better)


def paired_difference(cells: list[Cell], metric: str, attack: str, a: str, b: str,
                      keep: Callable[[EpisodeRecord], bool] = lambda r: True) -> Interval | None:
    """Interval of ``metric`` under defense ``a`` minus under ``b`` for ``attack``, paired by
    question (the questions ``keep`` selects), cluster bootstrap over worlds."""
    by = {(c.attack, c.defense): c for c in cells}
    if (attack, a) not in by or (attack, b) not in by:
        return None
    return paired_cells(by[(attack, a)], by[(attack, b)], metric, keep)


def paired_cells(a: Cell, b: Cell, metric: str,
                 keep: Callable[[EpisodeRecord], bool] = lambda r: True) -> Interval:
    """``metric`` in cell ``a`` minus in cell ``b``, paired by the questions both ran (those ``keep``
    selects); cluster bootstrap over worlds (over questions on a real graph, one group)."""
    key = {"accuracy": "correct", "attack_success": "attack_success"}[metric]
    x, y = ({r.task: float(r.metrics.get(key, False)) for r in c.records if keep(r)} for c in (a, b))
    tasks = sorted(set(x) & set(y))
    groups = [t.rsplit("-", 1)[0] for t in tasks]
    return paired_difference_ci([x[t] for t in tasks], [y[t] for t in tasks],
                                groups=groups if len(set(groups)) > 1 else None, seed=0)


SUBSETS: dict[str, Callable[[EpisodeRecord], bool]] = {
    "all": lambda r: True,
    "multi-valued": lambda r: bool(r.metrics.get("multi_valued")),
    "not multi-valued": lambda r: not r.metrics.get("multi_valued"),
}


def paired_table(cells: list[Cell], versus: str, command: str) -> dict[str, Any]:
    """Every defense against ``versus``, per attack, paired by question: accuracy (``versus``
    minus the defense: a drop) and attack success (the defense minus ``versus``), on all
    questions and split by whether the question's gold path crosses a multi-valued relation."""
    rows = []
    for c in cells:
        for name, keep in SUBSETS.items():
            part = Cell(c.dataset, c.attack, c.defense, [r for r in c.records if keep(r)], c.budget, c.spent)
            if not part.records or (name != "all" and len(part.records) == len(c.records)):
                continue
            drop = paired_difference(cells, "accuracy", c.attack, versus, c.defense, keep) if c.defense != versus else None
            gain = paired_difference(cells, "attack_success", c.attack, c.defense, versus, keep) if drop else None
            success = part.interval("attack_success")
            rows.append([c.attack, c.defense, name, len(part.records), fmt(part.interval("accuracy"), 2),
                         fmt(success, 2) if success.n else "-",
                         fmt(drop, 2) if drop else "-", fmt(gain, 2) if gain and c.attack != "none" else "-",
                         fmt(part.interval("clean_removed"), 3) if part.interval("clean_removed").n else "-"])
    return table(f"{cells[0].dataset}: each defense against {versus}, paired by question",
                 ["attack", "defense", "questions", "n", "accuracy", "attack success", f"accuracy drop ({versus} - defense)",
                  f"attack success (defense - {versus})", "clean evidence removed (share)"], rows,
                 note=f"paired 95% cluster-bootstrap intervals over worlds (over questions on a real graph); "
                      f"regenerate: {command}")


def figure(cells_by_dataset: dict[str, list[Cell]], defenses: Sequence[str]) -> dict[str, Any]:
    """Attack success per attack (a row, its name on the vertical axis) with a bar per defense (a
    legend names them), one block per dataset: the shared plot module's interval bars, so no label
    overprints (rotated x-labels under grouped bars did)."""
    from agentbed.report.plots import BarRow, interval_bars

    rows = []
    for dataset, cells in cells_by_dataset.items():
        shown = [d for d in defenses if any(c.defense == d for c in cells)]
        for a in (a for a in ATTACKS if any(c.attack == a for c in cells)):
            bars = []
            for d in shown:
                cell = next((c for c in cells if c.attack == a and c.defense == d), None)
                if cell is not None:
                    iv = cell.interval("attack_success")
                    bars.append((d, iv.estimate, iv.low, iv.high))
            rows.append(BarRow(a, tuple(bars), group=dataset))
    return {"title": "Attack success by attack and defense (95% bootstrap intervals)",
            "svg": interval_bars(rows, axis_label="attack success", lo=0.0, hi=1.0)}
