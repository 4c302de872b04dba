"""ScienceWorld as a branching benchmark (replay only: the simulator cannot snapshot).

Base agents follow the simulator's gold path but slip (see :mod:`.flawed`); a random slip can
walk them out of the room their plan expects (recoverable: the next plan step fails and they
keep retrying it) or focus on the wrong thing (unrecoverable: the task fails at once). The
stronger agent ("expert") resumes the plan without slips and, when a step fails, backtracks to
the plan's last navigation step; "reflect" is the same agent with its flaws reduced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec
from agentbed.tools import Tool
from controllers.oversight.target import BranchTarget
from environments.scienceworld.agents import command, random_command, visible_rooms, visible_things
from environments.scienceworld.env import ScienceWorldToolEnv, gold_path, task_specs
from suites.oversight.benchmarks.flawed import FlawedAgent, flawed_agents, reflect

FAILED = "No known action matches that input."
NAVIGATION = ("go to ", "open door to ", "teleport to ")
MAX_STEPS = 40
FOCUS_SLIP = 0.05


class ScienceWorldFlawed(FlawedAgent):
    """Follows the gold path; retries a plan step that failed; slips per its flaws."""

    name = "sw-flawed"
    horizon = MAX_STEPS

    def reset(self, *, seed: int, task: object = None) -> None:
        super().reset(seed=seed, task=task)
        params = task.params if isinstance(task, TaskSpec) else {}
        self.plan = list(gold_path(params["task"], int(params["variation"]))) if params else []
        self.pointer, self.rooms, self.things = 0, list[str](), list[str]()
        self.pending: bool = False  # the last action was the plan step at ``pointer``

    def observe(self, observation: str) -> None:
        if self.pending and not observation.startswith(FAILED):
            self.pointer += 1
        self.pending = False
        self.rooms = visible_rooms(observation) or self.rooms
        self.things = visible_things(observation) or self.things

    def correct_action(self) -> str:
        return command(self.plan[self.pointer] if self.pointer < len(self.plan) else "look around")

    def random_action(self) -> str:
        return command(random_command(self.rng, self.rooms, self.things, focus=FOCUS_SLIP))

    def on_executed(self, action: str, slipped: bool) -> None:
        self.pending = not slipped and self.pointer < len(self.plan)


class PlanExpert(Agent):
    """Resumes the gold path at the base agent's position, backtracking to navigation on failure."""

    name = "sw-expert"

    def __init__(self, plan: Sequence[str], pointer: int) -> None:
        self.plan, self.pointer, self.backtracks, self.pending = list(plan), pointer, 0, False

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.pending:
            if observation.startswith(FAILED) and self.backtracks < 3:
                self.backtracks += 1
                self.pointer = max((i for i in range(self.pointer) if self.plan[i].startswith(NAVIGATION)), default=0)
            elif not observation.startswith(FAILED):
                self.pointer += 1
        text = self.plan[self.pointer] if self.pointer < len(self.plan) else "look around"
        self.pending = self.pointer < len(self.plan)
        return Action(command(text), risk=0.0)


def _expert(env: Any, agent: Agent) -> Agent:
    if not isinstance(agent, ScienceWorldFlawed):
        raise TypeError("the ScienceWorld expert resumes a ScienceWorldFlawed agent's plan")
    if agent.pending and not env.last_observation.startswith(FAILED):
        agent.observe(env.last_observation)  # account for the step the base agent just took
    return PlanExpert(agent.plan, agent.pointer)


def target(variations: tuple[int, ...] | None = None, base_seeding: str = "game", **options: Any) -> BranchTarget:
    """``variations``: the task variations to branch (default the environment's first five).
    ``base_seeding``: how the base agents seed their slips, one of agentbed.streams.SEEDINGS: "game" (each
    task variation its own stream) or "legacy" (every one the same; datasets that record none)."""
    base_agents = flawed_agents(ScienceWorldFlawed, base_seeding)
    specs = {t.id: t for t in (task_specs(tuple(variations)) if variations is not None else task_specs())}
    return BranchTarget(
        name="scienceworld",
        games=sorted(specs, key=lambda g: (specs[g].params["variation"], g)),  # first N games span the tasks
        make_env=lambda game: ScienceWorldToolEnv(specs[game]),
        base_agents=base_agents,
        interventions={"expert": _expert, "reflect": lambda env, agent: reflect(agent)},
        max_steps=MAX_STEPS,
        notes={"games": "ScienceWorld task variations", "expert": "gold path resumed with backtracking",
               "base_seeding": base_seeding},
    )
