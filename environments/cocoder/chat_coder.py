"""A chat model as a CoCoder team member: a fresh-context turn starts a new conversation.

The environment marks a turn ``fresh_context`` when the plan writes it in a new conversation (one
file per agent, or a CoCoder agent with context isolation); it bills such a turn for the prompt
and the observation alone. This coder makes the model read exactly that: it drops the earlier
messages before the observation, which already carries what the turn needs of the agent's own
earlier units (``written_by_you_earlier``).
"""

from __future__ import annotations

import json

from agentbed.agents.chat import ChatAgent


def starts_fresh(observation: str) -> bool:
    """Whether an environment observation asks for a new conversation."""
    try:
        obs = json.loads(observation)
    except ValueError:
        return False
    return isinstance(obs, dict) and bool(obs.get("fresh_context"))


class FreshContextChat(ChatAgent):
    """:class:`ChatAgent` whose conversation restarts at every ``fresh_context`` observation."""

    def _add_observation(self, observation: str) -> None:
        if self.messages and starts_fresh(observation):
            # the previous turn's tool call and any note belong to the conversation that ended
            self.messages, self._awaiting, self._pending_note = [], None, None
        super()._add_observation(observation)
