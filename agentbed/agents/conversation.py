"""The conversation a chat agent keeps, and its rebuilding from a recorded log.

:class:`Conversation` turns observations and replies into LangChain messages (an observation
answers the reply's executed tool call as a tool message, and every other call of that reply
gets :data:`NOT_EXECUTED`), and primes them from a log's prefix without calling the model, for
branching. :class:`agentbed.agents.chat.ChatAgent` is one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agentbed.agents.chat_support import scrub_surrogates
from agentbed.agents.reflection import feedback_note
from agentbed.agents.toolcalls import ModelToolCall, message_from_model_output, tool_calls_of
from agentbed.log import decode_action, read_log

NOT_EXECUTED = "not executed: only the first tool call of a reply is executed; call this tool again if you still need it"


@dataclass(frozen=True)
class Awaiting:
    """Which tool calls of the last reply the next observation answers."""

    executed: str | None
    skipped: tuple[str, ...]


class Conversation:
    """The message list of one episode; the agent supplies its prompt, ``reset`` and
    ``action_of_reply`` (what a recorded reply stands for)."""

    messages: list[BaseMessage]
    system_prompt: str | None
    _awaiting: Awaiting | None
    _menu_pending: bool
    _prompt_logged: str | None
    _pending_note: str | None
    reset: Callable[..., None]
    action_of_reply: Callable[[BaseMessage], str]

    def load_history(self, first_observation: str, steps: Sequence[tuple[Mapping[str, Any], str]]) -> None:
        """Rebuild the conversation of a recorded prefix, for branching from a log: ``steps``
        holds each step's recorded ``model_output`` and the observation that followed it. The
        last observation is left out: the runner hands it to the next :meth:`act`."""
        self.messages, self._awaiting = [], None
        self._menu_pending = True
        self._prompt_logged = None
        if not steps:
            return
        prompts = [o["system_prompt"] for o, _ in steps if isinstance(o.get("system_prompt"), str)]
        if prompts:  # the prefix's log holds the prompt already: a branch records it again only if it changes
            self._prompt_logged = prompts[-1]
        self._add_observation(first_observation)
        for i, (model_output, observation) in enumerate(steps):
            reply = message_from_model_output(model_output)
            if not isinstance(reply, AIMessage):
                raise ValueError(f"step {i + 1}: model_output holds a {type(reply).__name__}, not an AI message")
            self._record_reply(reply, tool_calls_of(reply))
            if i < len(steps) - 1:
                self._add_observation(observation)

    def load_log_prefix(self, path: str | Path, at_step: int) -> None:
        """Reset for the recorded episode's seed and prime the conversation with its first
        ``at_step`` steps, without calling the model, checking that each recorded reply
        reproduces the recorded action. A branch then continues live from there."""
        records = read_log(path)
        self.reset(seed=int(records[0].get("seed", 0)))
        steps = [r for r in records if r.get("type") == "step"][:at_step]
        if len(steps) < at_step:
            raise ValueError(f"{path}: has {len(steps)} steps, cannot prime {at_step}")
        for i, step in enumerate(steps, start=1):
            output = step.get("model_output")
            if not isinstance(output, dict) or "message" not in output:
                raise ValueError(f"{path}: step {i} has no recorded model output (not a chat agent's log?)")
            rebuilt = self.action_of_reply(message_from_model_output(output))
            recorded = decode_action(step["action"])
            if isinstance(recorded, bytes):
                recorded = recorded.decode("utf-8", "surrogatepass")
            if step.get("control") is None and scrub_surrogates(rebuilt) != scrub_surrogates(recorded):
                raise ValueError(f"{path}: step {i}: the recorded reply gives action {rebuilt[:120]!r},"
                                 f" the log records {str(recorded)[:120]!r}")
        self.load_history(records[0]["observation"], [(s["model_output"], s["observation"]) for s in steps])

    # -- conversation ------------------------------------------------------------------------
    def _add_observation(self, observation: str) -> None:
        if not self.messages:
            if self.system_prompt:
                self.messages.append(SystemMessage(self.system_prompt))
            self.messages.append(HumanMessage(observation))
            return
        awaiting = self._awaiting
        if awaiting is None or awaiting.executed is None:
            self.messages.append(HumanMessage(observation))
        else:
            self.messages.append(ToolMessage(observation, tool_call_id=awaiting.executed))
        for call_id in awaiting.skipped if awaiting else ():
            self.messages.append(ToolMessage(NOT_EXECUTED, tool_call_id=call_id))
        self._awaiting = None
        if self._pending_note:  # after the tool answers: providers require those to follow the call
            self.messages.append(HumanMessage(feedback_note(self._pending_note, self.messages, self.action_of_reply)))
            self._pending_note = None

    def _record_reply(self, reply: AIMessage, calls: list[ModelToolCall]) -> None:
        self.messages.append(reply)
        if calls:
            skipped = tuple(c.id for c in calls[1:] if isinstance(c.id, str))
            self._awaiting = Awaiting(calls[0].id if isinstance(calls[0].id, str) else None, skipped)
        else:
            self._awaiting = None
