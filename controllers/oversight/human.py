"""The human overseer as one of the oversight workload's controllers.

At each checkpoint of a branched dataset a person picks one of the checkpoint's choices, seeing
what the automated controllers see (the prefix: trajectory, step, the agent's risk and the
prefix features): approve is ``continue``, reject is ``quit``, and handing over names an
intervention. Questions go through the same rendezvous as ``agentbed run --approver human``
(:mod:`agentbed.approval`: the terminal, or ``agentbed view --approvals DIR``), and a timeout
policy answers for an absent person. Every answer is appended to a decisions file (JSON
Lines) with its author, how it came and its latency; a later evaluation reads the recorded
decisions instead of asking again, so the human's regret is computed, like every controller's,
on the same checkpoints (:func:`compare_with_controllers`). A person is not fitted and does not
see costs: the same choice serves every cost setting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agentbed.approval import Asked, Terminal, ask, request_key
from agentbed.errors import UsageError
from agentbed.stats import bootstrap_ci, paired_difference_ci
from agentbed.validate import InputError, bounded_lines, check, parse_json
from controllers.oversight.calibration import interval_dict
from controllers.oversight.checkpoints import Checkpoints
from controllers.oversight.utility import CONTINUE, QUIT, Costs, regret

DECISION_RECORD = {
    "type": "object",
    "required": ["unit", "choice", "author", "via", "latency_seconds"],
    "properties": {"unit": {"type": "string"}, "choice": {"type": "string"}, "author": {"type": "string"},
                   "via": {"type": "string"}, "latency_seconds": {"type": "number"}},
}


def unit_of(key: tuple[str, int]) -> str:
    return f"{key[0]}@{key[1]}"


def read_decisions(path: Path) -> dict[str, dict[str, Any]]:
    """The recorded decisions by checkpoint (the last answer for a checkpoint wins)."""
    if not path.exists():
        return {}
    out: dict[str, dict[str, Any]] = {}
    with open(path, "rb") as fh:
        for number, line in bounded_lines(fh, path):
            if not line.strip():
                continue
            record = parse_json(line, f"{path}: line {number}")
            check(record, DECISION_RECORD, f"{path}: line {number}")
            out[record["unit"]] = record
    return out


class HumanReview:
    """A person deciding at each checkpoint (see the module's docstring)."""

    name = "human"

    def __init__(self, decisions: Path, folder: Path | None = None, *, timeout: float = 300.0,
                 on_timeout: str = "reject", terminal: Terminal | None = None) -> None:
        self.decisions, self.folder, self.timeout, self.on_timeout = Path(decisions), folder, timeout, on_timeout
        self.terminal = terminal or Terminal()
        try:
            self.recorded = read_decisions(self.decisions)
        except InputError as exc:
            raise UsageError(str(exc)) from None

    def fit(self, train: Checkpoints) -> None:
        """A person is not fitted."""

    def choose(self, test: Checkpoints, costs: Costs) -> np.ndarray:
        out = np.empty(len(test), dtype=object)
        for i, key in enumerate(test.keys):
            unit = unit_of(key)
            if unit not in self.recorded:
                self.recorded[unit] = self._ask(test, i, unit)
            choice = self.recorded[unit]["choice"]
            if choice not in test.choices:
                raise UsageError(f"{self.decisions}: checkpoint {unit} was answered {choice!r}, which is not one of "
                                 f"its choices ({', '.join(test.choices)})")
            out[i] = choice
        return out

    def _ask(self, cps: Checkpoints, i: int, unit: str) -> dict[str, Any]:
        if self.folder is None:
            raise UsageError(f"{self.decisions}: no recorded decision for checkpoint {unit}, and no --approvals "
                             "folder to ask a person in")
        trajectory, step = cps.keys[i]
        features = ", ".join(f"{n}={v:.3g}" for n, v in zip(cps.feature_names, cps.X[i].tolist(), strict=False))
        interventions = [a for a in cps.actions if a != CONTINUE]
        asked = Asked(request_key(trajectory, step), trajectory, step, str(cps.games[i]), "base agent",
                      f"continue from step {step} (approve), quit (reject), or hand over to an intervention",
                      f"risk {cps.risk[i]:.3f}; prefix features: {features}", "oversight checkpoint")
        while True:
            doc, via, latency = ask(self.folder, asked, timeout=self.timeout, on_timeout=self.on_timeout,
                                    agents=interventions, terminal=self.terminal)
            if doc["decision"] != "edit":  # an edited call means nothing at a checkpoint: ask again
                break
        choice = {"approve": CONTINUE, "reject": QUIT}.get(doc["decision"], doc.get("agent"))
        record = {"unit": unit, "choice": choice, "decision": doc["decision"], "author": doc["author"],
                  "via": via, "latency_seconds": round(latency, 3)}
        self.decisions.parent.mkdir(parents=True, exist_ok=True)
        with open(self.decisions, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
        return record


def compare_with_controllers(cps: Checkpoints, human: HumanReview, chosen: dict[str, np.ndarray], costs: Costs, *,
                             resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The human's regret beside each automated controller's on the same checkpoints, and the paired
    difference (human minus controller) with a cluster-bootstrap interval over games."""
    u = cps.utilities(costs)
    human_choice = human.choose(cps, costs)
    groups = cps.games.tolist()
    regrets = {name: regret(u, cps.choices, c) for name, c in chosen.items()}
    mine = regret(u, cps.choices, human_choice)

    def interval(values: np.ndarray) -> dict[str, float]:
        return interval_dict(bootstrap_ci(values, groups=groups, n_resamples=resamples, seed=seed))

    return {"checkpoints": len(cps), "human": {"regret": interval(mine),
                                               "actions": {a: float(np.mean(human_choice == a)) for a in cps.choices}},
            "controllers": {name: {"regret": interval(r),
                                   "human_minus_controller": interval_dict(paired_difference_ci(
                                       mine, r, groups=groups, n_resamples=resamples, seed=seed))}
                            for name, r in regrets.items()}}
