"""A CoCoder team run: plan, one runner episode per agent, a team manifest, sandboxed tests.

Every agent turn goes through :func:`agentbed.runner.run_episode` into that agent's own
chained log; the manifest ties the logs together with their digests, the plan, the timeline
and the metrics. The makespan is a discrete-event simulation on the virtual clock (each turn's
duration is what the environment charged for what the agent actually wrote); real wall-clock
time is recorded beside it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import networkx as nx

from agentbed.agents.base import Agent
from agentbed.env import TaskSpec
from agentbed.log import TrajectoryWriter
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode
from controllers.cocoder.partition import cut_edges
from controllers.cocoder.plan import Plan
from controllers.cocoder.schedule import Replay, Schedule, residual_risk
from environments.cocoder.agents import SimulatedCoder, langchain_coder
from environments.cocoder.context import dependency_fields
from environments.cocoder.defs import merge_definitions
from environments.cocoder.env import CoCoderEnv
from environments.cocoder.sandboxed import TestCache, TestReport
from environments.cocoder.tasks import RepoTask, assemble, load_task
from suites.cocoder.gate import TurnGate, run_gated
from suites.cocoder.planning import TeamConfig, plan_team, sibling_definitions
from suites.cocoder.repairs import no_target_reason, repair_request, repair_targets, test_facts
from suites.cocoder.summary import COST_MODEL_SENTENCE

# how a dependency reaches a turn when the turn is shown the text its writer wrote (so it waits for it)
SHOWN_AS_WRITTEN = ("message", "own", "history")
MANIFEST_SCHEMA = "agentbed.cocoder.team/2"  # /2: logs cover pieces (``units``), ``pieces`` maps them


def _turn_params(schedule: Schedule, plan: Plan, graph: nx.DiGraph, worker: int) -> list[dict[str, Any]]:
    """The environment's queue for one agent: its modules in planned order, with their context
    facts and how each dependency reaches the turn (the environment shows the texts)."""
    turns = []
    for t in sorted((t for t in schedule.turns if t.worker == worker), key=lambda t: t.start):
        turns.append({**_unit_fields(plan, t.module), "deps": dependency_fields(graph, t.module, t.sources,
                                                                                plan.module_of),
                      "missing_fraction": t.missing_fraction, "cross_deps": t.cross_deps,
                      "transferred_tokens": t.transferred_tokens, "fresh_context": plan.fresh_context})
    return turns


def _unit_fields(plan: Plan, node: str) -> dict[str, Any]:
    """What a turn writes: a whole module, or a piece (its definitions; the primary piece also
    writes the module's remainder, so ``omit`` lists what the other pieces write)."""
    piece = plan.pieces.get(node)
    if piece is None or not piece.definitions:
        return {"module": plan.module_of(node), "unit": node}
    return {"module": piece.module, "unit": node, "definitions": list(piece.definitions),
            "omit": list(piece.omit) if piece.primary else None, "siblings": sibling_definitions(plan, node)}


def compose(task: RepoTask, plan: Plan, written: dict[str, str]) -> dict[str, str]:
    """Module -> final source: a whole module as written, a split one merged from its pieces
    into the skeleton (deterministically: each piece contributes only its own definitions)."""
    out = {n: text for n, text in written.items() if n not in plan.pieces or not plan.pieces[n].definitions}
    split: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for node, piece in sorted(plan.pieces.items()):
        if piece.definitions and node in written:
            split.setdefault(piece.module, []).append((piece.definitions, written[node]))
    for module, parts in split.items():
        out[module] = merge_definitions(task.modules[module].skeleton, parts)
    return out


def _make_coder(config: TeamConfig, seed: int, worker: int) -> Agent:
    if config.coder.startswith("model:"):
        return langchain_coder(config.coder.removeprefix("model:"), seed)
    return SimulatedCoder(config.failure, salt=worker)


@dataclass
class TeamResult:
    record: EpisodeRecord
    manifest: dict[str, Any]


@dataclass
class _Ledger:
    """What the team's agents did across the write phase and the repair rounds."""

    written: dict[str, str] = field(default_factory=dict)
    context_tokens: int = 0
    output_tokens: int = 0
    members: list[dict[str, Any]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    provider_tokens: int = 0
    statuses: list[str] = field(default_factory=list)

    def add(self, episode: _Episode) -> None:
        self.written.update(episode.state["written"])
        self.context_tokens += sum(episode.state["context"].values())
        self.output_tokens += sum(episode.state["out"].values())
        self.failed += episode.failed
        self.provider_tokens += episode.record.tokens
        self.statuses.append(episode.record.status)
        self.members.append(episode.member)


@dataclass
class _Episode:
    """One agent's episode: its runner record, the environment's final state, its manifest entry."""

    record: EpisodeRecord
    state: dict[str, Any]
    failed: list[str]
    member: dict[str, Any]


@dataclass(frozen=True)
class _RunContext:
    task: str
    config: TeamConfig
    seed: int
    suite: str
    options: dict[str, Any]
    team_id: str
    out_dir: Path
    agent_factory: Callable[[int], Agent] | None
    run: dict[str, Any]  # the run the team's unit belongs to, in every member's header (agentbed.binding)


def file_stem(team_id: str, limit: int = 150) -> str:
    """A file name for a team's logs: the id itself, or (an id past a file system's 255 bytes,
    e.g. a repository path in the options) its start and a hash of the whole."""
    if len(team_id.encode()) <= limit:
        return team_id
    return team_id[:100] + "-" + hashlib.sha256(team_id.encode()).hexdigest()[:16]


def _run_agent(ctx: _RunContext, worker: int, turns: list[dict[str, Any]], round_: int,
               gate: TurnGate | None = None) -> _Episode:
    """One agent's episode through the runner into its own log (under ``gate`` in the write phase)."""
    config = ctx.config
    params = {"repo": ctx.task, "worker": worker, "strategy": config.strategy, "turns": turns,
              "cost": config.cost.to_dict()}
    env = CoCoderEnv(TaskSpec(f"{ctx.task}/{config.strategy}/w{worker}/r{round_}", params))
    env.gate = gate
    salt = worker + 1000 * round_  # a repair draws fresh randomness
    agent = ctx.agent_factory(worker) if ctx.agent_factory else _make_coder(config, ctx.seed, salt)
    spec = EpisodeSpec(ctx.suite, ctx.task, config.coder, ctx.seed, {**ctx.options, "worker": worker, "round": round_},
                       run=ctx.run)
    stem = file_stem(ctx.team_id)
    log_path = ctx.out_dir / (f"{stem}.w{worker}.jsonl" if round_ == 0 else f"{stem}.w{worker}.repair{round_}.jsonl")
    record = run_episode(env, agent, spec, budget=Budget(max_steps=2 * len(turns) + 4),
                         writer=TrajectoryWriter(log_path))
    state = env.state or {"written": {}, "durations": {}, "context": {}, "out": {}}
    member = {"worker": worker, "round": round_, "log": log_path.name, "digest": record.digest,
              "status": record.status, "modules": sorted({t["module"] for t in turns}),
              "units": [t.get("unit", t["module"]) for t in turns],
              "steps": record.steps, "busy_seconds": record.virtual_seconds}
    return _Episode(record, state, list(getattr(agent, "failed", [])), member)


def _write_phase(ctx: _RunContext, ledger: _Ledger, graph: nx.DiGraph, plan: Plan, schedule: Schedule
                 ) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Every agent's queue at once, each turn waiting for the texts it is shown (see
    suites.cocoder.gate): the timeline on the virtual clock and the units by start."""
    queues = {worker: _turn_params(schedule, plan, graph, worker) for worker in range(plan.workers)}
    needs = {t["unit"]: [d["unit"] for d in t["deps"] if d["how"] in SHOWN_AS_WRITTEN]
             for turns in queues.values() for t in turns}
    gate = TurnGate(Replay(schedule, graph, plan, ctx.config.cost), needs)
    jobs = {worker: partial(_run_agent, ctx, worker, turns, 0, gate) for worker, turns in queues.items() if turns}
    for _, episode in sorted(run_gated(gate, jobs).items()):  # worker order: the manifest is deterministic
        ledger.add(episode)
    return gate.replay.timeline, gate.order


def run_team(task_name: str, config: TeamConfig, seed: int, out_dir: Path, *, suite: str = "cocoder",
             tests: TestCache | None = None, agent_factory: Callable[[int], Agent] | None = None,
             episode_id: str | None = None, run: dict[str, Any] | None = None) -> TeamResult:
    """Run one team on one task with one seed; logs and the manifest go to ``out_dir``.

    The write phase follows the plan; then, for up to ``config.repair_rounds`` rounds, the leader
    runs the tests and sends each agent a repair request for its modules where failing tests
    crashed (after the test run and one message latency); each repair is a runner episode too.
    ``run``: the binding of the run this unit belongs to (:mod:`agentbed.binding`), written into
    every member log's header as a single agent's log carries it, so a member log cannot be moved
    into another run.
    """
    wall0 = time.perf_counter()
    tests = tests or TestCache()
    task = load_task(task_name)
    graph, plan, schedule = plan_team(task, config, seed)
    options = {"strategy": config.strategy, "agents": config.agents, "config": config.digest()}
    team_spec = EpisodeSpec(suite, task_name, config.coder, seed, options)
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx = _RunContext(task_name, config, seed, suite, options, episode_id or team_spec.episode_id, out_dir,
                      agent_factory, run or {})
    ledger = _Ledger()
    # an unwritten unit (agent error, budget) takes no time and stays a skeleton
    timeline, turn_order = _write_phase(ctx, ledger, graph, plan, schedule)
    makespan = max((f for _, f in timeline.values()), default=0.0)
    final = compose(task, plan, ledger.written)
    report = _test(task, final, tests)
    first_pass_rate, write_makespan = report.pass_rate(task.reference_tests), makespan
    messages, repairs, rounds = schedule.messages, [], []
    turn_of = {t.module: t for t in schedule.turns}
    unrepaired = ""  # why failing tests got no repair request, when they did not
    for round_ in range(1, config.repair_rounds + 1):
        targets = repair_targets(task, plan, graph, report, final)
        if report.passed >= task.reference_tests:
            break
        if not targets:
            unrepaired = no_target_reason(report)
            break
        start = makespan + config.cost.test_seconds + config.cost.latency  # leader tests, then messages
        ends = [start]
        for worker in sorted({turn_of[m].worker for m in targets}):
            mods = [m for m in targets if turn_of[m].worker == worker]
            request = repair_request(report)
            # shown: the skeleton, what the agent wrote before and the request (no dependencies)
            turns = [{**_unit_fields(plan, m), "repair": request, "previous": ledger.written.get(m, ""),
                      "fresh_context": True, "missing_fraction": turn_of[m].missing_fraction,
                      "cross_deps": turn_of[m].cross_deps, "transferred_tokens": 0} for m in mods]
            episode = _run_agent(ctx, worker, turns, round_)
            ledger.add(episode)
            ends.append(start + sum(episode.state["durations"].values()))
            messages += 1
        makespan = max(ends)
        repairs += targets
        rounds.append({"round": round_, "start": start, "end": makespan, "modules": targets,
                       "tests": test_facts(report)})
        final = compose(task, plan, ledger.written)
        report = _test(task, final, tests)
    pass_rate = report.pass_rate(task.reference_tests)
    metrics = {
        "pass_rate": pass_rate, "pass_rate_before_repair": first_pass_rate, "passed": report.passed,
        "reference_tests": task.reference_tests, "makespan": makespan, "write_makespan": write_makespan,
        "planned_makespan": schedule.makespan, "critical_path": schedule.critical_path,
        # one sequential agent's planned makespan on the same task and cost model: what the console's speedup is over
        "sequential_planned_makespan": schedule.makespan if config.strategy == "sequential" else
        plan_team(task, dataclasses.replace(config, strategy="sequential"), seed)[2].makespan,
        # the planner's estimate that some unit is still broken at the end, beside what happened
        "planned_residual_risk": residual_risk(schedule, config.failure, config.repair_rounds),
        "plan": plan.variant or config.strategy,
        "context_tokens": ledger.context_tokens, "output_tokens": ledger.output_tokens,
        "tokens": ledger.context_tokens + ledger.output_tokens,
        "cost_usd": config.cost.dollars(ledger.context_tokens, ledger.output_tokens, messages),
        "messages": messages, "cut_edges": len(cut_edges(graph, plan.context)) if plan.respect_deps else 0,
        "transferred_tokens": schedule.transferred_tokens, "repairs": len(repairs),
        "agents_used": len({m["worker"] for m in ledger.members}), "groups": len(plan.groups),
        "modules": len({plan.module_of(n) for n in graph}), "pieces": graph.number_of_nodes(),
        "split_modules": len({p.module for p in plan.pieces.values() if p.definitions}), "failed_functions": len(ledger.failed),
        "untested_functions": sum(map(len, task.untested.values())),  # left as written: no test reaches them
        "provider_tokens": ledger.provider_tokens, "test_status": report.status, "sandbox": report.backend,
        "tests_finished": report.finished, "tests_cut_off": [test for test, _ in report.running],
        "unrepaired": unrepaired,
        "wall_seconds": time.perf_counter() - wall0}
    manifest = {"schema": MANIFEST_SCHEMA, "episode_id": ctx.team_id, "suite": suite, "task": task_name,
                "seed": seed, "config": config.to_dict(), "groups": plan.groups, "agents": ledger.members,
                "plan": plan.variant or config.strategy,
                "pieces": {n: {"module": p.module, "definitions": list(p.definitions), "primary": p.primary,
                               "hub": p.hub, "late": p.late} for n, p in sorted(plan.pieces.items())},
                "timeline": {m: [round(s, 6), round(f, 6)] for m, (s, f) in sorted(timeline.items())},
                "turn_order": turn_order,
                "repair_rounds": rounds, "failed": sorted(ledger.failed), "metrics": metrics, "notes": task.notes,
                "cost_model": COST_MODEL_SENTENCE}
    manifest_path = out_dir / f"{file_stem(ctx.team_id)}.team.json"
    text = json.dumps(manifest, indent=1, sort_keys=True, default=str)
    manifest_path.write_text(text, encoding="utf-8")
    statuses = ledger.statuses
    status = "ok" if all(s == "ok" for s in statuses) else "error" if "error" in statuses else "budget"
    record = EpisodeRecord(
        episode_id=ctx.team_id, suite=suite, task=task_name, agent=team_spec.agent, seed=seed,
        status=status, success=pass_rate >= 1.0, total_reward=pass_rate,
        steps=sum(m["steps"] for m in ledger.members), virtual_seconds=makespan, tokens=ledger.provider_tokens,
        metrics=dict(metrics), labels=[config.strategy], options=options, log=str(manifest_path),
        digest=hashlib.sha256(text.encode("utf-8")).hexdigest(), wall_seconds=metrics["wall_seconds"])
    return TeamResult(record, manifest)


def _test(task: RepoTask, written: dict[str, str], tests: TestCache) -> TestReport:
    """The final code state's tests: run in the sandbox, unless its bytes are the reference's,
    whose tests ran at preparation (the same pytest command in the same backend)."""
    if task.reference_report is not None:
        tests.know(task.reference_digest, task.tests, task.reference_report)
    with tempfile.TemporaryDirectory(prefix="cocoder-final-") as tmp:
        return tests.run(assemble(task, written, Path(tmp) / "tree"), task.tests, timeout=task.test_timeout)


def verify_manifest(path: Path) -> list[str]:
    """Problems with a team manifest: a missing agent log or one whose chain or digest is wrong;
    a unit of the timeline no write-phase log covers (or more than one does); pieces of a module
    that claim the same definition."""
    from agentbed.log import verify_log

    manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    problems = []
    for member in manifest["agents"]:
        log = Path(path).parent / member["log"]
        if not log.exists():
            problems.append(f"{log}: missing")
            continue
        result = verify_log(log, member["digest"])
        if not result.ok:
            problems.append(result.message(str(log)))
    if manifest.get("schema") != MANIFEST_SCHEMA:
        return problems
    covered: dict[str, int] = {}
    for member in manifest["agents"]:
        if member["round"] == 0:
            for unit in member["units"]:
                covered[unit] = covered.get(unit, 0) + 1
    for unit in manifest["timeline"]:
        if covered.get(unit, 0) != 1:
            problems.append(f"{path}: unit {unit} is written by {covered.get(unit, 0)} logs, not 1")
    claimed: dict[tuple[str, str], str] = {}
    for node, piece in manifest.get("pieces", {}).items():
        for name in piece["definitions"]:
            other = claimed.setdefault((piece["module"], name), node)
            if other != node:
                problems.append(f"{path}: {piece['module']}:{name} is claimed by pieces {other} and {node}")
    return problems
