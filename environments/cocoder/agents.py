"""Coders: a simulated one for offline runs and a LangChain one for real models.

The simulated coder writes the reference file after the virtual time the environment charges
for its size and context, and fails with the spec's context-dependent probability
``p0 + p_miss * missing + p_x * cross + p_len * min(1, ctx / L_max)``: in a failed file each
blanked function stays a stub with probability 1/2 (at least one; drawn with the agent's seeded
generator). Failures are the agent's draw, the test outcome is the real test suite's.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.tools import Tool, make_action
from environments.cocoder.blanking import blank_source
from environments.cocoder.costmodel import FailureModel
from environments.cocoder.defs import source_view
from environments.cocoder.tasks import load_task

# A one-shot example on a toy module (no repository's code): a small base model copies the shape of
# what it was shown; told only in words, it wrote the module's path, then the word "source", as the code
# (docs/cocoder.md, "A real coder": before and after).
EXAMPLE = (
    'Example. Observation: {"module": "shapes.square", "skeleton": "def area(side):\\n    \\"\\"\\"The area of '
    'a square.\\"\\"\\"\\n    raise NotImplementedError\\n", "blanked": ["area"]}\n'
    'Reply: {"tool": "write_file", "arguments": {"module": "shapes.square", "source": "def area(side):\\n    '
    '\\"\\"\\"The area of a square.\\"\\"\\"\\n    return side * side\\n"}}')
CODER_PROMPT = (
    "You implement one Python module at a time. Each observation gives the module's skeleton (function "
    "bodies replaced by `raise NotImplementedError`) and the interfaces of the modules it depends on. Reply "
    "with write_file: the module's name and its whole Python code, the skeleton with every `raise "
    "NotImplementedError` replaced by a working body, signatures unchanged. When the observation lists "
    "`definitions`, other agents write the rest of the module: write only those definitions (methods under "
    "their `class` line), plus the module's imports and globals when `omit` is given; they are merged into "
    "the skeleton by name.\n" + EXAMPLE)


class SimulatedCoder(Agent):
    """Writes the reference; fails per the failure model (seeded by episode seed and worker)."""

    name = "simulated"

    def __init__(self, failure: FailureModel | None = None, salt: int = 0) -> None:
        self.failure = failure or FailureModel()
        self.salt = salt
        self.rng = random.Random(0)
        self.repo_name = ""
        self.failed: list[str] = []

    def reset(self, *, seed: int, task: Any = None) -> None:
        self.rng = random.Random(seed * 1_000_003 + self.salt)
        self.repo_name = task.params.get("repo", "") if task is not None else ""
        self.failed = []

    def act(self, observation: str, tools: Sequence[Tool]) -> Action:
        obs = json.loads(observation)
        if obs.get("done") or "module" not in obs:
            return Action(make_action("write_file", module="", source=""))
        module = obs["module"]
        reference = load_task(self.repo_name).modules[module].reference
        if obs.get("definitions") is not None:  # one piece of a split module: only what it writes
            reference = source_view(reference, obs["definitions"], obs.get("omit"))
        p = self.failure.p_fail(obs["missing_fraction"], obs["cross_deps"], obs["context_tokens"])
        source = reference
        if obs["blanked"] and self.rng.random() < p:
            broken = self._broken_functions(obs["blanked"])
            source, _ = blank_source(reference, only=set(broken))
            self.failed += [f"{module}:{name}" for name in broken]
        return Action(make_action("write_file", module=module, source=source),
                      meta={"p_fail": round(p, 6)})

    def _broken_functions(self, blanked: list[str]) -> list[str]:
        """A failed file: each blanked function wrong with probability 1/2, at least one."""
        broken = [name for name in blanked if self.rng.random() < 0.5]
        return broken or [self.rng.choice(blanked)]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": None, "failure_model": self.failure.to_dict()}


# A local model's compact profile, with room for a whole (small) module: the default cap of 96
# tokens is one action, not a file; the 4,096-token slot holds the prompt, a 6,000-character
# observation (about 2,000 tokens) and this reply.
LOCAL_CODER_MAX_TOKENS = 768
LOCAL_CODER_OBSERVATION_CHARS = 6000


def langchain_coder(model: str, seed: int, **client: Any) -> Agent:
    """A real model through LangChain (``provider:model``, tools bound; ``local:NAME`` the llama.cpp
    server's, with the compact profile); token counts come from the provider's usage metadata; a
    fresh-context turn starts a new chat. ``client`` goes to the chat model (``base_url``,
    ``api_key``...). The coder sees what the environment shows (skeleton, interfaces, what it
    received), never the reference."""
    from environments.cocoder.chat_coder import FreshContextChat

    if model.startswith("local:") and "profile" not in client:
        from agentbed.agents.local.profile import LocalProfile

        client["profile"] = LocalProfile(max_tokens=LOCAL_CODER_MAX_TOKENS,
                                         max_observation_chars=LOCAL_CODER_OBSERVATION_CHARS)
    return FreshContextChat.from_model_string(model, seed=seed, name=f"model:{model}", system_prompt=CODER_PROMPT, **client)
