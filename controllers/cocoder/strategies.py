"""The four ways to split a repository among agents: CoCoder and the paper's three baselines.

A strategy fixes, for each module, its *context* (the conversation it is written in: what it
can see without a message) and whether it is bound to one worker or taken from a pool, and
whether a module waits for its dependencies.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import replace
from functools import partial
from itertools import chain

import networkx as nx

from agentbed.errors import UsageError
from controllers.cocoder.chunking import GRANULARITIES, Bodies, Piece, split_oversize
from controllers.cocoder.partition import assign_to_agents, cocoder_partition
from controllers.cocoder.plan import Plan
from controllers.cocoder.schedule import Schedule, Shapes, expected_makespan, residual_risk, simulate
from environments.cocoder.costmodel import CostModel, FailureModel

STRATEGIES = ("sequential", "file-parallel", "per-file", "cocoder", "file-parallel-uncapped")
# how a cocoder agent carries its own earlier work from one unit to the next: a fresh conversation
# per unit shown the interfaces of what it wrote and uses, or one
# conversation that keeps everything it was shown and wrote
CONTEXTS = ("fresh", "conversation")
# the split candidates of each granularity: (ordered, late pieces, one piece per agent)
SPLITS = {"function": ((False, False, False), (True, False, False), (True, True, False), (True, False, True),
                       (True, True, True)),
          "simultaneous": ((False, False, False),), "ordered": ((True, False, False), (True, True, False))}
# the planner's bound on residual risk (``risk_level``): one sequential agent's within a margin
# (``sequential``, ``sequential+M``), or none (``any``); a probability in [0, 1] bounds it directly,
# the points in between. ``sequential`` alone: sequential's residual risk plus one percentage
# point. The estimate resolves no finer: against the failing runs observed on the four
# repositories it is off by up to five points (docs/cocoder.md), and a hundred seeds cannot tell
# 0.3% from 1.2%. ``sequential+0`` is the strict bound (the default until 2026-12-01 night).
SEQUENTIAL_MARGIN = 0.01


def _probability(value: str) -> float:
    p = float(value)  # raises for text
    if not 0.0 <= p <= 1.0:  # NaN fails the comparison too
        raise ValueError(f"{value!r} is not a probability in [0, 1]")
    return p


def risk_level(value: str) -> str:
    """``value`` if it names a planner risk level: ``sequential`` (one sequential agent's residual
    risk plus ``SEQUENTIAL_MARGIN``), ``sequential+M`` (plus a margin M in [0, 1]), ``any`` or a
    probability in [0, 1] (the largest residual risk a plan may have); ValueError otherwise."""
    if value != "any" and sequential_margin(value) is None:
        _probability(value)
    return value


def sequential_margin(risk: str) -> float | None:
    """How far above one sequential agent's residual risk ``risk`` lets a plan go (None: the
    level is not relative to sequential's)."""
    if risk == "sequential":
        return SEQUENTIAL_MARGIN
    return _probability(risk.removeprefix("sequential+")) if risk.startswith("sequential+") else None


THOROUGH_LIMIT = 60  # repacking moves single units too, best move first: repository-sized graphs only
SWAP_LIMIT = 24  # repacking also swaps pairs of nodes (quadratic): work graphs of a few modules only
MERGE_LIMIT = 300  # merging small groups re-simulates per trial: only on repository-sized graphs


def _zero_communication_makespan(graph: nx.DiGraph, agents: int, apart: Mapping[str, str] | None = None
                                 ) -> Callable[[list[set[str]]], float]:
    """Makespan of a grouping when messages are free (the paper's merge criterion)."""
    free = CostModel(latency=0.0, read_rate=float("inf"), message_tokens=0)
    out = {m: graph.nodes[m].get("tokens", 1) for m in graph}
    spec = {m: graph.nodes[m].get("api_tokens", 0) for m in graph}
    shapes = Shapes()

    def makespan(groups: list[set[str]]) -> float:
        owner = assign_to_agents(graph, groups, agents, apart)
        plan = Plan("cocoder", {m: f"a{owner[m]}" for m in graph}, owner, agents, True)
        return simulate(graph, plan, free, out, spec, shapes(graph)).makespan

    return makespan


