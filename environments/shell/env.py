"""The shell environment: one sandbox per episode, reused across its steps.

The agent gets a ``run`` tool (a shell command inside the sandbox, one virtual second each)
and a ``submit`` tool. The
task is to leave a file with given content in the sandbox's workdir. The sandbox is started on
first use and released by :meth:`end_episode`, which the runner calls however the episode
ends. Sandboxes cannot be copied, so branching uses verified replay.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.sandbox import EpisodeSandbox, Limits
from agentbed.tools import tool

_OUTPUT_CHARS = 4000


class ShellEnv(ToolEnv):
    tools = (
        tool("run", "Run a shell command in your sandbox (no network).", cost=1.0,
             command={"type": "string", "maxLength": 20000}),
        tool("submit", "Declare the task done.", cost=0.0),
    )
    can_snapshot = False
    max_steps = 20

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None,
                 backend: str | None = None) -> None:
        super().__init__(task, render_mode)
        self.episode_sandbox = EpisodeSandbox(backend or os.environ.get("AGENTBED_SANDBOX", "auto"), Limits())

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return [TaskSpec("write-file", {"path": "answer.txt"}, "Write the word shown into answer.txt.")]

    def setup(self, rng: Any) -> str:
        self.episode_sandbox.fresh()
        word = "".join(rng.choice(list("abcdefghij"), size=8).tolist())
        self.state = {"word": word, "submitted": False, "commands": 0}
        return json.dumps({"task": self.task.description, "path": self.task.params["path"], "word": word})

    def tool_run(self, command: str) -> ToolResult:
        self.state["commands"] += 1
        result = self.episode_sandbox.sandbox.exec(["/bin/sh", "-c", command], timeout=10)
        out = {"exit_code": result.exit_code, "status": result.status,
               "stdout": result.stdout.decode("utf-8", "replace")[:_OUTPUT_CHARS],
               "stderr": result.stderr.decode("utf-8", "replace")[:_OUTPUT_CHARS]}
        # a command's wall-clock duration is not charged: it varies from run to run, and the
        # virtual clock must not, so every command costs the tool's declared second
        return ToolResult(json.dumps(out))

    def tool_submit(self) -> ToolResult:
        self.state["submitted"] = True
        content = self.episode_sandbox.sandbox.read_file(self.task.params["path"]) if self._has_file() else b""
        ok = content.strip() == self.state["word"].encode()
        self.state["passed"] = ok
        return ToolResult(json.dumps({"passed": ok}), reward=float(ok), terminated=True)

    def _has_file(self) -> bool:
        return self.episode_sandbox.sandbox.exec(["test", "-f", self.task.params["path"]], timeout=5).exit_code == 0

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        passed = bool(self.state and self.state.get("passed"))
        return Outcome(passed, {"commands": self.state["commands"] if self.state else 0},
                       ["SUCCESS" if passed else "WRONG_VALUE" if self.state and self.state["submitted"] else "OTHER"])

    def end_episode(self) -> None:
        self.episode_sandbox.close()

    def close(self) -> None:
        self.episode_sandbox.close()
        super().close()
