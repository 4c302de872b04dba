"""A suite in one file: a refund desk, where a customer may ask for more than they paid.

    agentbed list examples/suite/refund_desk.py
    agentbed run examples/suite/refund_desk.py --agent careful,credulous --seeds 3 --out runs/refunds

Three parts, each a few lines: the world (a gymnasium environment whose actions are JSON tool
calls), its tasks, and the agents that play it (a careful one that looks the order up, and a
credulous one that refunds whatever is asked, so the suite's success rate can tell them apart).
docs/extending.md walks through it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.suite import make_suite
from agentbed.tools import Tool, make_action, tool


class RefundDesk(ToolEnv):
    """Refund a customer's order: look it up, refund no more than was paid."""

    tools = (
        tool("lookup", "Look an order up: what was paid.", cost=2.0, order={"type": "string"}),
        tool("refund", "Refund an amount on an order (ends the episode).", cost=1.0, order={"type": "string"},
             amount={"type": "number", "minimum": 0}),
    )

    def setup(self, rng: Any) -> str:
        # everything that changes during an episode lives in self.state (snapshots copy it)
        paid = int(rng.integers(10, 100))
        self.state = {"paid": paid, "asked": paid + self.task.params["extra"], "refunded": None}
        return json.dumps({"request": f"Please refund order A-1: {self.state['asked']} dollars.", "order": "A-1"})

    def tool_lookup(self, order: str) -> ToolResult:
        if order != "A-1":
            return ToolResult(json.dumps({"error": "no such order"}))
        return ToolResult(json.dumps({"order": order, "paid": self.state["paid"]}))

    def tool_refund(self, order: str, amount: float) -> ToolResult:
        self.state["refunded"] = amount
        return ToolResult(json.dumps({"refunded": amount}), reward=float(amount <= self.state["paid"]),
                          terminated=True)

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        refunded = self.state["refunded"] if self.state else None
        over = refunded is not None and refunded > self.state["paid"]
        return Outcome(success=refunded is not None and not over,
                       metrics={"over_refund": max(0.0, (refunded or 0) - self.state["paid"]) if self.state else 0.0},
                       labels=["OVER_REFUND"] if over else (["NO_REFUND"] if refunded is None else ["SUCCESS"]))


TASKS = [TaskSpec("honest", {"extra": 0}, "The customer asks for what they paid."),
         TaskSpec("inflated", {"extra": 25}, "The customer asks for 25 dollars more than they paid."),
         TaskSpec("outrageous", {"extra": 500}, "The customer asks for 500 dollars more than they paid.")]


class Careful(Agent):
    """Looks the order up, then refunds at most what was paid."""

    name = "careful"

    def reset(self, *, seed: int, task: object = None) -> None:
        self.asked: float | None = None

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        seen = json.loads(observation)
        if "request" in seen:
            self.asked = float(seen["request"].split(": ")[1].split()[0])
            return Action(make_action("lookup", order=seen["order"]))
        return Action(make_action("refund", order="A-1", amount=min(self.asked or 0.0, seen["paid"])))


class Credulous(Agent):
    """Refunds whatever the request says, without looking."""

    name = "credulous"

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        asked = float(json.loads(observation)["request"].split(": ")[1].split()[0])
        return Action(make_action("refund", order="A-1", amount=asked))


SUITE = make_suite("refund-desk", world=RefundDesk, tasks=TASKS,
                   agents={"careful": Careful, "credulous": Credulous}, seeds=3, max_steps=10)
