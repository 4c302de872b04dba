"""What names a chat agent's request in the model-call cache (:mod:`agentbed.agents.cache`).

A request's key is the conversation, the tools and the model's request profile: its type and
sampling parameters, its endpoint, and whatever is bound to each request (tool choice, a
per-rollout seed...). A lazily built model (:class:`agentbed.agents.building.LazyModel`) has no
profile until it is built, so the cache stores the profile the first run built for these tools,
and a rerun keys its requests from it without building the model (issue 55).
:class:`agentbed.agents.chat.ChatAgent` is one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, message_to_dict

from agentbed.agents.cache import ModelCallCache, cache_key, endpoint_of
from agentbed.tools import Tool

if TYPE_CHECKING:  # importing it imports LangChain's tracers and langsmith: a second or more
    from langchain_core.language_models import BaseChatModel

    from agentbed.agents.building import LazyModel


class RequestKeys:
    """The cache keys of one agent's requests; the agent supplies its model, conversation, the
    key of its bound tools, its seed and epoch, and its cache."""

    chat_model: BaseChatModel
    model: str | None
    messages: list[BaseMessage]
    endpoint: str | None
    cache: ModelCallCache | None
    epoch: int
    _lazy: LazyModel | None
    _bound_key: tuple[str, ...] | None
    _seed: int

    def _request_profile(self, bound: Any) -> tuple[str, dict[str, Any]]:
        """What a request's key holds of the model: its type and sampling parameters, plus
        whatever is bound to each request (tool choice, a per-rollout seed...; the tools apart)."""
        params = dict(getattr(self.chat_model, "_identifying_params", {}) or {})
        params = {k: v for k, v in params.items() if k not in {"model", "model_name"}}
        endpoint = self.endpoint or endpoint_of(self.chat_model)
        if endpoint is not None:  # two servers under one model name are two keys (agentbed/agents/cache.py)
            params["endpoint"] = endpoint
        per_request = getattr(bound, "kwargs", None)
        if isinstance(per_request, Mapping):
            params["bound"] = {k: v for k, v in per_request.items() if k != "tools"}  # tools: below
        return self.chat_model._llm_type, params

    def _cache_key(self, bound: Any, profile: tuple[str, dict[str, Any]] | None = None,
                   tools: Sequence[str] | None = None) -> str:
        """The request's cache key: the conversation, the tools and the model's request profile."""
        llm_type, params = profile if profile is not None else self._request_profile(bound)
        return cache_key(provider=llm_type, model=self.model, messages=[message_to_dict(m) for m in self.messages],
                         tools=list((self._bound_key or ()) if tools is None else tools), params=params,
                         seed=self._seed, epoch=self.epoch)

    def _key_unbuilt(self, tools: Sequence[Tool]) -> str | None:
        """The cache key of the next request without building a lazy model, from the profile the
        cache stored when a run first built it for these tools; None when it must be built."""
        get_profile = getattr(self.cache, "get_profile", None)  # a cache of another kind keeps none
        if self._lazy is None or self._lazy.built or get_profile is None:
            return None
        schemas = tuple(json.dumps(t.to_openai(), sort_keys=True) for t in tools)
        profile = get_profile(str(self.model), self._lazy.recipe, schemas)
        return self._cache_key(None, profile, schemas) if profile is not None else None

    def _keep_profile(self, bound: Any) -> None:
        """Store a lazy model's request profile for these tools, canonical JSON (what the key is
        made of), so a rerun keys its requests without building the model."""
        put_profile = getattr(self.cache, "put_profile", None)
        if self._lazy is not None and put_profile is not None:
            put_profile(str(self.model), self._lazy.recipe, tuple(self._bound_key or ()), self._request_profile(bound))
