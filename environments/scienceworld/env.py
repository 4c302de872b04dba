"""ScienceWorld (Wang et al., EMNLP 2022) as an agentbed environment, over the real ``scienceworld`` package.

The simulator runs in a JVM (the package ships its jar; ``java`` must be on PATH). One
command per step through the ``act`` tool; the first observation is the task description and
the starting room. Success is a score of 100; a wrong ``focus on`` ends the episode as a
failure. The simulator has no save/restore and is not fully deterministic (some tasks mix
substances differently between runs), so ``can_snapshot`` is False and branching replays the
prefix and verifies every observation.

JVMs are expensive to start (about 1.5 s), so a closed environment returns its simulator to a
per-process pool and the next environment reuses it (``load`` resets it completely).
"""

from __future__ import annotations

import atexit
import shutil
from functools import cache
from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import tool

SIMPLIFICATIONS = "easy"
# Tasks whose gold path fits the 50-step cap with room for mistakes; the first five training
# variations of each.
TASKS = ("find-animal", "find-living-thing", "find-plant", "find-non-living-thing", "lifespan-longest-lived",
         "lifespan-shortest-lived", "power-component", "identify-life-stages-2", "chemistry-mix",
         "chemistry-mix-paint-secondary-color", "test-conductivity")
VARIATIONS = (0, 1, 2, 3, 4)
SUCCESS_SCORE = 100
MAX_COMMAND_CHARS = 300

_POOL: list[Any] = []
_ALL: list[Any] = []


def java_available() -> bool:
    return shutil.which("java") is not None


def _acquire() -> Any:
    if _POOL:
        return _POOL.pop()
    if not java_available():
        raise RuntimeError("ScienceWorld needs Java on PATH (Debian: apt-get install -y openjdk-17-jre-headless)")
    from scienceworld import ScienceWorldEnv

    backend = ScienceWorldEnv("", envStepLimit=1000)
    _ALL.append(backend)
    return backend


def _release(backend: Any) -> None:
    _POOL.append(backend)


def _closed() -> None:
    return None


@atexit.register
def _shutdown() -> None:
    for backend in _ALL:
        try:
            backend.close()
        except Exception:  # noqa: BLE001, S110 - the JVM may already be gone at exit
            pass
        backend.close = _closed  # its __del__ would close the gateway a second time
    _ALL.clear()
    _POOL.clear()


def task_specs(variations: tuple[int, ...] = VARIATIONS) -> list[TaskSpec]:
    """Every task at ``variations`` (default the first five; the oversight workload holds out 5-9)."""
    return [TaskSpec(f"{name}:{v}", {"task": name, "variation": v}, f"ScienceWorld {name}, variation {v}")
            for name in TASKS for v in variations]


@cache
def gold_path(task: str, variation: int) -> tuple[str, ...]:
    """The simulator's own gold action sequence for a task variation."""
    backend = _acquire()
    try:
        backend.load(task, variation, SIMPLIFICATIONS, generateGoldPath=True)
        return tuple(backend.get_gold_action_sequence())
    finally:
        _release(backend)


class ScienceWorldToolEnv(ToolEnv):
    tools = (tool("act", "Send one ScienceWorld command, e.g. 'open door to kitchen', 'pick up thermometer', "
                         "'focus on water', 'look around', 'inventory'.", cost=1.0,
                  command={"type": "string", "minLength": 1, "maxLength": MAX_COMMAND_CHARS}),)
    can_snapshot = False
    max_steps = 50

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None) -> None:
        super().__init__(task, render_mode)
        self._backend: Any = None

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return task_specs()

    def setup(self, rng: Any) -> str:
        if self._backend is None:
            self._backend = _acquire()
        p = self.task.params
        self._backend.load(p["task"], int(p["variation"]), SIMPLIFICATIONS, generateGoldPath=False)
        # load() builds a fresh world; the package's reset() would rebuild it again (about 1 s)
        # and yields the same observations, so the first observation is a plain "look around".
        observation, score, _ = self._step("look around")
        self.state = {"score": score, "done": False}
        return f"Task: {self._backend.get_task_description()}\n\n{observation}"

    def _step(self, command: str) -> tuple[str, int, bool]:
        """One simulator step through its server, as ``ScienceWorldEnv.step`` does, without
        the per-step extras (valid-action enumeration, look, inventory) that the package's
        ``step`` computes and this environment never shows."""
        server = self._backend.server
        observation = server.step(command)
        score = int(round(100 * server.getScore()))
        return observation, score, bool(server.getCompleted()) or score < 0

    def tool_act(self, command: str) -> ToolResult:
        if self.state["done"]:
            return ToolResult("The episode is over.", terminated=True)
        observation, score, done = self._step(command)
        delta = (score - self.state["score"]) / SUCCESS_SCORE
        self.state["score"] = score
        self.state["done"] = bool(done)
        return ToolResult(observation, reward=delta, terminated=done, info={"score": score})

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        score = self.state["score"] if self.state else 0
        success = score >= SUCCESS_SCORE
        label = "SUCCESS" if success else ("FAILED_TASK" if score < 0 else "INCOMPLETE")
        return Outcome(success=success, metrics={"score": score}, labels=[label])

    def close(self) -> None:
        if self._backend is not None:
            _release(self._backend)
            self._backend = None
        super().close()

    def __del__(self) -> None:
        # An environment dropped without close() (e.g. a replay abandoned on a mismatch)
        # still hands its simulator back, so the pool does not start a JVM per abandoned replay.
        backend = getattr(self, "_backend", None)
        if backend is not None:
            self._backend = None
            _POOL.append(backend)
