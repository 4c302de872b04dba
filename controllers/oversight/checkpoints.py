"""Branched rows grouped into checkpoints: one decision point with every action's outcomes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from controllers.oversight.features import FEATURE_NAMES, feature_matrix
from controllers.oversight.utility import CONTINUE, QUIT, Costs, branch_utility


@dataclass
class Checkpoints:
    """Parallel arrays over checkpoints; ``outcomes[a][i]`` lists (success, steps) per rollout."""

    keys: list[tuple[str, int]]
    games: np.ndarray
    X: np.ndarray
    risk: np.ndarray
    actions: list[str]  # rolled-out actions (quit excluded)
    outcomes: dict[str, list[list[tuple[bool, int]]]]
    primary: str
    feature_names: tuple[str, ...] = FEATURE_NAMES

    @property
    def choices(self) -> list[str]:
        return [*self.actions, QUIT]

    def __len__(self) -> int:
        return len(self.keys)

    def subset(self, idx: np.ndarray) -> Checkpoints:
        return Checkpoints([self.keys[i] for i in idx], self.games[idx], self.X[idx], self.risk[idx], self.actions,
                           {a: [v[i] for i in idx] for a, v in self.outcomes.items()}, self.primary,
                           self.feature_names)

    def utilities(self, costs: Costs) -> np.ndarray:
        """Realized utility (mean over rollouts), shape (checkpoints, choices)."""
        cols = [[np.mean([branch_utility(a, s, m, costs) for s, m in outs]) for outs in self.outcomes[a]]
                for a in self.actions]
        cols.append([0.0] * len(self))
        return np.asarray(cols, dtype=float).T

    def success_rate(self, action: str) -> np.ndarray:
        return np.asarray([np.mean([s for s, _ in outs]) for outs in self.outcomes[action]], dtype=float)

    def rollout_rows(self, action: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One row per rollout of ``action``: (checkpoint index, success, steps, risk)."""
        idx, succ, steps = [], [], []
        for i, outs in enumerate(self.outcomes[action]):
            for s, m in outs:
                idx.append(i)
                succ.append(float(s))
                steps.append(float(m))
        idx_arr = np.asarray(idx, dtype=int)
        return idx_arr, np.asarray(succ), np.asarray(steps), self.risk[idx_arr]


def group_checkpoints(rows: Sequence[dict[str, Any]], actions: Sequence[str], primary: str,
                      feature_names: Sequence[str] = FEATURE_NAMES) -> tuple[Checkpoints, int]:
    """Group rows by (trajectory, step); checkpoints missing an action are dropped and counted.

    ``games`` holds each checkpoint's unit of resampling and holding out: the row's ``group``
    where the benchmark sets one (GraphRAG: the question, whatever the attack), else its game.

    ``feature_names`` (the dataset's provenance) are the columns of ``X``: the generic prefix
    features, then the benchmark's own progress features where it has them."""
    names = tuple(feature_names)
    rolled = [a for a in actions if a != QUIT]
    by_key: dict[tuple[str, int], dict[str, Any]] = {}
    outcomes: dict[tuple[str, int], dict[str, list[tuple[bool, int]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = (row["trajectory"], int(row["checkpoint"]))
        by_key.setdefault(key, row)
        outcomes[key][row["action"]].append((bool(row["success"]), int(row["steps"])))
    complete = [k for k in by_key if all(outcomes[k].get(a) for a in rolled)]
    dropped = len(by_key) - len(complete)
    first = [by_key[k] for k in complete]
    X = feature_matrix([r["features"] for r in first], names) if first else np.zeros((0, len(names)))
    cps = Checkpoints(
        keys=complete, games=np.asarray([r.get("group", r["game"]) for r in first], dtype=object), X=X,
        risk=np.asarray([float(r["risk"]) for r in first], dtype=float), actions=rolled,
        outcomes={a: [outcomes[k][a] for k in complete] for a in rolled}, primary=primary if primary in rolled
        else next(a for a in rolled if a != CONTINUE), feature_names=names)
    return cps, dropped
