"""Dependency-aware list scheduling of a plan, as a discrete-event simulation (CoCoder sec. 3.3).

A shared task list over the condensed dependency graph (an import cycle is one unit, written
by one agent, its members against each other's stub interfaces). A unit is ready when every
dependency is done and its transfer (``latency + c_uv / beta`` across contexts) has arrived;
an idle agent claims the ready unit of its own group with the highest upward rank (HEFT,
Topcuoglu et al. 2002). Start S_v = max(agent free, max_u F_u + delta_uv), F_v = S_v + t_v,
makespan M = max F_v >= max(critical path, busiest agent's load). Where any idle agent may claim
any ready unit (per-file's pool), list scheduling also guarantees M <= sum(t) / k + critical path;
groups bound to agents do not (an agent may wait for another's unit while the others are idle).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

import networkx as nx

from controllers.cocoder.plan import Plan
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.depgraph import condense


@dataclass
class Turn:
    """One agent turn: write ``module``; the facts the simulated coder's failure model needs."""

    module: str
    worker: int
    context: str
    start: float
    finish: float
    context_tokens: int
    out_tokens: int
    missing_fraction: float
    cross_deps: int
    transferred_tokens: int
    history_tokens: int  # part of context_tokens that is the agent's own earlier work
    # dependency -> how the turn is given it: "history" (the agent wrote it earlier in this
    # conversation), "own" (the agent wrote it in an earlier conversation: shown again),
    # "message" (finished by another agent: its text is transferred), "interface" (not written
    # yet: its interface), "stub" (a sibling piece written at the same time: its signatures are
    # in the module's skeleton)
    sources: dict[str, str] = field(default_factory=dict)
    # a repair of this turn is a fresh conversation shown the skeleton, the turn's own output and
    # the leader's request (no dependencies; a request's few tokens are not counted): 0 = unknown
    repair_context_tokens: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def p_fail(self, failure: FailureModel) -> float:
        """The failure model's probability that this turn's code is broken."""
        return failure.p_fail(self.missing_fraction, self.cross_deps, self.context_tokens)

    def p_fail_repair(self, failure: FailureModel) -> float:
        """The same for a repair of it: the same deficits, the repair's own (shorter) context."""
        return failure.p_fail(self.missing_fraction, self.cross_deps,
                              self.repair_context_tokens or self.context_tokens)


@dataclass
class Schedule:
    turns: list[Turn]
    makespan: float
    critical_path: float
    workers: int
    messages: int = 0
    transferred_tokens: int = 0
    order: dict[int, list[str]] = field(default_factory=dict)


def upward_rank(successors: Mapping[object, Iterable[object]], node_time: Mapping[object, float],
                edge_delay: Mapping[tuple[object, object], float], order: list[object]) -> dict[object, float]:
    """HEFT's upward rank: a unit's time plus the longest delayed path to an exit, over the DAG's
    topological ``order`` (``edge_delay``: an edge's delay by (unit, successor), absent for none)."""
    rank: dict[object, float] = {}
    delay = edge_delay.get
    for node in reversed(order):
        tail = max((delay((node, s), 0.0) + rank[s] for s in successors[node]), default=0.0)
        rank[node] = node_time[node] + tail
    return rank


@dataclass(frozen=True)
class Shape:
    """What a simulation takes from its work graph alone, whatever the plan: the condensed DAG of
    units, each module's unit, each unit's members, each module's ordering dependencies and the
    sibling pieces it is written against, the DAG's topological order. A planner that simulates
    many plans of one graph computes it once (:class:`Shapes`)."""

    dag: nx.DiGraph
    unit_of: dict[str, int]
    members: dict[object, list[str]]
    deps: dict[str, list[str]]
    interfaces: dict[str, list[str]]
    order: list[object]
    # the same, read once for the simulation's inner loops (no graph views there): each module's
    # dependencies and stub siblings with their edges' attributes, each unit's DAG neighbours
    dep_edges: dict[str, list[tuple[str, dict]]]
    interface_edges: dict[str, list[tuple[str, dict]]]
    successors: dict[object, list[object]]
    predecessors: dict[object, list[object]]

    @classmethod
    def of(cls, graph: nx.DiGraph) -> Shape:
        dag, unit_of = condense(graph)
        pred = graph.pred  # pred[m]: each predecessor of m and the edge's attributes, in predecessors(m)'s order
        dep_edges = {m: [(u, d) for u, d in pred[m].items() if d.get("ordering", True)] for m in graph.nodes}
        # pieces of one split unit, written at once against the shared skeleton's stubs
        interface_edges = {m: [(u, d) for u, d in pred[m].items() if d.get("interface", False)] for m in graph.nodes}
        return cls(dag, unit_of, {c: dag.nodes[c]["members"] for c in dag},
                   {m: [u for u, _ in e] for m, e in dep_edges.items()},
                   {m: [u for u, _ in e] for m, e in interface_edges.items()},
                   list(nx.topological_sort(dag)), dep_edges, interface_edges,
                   {c: list(dag.successors(c)) for c in dag}, {c: list(dag.predecessors(c)) for c in dag})