def make_plan(graph: nx.DiGraph, strategy: str, agents: int, *, method: str = "louvain", seed: int = 0,
              theta: float = 0.4, granularity: str = "function",
              writable: Mapping[str, Collection[str]] | None = None, cost: CostModel | None = None,
              failure: FailureModel | None = None, context: str = "fresh", repair_rounds: int = 1,
              risk: str = "sequential") -> Plan:
    """The plan of ``strategy`` with at most ``agents`` concurrent agents.

    * sequential: one agent, one growing context, files in dependency order.
    * file-parallel: every file in a fresh conversation, dependencies as interfaces only, nothing
      waiting for anything, ``agents`` at a time (the team size every other strategy has).
    * file-parallel-uncapped: the same with one agent per file, all at once: the paper's
      "all-at-once" baseline, reported as an upper bound on speed (it is not a team of ``agents``).
    * per-file: a fresh agent per file, dependency-aware, ``agents`` at a time.
    * cocoder: hub-isolated communities, one agent per group (groups packed onto ``agents``);
      at ``granularity="function"`` a module or cycle bigger than ``total / agents`` may then be
      split into pieces of its definitions that go to different agents (controllers.cocoder.chunking):
      written at once against stubs, or along their references (hubs first; with or without late
      pieces for the definitions that wait for other modules). Of the file-level plan and the three
      splits, the one with the shortest expected makespan (simulated with ``cost``, its
      repair risk from ``failure``; defaults: the spec's constants) is kept. With ``context="fresh"``
      each of an agent's units starts a new conversation shown what it uses of the agent's earlier
      units (context isolation); ``"conversation"`` keeps one growing conversation per agent.
      The planner's choice (``granularity="function"``) only considers plans whose residual risk
      (some unit still broken after ``repair_rounds`` repairs, by the failure model) is no larger
      than one sequential agent's plus a margin: the goal's "pass rate no worse than sequential" as
      a constraint, at the estimate's resolution (``risk="sequential"``: ``SEQUENTIAL_MARGIN``;
      ``"sequential+0"`` is strict); ``risk="any"`` drops the constraint (the fastest expected
      makespan); a probability (``risk="0.05"``) is the bound itself, for the trade-off in between.
    """
    modules = sorted(graph.nodes)
    if strategy == "sequential":
        return Plan(strategy, {m: "a0" for m in modules}, {m: 0 for m in modules}, 1, True, [modules])
    if strategy == "file-parallel":  # at most ``agents`` at once, like every other team: the fair baseline
        return Plan(strategy, {m: f"f{i}" for i, m in enumerate(modules)}, None, max(1, min(agents, len(modules))),
                    False, [[m] for m in modules], fresh_context=True)
    if strategy == "file-parallel-uncapped":  # one agent per file, all at once: an upper bound, not a team of k
        index = {m: i for i, m in enumerate(modules)}
        return Plan(strategy, {m: f"f{index[m]}" for m in modules}, index, len(modules), False,
                    [[m] for m in modules], fresh_context=True)
    if strategy == "per-file":
        return Plan(strategy, {m: f"f{i}" for i, m in enumerate(modules)}, None, agents, True,
                    [[m] for m in modules], fresh_context=True)
    if strategy == "cocoder":
        if granularity not in GRANULARITIES:
            raise UsageError(f"--granularity: {granularity!r} is not one of {', '.join(GRANULARITIES)}")
        if context not in CONTEXTS:
            raise UsageError(f"--context: {context!r} is not one of {', '.join(CONTEXTS)}")
        try:
            risk_level(risk)
        except ValueError:
            raise UsageError(f"--risk: {risk!r} is not sequential, sequential+M, any or a probability in [0, 1]"
                             ) from None
        fresh = context == "fresh"
        merge = _zero_communication_makespan(graph, agents) if graph.number_of_nodes() <= MERGE_LIMIT else None
        groups = cocoder_partition(graph, method=method, theta=theta, seed=seed, makespan=merge)
        candidates = [replace(_packed(graph, groups, agents, {}, {}, fresh), variant="file")]
        seen: list[dict[str, Piece]] = []
        read: dict[str, Bodies] = {}  # each module's source parsed once for every split
        for ordered, late, per_agent in SPLITS.get(granularity, ()):
            work, pieces = split_oversize(graph, agents, writable, ordered=ordered, late=late, per_agent=per_agent,
                                          read=read)
            if pieces and pieces not in seen:
                seen.append(pieces)
                variant = ("split-ordered-late" if late else "split-ordered") if ordered else "split-simultaneous"
                variant += "-k" if per_agent else ""
                candidates += [replace(plan, variant=variant) for plan in _split_plans(groups, work, pieces, agents, fresh)]
        if granularity != "function":  # a forced split, when there is one: only its packings compete
            candidates = candidates[1:] or candidates
        if granularity == "file":  # the paper's partition, packed by work alone
            return candidates[0]
        cost, failure = cost or CostModel(), failure or FailureModel()
        small = graph.number_of_nodes() <= MERGE_LIMIT
        bound = None  # one sequential agent's risk is simulated only when something compares to it
        margin = sequential_margin(risk)
        if granularity == "function" and margin is not None and (small or len(candidates) > 1):
            bound = residual_risk(simulate_plan(graph, make_plan(graph, "sequential", 1), cost), failure,
                                  repair_rounds) + margin
        elif granularity == "function" and margin is None and risk != "any":
            bound = float(risk)
        estimate = _once_per_plan(partial(_estimate, graph, cost=cost, failure=failure, bound=bound,
                                          repair_rounds=repair_rounds, shapes=Shapes()))
        if small:
            thorough = graph.number_of_nodes() <= THOROUGH_LIMIT
            candidates = [repack(plan, agents, estimate, thorough=thorough) for plan in candidates]
        if len(candidates) == 1:  # nothing to choose between
            return candidates[0]
        # the repacking's objective decides between the candidates too: risk above the bound (the
        # least risky plan when none is within it), then expected makespan (splitting costs
        # messages, writing against stubs costs repairs); ties keep the earlier, simpler plan
        values = [estimate(plan) for plan in candidates]
        return candidates[min(range(len(candidates)), key=lambda i: (values[i][0] if values[i][0] > 1e-12 else 0.0,
                                                                     values[i][1]))]
    raise UsageError(f"--strategy: {strategy!r} is not one of {', '.join(STRATEGIES)}")


