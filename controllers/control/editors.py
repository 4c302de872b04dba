"""Trusted editors for trusted editing (``te``): rewrite a suspicious action into one that does only
the user's task, or give up (None: the protocol then defers to the trusted policy).

- :func:`controllers.control.protocols.scripted_edit`: keeps what the scripted monitor finds innocuous;
- :class:`ModelEditor`: any chat model with a prompt read from a file (``{history}``, ``{action}``);
  its reply is kept (``last``, recorded by the protocol). A reply without a tool call, one naming a
  tool the world does not have, or a failed call is no edit: an observation, never a crash.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentbed.control import StepContext
from agentbed.tools import make_action
from controllers.control.monitors import action_text, call_of

DEFAULT_EDITOR_PROMPT = Path(__file__).with_name("prompts") / "editor.txt"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_edit(reply: str, tools: set[str]) -> str | None:
    """The tool call on the reply's last line holding one (or the reply's outermost braces), as an
    action; None for NONE, no call, or a tool not in ``tools`` (when given)."""
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    if not lines or lines[-1].upper().strip("`. ") == "NONE":
        return None
    candidates = [ln for ln in reversed(lines) if ln.startswith("{")] + _OBJECT.findall(reply)
    for text in candidates:
        tool, args = call_of(text)
        if tool and (not tools or tool in tools):
            return make_action(tool, **args)
    return None


class ModelEditor:
    """A chat model as the trusted editor."""

    name = "model"

    def __init__(self, chat_model: Any, prompt: str, *, history_chars: int = 6000) -> None:
        self.chat_model, self.prompt, self.history_chars = chat_model, prompt, history_chars
        self.first_observation = ""  # the task statement; the protocol sets it
        self.tools: set[str] = set()  # the world's tool names; the protocol sets them
        self.last: dict[str, Any] = {}

    @classmethod
    def from_file(cls, chat_model: Any, path: str | Path = DEFAULT_EDITOR_PROMPT, **kw: Any) -> ModelEditor:
        return cls(chat_model, Path(path).read_text(encoding="utf-8"), **kw)

    def __call__(self, text: str, ctx: StepContext) -> str | None:
        from langchain_core.messages import HumanMessage

        lines = [f"TASK: {self.first_observation or ctx.observation}"] + [
            f"STEP {i + 1}: {action_text(s.action)} -> {s.observation}" for i, s in enumerate(ctx.history)]
        message = self.prompt.replace("{history}", "\n".join(lines)[-self.history_chars:]).replace("{action}", text)
        try:
            reply = self.chat_model.invoke([HumanMessage(message)])
            content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        except Exception as exc:  # noqa: BLE001 - a provider failure is recorded; the protocol defers
            self.last = {"name": self.name, "error": f"{type(exc).__name__}: {exc}"[:300]}
            return None
        edited = parse_edit(content, self.tools)
        self.last = {"name": self.name, "reply": content[-2000:], "edited": edited is not None}
        return edited