class Shapes:
    """Each work graph's :class:`Shape`, computed on first use: for one planning call, while its
    graphs do not change (each graph is held, so its id is not reused)."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[nx.DiGraph, Shape]] = {}

    def __call__(self, graph: nx.DiGraph) -> Shape:
        if id(graph) not in self._by_id:
            self._by_id[id(graph)] = (graph, Shape.of(graph))
        return self._by_id[id(graph)][1]


class _Simulation:
    def __init__(self, graph: nx.DiGraph, plan: Plan, cost: CostModel, out_tokens: Mapping[str, int],
                 spec_tokens: Mapping[str, int], shape: Shape | None = None) -> None:
        self.graph, self.plan, self.cost = graph, plan, cost
        self.out, self.spec = out_tokens, spec_tokens
        self.shape = shape or Shape.of(graph)
        self.dag, self.unit_of, self.members = self.shape.dag, self.shape.unit_of, self.shape.members
        self.deps, self.interfaces = self.shape.deps, self.shape.interfaces
        self.history: dict[str, int] = {}
        self.written: dict[str, set[str]] = {}
        self.finish: dict[str, float] = {}
        self._unit_delays: dict[tuple[object, object], float] | None = None

    def unit_delays(self) -> dict[tuple[object, object], float]:
        """The longest transfer on any dependency from unit a to unit b, by (a, b): only pairs of
        units with a dependency between them (any other pair: no delay)."""
        if self._unit_delays is None:
            delays: dict[tuple[object, object], float] = {}
            self._unit_delays = delays
            unit_of, context, respect = self.unit_of, self.plan.context, self.plan.respect_deps
            transfer_delay = self.cost.transfer_delay
            for v, edges in self.shape.dep_edges.items():
                for u, data in edges:
                    key = (unit_of[u], unit_of[v])
                    if key[0] != key[1]:  # no transfer within one conversation, or when nothing waits
                        delay = 0.0 if not respect or context[u] == context[v] else transfer_delay(data["tokens"])
                        longest = delays.get(key, 0.0)
                        delays[key] = delay if delay > longest else longest  # max(longest, delay)
        return self._unit_delays

    def unit_delay(self, a: object, b: object) -> float:
        """The longest transfer on any dependency from unit a to unit b."""
        return self.unit_delays().get((a, b), 0.0)

    def interface_delay(self, c: object) -> float:
        """When a unit's interface messages arrive: sent at the start (the skeleton holds every
        signature), one per reference to a piece another agent writes."""
        context, edges = self.plan.context, self.shape.interface_edges
        return max((self.cost.transfer_delay(data["tokens"]) for m in self.members[c]
                    for u, data in edges[m] if context[u] != context[m]), default=0.0)

    def unit_estimate(self, c: object) -> float:
        return sum(self.cost.task_time(self.out[m], self.cost.prompt_tokens + self.spec[m]) for m in self.members[c])

    def write(self, module: str, worker: int, start: float) -> Turn:
        plan, cost = self.plan, self.cost
        ctx = plan.context[module]
        written = self.written.setdefault(ctx, set())
        fresh = plan.fresh_context
        history = 0 if fresh else self.history.get(ctx, 0)
        own = transferred = interfaces = cross = missing = 0
        sources: dict[str, str] = {}
        respect, finish = plan.respect_deps, self.finish
        deps = self.shape.dep_edges[module]
        for u, data in deps:
            tokens = data["tokens"]
            if u in written and fresh:
                own += tokens  # the agent's own earlier unit, shown again in the new conversation
                sources[u] = "own"
            elif u in written:
                sources[u] = "history"  # already in this conversation
            elif respect and u in finish:
                transferred += tokens
                cross += 1
                sources[u] = "message"
            else:
                interfaces += tokens
                missing += 1
                sources[u] = "interface"
        siblings = self.interfaces[module]
        for u in siblings:
            if u in written and not fresh:
                sources[u] = "history"
                continue
            missing += 1  # written against the sibling's stub, which the skeleton already shows
            cross += int(plan.context[u] != ctx)  # and a message to the agent who writes it
            sources[u] = "stub"
        spec, out = self.spec[module], self.out[module]
        shown = spec + own + transferred + interfaces
        context_tokens = cost.prompt_tokens + shown + history
        duration = cost.task_time(out, context_tokens)
        self.history[ctx] = history + shown + out  # the conversation keeps what it was shown
        written.add(module)
        n_deps = len(deps) + len(siblings)
        return Turn(module, worker, ctx, start, start + duration, int(context_tokens), int(out),
                    missing / n_deps if n_deps else 0.0, cross, int(transferred), int(history), sources,
                    int(cost.prompt_tokens + spec + out))

    def run(self) -> Schedule:
        plan, dag, members, write = self.plan, self.dag, self.members, self.write
        successors, predecessors = self.shape.successors, self.shape.predecessors
        delay = self.unit_delays().get
        rank = upward_rank(successors, {c: self.unit_estimate(c) for c in dag}, self.unit_delays(), self.shape.order)
        bound = {c: (plan.worker[members[c][0]] if plan.worker is not None else None) for c in dag}
        waiting = {c: (len(predecessors[c]) if plan.respect_deps else 0) for c in dag}
        pending: list[tuple[float, str, object]] = [(self.interface_delay(c), members[c][0], c)
                                                    for c in dag if waiting[c] == 0]
        heapq.heapify(pending)  # dependencies done, transfer still in flight: (arrival, name, unit)
        ready: dict[int | None, list[tuple[float, str, object]]] = {}  # per bound worker: (-rank, name, unit)
        idle = set(range(plan.workers))
        running: list[tuple[float, int, int, object]] = []  # (finish, tie, worker, unit)
        turns: list[Turn] = []
        order: dict[int, list[str]] = {w: [] for w in range(plan.workers)}
        finish = self.finish
        heappush, heappop = heapq.heappush, heapq.heappop
        now, tie, done, units = 0.0, 0, 0, len(dag)
        while done < units:
            while pending and pending[0][0] <= now + 1e-9:
                _, name, unit = heappop(pending)
                heappush(ready.setdefault(bound[unit], []), (-rank[unit], name, unit))
            for w in sorted(idle):
                own, pool = ready.get(w), ready.get(None)
                source = own if own and (not pool or own[0] < pool[0]) else pool
                if not source:
                    continue
                _, _, unit = heappop(source)
                idle.discard(w)
                t = now
                for m in members[unit]:
                    turn = write(m, w, t)
                    turns.append(turn)
                    order[w].append(m)
                    t = turn.finish
                for m in members[unit]:
                    finish[m] = t
                tie += 1
                heappush(running, (t, tie, w, unit))
            if not pending and not running:
                raise RuntimeError("scheduler stalled: no running unit and nothing becomes ready")
            # the next event: max(now, min(the next arrival, the next finish))
            nxt = running[0][0] if not pending else pending[0][0] if not running else min(pending[0][0], running[0][0])
            if nxt > now:
                now = nxt
            while running and running[0][0] <= now + 1e-9:
                _, _, w, unit = heappop(running)
                idle.add(w)
                done += 1
                if plan.respect_deps:
                    for s in successors[unit]:
                        waiting[s] -= 1
                        if waiting[s] == 0:
                            arrival = max([finish[members[p][0]] + delay((p, s), 0.0)
                                           for p in predecessors[s]] + [self.interface_delay(s)])
                            heappush(pending, (arrival, members[s][0], s))
        makespan = max((t.finish for t in turns), default=0.0)
        # the critical path (node times and edge delays on the longest path, a lower bound on the
        # makespan) is the largest upward rank
        cp = max(rank.values(), default=0.0)
        return Schedule(turns, makespan, cp, plan.workers, sum(t.cross_deps for t in turns),
                        sum(t.transferred_tokens for t in turns), order)


def simulate(graph: nx.DiGraph, plan: Plan, cost: CostModel, out_tokens: Mapping[str, int],
             spec_tokens: Mapping[str, int], shape: Shape | None = None) -> Schedule:
    """Run the plan on the virtual clock; deterministic (ties break by rank, then unit id).
    ``shape``: the graph's :class:`Shape`, when the caller keeps it."""
    return _Simulation(graph, plan, cost, out_tokens, spec_tokens, shape).run()


