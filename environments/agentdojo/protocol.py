"""AgentDojo's protocol as an agentbed agent: what AgentDojo's own pipeline sends a model and how it
loops (``AgentPipeline.from_config`` with no defense, ``ToolsExecutionLoop``, ``ToolsExecutor``,
``TaskSuite.run_task_with_pipeline``; agentdojo 0.1.35), so a model's per-task scores under
agentbed are AgentDojo's.

- The conversation is AgentDojo's: its system message (``data/system_messages.yaml``, default),
  the user task's prompt, the model's replies, and one tool message per call holding the result
  exactly as AgentDojo's executor formatted it in the world (YAML, or its error text).
- Every tool call of a reply is executed, in order: agentbed steps once per call, and the model
  is asked again only when the reply's calls have all run.
- At most :data:`MAX_TOOL_ROUNDS` replies have their calls executed; the reply after the last is
  the final answer whatever it holds, its unexecuted calls included in the graded trace.
- A final reply with no content makes AgentDojo run its whole pipeline again on the world as it
  now is (three tries in all); the world (:class:`~environments.agentdojo.env.AgentDojoEnv`)
  answers such a reply with the prompt again, and the agent starts a fresh conversation.
- A defense is the pipeline ``from_config`` builds for it, read from that pipeline (:func:`pipeline`):
  spotlighting's system message and tool-result delimiters, the repeated prompt as a user message
  after each round's tool messages, and the tool filter's question and answer kept in the
  conversation (asked by :class:`~controllers.agentdojo.defenses.ModelToolFilter` through
  :meth:`DojoAgent.filter_tools`; its tokens are added to the first reply's usage).

The element that talks to the model is :class:`~environments.agentdojo.openai_chat.OpenAIChat`
(AgentDojo's OpenAI element, written for agentbed) or :class:`LocalElement` (AgentDojo's own
``LocalLLM``, its ``--model local`` prompt format).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agentbed.agents.base import Action, Agent
from agentbed.agents.retry import Backoff, call_with_retries
from agentbed.env import ToolEnv
from agentbed.errors import UsageError
from agentbed.tools import Tool
from environments.agentdojo.benchmark import suite_of
from environments.agentdojo.openai_chat import Call, Reply

MAX_TOOL_ROUNDS = 15  # AgentDojo's ToolsExecutionLoop(max_iters=15)
DEFAULT_BACKOFF = Backoff()
# the defenses AgentDojo builds into its pipeline (tool_filter_oracle is agentbed's, a controller)
PIPELINE_DEFENSES = ("tool_filter", "spotlighting_with_delimiting", "repeat_user_prompt")


@dataclass(frozen=True)
class Pipeline:
    """What AgentDojo's pipeline for one defense does around the model, read from the pipeline."""

    system_message: str
    formatter: Callable[[Any], str]  # its executor's tool-output formatter (applied to the world's text)
    repeat_prompt: bool  # InitQuery inside the tools loop: the prompt again after each round
    filter_prompt: str | None  # OpenAILLMToolFilter's question, None without the filter
    filter_temperature: float | None
    max_rounds: int


def pipeline(defense: str | None) -> Pipeline:
    """Read the pipeline ``AgentPipeline.from_config`` builds for ``defense`` (None: no defense),
    so its prompts and formatter are AgentDojo's own, not restated here. The OpenAI element in it
    is never called."""
    from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline, PipelineConfig
    from agentdojo.agent_pipeline.basic_elements import InitQuery, SystemMessage
    from agentdojo.agent_pipeline.llms.openai_llm import OpenAILLM, OpenAILLMToolFilter
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutionLoop, ToolsExecutor

    llm = OpenAILLM(None, "agentbed")  # type: ignore[arg-type]  # only its type and name are read
    llm.name = "agentbed"
    built = AgentPipeline.from_config(PipelineConfig(llm=llm, model_id=None, defense=defense,
                                                     system_message_name=None, system_message=None))
    elements = list(built.elements)
    loop = next(e for e in elements if isinstance(e, ToolsExecutionLoop))
    executor = next(e for e in loop.elements if isinstance(e, ToolsExecutor))
    chooser = next((e for e in elements if isinstance(e, OpenAILLMToolFilter)), None)
    return Pipeline(next(e for e in elements if isinstance(e, SystemMessage)).system_message,
                    executor.output_formatter, any(isinstance(e, InitQuery) for e in loop.elements),
                    None if chooser is None else chooser.prompt, None if chooser is None else chooser.temperature,
                    loop.max_iters)


