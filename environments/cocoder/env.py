"""One coding agent's episode in a CoCoder team run: write the modules its queue hands it.

The scheduler (controllers.cocoder) fixes the queue; each step the agent sees one module's
skeleton with what it has received of its dependencies (environments.cocoder.context: the
bodies or interfaces another agent wrote, interfaces of what nobody has written yet) and writes
the whole file with ``write_file``. In a team run a :class:`TurnGate` holds each observation
back until the units whose texts it shows have been written. The virtual clock charges
the cost model's task time ``t0 + w / write_rate + ctx / context_rate`` for what it wrote and
the context it was shown (the prompt, the conversation so far unless the turn is marked
``fresh_context``, the observation's texts), so a turn's duration depends on the agent's
output, never on the wall clock.
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import tool
from environments.cocoder.context import turn_material
from environments.cocoder.costmodel import CostModel
from environments.cocoder.depgraph import condense, estimate_tokens
from environments.cocoder.tasks import load_task

DEFAULT_TASK = "synth-12"


def _within(qualname: str, definitions: list[str]) -> bool:
    return any(qualname == d or qualname.startswith(d + ".") for d in definitions)


class CoCoderEnv(ToolEnv):
    """Text observations (JSON); one ``write_file`` per module of the agent's queue."""

    gate: Any = None  # a team run's TurnGate: observations wait for the texts they show

    tools = (
        tool("write_file", "Write the complete source of the module you were asked for.", cost=0.0,
             module={"type": "string", "description": "dotted module name, as given"},
             source={"type": "string", "description": "the whole file, every function implemented"}),
    )

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return [TaskSpec(DEFAULT_TASK, {"repo": DEFAULT_TASK, "worker": 0, "strategy": "sequential"},
                         "a 12-module synthetic repository written by one agent")]

    def setup(self, rng: Any) -> str:
        params = self.task.params
        self.repo = load_task(params["repo"])
        self.cost = CostModel(**params.get("cost", {}))
        turns = params.get("turns")
        if turns is None:  # the whole repository, in dependency order, for one agent
            turns = one_agent_queue(self.repo)
        self.turns = turns
        self.state = {"i": 0, "written": {}, "history": 0, "durations": {}, "context": {}, "out": {}, "shown": 0}
        return self._prompt()

    def _prompt(self) -> str:
        i = self.state["i"]
        if i >= len(self.turns):
            return json.dumps({"done": True, "written": sorted(self.state["written"])})
        turn = self.turns[i]
        if self.gate is not None:
            self.gate.wait(self.task.params["worker"], turn.get("unit", turn["module"]))
        mt = self.repo.modules[turn["module"]]
        written = self.gate.written if self.gate is not None else self.state["written"]
        material, self.state["shown"] = turn_material(self.repo, turn, written)
        own = turn.get("definitions")
        blanked = mt.blanked if own is None else [q for q in mt.blanked if _within(q, own)]
        piece = {} if own is None else {
            "definitions": own, "omit": turn.get("omit"),
            "instructions": "Write only these definitions, against the skeleton: other agents write the rest"
                            + (" (also keep the module's imports and globals)." if turn.get("omit") is not None
                               else ".")}
        # the skeleton right after the module's name, and no file path: a small base model copies
        # the string nearest to what it is writing (it wrote the path as the source, 2026-12-01)
        skeleton = material.pop("skeleton")
        return json.dumps({
            "module": mt.module, "skeleton": skeleton, "unit": turn.get("unit", mt.module),
            "remaining": len(self.turns) - i,
            "repair_request": turn.get("repair"), **piece, "blanked": blanked, **material,
            "fresh_context": bool(turn.get("fresh_context")),
            "context_tokens": self._context_tokens(turn), "missing_fraction": turn["missing_fraction"],
            "cross_deps": turn["cross_deps"]}, ensure_ascii=False)

    def _context_tokens(self, turn: dict[str, Any]) -> int:
        """What the turn's model reads: the prompt, its conversation so far, this observation's texts."""
        history = 0 if turn.get("fresh_context") else self.state["history"]
        return int(self.cost.prompt_tokens + self.state["shown"] + history)

    def tool_write_file(self, module: str, source: str) -> ToolResult:
        i = self.state["i"]
        if i >= len(self.turns):
            return ToolResult(json.dumps({"error": "done", "detail": "every module is written"}), elapsed=1.0)
        turn = self.turns[i]
        if module != turn["module"]:
            return ToolResult(json.dumps({"error": "wrong_module", "detail": f"write {turn['module']} now"}),
                              elapsed=1.0)
        ctx = self._context_tokens(turn)
        out = estimate_tokens(source)
        duration = self.cost.task_time(out, ctx)
        unit = turn.get("unit", module)  # a module, or one piece of a split module
        self.state["written"][unit] = source
        self.state["durations"][unit] = duration
        self.state["context"][unit] = ctx
        self.state["out"][unit] = out
        self.state["history"] += self.state["shown"] + out  # the conversation keeps what it was shown
        self.state["i"] = i + 1
        if self.gate is not None:
            self.gate.done(self.task.params["worker"], unit, source, duration)
        done = self.state["i"] >= len(self.turns)
        info = {"module": module, "unit": unit, "out_tokens": out, "context_tokens": ctx, "duration": duration}
        return ToolResult(self._prompt(), reward=1.0 if done else 0.0, terminated=done, info=info, elapsed=duration)

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        written = len(self.state["written"]) if self.state else 0
        return Outcome(success=bool(terminated), metrics={
            "modules_written": written, "modules_assigned": len(self.turns),
            "context_tokens": sum(self.state["context"].values()),
            "busy_seconds": sum(self.state["durations"].values())})


def one_agent_queue(repo: Any) -> list[dict[str, Any]]:
    """The default task's turns: every module with something to write, whole, in dependency order
    (an import cycle's members in name order), each dependency already written by the same agent.

    Team runs get their queues from the planner (suites/cocoder/team.py); this is the world's own
    single-agent order, so the environment runs without one (gymnasium.make, check_env)."""
    todo = [m for m, mt in repo.modules.items() if mt.blanked]
    graph = repo.graph.subgraph(todo)
    dag, _ = condense(graph)
    turns = []
    for component in nx.lexicographical_topological_sort(dag, key=lambda c: dag.nodes[c]["members"][0]):
        for module in dag.nodes[component]["members"]:
            deps = [{"unit": d, "module": d, "how": "history", "names": list(graph.edges[d, module].get("names", ())),
                     "defs": list(graph.edges[d, module].get("defs", ()))}
                    for d in sorted(graph.predecessors(module))]
            turns.append({"module": module, "unit": module, "deps": deps, "missing_fraction": 0.0,
                          "cross_deps": 0, "transferred_tokens": 0, "fresh_context": False})
    return turns