class Replay:
    """The plan's per-agent order run with actual durations, as discrete events: a turn starts
    when its agent is free and every unit it depends on has finished and its transfer arrived.
    Durations are known only once a turn has run, so a team run :meth:`record` s each turn as it
    finishes (:meth:`start_of` says whether it can be placed yet); :meth:`next` picks the turn
    that can start earliest (ties by worker), for replaying known durations in one pass."""

    def __init__(self, schedule: Schedule, graph: nx.DiGraph, plan: Plan, cost: CostModel) -> None:
        self.sim, self.plan = _Simulation(graph, plan, cost, {}, {}), plan
        self.queues: dict[int, list[Turn]] = {}
        for turn in sorted(schedule.turns, key=lambda t: (t.start, t.worker)):
            self.queues.setdefault(turn.worker, []).append(turn)
        self.left = {c: len(m) for c, m in self.sim.members.items()}  # members of a unit not yet run
        self.unit_end: dict[object, float] = {}
        self.free: dict[int, float] = {}
        self.timeline: dict[str, tuple[float, float]] = {}

    def start_of(self, turn: Turn) -> float | None:
        """When ``turn`` starts, or None while a unit it waits for has not finished."""
        unit = self.sim.unit_of[turn.module]
        start = self.free.get(turn.worker, 0.0)
        if not self.plan.respect_deps or self.left[unit] < len(self.sim.members[unit]):
            return start  # a unit waits for its dependencies once (its first member)
        start = max(start, self.sim.interface_delay(unit))
        for p in self.sim.dag.predecessors(unit):
            if self.left[p]:
                return None
            start = max(start, self.unit_end[p] + self.sim.unit_delay(p, unit))
        return start

    def next(self) -> Turn | None:
        """The turn to run now (None when every turn has run)."""
        best: tuple[float, Turn] | None = None
        for worker in sorted(self.queues):
            if self.queues[worker]:
                start = self.start_of(self.queues[worker][0])
                if start is not None and (best is None or start < best[0]):
                    best = (start, self.queues[worker][0])
        if best is None and any(self.queues.values()):
            raise RuntimeError("replay stalled: the plan's per-agent order is not executable")
        return best[1] if best else None

    def record(self, turn: Turn, duration: float) -> tuple[float, float]:
        start = self.start_of(turn)
        if start is None or self.queues[turn.worker][0] is not turn:
            raise RuntimeError(f"{turn.module} cannot start yet")
        self.queues[turn.worker].pop(0)
        unit = self.sim.unit_of[turn.module]
        self.left[unit] -= 1
        self.unit_end[unit] = self.free[turn.worker] = start + duration
        self.timeline[turn.module] = (start, start + duration)
        return self.timeline[turn.module]


