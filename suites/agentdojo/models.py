"""``agentbed run agentdojo --model PROVIDER:MODEL``: which agent plays a model.

Under AgentDojo's protocol (the default, ``--protocol agentdojo``) a model is played as AgentDojo's
own benchmark script plays it (:mod:`environments.agentdojo.protocol`): ``openai:MODEL`` through
AgentDojo's OpenAI element (``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` for a compatible server), and
``local:NAME`` through its ``LocalLLM`` element on the llama.cpp server the run started. Under
``--protocol agentbed`` agentbed's own chat agent plays (one call per reply, its own prompt), whose
scores are not comparable with AgentDojo's tables.
"""

from __future__ import annotations

from typing import Any

from agentbed.env import ToolEnv
from agentbed.errors import UsageError
from agentbed.runner import EpisodeSpec
from environments.agentdojo.env import AGENTDOJO

PROVIDERS = ("openai", "local")  # what AgentDojo's protocol is written for here


def dojo_model_agent(spec: EpisodeSpec, env: ToolEnv | None) -> Any:
    """The agent for ``spec.agent`` (``model:PROVIDER:MODEL``) under the run's protocol; None for agentbed's."""
    from environments.agentdojo.openai_chat import OpenAIChat
    from environments.agentdojo.protocol import DojoAgent, LocalElement

    if spec.options.get("protocol", AGENTDOJO) != AGENTDOJO:
        return None
    model = spec.agent.removeprefix("model:")
    defense = spec.options.get("defense", "none")
    provider, _, name = model.partition(":")
    if defense == "tool_filter" and provider != "openai":
        # AgentPipeline.from_config raises "Tool filter is only supported for OpenAI models" for any
        # element but its OpenAILLM (its local provider's is LocalLLM): no AgentDojo pipeline to match
        raise UsageError(f"--defense tool_filter with --model {model}: AgentDojo's own runner refuses this"
                         " pipeline (its from_config: 'Tool filter is only supported for OpenAI models'; its"
                         f" --model local is a LocalLLM), so it has no protocol to follow; --protocol agentbed runs"
                         f" the filter with {model} (agentbed's chat agent; not comparable with AgentDojo's"
                         " tables), --defense tool_filter_oracle runs the oracle selection")
    if provider == "openai" and name:
        element: Any = OpenAIChat(name, dict(spec.generation or {}))
    elif provider == "local" and name:
        settings = dict(spec.generation or {})
        max_tokens = settings.pop("max_tokens", None)
        if settings:
            raise UsageError(f"--model {model}: AgentDojo's LocalLLM element takes only --max-tokens-per-call"
                             f" (it sends temperature 0 and top_p 0.9), not {sorted(settings)[0]!r}")
        from agentbed.agents.local.server import base_url_for

        element = LocalElement(lambda: base_url_for(model), name, max_tokens)
    else:
        raise UsageError(f"--model {model!r}: AgentDojo's protocol is offered for {' and '.join(p + ':' for p in PROVIDERS)}"
                         " models; give --protocol agentbed for another provider (not comparable with AgentDojo's"
                         " tables)")
    agent = DojoAgent(element, name=f"model:{model}", seed=spec.seed, defense=defense)
    return agent.bind(env) if env is not None else agent