class Element(Protocol):
    """The model, asked for the next reply of AgentDojo's conversation with these functions offered."""

    model: str

    def reply(self, messages: list[Any], functions: list[Any]) -> Reply: ...

    def describe(self) -> dict[str, Any]: ...


class LocalElement:
    """AgentDojo's ``LocalLLM`` element (its prompt lists the tools; calls come back as
    ``<function=...>`` text) on an OpenAI-compatible server, as its script builds it for ``--model local``."""

    def __init__(self, base_url: str | Callable[[], str], model_id: str, max_tokens: int | None = None) -> None:
        self.base_url, self.model, self.max_tokens, self.llm = base_url, model_id, max_tokens, None

    def reply(self, messages: list[Any], functions: list[Any]) -> Reply:
        from agentdojo.functions_runtime import EmptyEnv, FunctionsRuntime
        from agentdojo.types import get_text_content_as_str

        if self.llm is None:  # the server's address is known once the run has started it
            import openai
            from agentdojo.agent_pipeline.llms.local_llm import LocalLLM

            url = self.base_url() if callable(self.base_url) else self.base_url
            client = openai.OpenAI(api_key="EMPTY", base_url=url)
            self.llm = LocalLLM(client if self.max_tokens is None else _Capped(client, self.max_tokens), self.model)
        _, _, _, out, _ = self.llm.query("", FunctionsRuntime(functions), EmptyEnv(), messages)
        message = out[-1]
        calls = [Call(c, json.dumps(c.args)) for c in message["tool_calls"] or []]
        return Reply(message, calls, None, {"completion": get_text_content_as_str(message["content"] or [])})

    def describe(self) -> dict[str, Any]:
        return {"element": "agentdojo.LocalLLM", "model": self.model, "max_tokens": self.max_tokens}


class _Capped:
    """An OpenAI client whose completions carry ``max_tokens``: AgentDojo's ``LocalLLM`` sets no
    cap, and a small base model then writes until its context is full (minutes a call on a CPU)."""

    def __init__(self, client: Any, max_tokens: int) -> None:
        self._client, self._max_tokens = client, max_tokens
        self.chat = self.completions = self

    def create(self, **kwargs: Any) -> Any:
        return self._client.chat.completions.create(**kwargs, max_tokens=self._max_tokens)


def _action(call: Call) -> str:
    from agentbed.agents.toolcalls import action_text

    return action_text(call.function.function, call.raw_arguments)


