"""ALFWorld as an agentbed environment: generated games played on ALFWorld's TextWorld/PDDL engine.

One task per generated game (see :mod:`environments.alfworld.games`). Observations are the
game's own text followed by the list of admissible commands; the goal is stated only in the
first observation, as in ALFWorld, so an agent has to remember it. Episodes end when the goal
holds (reward 1) or after 50 steps.

The engine's state lives in C (fast-downward) and cannot be copied, so ``can_snapshot`` is
False and branching reconstructs a state by replaying the prefix. Replays are exact: the
game is deterministic and the handcoded expert draws from a stream seeded by the episode seed.

A command that is not admissible changes nothing in the game; it is answered with
"Nothing happens." without being sent to the engine, so ALFWorld's expert (which parses every
command it sees and crashes on an empty one, and believes it moved after a failed "go to")
keeps an accurate picture of the world when it is asked to take over.
"""

from __future__ import annotations

from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import tool
from environments.alfworld import games

NOTHING_HAPPENS = "Nothing happens."
COMMANDS_HEADER = "Admissible commands:"


def render_observation(feedback: str, commands: list[str]) -> str:
    return f"{feedback.strip()}\n\n{COMMANDS_HEADER}\n" + "\n".join(f"- {c}" for c in commands)


def parse_observation(observation: str) -> tuple[str, list[str]]:
    """Split an observation into the game's text and its admissible commands."""
    text, _, listing = observation.partition(f"\n\n{COMMANDS_HEADER}\n")
    return text, [line[2:] for line in listing.splitlines() if line.startswith("- ")]


class AlfworldEnv(ToolEnv):
    tools = (
        tool("act", "Send one text command to the game, e.g. 'go to cabinet 1', 'open fridge 1', "
             "'take mug 1 from cabinet 1', 'move mug 1 to countertop 1', 'heat mug 1 with microwave 1', "
             "'use desklamp 1'. Only the admissible commands listed in the observation have an effect.",
             cost=1.0, command={"type": "string", "maxLength": 200}),
        tool("look", "Describe what is around you.", cost=1.0),
        tool("inventory", "List what you are carrying.", cost=1.0),
    )
    can_snapshot = False
    max_steps = games.MAX_EPISODE_STEPS

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None,
                 fix_expert_bookkeeping: bool = True) -> None:
        super().__init__(task, render_mode)
        self._game: Any = None
        self._game_file: str | None = None
        self.fix_expert_bookkeeping = fix_expert_bookkeeping  # see tw.SeededAlfredExpert

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return cls.tasks()

    @staticmethod
    def tasks(seed: int = games.DEFAULT_SEED, count: int = games.DEFAULT_GAME_COUNT) -> list[TaskSpec]:
        """The first ``count`` games of generator ``seed`` (ids carry the seed when it is not 0)."""
        return [TaskSpec(games.game_id(i, seed), {"index": i, "task_type": games.task_type_of(i),
                                                  "split": games.split_of(i), "games_seed": seed},
                         games.task_type_of(i)) for i in range(count)]

    # -- episode -------------------------------------------------------------------------
    def setup(self, rng: Any) -> str:
        from environments.alfworld.tw import load_game

        params = self.task.params
        game = games.ensure_game(params["index"], params.get("games_seed", games.DEFAULT_SEED))
        path = str(game)
        if self._game_file != path:  # loading parses the PDDL (a third of a second): reuse it across resets
            self._game, self._game_file = load_game(path, self.fix_expert_bookkeeping), path
        # The expert's random stream is the one its solvability check used, whatever the episode
        # seed: deferring to the expert at step 0 then always wins; later it can still fail.
        self._game.seed_expert(games.EXPERT_SEED)
        state = self._game.reset()
        traj = games.read_traj(game)
        self.state = {"won": False, "goal": traj["task_desc"], "commands": list(state["admissible_commands"]),
                      "ineffective": 0}
        return render_observation(state["feedback"], self.state["commands"])

    def episode_info(self) -> dict[str, Any]:
        return {"game": self.task.id, "task_type": self.task.params["task_type"], "split": self.task.params["split"],
                "goal": self.state["goal"] if self.state else ""}

    def _send(self, command: str) -> ToolResult:
        command = command.strip()
        if command not in self.state["commands"]:
            self.state["ineffective"] += 1
            return ToolResult(render_observation(NOTHING_HAPPENS, self.state["commands"]),
                              info={"admissible": False})
        state, _, _ = self._game.step(command)
        won = bool(state["won"])
        self.state["won"] = won
        self.state["commands"] = list(state["admissible_commands"])
        return ToolResult(render_observation(state["feedback"], self.state["commands"]), reward=float(won),
                          terminated=won, info={"admissible": True, "won": won})

    def tool_act(self, command: str) -> ToolResult:
        return self._send(command)

    def tool_look(self) -> ToolResult:
        return self._send("look")

    def tool_inventory(self) -> ToolResult:
        return self._send("inventory")

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        won = bool(self.state and self.state["won"])
        metrics = {"task_type": self.task.params["task_type"], "split": self.task.params["split"],
                   "ineffective_commands": self.state["ineffective"] if self.state else 0,
                   "expert_error": self.expert_error()}
        return Outcome(success=won, metrics=metrics, labels=["SUCCESS" if won else "NOT_WON"])

    # -- the handcoded expert, for the "defer to expert" intervention -----------------------
    def expert_command(self) -> str | None:
        """ALFWorld's handcoded expert's next command in the current state (None if it gave up)."""
        return self._game.expert_command() if self._game is not None else None

    def expert_error(self) -> str | None:
        return self._game.expert_error if self._game is not None else None

    def goal(self) -> str:
        return self.state["goal"] if self.state else ""
