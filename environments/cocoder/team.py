"""A CoCoder team run: plan, one runner episode per agent, a team manifest, sandboxed tests.

Every agent turn goes through :func:`agentbed.runner.run_episode` into that agent's own
chained log; the manifest ties the logs together with their digests, the plan, the timeline
and the metrics. The makespan is a discrete-event simulation on the virtual clock (each turn's
duration is what the environment charged for what the agent actually wrote); real wall-clock
time is recorded beside it.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from agentbed.agents.base import Agent
from agentbed.env import TaskSpec
from agentbed.log import TrajectoryWriter
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec, run_episode
from controllers.cocoder.costmodel import CostModel, FailureModel
from controllers.cocoder.partition import cut_edges
from controllers.cocoder.schedule import Schedule, replay_timeline, simulate
from controllers.cocoder.strategies import Plan, make_plan
from environments.cocoder.agents import SimulatedCoder, langchain_coder
from environments.cocoder.env import CoCoderEnv
from environments.cocoder.sandboxed import TestCache
from environments.cocoder.tasks import RepoTask, assemble, load_task

MANIFEST_SCHEMA = "agentbed.cocoder.team/1"


@dataclass(frozen=True)
class TeamConfig:
    strategy: str = "cocoder"
    agents: int = 3
    method: str = "louvain"
    theta: float = 0.4
    cost: CostModel = field(default_factory=CostModel)
    failure: FailureModel = field(default_factory=FailureModel)
    coder: str = "simulated"  # or "model:provider:model"

    def digest(self) -> str:
        """Short hash of the whole configuration: team runs that differ in any constant never share ids."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "agents": self.agents, "method": self.method, "theta": self.theta,
                "cost": self.cost.to_dict(), "failure": self.failure.to_dict(), "coder": self.coder}


def work_graph(task: RepoTask) -> nx.DiGraph:
    """Modules with something to write; modules with nothing blanked (data, re-exports) are given."""
    todo = [m for m, mt in task.modules.items() if mt.blanked]
    return task.graph.subgraph(todo).copy()


def plan_team(task: RepoTask, config: TeamConfig, seed: int) -> tuple[nx.DiGraph, Plan, Schedule]:
    graph = work_graph(task)
    plan = make_plan(graph, config.strategy, config.agents, method=config.method, seed=seed, theta=config.theta)
    schedule = simulate(graph, plan, config.cost, task.out_tokens(), task.spec_tokens())
    return graph, plan, schedule


def _turn_params(schedule: Schedule, plan: Plan, worker: int) -> list[dict[str, Any]]:
    """The environment's queue for one agent: its modules in planned order, with their context facts."""
    turns = []
    for t in sorted((t for t in schedule.turns if t.worker == worker), key=lambda t: t.start):
        turns.append({"module": t.module, "base_context_tokens": t.context_tokens - t.history_tokens,
                      "missing_fraction": t.missing_fraction, "cross_deps": t.cross_deps,
                      "transferred_tokens": t.transferred_tokens, "fresh_context": plan.strategy in
                      ("per-file", "file-parallel")})
    return turns


def single_agent_turns(task: RepoTask, cost: CostModel) -> list[dict[str, Any]]:
    """The whole repository for one agent (the environment's default task)."""
    _, plan, schedule = plan_team(task, TeamConfig(strategy="sequential", agents=1, cost=cost), 0)
    return _turn_params(schedule, plan, 0)


def _make_coder(config: TeamConfig, seed: int, worker: int) -> Agent:
    if config.coder.startswith("model:"):
        return langchain_coder(config.coder.removeprefix("model:"), seed)
    return SimulatedCoder(config.failure, salt=worker)


@dataclass
class TeamResult:
    record: EpisodeRecord
    manifest: dict[str, Any]