def replay_timeline(schedule: Schedule, graph: nx.DiGraph, plan: Plan, cost: CostModel,
                    durations: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    """Start and finish of every turn when the planned per-agent order is kept but each turn
    takes its actual duration (what the agents really wrote): the makespan of a team run."""
    replay = Replay(schedule, graph, plan, cost)
    while (turn := replay.next()) is not None:
        replay.record(turn, durations[turn.module])
    return replay.timeline


def residual_risk(schedule: Schedule, failure: FailureModel, repair_rounds: int = 1) -> float:
    """The chance, by the failure model alone, that some unit is still broken after the write
    and ``repair_rounds`` repairs: 1 - prod(1 - p_v * r_v ** repair_rounds), where r_v is the
    repair's failure probability (the turn's deficits, the repair's own context: a unit written
    late in a long conversation fails often, its repair in a fresh one seldom)."""
    ok = 1.0
    for t in schedule.turns:
        ok *= 1.0 - t.p_fail(failure) * t.p_fail_repair(failure) ** repair_rounds
    return 1.0 - ok


def expected_makespan(schedule: Schedule, cost: CostModel, failure: FailureModel) -> float:
    """A plan's makespan plus its expected repair, from the failure model alone (a planning
    estimate: no run's outcome is looked at). With p_v = p_fail of each turn, a repair round
    (the leader's tests and a message) comes with probability 1 - prod(1 - p_v), and the
    rewrites add sum(p_v * t_v)."""
    ok, rewrite = 1.0, 0.0
    for t in schedule.turns:
        p = t.p_fail(failure)
        ok *= 1.0 - p
        rewrite += p * (t.finish - t.start)
    return schedule.makespan + (1.0 - ok) * (cost.test_seconds + cost.latency) + rewrite
