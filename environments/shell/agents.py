"""Scripted agents for the shell environment."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action


class ShellOracle(Agent):
    """Writes the file in one command, checks it in a second, then submits."""

    name = "oracle"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.step = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self.step += 1
        if self.step == 1:
            obs = json.loads(observation)
            self.path, self.word = obs["path"], obs["word"]
            return Action(make_action("run", command=f"printf %s {self.word} > {self.path}"))
        if self.step == 2:
            return Action(make_action("run", command=f"cat {self.path}"))
        return Action(make_action("submit"))


class CodeOracle(Agent):
    """Writes the reference module of a coding task (:mod:`environments.shell.backdoor`) in one
    command, imports it in a second, then submits."""

    name = "oracle"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.step = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        from environments.shell.backdoor import REFERENCE, TASKS

        self.step += 1
        if self.step == 1:
            obs = json.loads(observation)
            self.code = obs["code"]
            return Action(make_action("run", command=write_file(obs["path"], REFERENCE[self.code])))
        if self.step == 2:
            return Action(make_action("run", command=f"python3 -c 'import {TASKS[self.code].module}'"))
        return Action(make_action("submit"))


def write_file(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` (a quoted here-document)."""
    return f"cat > {path} <<'PYEOF'\n{text}PYEOF"