def repack(plan: Plan, agents: int, estimate: Callable[[Plan], tuple[float, ...]], *, thorough: bool = False,
           max_passes: int = 200) -> Plan:
    """Local search over the packing of groups onto agents (list scheduling's packing by work
    alone ignores when each group can start and what each cross-agent dependency risks): move a
    group to another of the ``agents`` while ``estimate`` (risk above the bound, then expected
    makespan) improves, taking the first improving move. ``thorough`` (small graphs) also moves
    single units of a group, on graphs of at most ``SWAP_LIMIT`` nodes also swaps two nodes, and
    takes the best move of each pass: first improvement stalls where one move pays off only after
    another (hl7: 381 s expected against 281 s). Deterministic
    (groups, units and agents in order; ties keep the earlier move)."""
    best, value = plan, estimate(plan)
    for _ in range(max_passes):
        improved = False
        if thorough:
            units = [tuple(g) for g in best.groups] + [(n,) for g in best.groups if len(g) > 1 for n in g]
            # every move (and, on small work graphs, every swap of two nodes) from the pass's plan:
            # keep the best
            swaps = _swaps(best) if len(best.worker or ()) <= SWAP_LIMIT else iter(())
            for trial in chain(_moves(best, agents, units), swaps):
                trial_value = estimate(trial)
                if _better(trial_value, value):
                    best, value, improved = trial, trial_value, True
        else:
            for group in best.groups:
                for trial in _moves(best, agents, [tuple(group)]):
                    trial_value = estimate(trial)
                    if _better(trial_value, value):
                        best, value, improved = trial, trial_value, True
                        break
        if not improved:
            break
    return best


def _moves(plan: Plan, agents: int, units: list[tuple[str, ...]]) -> Iterator[Plan]:
    """``plan`` with each of ``units`` (a group, or one node) moved to each other agent in turn."""
    owner = dict(plan.worker or {})  # a cocoder plan binds every node to an agent
    for nodes in units:
        for agent in range(agents):
            if any(owner[n] != agent for n in nodes):
                yield _with_owner(plan, {**owner, **{n: agent for n in nodes}})


def _swaps(plan: Plan) -> Iterator[Plan]:
    """``plan`` with two nodes of different agents exchanged (a pair of moves that pays off only
    together: zxcvbn's two short modules each behind the other agent's piece)."""
    owner = dict(plan.worker or {})
    nodes = sorted(owner)
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if owner[a] != owner[b]:
                yield _with_owner(plan, {**owner, a: owner[b], b: owner[a]})


def _better(a: tuple[float, ...], b: tuple[float, ...], tolerance: tuple[float, ...] = (1e-12, 1e-6)) -> bool:
    """``a`` beats ``b`` lexicographically (risk above the bound, then seconds), beyond rounding."""
    for x, y, eps in zip(a, b, tolerance, strict=True):
        if x < y - eps:
            return True
        if x > y + eps:
            return False
    return False


def _with_owner(plan: Plan, owner: Mapping[str, int]) -> Plan:
    """``plan`` with nodes on the given agents (renumbered 0.. in order of first use)."""
    renumber = {a: i for i, a in enumerate(sorted(set(owner.values())))}
    worker = {n: renumber[a] for n, a in owner.items()}
    return replace(plan, context={n: f"a{w}" for n, w in worker.items()}, worker=worker, workers=len(renumber))


