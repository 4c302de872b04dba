"""A CoCoder team's settings and plan: the configuration, the work graph, the plan and its
simulated schedule (what ``run cocoder`` runs and ``cocoder-plan`` prints)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from agentbed.errors import UsageError
from controllers.cocoder.plan import Plan
from controllers.cocoder.schedule import Schedule, simulate
from controllers.cocoder.strategies import make_plan
from environments.cocoder.context import unit_skeleton
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.depgraph import estimate_tokens
from environments.cocoder.tasks import RepoTask

MAX_AGENTS = 64  # a team larger than the biggest task's module count only adds idle agents


@dataclass(frozen=True)
class TeamConfig:
    """One team's settings; ``agents`` is at most :data:`MAX_AGENTS` (planning is quadratic in it)."""

    strategy: str = "cocoder"
    agents: int = 3
    method: str = "louvain"
    theta: float = 0.4
    cost: CostModel = field(default_factory=CostModel)
    failure: FailureModel = field(default_factory=FailureModel)
    coder: str = "simulated"  # or "model:provider:model"
    repair_rounds: int = 1  # leader test-and-repair rounds after the write phase
    granularity: str = "function"  # cocoder only: "file" keeps the paper's file-level partition
    context: str = "fresh"  # cocoder only: a new conversation per unit, or "conversation" (one per agent)
    risk: str = "sequential"  # cocoder only: no plan riskier than one sequential agent (+ a margin), or "any"

    def __post_init__(self) -> None:
        if not 1 <= self.agents <= MAX_AGENTS:
            raise UsageError(f"--team-size must be between 1 and {MAX_AGENTS} (agents working at once), "
                             f"not {self.agents}")

    def digest(self) -> str:
        """Short hash of the whole configuration: team runs that differ in any constant never share ids."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "agents": self.agents, "method": self.method, "theta": self.theta,
                "cost": self.cost.to_dict(), "failure": self.failure.to_dict(), "coder": self.coder,
                "repair_rounds": self.repair_rounds, "granularity": self.granularity, "context": self.context,
                "risk": self.risk}


def work_graph(task: RepoTask) -> nx.DiGraph:
    """Modules with something to write; modules with nothing blanked (data, re-exports) are given."""
    todo = [m for m, mt in task.modules.items() if mt.blanked]
    return task.graph.subgraph(todo).copy()


# (task, configuration, seed) -> the task and its plan, least recently used first: planning is pure
# in them, and a process asks again (``cocoder-plan`` before ``run``, whose forked worker inherits
# it; a demo's repeated configurations); the task is held so its id stays its own
_PLANS: OrderedDict[tuple[int, TeamConfig, int], tuple[RepoTask, tuple[nx.DiGraph, Plan, Schedule]]] = OrderedDict()
_PLANS_LOCK = threading.Lock()
PLANS_KEPT = 64


def plan_team(task: RepoTask, config: TeamConfig, seed: int) -> tuple[nx.DiGraph, Plan, Schedule]:
    """The plan and its simulated schedule; the graph returned is the work graph (pieces as nodes).
    Computed once per task, configuration and seed in a process: callers read it, never change it."""
    key = (id(task), config, seed)
    with _PLANS_LOCK:
        if key in _PLANS:
            _PLANS.move_to_end(key)
            return _PLANS[key][1]
    planned = _plan_team(task, config, seed)
    with _PLANS_LOCK:
        _PLANS[key] = (task, planned)
        while len(_PLANS) > PLANS_KEPT:
            _PLANS.popitem(last=False)
    return planned


def forget_plans() -> None:
    """Empty the per-process memo of plans (after changing the planner's module constants)."""
    with _PLANS_LOCK:
        _PLANS.clear()


def _plan_team(task: RepoTask, config: TeamConfig, seed: int) -> tuple[nx.DiGraph, Plan, Schedule]:
    modules = work_graph(task)
    writable = {m: task.modules[m].blanked for m in modules}
    plan = make_plan(modules, config.strategy, config.agents, method=config.method, seed=seed, theta=config.theta,
                     granularity=config.granularity, writable=writable, cost=config.cost, failure=config.failure,
                     context=config.context, repair_rounds=config.repair_rounds, risk=config.risk)
    graph = plan.work_graph(modules)
    out, spec = task.out_tokens(), task.spec_tokens()
    out = {n: graph.nodes[n]["tokens"] if n in plan.pieces else out[n] for n in graph}  # a piece writes its view
    spec = {n: estimate_tokens(piece_skeleton(task, plan, n)) if n in plan.pieces else spec[n] for n in graph}
    return graph, plan, simulate(graph, plan, config.cost, out, spec)


def sibling_definitions(plan: Plan, node: str) -> list[str]:
    """The definitions the other pieces of ``node``'s module write (none for a whole module)."""
    piece = plan.pieces.get(node)
    if piece is None or not piece.definitions:
        return []
    return sorted(d for n, p in plan.pieces.items() if p.module == piece.module and n != node for d in p.definitions)


def piece_skeleton(task: RepoTask, plan: Plan, node: str) -> str:
    """What a unit of the plan is shown of its module (``context.unit_skeleton``, as its turns are)."""
    piece = plan.pieces.get(node)
    return unit_skeleton(task, plan.module_of(node), piece.definitions if piece else None,
                         sibling_definitions(plan, node))
