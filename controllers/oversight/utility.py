"""Utility of a branch and regret of a decision, with the costs as parameters.

U_a = u - c_a - (s + s_a) * m with u = +1 on success and -w on failure, c_a the cost of action
a (0 for continue, ``intervene`` for every intervention), s the cost per step, s_a an extra
cost per step of action a (an expert's time: ``action_steps``, 0 unless set) and m the steps
the branch took; U_quit = 0 (the paper's definitions; the defaults are those of public reconstructions of its protocol,
which its abstract does not state; s_a added for issue 34).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

CONTINUE = "continue"
QUIT = "quit"


@dataclass(frozen=True)
class Costs:
    fail_penalty: float = 1.0  # w: a failure is worth -w
    intervene: float = 0.05  # c_a for every intervention (expert, reflect, ...)
    step: float = 0.01  # s: cost per step taken in the branch
    continue_: float = 0.0  # c_continue
    action_steps: tuple[tuple[str, float], ...] = ()  # (action, extra cost per step of its branch)

    def action_cost(self, action: str) -> float:
        if action == QUIT:
            return 0.0
        return self.continue_ if action == CONTINUE else self.intervene

    def step_cost(self, action: str) -> float:
        """The cost of one step of ``action``'s branch: s, plus s_a where that action has one."""
        return self.step + dict(self.action_steps).get(action, 0.0)

    def with_action_steps(self, extra: dict[str, float]) -> Costs:
        return replace(self, action_steps=tuple(sorted(extra.items())))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self)
        out["action_steps"] = dict(self.action_steps)
        return out


DEFAULT_COSTS = Costs()

# The 5x5 sweep: intervention cost x failure penalty (the step cost stays at its default).
GRID_INTERVENE = (0.0, 0.05, 0.1, 0.2, 0.4)
GRID_FAIL_PENALTY = (0.25, 0.5, 1.0, 2.0, 4.0)


def branch_utility(action: str, success: bool, steps: int, costs: Costs = DEFAULT_COSTS) -> float:
    """Realized utility of one branch; quitting is worth 0 whatever happened."""
    if action == QUIT:
        return 0.0
    u = 1.0 if success else -costs.fail_penalty
    return u - costs.action_cost(action) - costs.step_cost(action) * steps


def expected_utility(action: str, p_success: Any, mean_steps: Any, costs: Costs = DEFAULT_COSTS) -> Any:
    """Expected utility from a success probability and an expected length (floats or arrays)."""
    if action == QUIT:
        return 0.0 * p_success
    return p_success - (1 - p_success) * costs.fail_penalty - costs.action_cost(action) - costs.step_cost(action) * mean_steps


def cost_grid(intervene: tuple[float, ...] = GRID_INTERVENE, fail_penalty: tuple[float, ...] = GRID_FAIL_PENALTY,
              step: float = DEFAULT_COSTS.step, action_steps: tuple[tuple[str, float], ...] = ()) -> list[Costs]:
    return [Costs(fail_penalty=w, intervene=c, step=step, action_steps=action_steps)
            for c in intervene for w in fail_penalty]


def regret(utilities: np.ndarray, choices: list[str], chosen: np.ndarray) -> np.ndarray:
    """Per checkpoint: utility of the oracle action minus utility of the chosen one."""
    col = np.asarray([choices.index(a) for a in chosen], dtype=int)
    return utilities.max(axis=1) - utilities[np.arange(len(col)), col]
