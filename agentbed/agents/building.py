"""How :class:`agentbed.agents.chat.ChatAgent` gets its LangChain chat model: built at once, or
at its first use when :mod:`agentbed.agents.precheck` has checked everything a build would refuse
(issue 55: importing the provider's client takes seconds, and a fully cached rerun needs none)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from agentbed.agents.chat_support import _first_error_line, _refuse_undeclared
from agentbed.agents.generation import build_quietly
from agentbed.agents.precheck import checked_without_client, missing_key
from agentbed.agents.toolcalls import ResponseCapture
from agentbed.errors import UsageError

if TYPE_CHECKING:  # importing it imports LangChain's tracers and langsmith: a second or more
    from langchain_core.language_models import BaseChatModel

# Providers whose HTTP responses carry tool calls in the OpenAI format, read by ResponseCapture.
OPENAI_FORMAT_PROVIDERS = frozenset({"openai", "azure_openai"})


class LazyModel:
    """A chat model built at its first use, importing its provider's client only then (issue 55):
    a run shows its plan at once, and a rerun whose every call the model-call cache answers never
    builds it. ``recipe`` names what it is built from: model string, settings, timeout and the
    versions of the packages that shape its requests (the cache keeps each request's profile under
    it, :meth:`agentbed.agents.chat.ChatAgent._call_for`). Agents built alike in one process share one."""

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


_LAZY_MODELS: dict[tuple[Any, ...], LazyModel] = {}


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