def run_team(task_name: str, config: TeamConfig, seed: int, out_dir: Path, *, suite: str = "cocoder",
             tests: TestCache | None = None, agent_factory: Callable[[int], Agent] | None = None,
             episode_id: str | None = None) -> TeamResult:
    """Run one team on one task with one seed; logs and the manifest go to ``out_dir``."""
    wall0 = time.perf_counter()
    tests = tests or TestCache()
    task = load_task(task_name)
    graph, plan, schedule = plan_team(task, config, seed)
    options = {"strategy": config.strategy, "agents": config.agents, "config": config.digest()}
    team_spec = EpisodeSpec(suite, task_name, config.coder, seed, options)
    team_id = episode_id or team_spec.episode_id
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    durations: dict[str, float] = {}
    contexts: dict[str, int] = {}
    members, failed, provider_tokens, statuses = [], [], 0, []
    for worker in range(plan.workers):
        turns = _turn_params(schedule, plan, worker)
        if not turns:
            continue
        params = {"repo": task_name, "worker": worker, "strategy": config.strategy, "turns": turns,
                  "cost": config.cost.to_dict()}
        env = CoCoderEnv(TaskSpec(f"{task_name}/{config.strategy}/w{worker}", params))
        agent = agent_factory(worker) if agent_factory else _make_coder(config, seed, worker)
        spec = EpisodeSpec(suite, task_name, config.coder, seed, {**options, "worker": worker})
        log_path = out_dir / f"{team_id}.w{worker}.jsonl"
        record = run_episode(env, agent, spec, budget=Budget(max_steps=2 * len(turns) + 4),
                             writer=TrajectoryWriter(log_path))
        state = env.state or {"written": {}, "durations": {}, "context": {}}
        written.update(state["written"])
        durations.update(state["durations"])
        contexts.update(state["context"])
        failed += getattr(agent, "failed", [])
        provider_tokens += record.tokens
        statuses.append(record.status)
        members.append({"worker": worker, "log": log_path.name, "digest": record.digest, "status": record.status,
                        "modules": [t["module"] for t in turns], "steps": record.steps,
                        "busy_seconds": record.virtual_seconds})
    for m in graph.nodes:  # an unwritten module (agent error, budget) took no time and stays a skeleton
        durations.setdefault(m, 0.0)
    timeline = replay_timeline(schedule, graph, plan, config.cost, durations)
    makespan = max((f for _, f in timeline.values()), default=0.0)
    with tempfile.TemporaryDirectory(prefix="cocoder-final-") as tmp:
        report = tests.run(assemble(task, written, Path(tmp) / "tree"), task.tests)
    context_tokens = sum(contexts.values())
    out_tokens = sum(len(s) // 4 for s in written.values())
    messages = schedule.messages
    pass_rate = report.pass_rate(task.reference_tests)
    metrics = {
        "pass_rate": pass_rate, "passed": report.passed, "reference_tests": task.reference_tests,
        "makespan": makespan, "planned_makespan": schedule.makespan, "critical_path": schedule.critical_path,
        "context_tokens": context_tokens, "output_tokens": out_tokens, "tokens": context_tokens + out_tokens,
        "cost_usd": config.cost.dollars(context_tokens, out_tokens, messages), "messages": messages,
        "cut_edges": len(cut_edges(graph, plan.context)) if plan.respect_deps else 0,
        "transferred_tokens": schedule.transferred_tokens, "agents_used": len(members), "groups": len(plan.groups),
        "modules": graph.number_of_nodes(), "failed_functions": len(failed), "provider_tokens": provider_tokens,
        "test_status": report.status, "sandbox": report.backend, "wall_seconds": time.perf_counter() - wall0}
    manifest = {"schema": MANIFEST_SCHEMA, "episode_id": team_id, "suite": suite, "task": task_name,
                "seed": seed, "config": config.to_dict(), "groups": plan.groups, "agents": members,
                "timeline": {m: [round(s, 6), round(f, 6)] for m, (s, f) in sorted(timeline.items())},
                "failed": sorted(failed), "metrics": metrics, "notes": task.notes}
    manifest_path = out_dir / f"{team_id}.team.json"
    text = json.dumps(manifest, indent=1, sort_keys=True, default=str)
    manifest_path.write_text(text, encoding="utf-8")
    status = "ok" if all(s == "ok" for s in statuses) else "error" if "error" in statuses else "budget"
    record = EpisodeRecord(
        episode_id=team_id, suite=suite, task=task_name, agent=team_spec.agent, seed=seed,
        status=status, success=pass_rate >= 1.0, total_reward=pass_rate, steps=sum(m["steps"] for m in members),
        virtual_seconds=makespan, tokens=provider_tokens, metrics={k: v for k, v in metrics.items()},
        labels=[config.strategy], options=options, log=str(manifest_path),
        digest=hashlib.sha256(text.encode("utf-8")).hexdigest(), wall_seconds=metrics["wall_seconds"])
    return TeamResult(record, manifest)


def verify_manifest(path: Path) -> list[str]:
    """Problems with a team manifest: a missing agent log or one whose chain or digest is wrong."""
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
    return problems