class DojoAgent(Agent):
    """A model played through AgentDojo's pipeline in an :class:`~environments.agentdojo.env.AgentDojoEnv`.

    It reads each tool result from the world's AgentDojo message trace (the message AgentDojo's
    executor wrote), which is why it is bound to its world (:meth:`bind`) before it acts."""

    def __init__(self, element: Element, *, name: str, env: ToolEnv | None = None, system_message: str | None = None,
                 max_retries: int = 4, backoff: Backoff = DEFAULT_BACKOFF, seed: int = 0, defense: str = "none"
                 ) -> None:
        self.element, self.name, self.env = element, name, env
        self.model = element.model
        # the defense AgentDojo's pipeline applies (its controller then only records it)
        self.pipeline_defense = defense if defense in PIPELINE_DEFENSES else None
        self.pipeline = pipeline(self.pipeline_defense)
        if self.pipeline.max_rounds != MAX_TOOL_ROUNDS:
            raise RuntimeError(f"AgentDojo's tools loop runs {self.pipeline.max_rounds} rounds, agentbed expects"
                               f" {MAX_TOOL_ROUNDS}")
        self.system_message = system_message if system_message is not None else self.pipeline.system_message
        self.pending_usage: Any = None  # the tool filter's, added to the next reply's
        self.filter_record: dict[str, Any] | None = None
        self.allowed: set[str] | None = None  # the tools a re-run's filter left (None: as offered)
        self.max_retries, self.backoff = max_retries, backoff
        self._rng = random.Random(seed)
        self.messages: list[Any] = []

    def bind(self, env: ToolEnv) -> DojoAgent:
        self.env = env
        return self

    def reset(self, *, seed: int, task: Any = None) -> None:
        self._rng = random.Random(seed)
        self.prompt = task.description
        self.functions = list(suite_of(task.params).tools)
        self.pending_usage, self.filter_record, self.allowed = None, None, None
        self._start()

    def _start(self) -> None:
        """A fresh run of AgentDojo's pipeline: system message, user prompt, no rounds yet."""
        from agentdojo.types import ChatSystemMessage, ChatUserMessage, text_content_block_from_string

        self.messages = [
            ChatSystemMessage(role="system", content=[text_content_block_from_string(self.system_message)]),
            ChatUserMessage(role="user", content=[text_content_block_from_string(self.prompt)])]
        self.rounds, self.queue, self.sent, self.done = 0, [], None, False
        self.prompt_logged = False
        self.trace_length = len(self._trace())

    def _trace(self) -> list[Any]:
        if self.env is None:
            raise RuntimeError(f"{self.name}: AgentDojo's protocol reads its world's trace; bind the agent first")
        return self.env.state["messages"]

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.done:  # the world answered a reply with no content: AgentDojo's pipeline runs again
            self._start()
            if self.pipeline_defense == "tool_filter":  # its filter asks again, of the tools it left
                reply, _ = self.filter_tools(tools)
                chosen = selection(reply, [f.name for f in self._offered(tools)])
                assert self.filter_record is not None
                # offered from now on; the world is narrowed by the filter's controller, which reads
                # this from the action's model output (so a re-run of the log narrows it too)
                self.allowed = set(chosen)
                self.filter_record["tools"] = chosen
        took = self.sent is not None
        if took:
            self._take_result(observation)
        if self.queue:
            call = self.queue.pop(0)
            self.sent = call
            return Action(_action(call), meta={"call_of_reply": True})
        if took and self.pipeline.repeat_prompt:  # InitQuery after the round's tool messages
            self.messages.append(_user(self.prompt))
        return self._ask(tools)

    def filter_tools(self, tools: Sequence[Tool]) -> tuple[str, dict[str, int] | None]:
        """AgentDojo's ``OpenAILLMToolFilter``: its question appended to the conversation as a user
        message, asked with the offered tools bound and ``tool_choice="none"``, the answer kept in
        the conversation; returns the answer's text (its tool names are the selection) and usage."""
        ask = getattr(self.element, "filter_reply", None)
        if self.pipeline.filter_prompt is None or ask is None:
            raise UsageError(f"{self.name}: AgentDojo's tool filter is built only for its OpenAI element")
        self.messages.append(_user(self.pipeline.filter_prompt))
        functions = self._offered(tools)
        reply, retries = call_with_retries(lambda: ask(self.messages, functions, self.pipeline.filter_temperature),
                                           max_retries=self.max_retries, backoff=self.backoff, rng=self._rng)
        self.messages.append(reply.message)
        self.pending_usage = reply.usage
        self.filter_record = {"reply": reply.record, "retries": [r.to_dict() for r in retries]}
        content = reply.message["content"]
        return ("" if content is None else _text(content)), (reply.usage.to_dict() if reply.usage else None)

    def _take_result(self, observation: str) -> None:
        """The tool message of the call just executed, as AgentDojo's executor wrote it (with the
        model's call id, and the arguments as the executor coerced them, which later requests echo)."""
        from agentdojo.types import ChatToolResultMessage, text_content_block_from_string

        call, trace = self.sent.function, self._trace()
        if len(trace) > self.trace_length:
            written = trace[-1]
            call.args.clear()
            call.args.update(written["tool_call"].args)
            content, error = written["content"], written["error"]
            # the pipeline's formatter (spotlighting's delimiters) on the executor's rendering; an
            # error stays undelimited in the request, as in AgentDojo (its error text replaces the content)
            content = [text_content_block_from_string(self.pipeline.formatter(_text(content)))]
        else:  # refused before AgentDojo's executor (arguments that are not an object): its script would stop
            content, error = [text_content_block_from_string("")], observation
        self.trace_length = len(trace)
        self.messages.append(ChatToolResultMessage(role="tool", content=content, tool_call_id=call.id,
                                                   tool_call=call, error=error))
        self.sent = None

    def _offered(self, tools: Sequence[Tool]) -> list[Any]:
        names = {t.name for t in tools}
        if self.allowed is not None:  # a re-run's filter narrowed them since the tools were listed
            names &= self.allowed
        return [f for f in self.functions if f.name in names]

    def _ask(self, tools: Sequence[Tool]) -> Action:
        functions = self._offered(tools)
        reply, retries = call_with_retries(lambda: self.element.reply(self.messages, functions),
                                           max_retries=self.max_retries, backoff=self.backoff, rng=self._rng)
        self.messages.append(reply.message)
        output: dict[str, Any] = {"reply": reply.record, "retries": [r.to_dict() for r in retries]}
        if not self.prompt_logged:
            output["system_message"] = self.system_message
            self.prompt_logged = True
        usage = reply.usage
        if self.filter_record is not None:  # the filter's call is this episode's too: budget and cost
            output["tool_filter"], self.filter_record = self.filter_record, None
            if self.pending_usage is not None:
                usage = self.pending_usage if usage is None else usage + self.pending_usage
            self.pending_usage = None
        if reply.calls and self.rounds < MAX_TOOL_ROUNDS:
            self.rounds += 1
            self.queue = list(reply.calls[1:])
            self.sent = reply.calls[0]
            return Action(_action(reply.calls[0]), usage=usage, model_output=output,
                          meta={"round": self.rounds, "tool_calls": len(reply.calls)})
        self.done = True
        content = reply.message["content"]
        final: dict[str, Any] = {"tool": None, "text": None if content is None else _text(content)}
        if reply.calls:  # the loop's cap: these calls are never executed, but AgentDojo grades them as made
            final["calls"] = [{"function": c.function.function, "args": c.function.args, "id": c.function.id}
                              for c in reply.calls]
        return Action(json.dumps(final, ensure_ascii=False), usage=usage, model_output=output,
                      meta={"round": self.rounds, "final": True})

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "protocol": "agentdojo", **self.element.describe(),
                **({"pipeline_defense": self.pipeline_defense} if self.pipeline_defense else {}),
                "system_message_sha256": hashlib.sha256(self.system_message.encode()).hexdigest(),
                "max_tool_rounds": MAX_TOOL_ROUNDS, "max_retries": self.max_retries}


def selection(reply: str, names: Sequence[str]) -> list[str]:
    """AgentDojo's tool filter's rule for reading the model's answer: every tool whose name occurs in it."""
    return [name for name in names if name in reply]


def _user(text: str) -> Any:
    from agentdojo.types import ChatUserMessage, text_content_block_from_string

    return ChatUserMessage(role="user", content=[text_content_block_from_string(text)])


def _text(content: list[Any]) -> str:
    from agentdojo.types import get_text_content_as_str

    return get_text_content_as_str(content)
