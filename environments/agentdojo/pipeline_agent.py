"""An LLM element of AgentDojo's own pipeline as an agentbed agent.

The agent keeps the message list AgentDojo's tool loop would keep (its system message, the
user's request, the model's replies, and each tool result exactly as AgentDojo's executor wrote
it in the environment) and asks the element (``LocalLLM``: AgentDojo's prompt for an
OpenAI-compatible local server, its ``<function=...>`` parsing) for the next reply. So a model
sees the same bytes under agentbed's runner as under AgentDojo's, and their per-task scores can
be compared one to one (suites/agentdojo/local_crosscheck.py). As in AgentDojo's
``ToolsExecutionLoop``, at most 15 rounds of tool calls run; the reply after the last is the
final answer whatever it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.env import ToolEnv
from agentbed.tools import Tool
from environments.agentdojo.agents import call_action, final_action
from environments.agentdojo.benchmark import task_suite

MAX_TOOL_ROUNDS = 15  # AgentDojo's ToolsExecutionLoop(max_iters=15)


def local_llm(base_url: str, model_id: str) -> Any:
    """AgentDojo's ``LocalLLM`` on the OpenAI-compatible server at ``base_url`` (its defaults:
    temperature 0, top_p 0.9), as its benchmark script builds it for ``--model local``."""
    import openai
    from agentdojo.agent_pipeline.llms.local_llm import LocalLLM

    return LocalLLM(openai.OpenAI(api_key="EMPTY", base_url=base_url), model_id)


class PipelineLLMAgent(Agent):
    """Plays an AgentDojo LLM element in an :class:`~environments.agentdojo.env.AgentDojoEnv`.

    It reads the tool results from the environment's AgentDojo message trace (the message its own
    tool loop would have), which is why it is built with its environment."""

    def __init__(self, env: ToolEnv, llm: Any, name: str = "agentdojo-local") -> None:
        self.env, self.llm, self.name = env, llm, name
        self.model = getattr(llm, "model", None)
        self.messages: list[Any] = []

    def reset(self, *, seed: int, task: Any = None) -> None:
        from agentdojo.agent_pipeline.agent_pipeline import load_system_message
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.types import ChatSystemMessage, ChatUserMessage, text_content_block_from_string

        params = task.params
        self.functions = list(task_suite(params["suite"]).tools)
        self.runtime = FunctionsRuntime(self.functions)
        self.messages = [
            ChatSystemMessage(role="system", content=[text_content_block_from_string(load_system_message(None))]),
            ChatUserMessage(role="user", content=[text_content_block_from_string(task.description)])]
        self.rounds = 0
        self.seen_results = 0

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        from agentdojo.functions_runtime import EmptyEnv
        from agentdojo.types import get_text_content_as_str

        offered = {t.name for t in tools}
        if offered and set(self.runtime.functions) != offered - {"final_answer"}:  # a tool filter narrowed them
            from agentdojo.functions_runtime import FunctionsRuntime

            self.runtime = FunctionsRuntime([f for f in self.functions if f.name in offered])
        trace = self.env.state["messages"]
        if len(trace) > self.seen_results:  # the tool result of the last call, as AgentDojo's executor wrote it
            self.messages.append(trace[-1])
            self.seen_results = len(trace)
        _, _, _, messages, _ = self.llm.query("", self.runtime, EmptyEnv(), self.messages)
        self.messages = list(messages)
        reply = messages[-1]
        text = get_text_content_as_str(reply["content"] or [])
        output = {"completion": text}
        if reply["tool_calls"] and self.rounds < MAX_TOOL_ROUNDS:
            self.rounds += 1
            call = reply["tool_calls"][0]
            return Action(call_action(call.function, call.args), model_output=output)
        return Action(final_action(text), model_output=output)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "pipeline": type(self.llm).__name__}
