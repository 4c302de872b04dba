"""A chat model as a base agent to branch: sampled at a temperature above 0, one seed per rollout.

At temperature 0 every rollout from a checkpoint would be the same sample, so "several rollouts
sample different futures" would not hold for a chat model. Here the provider samples at
``temperature`` and each rollout k gets its own seed (sent with the request where the provider
takes one: OpenAI-format servers, llama.cpp's included), so rollouts differ and each is
reproducible. The stated confidence is the risk score; a reply without one gives ``risk=None``,
which the dataset builder counts (never a silent 0.5).

The live trajectory and rollout 0 of ``continue`` send the same requests (same conversation, seed
and epoch), so one answers the other's from a per-process call cache instead of sampling twice:
rollout 0 then reproduces the live trajectory exactly, whatever the provider's determinism.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentbed.agents.base import Action
from agentbed.agents.building import OPENAI_FORMAT_PROVIDERS
from agentbed.agents.cache import ModelCallCache
from agentbed.agents.chat import ChatAgent
from agentbed.agents.confidence import parse_confidence, risk_from_confidence
from agentbed.agents.local.profile import LocalProfile, action_schema, constrained_to, shown
from agentbed.agents.local.server import split_model
from agentbed.tools import Tool

DEFAULT_TEMPERATURE = 0.7
CONFIDENCE_PROMPT = ('Add to the JSON object a key "confidence": your probability, from 0 to 1, that you will '
                     "complete the task.")


@dataclass(frozen=True)
class ConfidentProfile(LocalProfile):
    """The local model's compact profile with a stated confidence: the JSON schema of each action
    also requires ``"confidence": number in [0, 1]`` (the environment ignores the extra key; the
    chat agent reads it as the stated confidence). Without it the grammar leaves no room for one."""

    def system_prompt(self, base: str | None, tools: Sequence[Tool]) -> str:
        return super().system_prompt(base, tools) + "\n" + CONFIDENCE_PROMPT

    def bind(self, chat_model: Any, tools: Sequence[Tool], seed: int) -> Any:
        from langchain_core.runnables import RunnableLambda

        schema = action_schema(tools)
        for option in schema["anyOf"]:
            option["properties"]["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
            option["required"] = [*option["required"], "confidence"]
        request: dict[str, Any] = {"max_tokens": self.max_tokens, "seed": seed,
                                   "extra_body": constrained_to(schema, one_line=self.one_line)}
        return RunnableLambda(lambda messages: shown(messages, self)) | chat_model.bind(**request)

    def action(self, reply: Any, serialised: dict[str, Any], retries: list[Any]) -> Action:
        """The reply's text is the action, as in the compact profile; its ``confidence`` key is
        the stated confidence (a reply cut before it, or garbage, gives ``risk=None``: counted)."""
        action = super().action(reply, serialised, retries)
        text = action.text if isinstance(action.text, str) else ""
        action.risk = risk_from_confidence(parse_confidence(text))
        return action


class RolloutSeededChat(ChatAgent):
    """A ChatAgent whose sampling seed is the episode's seed, and rollout k's after ``reseed(k)``."""

    sends_seed = False

    def reset(self, *, seed: int, task: Any = None) -> None:
        super().reset(seed=seed, task=task)
        self._bound_key = None

    def _bind(self, tools: Any) -> Any:
        bound = super()._bind(tools)
        return bound.bind(seed=self._seed) if self.sends_seed else bound

    def fork(self) -> RolloutSeededChat:
        twin = super().fork()
        assert isinstance(twin, RolloutSeededChat)
        return twin


def chat_base_agent(model: str, seed: int, temperature: float = DEFAULT_TEMPERATURE) -> RolloutSeededChat:
    """``provider:model`` as a base agent sampling at ``temperature``; a ``local:`` model plays the
    compact profile with a stated confidence (its profile sends the seed itself), with the knobs
    its model string names (``local:NAME?window=2``; a ``temperature`` knob wins over the argument)."""
    if model.startswith("local:"):
        profile = ConfidentProfile.from_model(model)
        if "temperature" not in split_model(model)[1]:
            profile = replace(profile, temperature=temperature)
        agent = RolloutSeededChat.from_model_string(model, seed=seed, profile=profile)
    else:
        agent = RolloutSeededChat.from_model_string(model, seed=seed, temperature=temperature)
        agent.sends_seed = model.split(":", 1)[0] in OPENAI_FORMAT_PROVIDERS
    assert isinstance(agent, RolloutSeededChat)
    agent.cache = _live_calls()
    return agent


_CALLS: list[ModelCallCache] = []


def _live_calls() -> ModelCallCache:
    """This process's call cache, in a temporary directory removed when the process ends."""
    if not _CALLS:
        directory = tempfile.mkdtemp(prefix="agentbed-oversight-calls-")
        atexit.register(shutil.rmtree, directory, True)
        _CALLS.append(ModelCallCache(directory))
    return _CALLS[0]
