"""The four ways to split a repository among agents: CoCoder and the paper's three baselines.

A strategy fixes, for each module, its *context* (the conversation it is written in: what it
can see without a message) and whether it is bound to one worker or taken from a pool, and
whether a module waits for its dependencies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx

from agentbed.errors import UsageError
from controllers.cocoder.partition import assign_to_agents, cocoder_partition

STRATEGIES = ("sequential", "file-parallel", "per-file", "cocoder")


@dataclass(frozen=True)
class Plan:
    strategy: str
    context: dict[str, str]  # module -> context id
    worker: dict[str, int] | None  # module -> its agent, or None: any free worker of the pool
    workers: int
    respect_deps: bool  # False: all files at once, dependencies seen as interfaces only
    groups: list[list[str]] = field(default_factory=list)


MERGE_LIMIT = 300  # merging small groups re-simulates per trial: only on repository-sized graphs


def _zero_communication_makespan(graph: nx.DiGraph, agents: int) -> Callable[[list[set[str]]], float]:
    """Makespan of a grouping when messages are free (the paper's merge criterion)."""
    from controllers.cocoder.costmodel import CostModel
    from controllers.cocoder.schedule import simulate

    free = CostModel(latency=0.0, read_rate=float("inf"), message_tokens=0)
    out = {m: graph.nodes[m].get("tokens", 1) for m in graph}
    spec = {m: graph.nodes[m].get("api_tokens", 0) for m in graph}

    def makespan(groups: list[set[str]]) -> float:
        owner = assign_to_agents(graph, groups, agents)
        plan = Plan("cocoder", {m: f"a{owner[m]}" for m in graph}, owner, agents, True)
        return simulate(graph, plan, free, out, spec).makespan

    return makespan


def make_plan(graph: nx.DiGraph, strategy: str, agents: int, *, method: str = "louvain", seed: int = 0,
              theta: float = 0.4) -> Plan:
    """The plan of ``strategy`` with at most ``agents`` concurrent agents.

    * sequential: one agent, one growing context, files in dependency order.
    * file-parallel: every file at once by its own agent, dependencies as interfaces only.
    * per-file: a fresh agent per file, dependency-aware, ``agents`` at a time.
    * cocoder: hub-isolated communities, one agent per group (groups packed onto ``agents``).
    """
    modules = sorted(graph.nodes)
    if strategy == "sequential":
        return Plan(strategy, {m: "a0" for m in modules}, {m: 0 for m in modules}, 1, True, [modules])
    if strategy == "file-parallel":
        index = {m: i for i, m in enumerate(modules)}
        return Plan(strategy, {m: f"f{index[m]}" for m in modules}, index, len(modules), False,
                    [[m] for m in modules])
    if strategy == "per-file":
        return Plan(strategy, {m: f"f{i}" for i, m in enumerate(modules)}, None, agents, True,
                    [[m] for m in modules])
    if strategy == "cocoder":
        merge = _zero_communication_makespan(graph, agents) if graph.number_of_nodes() <= MERGE_LIMIT else None
        groups = cocoder_partition(graph, method=method, theta=theta, seed=seed, makespan=merge)
        owner = assign_to_agents(graph, groups, agents)
        used = sorted(set(owner.values()))
        renumber = {a: i for i, a in enumerate(used)}
        worker = {m: renumber[owner[m]] for m in modules}
        return Plan(strategy, {m: f"a{worker[m]}" for m in modules}, worker, len(used), True,
                    [sorted(g) for g in groups])
    raise UsageError(f"--strategy: {strategy!r} is not one of {', '.join(STRATEGIES)}")
