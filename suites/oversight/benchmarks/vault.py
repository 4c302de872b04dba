"""The vault environment as a branching benchmark (it snapshots, so it also serves the benchmark).

Games are vault variants (token lifetime x required chores). The base agents know the right
order (chores, then a fresh token, then the vault) but slip; the expert reads the
environment's state (like ALFWorld's handcoded expert reads the PDDL state).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import TaskSpec, ToolEnv
from agentbed.tools import Tool, make_action
from controllers.oversight.target import BranchTarget
from environments.vault.env import VaultEnv
from suites.oversight.benchmarks.flawed import FlawedAgent, flawed_agents, reflect

TTLS = (20, 30, 45, 60, 90)
CHORES = (0, 1, 2, 3, 4)
MAX_STEPS = 20


def vault_games() -> list[TaskSpec]:
    return [TaskSpec(f"ttl{ttl}-chores{c}", {"ttl": ttl, "chores": c}, f"Read {c} log pages, then open the vault.")
            for ttl in TTLS for c in CHORES]


class VaultFlawed(FlawedAgent):
    """Chores first, then a fresh token, then the vault; retries with a new token after a 401."""

    name = "vault-flawed"
    horizon = MAX_STEPS

    def reset(self, *, seed: int, task: object = None) -> None:
        super().reset(seed=seed, task=task)
        self.chores, self.pages = 0, set[int]()
        self.token: str | None = None

    def observe(self, observation: str) -> None:
        try:
            obs = json.loads(observation)
        except json.JSONDecodeError:
            return
        if not isinstance(obs, dict):
            return
        if "chores" in obs:
            self.chores = int(obs["chores"])
        if "page" in obs:
            self.pages.add(int(obs["page"]))
        if "access_token" in obs:
            self.token = obs["access_token"]
        if obs.get("status") == 401:
            self.token = None

    def correct_action(self) -> str:
        missing = [p for p in range(1, self.chores + 1) if p not in self.pages]
        if missing:
            return make_action("read_logs", page=missing[0])
        if self.token is None:
            return make_action("get_token")
        return make_action("open_vault", token=self.token)

    def random_action(self) -> str:
        return self.rng.choice([
            make_action("wait", seconds=20), make_action("read_logs", page=self.rng.randint(1, 5)),
            make_action("get_token"), make_action("open_vault", token="guess"),
            make_action("open_vault", token=self.token or "none"),
        ])


class VaultExpert(Agent):
    """Reads the environment's state: missing chores, a live token, then the vault."""

    name = "vault-expert"

    def __init__(self, env: ToolEnv) -> None:
        self.env = env

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        state, params = self.env.state, self.env.task.params
        missing = [p for p in range(1, params["chores"] + 1) if p not in state["pages_read"]]
        if missing:
            return Action(make_action("read_logs", page=missing[0]), risk=0.0)
        now = self.env.clock.now()
        live = [tok for tok, expires in state["issued"].items() if expires - now > 2]
        if not live:
            return Action(make_action("get_token"), risk=0.0)
        return Action(make_action("open_vault", token=live[-1]), risk=0.0)

    def fork(self) -> Agent:
        return self  # stateless apart from the environment it reads


def target(base_seeding: str = "game", **options: Any) -> BranchTarget:
    """The vault variants; ``base_seeding``: how the base agents seed their slips, one of
    agentbed.streams.SEEDINGS ("game": each variant its own stream; "legacy": every one the same)."""
    base_agents = flawed_agents(VaultFlawed, base_seeding)
    games = {g.id: g for g in vault_games()}
    return BranchTarget(
        name="vault",
        games=list(games),
        make_env=lambda game: VaultEnv(games[game]),
        base_agents=base_agents,
        interventions={"expert": lambda env, agent: VaultExpert(env), "reflect": lambda env, agent: reflect(agent)},
        max_steps=MAX_STEPS,
        notes={"games": "vault variants: token lifetime x chores", "expert": "reads the environment state",
               "base_seeding": base_seeding},
    )
