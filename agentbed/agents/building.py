"""How :class:`agentbed.agents.chat.ChatAgent` gets its LangChain chat model: built at once, or
at its first use when :mod:`agentbed.agents.precheck` has checked everything a build would refuse
(issue 55: importing the provider's client takes seconds, and a fully cached rerun needs none)."""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from agentbed.agents.chat_support import _SHARED_MODELS, _first_error_line, _memo_key, _refuse_undeclared
from agentbed.agents.generation import build_quietly, timeout_from_environment
from agentbed.agents.precheck import checked_without_client, missing_key, recipe_of
from agentbed.agents.retry import Backoff
from agentbed.agents.toolcalls import ResponseCapture
from agentbed.errors import UsageError
from agentbed.memo import ProcessMemo

if TYPE_CHECKING:  # importing it imports LangChain's tracers and langsmith: a second or more
    from langchain_core.language_models import BaseChatModel

DEFAULT_SYSTEM_PROMPT = (
    "You act in an environment only through the tools you are given. Each reply must call exactly "
    "one tool; only the first tool call of a reply is executed, and its result comes back as the "
    "tool's answer. Before the tool call, state in your text how likely it is that this action is "
    "correct and safe, as `confidence: <a number between 0 and 1>`. Never put the confidence inside "
    "the tool arguments."
)
DEFAULT_BACKOFF = Backoff()


class _ModelAgent(Protocol):  # what agent_from_model_string sets on the agent it builds (ChatAgent)
    generation: dict[str, Any]
    failure_note: str | None
    endpoint: str | None


AgentT = TypeVar("AgentT", bound=_ModelAgent)

# Providers whose HTTP responses carry tool calls in the OpenAI format, read by ResponseCapture.
OPENAI_FORMAT_PROVIDERS = frozenset({"openai", "azure_openai"})


class LazyModel:
    """A chat model built at its first use, importing its provider's client only then (issue 55):
    a run shows its plan at once, and a rerun whose every call the model-call cache answers never
    builds it. ``recipe`` names what it is built from: model string, settings, timeout and the
    versions of the packages that shape its requests (the cache keeps each request's profile under
    it, :meth:`agentbed.agents.request_keys.RequestKeys._keep_profile`). Agents built alike in one process share one."""

    def __init__(self, build: Callable[[], BaseChatModel], capture: ResponseCapture | None, recipe: str) -> None:
        self._build, self.capture, self.recipe = build, capture, recipe
        self._model: BaseChatModel | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._model is not None

    def get(self) -> BaseChatModel:
        with self._lock:
            if self._model is None:
                self._model = self._build()
            return self._model


_LAZY_MODELS: ProcessMemo[LazyModel] = ProcessMemo()


def _checked_quietly(model: str, settings: Mapping[str, Any]) -> bool:
    try:
        return checked_without_client(model, settings)
    except UsageError:  # the build names it, as it always did
        return False


def _built_model(model: str, provider: str | None, timeout: float | None, model_kwargs: Mapping[str, Any],
                 settings: Mapping[str, Any], capture: ResponseCapture | None = None) -> BaseChatModel:
    """``model`` built by LangChain's ``init_chat_model`` (importing the provider's client), its
    responses read by ``capture``; what it refuses, a UsageError naming the model."""
    from langchain.chat_models import init_chat_model

    if capture is not None:
        model_kwargs = {**model_kwargs, "http_client": capture.http_client()}
    try:
        chat_model = build_quietly(lambda: init_chat_model(model, timeout=timeout or 60.0, max_retries=0,
                                                           **model_kwargs))
    except Exception as exc:  # noqa: BLE001 - a model that cannot be built is a configuration error
        raise UsageError(f"--model {model!r}: {_first_error_line(exc)}") from exc
    _refuse_undeclared(model, chat_model, settings)
    if provider in OPENAI_FORMAT_PROVIDERS and getattr(chat_model, "client", True) is None:
        raise UsageError(missing_key(model))
    return cast("BaseChatModel", chat_model)