def _split_plans(groups: list[set[str]], work: nx.DiGraph, pieces: Mapping[str, Piece], agents: int,
                 fresh: bool) -> list[Plan]:
    """The ways to pack a split onto agents: the first piece in its module's group (cohesion) or
    every piece alone (balance); and, with hub pieces, each hub apart from the pieces using it or
    on the agent of its heaviest user (one message fewer)."""
    apart = {n: p.module if p.definitions else p.unit for n, p in pieces.items()}  # a module's pieces, a cycle's members
    join: dict[str, str] = {}
    for hub, piece in pieces.items():
        users = sorted(n for n in work.successors(hub) if n in pieces and pieces[n].module == piece.module)
        if piece.hub and users:
            join[hub] = max(users, key=lambda n: work.edges[hub, n]["tokens"])
    plans = []
    for keep_first in (True, False):
        for joined in ({}, join) if join else ({},):
            options = _pieces_apart(groups, pieces, keep_first)
            for hub, user in joined.items():
                merged = next(g for g in options if hub in g) | next(g for g in options if user in g)
                options = [g for g in options if hub not in g and user not in g] + [merged]
            plans.append(_packed(work, options, agents, pieces, apart, fresh))
    return plans


def _packed(work: nx.DiGraph, groups: list[set[str]], agents: int, pieces: Mapping[str, Piece],
            apart: Mapping[str, str], fresh: bool = False) -> Plan:
    owner = assign_to_agents(work, groups, agents, apart)
    plan = Plan("cocoder", {}, {}, 0, True, [sorted(g) for g in groups], work if pieces else None, dict(pieces),
                fresh_context=fresh)
    return _with_owner(plan, {m: owner[m] for m in sorted(work.nodes)})


def simulate_plan(modules: nx.DiGraph, plan: Plan, cost: CostModel, shapes: Shapes | None = None) -> Schedule:
    """The plan on the virtual clock with the graph's own size estimates: each node writes its
    ``tokens``, each piece is shown its whole module's interface (``api_tokens``). ``shapes``: a
    planning call's work-graph shapes, kept across the plans it simulates."""
    work = plan.work_graph(modules)
    out = {n: work.nodes[n].get("tokens", 1) for n in work}
    spec = {n: modules.nodes[plan.module_of(n)].get("api_tokens", 0) for n in work}
    return simulate(work, plan, cost, out, spec, shapes(work) if shapes is not None else None)


def _estimate(modules: nx.DiGraph, plan: Plan, *, cost: CostModel | None, failure: FailureModel | None,
              bound: float | None = None, repair_rounds: int = 1, shapes: Shapes | None = None
              ) -> tuple[float, float]:
    """The plan's residual risk above ``bound`` (0 when within it, or without one), then its expected
    makespan (repair risk included), from the graph's own size estimates: compared in that order,
    a packing search first gets within the risk bound, then gets faster inside it."""
    cost, failure = cost or CostModel(), failure or FailureModel()
    schedule = simulate_plan(modules, plan, cost, shapes)
    excess = 0.0 if bound is None else max(0.0, residual_risk(schedule, failure, repair_rounds) - bound)
    return excess, expected_makespan(schedule, cost, failure)


def _once_per_plan(estimate: Callable[[Plan], tuple[float, float]]) -> Callable[[Plan], tuple[float, float]]:
    """``estimate``, simulating each distinct plan once in a planning call: repacking tries many
    plans again (a unit moved back or on to a third agent, a group's move that is one node's; the
    candidates' searches meet), about one try in six on the pinned repositories. A plan is what
    the simulation reads of it: its work graph and pieces (held, so their ids stay theirs), agents,
    contexts, and whether it waits for dependencies and starts fresh conversations."""
    seen: dict[tuple, tuple[float, float]] = {}
    held: dict[tuple[int, int], tuple[object, object]] = {}
    orders: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}  # the nodes' order in worker and context

    def once(plan: Plan) -> tuple[float, float]:
        worker = plan.worker or {}
        order = orders.setdefault((tuple(worker), tuple(plan.context)), len(orders))
        key = (id(plan.graph), id(plan.pieces), order, tuple(worker.values()), plan.worker is None,
               tuple(plan.context.values()), plan.workers, plan.respect_deps, plan.fresh_context)
        if key not in seen:
            held.setdefault(key[:2], (plan.graph, plan.pieces))
            seen[key] = estimate(plan)
        return seen[key]

    return once


def _pieces_apart(groups: list[set[str]], pieces: Mapping[str, Piece], keep_first: bool) -> list[set[str]]:
    """Each split module replaced by its pieces: with ``keep_first`` a unit's first piece stays in
    the module's group; every other piece is a group of its own (the packing gives it another agent)."""
    first: dict[str, str] = {}
    by_module: dict[str, list[str]] = {}
    for node, piece in sorted(pieces.items()):
        by_module.setdefault(piece.module, []).append(node)
        if piece.module == piece.unit:
            first.setdefault(piece.unit, node)
    out: list[set[str]] = []
    for group in groups:
        kept: set[str] = set()
        for m in sorted(group):
            for node in by_module.get(m, [m]):
                if node not in pieces or (keep_first and first[pieces[node].unit] == node):
                    kept.add(node)
                else:
                    out.append({node})
        out.append(kept)
    return [g for g in out if g]
