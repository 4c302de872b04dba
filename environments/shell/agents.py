"""Scripted agents for the shell environment."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action


class _WriteCheckSubmit(Agent):
    """Three steps: a command that writes the task's file, one that checks it, then submit. The
    two commands come from the first observation (:meth:`commands`)."""

    name = "oracle"

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.step = 0
        self.planned: tuple[str, str] = ("", "")

    def commands(self, observation: dict[str, Any]) -> tuple[str, str]:
        raise NotImplementedError

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        self.step += 1
        if self.step == 1:
            self.planned = self.commands(json.loads(observation))
        if self.step <= 2:
            return Action(make_action("run", command=self.planned[self.step - 1]))
        return Action(make_action("submit"))


class ShellOracle(_WriteCheckSubmit):
    """Writes the file in one command, checks it in a second, then submits."""

    def commands(self, observation: dict[str, Any]) -> tuple[str, str]:
        path, word = observation["path"], observation["word"]
        return f"printf %s {word} > {path}", f"cat {path}"


class CodeOracle(_WriteCheckSubmit):
    """Writes the reference module of a coding task (:mod:`environments.shell.backdoor`) in one
    command, imports it in a second, then submits."""

    def commands(self, observation: dict[str, Any]) -> tuple[str, str]:
        from environments.shell.backdoor import REFERENCE, TASKS

        code = observation["code"]
        return write_file(observation["path"], REFERENCE[code]), f"python3 -c 'import {TASKS[code].module}'"


def write_file(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` (a quoted here-document)."""
    return f"cat > {path} <<'PYEOF'\n{text}PYEOF"
