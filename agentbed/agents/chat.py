"""A LangChain chat model as an agent: any provider ``init_chat_model`` knows, tools bound from the
environment's JSON schemas, token usage from ``usage_metadata``.

The conversation is the system prompt, the first observation as a human message, then for each
step the model's reply and the next observation, as a tool message answering the executed tool
call (or as a human message when the model called no tool).

The action is ``{"tool": NAME, "arguments": ARGS}`` where ARGS is the argument text exactly as
the provider sent it, so integrity checks downstream see the model's own bytes. LangChain parses
that text into a dict and keeps no copy for OpenAI, so for OpenAI-format providers the agent
reads it from the HTTP response (:class:`agentbed.agents.toolcalls.ResponseCapture`); where no raw text is available the
parsed arguments are re-serialised and the step says so (``arguments_source``).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    message_to_dict,
)

from agentbed.agents.base import Action, Agent, Usage
from agentbed.agents.building import (
    DEFAULT_BACKOFF,
    DEFAULT_SYSTEM_PROMPT,
    LazyModel,
    agent_from_model_string,
)
from agentbed.agents.cache import CachedReply, ModelCallCache
from agentbed.agents.chat_support import (
    ReplyFormat,
    _first_error_line,
    _model_id,
    _reply_from_dict,
    _utf8_safe,
    _with_raw_arguments,
    _without_run_id,
)
from agentbed.agents.confidence import content_text, parse_confidence, risk_from_confidence
from agentbed.agents.connections import ConnectionLimiter, Unlimited
from agentbed.agents.conversation import Awaiting, Conversation
from agentbed.agents.request_keys import RequestKeys
from agentbed.agents.retry import (
    Backoff,
    BadResponse,
    RetryRecord,
    add_note,
    call_with_retries,
    is_unreadable_answer,
    mark_provider_failure,
    throttle_signal,
)
from agentbed.agents.toolcalls import (
    ResponseCapture,
    action_of_tool_reply,
    action_text,
    no_tool_action,
    reply_problem,
    tool_calls_of,
    usage_of,
)
from agentbed.errors import episode_failure
from agentbed.tools import Tool

if TYPE_CHECKING:  # importing it imports LangChain's tracers and langsmith: a second or more
    from langchain_core.language_models import BaseChatModel

REFLECT_PROMPT = (
    "Before your next action, reflect. Restate the goal in one sentence, list what you have "
    "already achieved, and name any loop, repeated failure or forgotten sub-goal in your recent "
    "steps. Then choose the action that makes progress toward the goal."
)


class ChatAgent(Conversation, RequestKeys, Agent):
    """An agent backed by a LangChain chat model.

    ``max_retries`` and ``backoff`` are the retry policy for transient provider errors
    (timeouts, connection errors, HTTP 429 and 5xx); the jitter comes from an RNG seeded by
    ``seed`` and re-seeded with each episode's seed. After the last retry the error propagates
    and the runner ends the episode with status ``error``.

    ``connections`` caps the calls in flight to this model (an executor shares one limiter
    among all the episodes it runs); ``cache`` answers a request seen before without calling the
    provider (``Action.cached``, counted in the episode's usage, never in its log, so a cached
    rerun writes the same bytes); ``epoch`` is the rollout number that
    the cache key holds beside the seed (the keys: :class:`agentbed.agents.request_keys.RequestKeys`).
    """

    def __init__(self, model: BaseChatModel | LazyModel, *, name: str = "chat",
                 system_prompt: str | None = DEFAULT_SYSTEM_PROMPT, max_retries: int = 4, backoff: Backoff = DEFAULT_BACKOFF, seed: int = 0, model_id: str | None = None,
                 capture: ResponseCapture | None = None, sleep: Callable[[float], None] = time.sleep,
                 reply_format: ReplyFormat | None = None) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self._lazy = model if isinstance(model, LazyModel) else None
        self._chat_model = None if isinstance(model, LazyModel) else model
        self.name = name
        self.model = model_id or _model_id(self.chat_model)
        self.system_prompt = system_prompt
        self.max_retries = max_retries
        self.backoff = backoff
        self.capture = capture
        self.sleep = sleep
        self.reply_format = reply_format
        self._base_prompt = system_prompt  # a reply format adds the episode's tools to it
        self.messages: list[BaseMessage] = []
        self._awaiting: Awaiting | None = None
        self._pending_note: str | None = None
        self._aside_usage: Usage | None = None  # calls beside the conversation, added to the next action's
        self._rng = random.Random(seed)
        self._bound: Any = None
        self._bound_key: tuple[str, ...] | None = None
        self._seed = seed
        self._menu_pending = True  # a reply format's prompt waits for the episode's tools
        self.epoch = 0
        self.cache: ModelCallCache | None = None
        self.connections: ConnectionLimiter | Unlimited = Unlimited()
        self.generation: dict[str, Any] = {}  # the run's generation settings (recorded in describe())
        self.failure_note: str | None = None  # added to the error of a call that failed after its retries
        self.endpoint: str | None = None  # the cache key's endpoint when not the client's base URL (a run's own server)
        self.spend: Any = None  # the run's budget kept per call (agentbed.cost.SpendCap): asked before each

    @property
    def chat_model(self) -> BaseChatModel:
        """The LangChain chat model; a lazily built one is built (its client imported) here."""
        if self._chat_model is None:
            assert self._lazy is not None
            self._chat_model = self._lazy.get()
        return self._chat_model

    @chat_model.setter
    def chat_model(self, model: BaseChatModel) -> None:
        self._chat_model, self._lazy = model, None

    def warm_up(self, cache: ModelCallCache | None) -> None:
        """Build the model now (before a run's workers fork, so each does not import its client),
        unless the cache holds request profiles of this model: then the run is likely a rerun whose
        calls are cached, and a worker builds it only at a call the cache does not answer."""
        has_profiles = getattr(cache, "has_profiles", None)  # a cache of another kind keeps none
        if self._lazy is not None and has_profiles is not None and has_profiles(str(self.model)):
            return
        self.chat_model  # noqa: B018 - builds it

    @classmethod
    def from_model_string(cls, model: str, *, seed: int = 0, name: str | None = None,
                          system_prompt: str | None = DEFAULT_SYSTEM_PROMPT, max_retries: int = 4,
                          backoff: Backoff = DEFAULT_BACKOFF, timeout: float | None = None,
                          generation: Mapping[str, Any] | None = None, **model_kwargs: Any) -> ChatAgent:
        """An agent on the model ``"provider:model"`` or ``local:NAME`` names
        (:func:`agentbed.agents.building.agent_from_model_string`, which says what each argument does)."""
        return agent_from_model_string(cls, model, seed=seed, name=name, system_prompt=system_prompt,
                                       max_retries=max_retries, backoff=backoff, timeout=timeout,
                                       generation=generation, **model_kwargs)

    # -- Agent protocol --------------------------------------------------------------------
    def reset(self, *, seed: int, task: Any = None) -> None:
        self.messages = []
        self._awaiting = None
        self._pending_note = None
        self._aside_usage = None
        self._rng = random.Random(seed)
        self._seed = seed
        self._menu_pending = True
        self._prompt_logged: str | None = None

    def reseed(self, seed: int) -> None:
        """Rollout ``seed`` from this state: a new sample. The model-call cache keys on it (the
        epoch), and a reply format that sends a seed (llama.cpp's sampler) sends this one, so k
        resamples of a seeded sampler are k draws, not one draw k times."""
        self._seed = seed
        self.epoch = seed
        self._bound_key = None  # rebind with the new seed

    def add_instruction(self, text: str) -> None:
        """Append ``text`` to the system prompt for this episode (a controller's instruction, e.g.
        AgentDojo's spotlighting saying what its delimiters mean); call it after :meth:`reset`."""
        self.system_prompt = self.system_prompt + text if self.system_prompt else text.strip()
        self._base_prompt = self._base_prompt + text if self._base_prompt else text.strip()
        if self.messages and isinstance(self.messages[0], SystemMessage):
            self.messages[0] = SystemMessage(self.system_prompt)

    def _install_menu_prompt(self, prompt: str) -> None:
        """A reply format's prompt lists the episode's tools, which only :meth:`act` is given; a
        conversation primed from a log before that gets the prompt it was recorded under now."""
        self.system_prompt, self._menu_pending = prompt, False
        if self.messages and isinstance(self.messages[0], SystemMessage):
            self.messages[0] = SystemMessage(prompt)
        elif self.messages:
            self.messages.insert(0, SystemMessage(prompt))

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        if self.reply_format is not None and self._menu_pending:
            self._install_menu_prompt(self.reply_format.system_prompt(self._base_prompt, tools))
        self._add_observation(observation)
        action = self._call_for(tools)
        if self._aside_usage is not None:  # paid: in this step's usage (the episode's tokens, budget and cost)
            action.usage = self._aside_usage if action.usage is None else action.usage + self._aside_usage
            action.cached = False  # a cache hit's own tokens then count as paid too: over, never under
            self._aside_usage = None
        sent = self.messages[0].content if self.messages and isinstance(self.messages[0], SystemMessage) else None
        if isinstance(sent, str) and sent != getattr(self, "_prompt_logged", None):
            # the prompt's text goes into the hash chain once per episode (again only if it changes),
            # in the model output of the first call that sent it; the header keeps its hash
            action.model_output = {**(action.model_output or {}), "system_prompt": sent}
            self._prompt_logged = sent
        return action

    def _call_for(self, tools: Sequence[Tool]) -> Action:
        key = None
        if self.cache is not None:
            key = self._key_unbuilt(tools)  # a lazy model's request keyed from its stored profile
            if key is None:
                bound = self._bind(tools)
                key = self._cache_key(bound)
                self._keep_profile(bound)
            cached = self.cache.get(key)
            if cached is not None:
                return self._replayed(cached, hit=True)
        bound = self._bind(tools)
        drawn_from = self._rng.getstate()  # a reply another run stored first is continued from here
        try:
            reply, retries = call_with_retries(lambda: self._call(bound), max_retries=self.max_retries,
                                               backoff=self.backoff, rng=self._rng, sleep=self.sleep)
        except BaseException as exc:  # noqa: BLE001 - an SDK's own cancellation is the provider's too, never a score
            if episode_failure(exc):  # not a stop of the process (Ctrl-C, SIGTERM)
                if self.failure_note:  # e.g. which local server failed, and its log
                    add_note(exc, self.failure_note)
                mark_provider_failure(exc)
            raise
        captured = self.capture.take() if self.capture is not None else {}
        if self.cache is not None and key is not None:
            mine = CachedReply(message_to_dict(reply), dict(captured), tuple(r.to_dict() for r in retries))
            held = self.cache.put(key, mine, model=self.model)
            if held is not mine:  # a concurrent run stored this request's reply first: continue as it did
                self._rng.setstate(drawn_from)
                return self._replayed(held, hit=False)
        return self._action_for(reply, captured, retries)

    def _replayed(self, cached: CachedReply, *, hit: bool) -> Action:
        """The action of a reply the cache holds, as the live call gave it (the same log bytes);
        ``Action.cached`` (never logged) says whether the provider was spared a call. Its failed
        attempts draw their backoff jitter from the episode's RNG as they did live, so a later live
        retry in the episode records the delay an uninterrupted run records (session 19)."""
        retries = [RetryRecord(**r) for r in cached.retries]
        for record in retries:
            self.backoff.delay(record.attempt, self._rng, record.retry_after)
        action = self._action_for(_reply_from_dict(cached.message), cached.captured, retries)
        action.cached = hit
        return action

    def ask_aside(self, messages: list[BaseMessage], bound: Any) -> tuple[AIMessage, list[RetryRecord]]:
        """One call beside the conversation (a defense's own question: AgentDojo's tool filter), made
        as the agent's calls are (its connections, the run's spend cap, its retries); its usage is
        added to the next action's, so it counts in the episode's tokens, budget and cost."""
        try:
            reply, retries = call_with_retries(lambda: self._call(bound, messages), max_retries=self.max_retries,
                                               backoff=self.backoff, rng=self._rng, sleep=self.sleep)
        except BaseException as exc:  # noqa: BLE001 - as in _call_for
            if episode_failure(exc):
                mark_provider_failure(exc)
            raise
        usage = usage_of(reply) if isinstance(reply, AIMessage) else None
        if usage is not None:
            self._aside_usage = usage if self._aside_usage is None else self._aside_usage + usage
        return reply, retries

    def _call(self, bound: Any, messages: list[BaseMessage] | None = None) -> Any:
        """One attempt, holding one of the model's connections; refusals and timeouts tell the limiter."""
        if self.capture is not None:
            self.capture.clear()
        with self.connections.slot():
            if self.spend is not None:
                self.spend.before_call()  # BudgetExhausted once the next call could cross --max-cost
            try:
                reply = bound.invoke(self.messages if messages is None else messages)
            except Exception as exc:
                problem = self.capture.problem() if self.capture is not None else None
                if problem is not None:  # the client choked on a body that is no completion: the provider's fault
                    raise BadResponse(f"{self.model}: HTTP 200 with {problem}") from exc
                if is_unreadable_answer(exc):
                    raise BadResponse(f"{self.model}: an answer its client could not read: {type(exc).__name__}: "
                                      f"{_first_error_line(exc)}") from exc
                signal = throttle_signal(exc)
                if signal is not None:
                    self.connections.throttled(*signal)
                raise
            usage = usage_of(reply) if self.spend is not None and isinstance(reply, AIMessage) else None
            if usage is not None:  # paid before the slot is given back: the next call in it sees the cost
                self.spend.paid(self.model, usage.input_tokens, usage.output_tokens)
        self.connections.succeeded()
        problem = reply_problem(reply)  # any provider's malformed reply: its failure, retried, never a score
        if problem is not None:
            raise BadResponse(f"{self.model}: a reply that is no model's answer: {problem}")
        return reply

    def fork(self) -> ChatAgent:
        """An independent continuation: the model client is shared, the conversation copied."""
        twin = object.__new__(type(self))  # a subclass forks as itself
        twin.__dict__.update(self.__dict__)
        twin.messages = [m.model_copy(deep=True) for m in self.messages]
        twin._rng = random.Random()
        twin._rng.setstate(self._rng.getstate())
        return twin

    def reflected(self, prompt: str = REFLECT_PROMPT) -> ChatAgent:
        """The self-repair intervention for a chat model: a fork that, with the next
        observation, is asked to reflect on its progress before acting (Shinn et al.,
        "Reflexion", NeurIPS 2023, within one episode), shown its recent actions and what each
        got back (:func:`agentbed.agents.reflection.feedback_note`). The original is left unchanged."""
        twin = self.fork()
        twin.name = f"{self.name}+reflect"
        twin._pending_note = prompt
        return twin

    def describe(self) -> dict[str, Any]:
        prompt = self.system_prompt or ""
        described = {"name": self.name, "model": self.model, "max_retries": self.max_retries,
                     "backoff": asdict(self.backoff),
                     "system_prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest()}
        if self.reply_format is not None:
            described["reply_format"] = self.reply_format.describe()
        if self.generation:
            described["generation"] = dict(self.generation)
        return described

    def action_of_reply(self, reply: BaseMessage) -> str:
        """The action a recorded reply stands for (what :meth:`act` returned for it)."""
        if self.reply_format is not None:
            return self.reply_format.action_text(reply)
        return action_of_tool_reply(reply)

    def _bind(self, tools: Sequence[Tool]) -> Any:
        schemas = [t.to_openai() for t in tools]
        key = tuple(json.dumps(s, sort_keys=True) for s in schemas)
        if self.reply_format is not None:  # it may send the episode's seed; its knobs shape the request
            key += (str(self._seed), json.dumps(self.reply_format.describe(), sort_keys=True))
        if key != self._bound_key:
            if self.reply_format is not None:
                self._bound = self.reply_format.bind(self.chat_model, tools, self._seed)
            else:
                self._bound = self.chat_model.bind_tools(schemas) if schemas else self.chat_model
            self._bound_key = key
        return self._bound

    def _action_for(self, reply: AIMessage, captured: Mapping[str, str], retries: list[RetryRecord]) -> Action:
        if self.reply_format is not None:
            serialised = _utf8_safe(message_to_dict(_without_run_id(reply)))
            self._record_reply(_reply_from_dict(serialised), [])
            return self.reply_format.action(reply, serialised, retries)
        calls = tool_calls_of(reply, captured)
        serialised = _utf8_safe(message_to_dict(_with_raw_arguments(_without_run_id(reply), calls)))
        reply = _reply_from_dict(serialised)  # what the conversation and the log keep
        self._record_reply(reply, calls)
        text = content_text(reply.content)
        if calls:
            first = calls[0]
            action, source = action_text(first.name, first.arguments), first.source
        else:
            action, source = no_tool_action(text), "no_tool_call"
        model_output = {"message": serialised, "arguments_source": source, "tool_calls": len(calls),
                        "retries": [r.to_dict() for r in retries]}
        meta = {"arguments_source": source, "retries": len(retries),
                "unexecuted_tool_calls": [c.name for c in calls[1:]]}
        return Action(action, usage=usage_of(reply), model_output=model_output,
                      risk=risk_from_confidence(parse_confidence(text)), meta=meta)