def agent_from_model_string(cls: Callable[..., AgentT], model: str, *, seed: int = 0, name: str | None = None,
                            system_prompt: str | None = DEFAULT_SYSTEM_PROMPT, max_retries: int = 4,
                            backoff: Backoff = DEFAULT_BACKOFF, timeout: float | None = None,
                            generation: Mapping[str, Any] | None = None, **model_kwargs: Any) -> AgentT:
    """``"provider:model"`` resolved by LangChain's ``init_chat_model``; other keyword
    arguments go to the model (``base_url``, ``api_key``, ``temperature``...). The client's
    own retries are off (ours are observable) and each call times out after ``timeout`` s
    (default: $AGENTBED_MODEL_TIMEOUT if set, else 60; 300 for ``local:`` models, which share a
    small CPU). Agents built in one process from the same arguments and environment share one client.

    ``local:NAME`` and ``local:/path/file.gguf`` are the models of the llama.cpp server the run
    started (:mod:`agentbed.agents.local`), played with the compact profile (``profile=``).

    ``generation`` holds the run's generation settings (:mod:`agentbed.agents.generation`):
    constructor arguments of the provider's chat model; one it does not declare is a
    UsageError. For a ``local:`` model, ``temperature`` and ``max_tokens`` set the profile's."""
    settings = dict(generation or {})
    timeout = timeout or timeout_from_environment()
    if model.startswith("local:"):  # a GGUF served by llama.cpp on loopback, compact profile
        from agentbed.agents.local.profile import LocalProfile, local_chat_model

        profile = model_kwargs.pop("profile", None) or LocalProfile.from_model(model)
        overrides = {k: settings.pop(k) for k in ("temperature", "max_tokens") if k in settings}
        profile = dataclasses.replace(profile, **overrides) if overrides else profile
        capture = None  # the server speaks OpenAI's format: a body that is no completion is its failure
        if "http_client" not in model_kwargs:
            capture = ResponseCapture()
            model_kwargs["http_client"] = capture.http_client()
        chat_model = build_quietly(lambda: local_chat_model(model, profile, timeout=timeout or 300.0,
                                                            **model_kwargs, **settings))
        _refuse_undeclared(model, chat_model, settings)
        agent = cls(chat_model, name=name or f"model:{model}", max_retries=max_retries,
                    system_prompt=None if system_prompt == DEFAULT_SYSTEM_PROMPT else system_prompt,
                    backoff=backoff, seed=seed, model_id=model, reply_format=profile, capture=capture)
        agent.generation = dict(sorted({**(generation or {})}.items()))
        if "base_url" not in model_kwargs:  # the run's own server: its failures name it and its log
            from agentbed.agents.local.server import failure_note

            agent.failure_note = failure_note(model)
            agent.endpoint = "local-server"  # its port changes at each start; the weights are the model's name
        return agent
    if "?" in model:
        raise UsageError(f"--model {model!r}: '?KNOB=VALUE' is for local: models only; give a provider's "
                         "generation settings with --temperature, --max-tokens-per-call or -M KEY=VALUE")
    given_kwargs = bool(model_kwargs)
    model_kwargs = {**model_kwargs, **settings}

    def agent_on(client: BaseChatModel | LazyModel, capture: ResponseCapture | None) -> AgentT:
        agent = cls(client, name=name or f"model:{model}", system_prompt=system_prompt, max_retries=max_retries,
                    backoff=backoff, seed=seed, model_id=model, capture=capture)
        agent.generation = dict(sorted(settings.items()))
        return agent

    memo = _memo_key(model, timeout, model_kwargs)
    shared = _SHARED_MODELS.get(memo) if memo is not None else None
    if shared is not None:
        return agent_on(*shared)
    lazy = _LAZY_MODELS.get(memo) if memo is not None else None
    if lazy is not None:
        return agent_on(lazy, lazy.capture)

    provider = model.split(":", 1)[0] if ":" in model else model_kwargs.get("model_provider")
    capture = None
    if provider in OPENAI_FORMAT_PROVIDERS and "http_client" not in model_kwargs:
        capture = ResponseCapture()  # its HTTP client (the SDK's) is made with the model
    build = functools.partial(_built_model, model, provider, timeout, model_kwargs, settings, capture)
    if memo is not None and not given_kwargs and _checked_quietly(model, settings):
        # nothing left for a build to refuse: the client is imported at the first uncached call
        lazy = _LAZY_MODELS.put(memo, LazyModel(build, capture, recipe_of(model, timeout, settings)))
        return agent_on(lazy, lazy.capture)
    built = build()
    if memo is not None:
        built, capture = _SHARED_MODELS.put(memo, (built, capture))
    return agent_on(built, capture)
